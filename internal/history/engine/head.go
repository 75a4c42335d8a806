package engine

import (
	"sort"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/engine/chunkenc"
)

// chunk is a sealed, immutable, compressed run of one item's samples.
type chunk struct {
	minT, maxT int64
	n          int
	data       []byte
}

// buf is a run of samples in columns, sorted by ts, unique ts.
type buf struct {
	ts   []int64
	num  []uint64 // float64 bits or uint64
	str  []string
	meta []chunkenc.LogMeta
}

func (b *buf) len() int { return len(b.ts) }

// newBuf returns an empty buf with room for n values of type vt.
func newBuf(vt history.ValueType, n int) *buf {
	b := &buf{ts: make([]int64, 0, n)}
	switch vt {
	case history.Float, history.Uint:
		b.num = make([]uint64, 0, n)
	default:
		b.str = make([]string, 0, n)
		if vt == history.Log {
			b.meta = make([]chunkenc.LogMeta, 0, n)
		}
	}
	return b
}

// search returns the first index with ts >= t.
func (b *buf) search(t int64) int {
	n := len(b.ts)
	if n == 0 || b.ts[n-1] < t {
		return n
	}
	return sort.Search(n, func(k int) bool { return b.ts[k] >= t })
}

// insert puts a sample in order, replacing one with the same ts.
func (b *buf) insert(vt history.ValueType, t int64, v *history.Sample) {
	j := b.search(t)
	if j < len(b.ts) && b.ts[j] == t {
		b.set(vt, j, v)
		return
	}
	b.ts = insertAt(b.ts, j, t)
	switch vt {
	case history.Float, history.Uint:
		b.num = insertAt(b.num, j, 0)
	default:
		b.str = insertAt(b.str, j, "")
		if vt == history.Log {
			b.meta = insertAt(b.meta, j, chunkenc.LogMeta{})
		}
	}
	b.set(vt, j, v)
}

func insertAt[T any](s []T, j int, v T) []T {
	var zero T
	s = append(s, zero)
	copy(s[j+1:], s[j:])
	s[j] = v
	return s
}

func (b *buf) set(vt history.ValueType, j int, v *history.Sample) {
	switch vt {
	case history.Float:
		b.num[j] = f64bits(v.F)
	case history.Uint:
		b.num[j] = v.U
	default:
		b.str[j] = v.S
		if vt == history.Log {
			var m chunkenc.LogMeta
			if v.Log != nil {
				m = chunkenc.LogMeta{Timestamp: v.Log.Timestamp, Source: v.Log.Source, Severity: v.Log.Severity, EventID: v.Log.EventID}
			}
			b.meta[j] = m
		}
	}
}

// slice copies [i, j) of b.
func (b *buf) slice(vt history.ValueType, i, j int) buf {
	out := buf{ts: append([]int64(nil), b.ts[i:j]...)}
	switch vt {
	case history.Float, history.Uint:
		out.num = append([]uint64(nil), b.num[i:j]...)
	default:
		out.str = append([]string(nil), b.str[i:j]...)
		if vt == history.Log {
			out.meta = append([]chunkenc.LogMeta(nil), b.meta[i:j]...)
		}
	}
	return out
}

func (b *buf) reset() {
	b.ts, b.num, b.str, b.meta = b.ts[:0], b.num[:0], b.str[:0], b.meta[:0]
}

// series is one item's data in the head. Invariants: chunks are sorted
// and disjoint; every open sample is newer than the last chunk's maxT;
// late holds samples whose ts is <= the last chunk's maxT (late.go), and
// wins over a chunk sample with the same ts.
type series struct {
	vt     history.ValueType
	chunks []chunk
	open   buf
	late   lateBuf
}

func (s *series) lastSealed() int64 {
	if len(s.chunks) == 0 {
		return -1 << 63
	}
	return s.chunks[len(s.chunks)-1].maxT
}

// add inserts one sample; it seals the open buffer into a chunk when it
// holds chunkValues samples.
func (s *series) add(v *history.Sample, chunkValues int) {
	t := v.Clock*1e9 + int64(v.NS)
	if t <= s.lastSealed() {
		s.late.add(s.vt, t, v)
		return
	}
	s.open.insert(s.vt, t, v)
	if s.open.len() >= chunkValues {
		s.seal()
	}
}

func (s *series) seal() {
	o := &s.open
	if o.len() == 0 {
		return
	}
	var data []byte
	switch s.vt {
	case history.Float:
		fs := make([]float64, len(o.num))
		for i, b := range o.num {
			fs[i] = f64frombits(b)
		}
		data = chunkenc.EncodeFloats(nil, o.ts, fs)
	case history.Uint:
		data = chunkenc.EncodeUints(nil, o.ts, o.num)
	case history.Log:
		data = chunkenc.EncodeLogs(nil, o.ts, o.str, o.meta)
	default:
		data = chunkenc.EncodeStrings(nil, o.ts, o.str)
	}
	s.chunks = append(s.chunks, chunk{minT: o.ts[0], maxT: o.ts[len(o.ts)-1], n: len(o.ts), data: data})
	// Fresh slices rather than reuse: readers may hold copies of nothing
	// here (they copy), but strings in the old arrays must be released.
	s.open = buf{}
}

// bytes estimates the memory the series holds, for the per-item figure.
func (s *series) bytes() int {
	n := 64 + cap(s.chunks)*48
	for _, c := range s.chunks {
		n += cap(c.data)
	}
	n += cap(s.open.ts)*8 + cap(s.open.num)*8 + cap(s.open.str)*16 + s.late.bytes()
	return n
}
