package engine

import (
	"context"
	"math"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/engine/chunkenc"
)

// piece is one ordered part of a read: a sealed chunk (data) or a copy of
// part of the open buffer (open). Late samples with lower < ts <= upper
// belong to it.
type piece struct {
	lower, upper int64
	data         []byte
	open         *buf
}

// nanos converts a clock bound to nanoseconds without overflowing.
func nanos(clock int64) int64 {
	const maxClock = int64(math.MaxInt64 / 1_000_000_000)
	switch {
	case clock >= maxClock:
		return math.MaxInt64
	case clock <= -maxClock:
		return math.MinInt64
	}
	return clock * 1e9
}

// Read implements history.Reader.
func (s *Store) Read(ctx context.Context, q history.Query, fn func(*history.Sample) bool) error {
	s.closeMu.RLock()
	closed := s.closed
	s.closeMu.RUnlock()
	if closed {
		return history.ErrClosed
	}
	lo, hi := nanos(q.From), nanos(q.Till+1) // [lo, hi)
	if lo >= hi {
		return nil
	}
	str := &s.stripes[q.ItemID%stripes]
	str.mu.RLock()
	sr := str.series[q.ItemID]
	if sr == nil {
		str.mu.RUnlock()
		return nil
	}
	vt := sr.vt
	var pieces []piece
	lower := int64(math.MinInt64)
	for _, c := range sr.chunks {
		if c.maxT >= lo && lower < hi-1 {
			pieces = append(pieces, piece{lower: lower, upper: c.maxT, data: c.data})
		}
		lower = c.maxT
		if lower >= hi {
			break
		}
	}
	if o := &sr.open; o.len() > 0 {
		i, j := o.search(lo), o.search(hi)
		if i < j {
			cp := o.slice(vt, i, j)
			pieces = append(pieces, piece{lower: lower, upper: math.MaxInt64, open: &cp})
		}
	}
	var late buf
	if l := &sr.late; l.len() > 0 {
		i, j := l.search(lo), l.search(hi)
		if i < j {
			late = l.slice(vt, i, j)
		}
	}
	str.mu.RUnlock()
	// Late samples can fall in a gap before the first selected piece
	// (older than every chunk in range); give them a piece of their own.
	if late.len() > 0 && (len(pieces) == 0 || late.ts[0] <= pieces[0].lower) {
		upper := int64(math.MaxInt64)
		if len(pieces) > 0 {
			upper = pieces[0].lower
		}
		pieces = append([]piece{{lower: math.MinInt64, upper: upper, open: &buf{}}}, pieces...)
	}

	r := reader{vt: vt, q: q, lo: lo, hi: hi, fn: fn, late: &late}
	if !q.Desc {
		for i := range pieces {
			if err := ctx.Err(); err != nil {
				return err
			}
			if done, err := r.piece(&pieces[i]); done || err != nil {
				return err
			}
		}
	} else {
		for i := len(pieces) - 1; i >= 0; i-- {
			if err := ctx.Err(); err != nil {
				return err
			}
			if done, err := r.piece(&pieces[i]); done || err != nil {
				return err
			}
		}
	}
	return nil
}

type reader struct {
	vt     history.ValueType
	q      history.Query
	lo, hi int64
	fn     func(*history.Sample) bool
	late   *buf
	sent   int

	dec    buf // decoded chunk
	merged buf // chunk merged with its late samples
	fbuf   []float64
	out    history.Sample
	meta   history.LogMeta
}

// piece decodes, merges and emits one piece; done reports that the
// callback or the limit ended the read.
func (r *reader) piece(p *piece) (done bool, err error) {
	src := p.open
	if p.data != nil {
		if err := r.decode(p.data); err != nil {
			return true, err
		}
		src = &r.dec
	}
	// Late samples inside (lower, upper].
	li := r.late.search(p.lower + 1)
	lj := r.late.search(p.upper)
	if lj < r.late.len() && r.late.ts[lj] == p.upper {
		lj++
	}
	if p.upper == math.MaxInt64 {
		lj = r.late.len()
	}
	if li < lj {
		r.merge(src, li, lj)
		src = &r.merged
	}
	i, j := src.search(r.lo), src.search(r.hi)
	if !r.q.Desc {
		for k := i; k < j; k++ {
			if r.emit(src, k) {
				return true, nil
			}
		}
	} else {
		for k := j - 1; k >= i; k-- {
			if r.emit(src, k) {
				return true, nil
			}
		}
	}
	return false, nil
}

func (r *reader) decode(data []byte) error {
	d := &r.dec
	d.reset()
	var err error
	switch r.vt {
	case history.Float:
		d.ts, r.fbuf, err = chunkenc.DecodeFloats(d.ts, r.fbuf[:0], data)
		for _, f := range r.fbuf {
			d.num = append(d.num, f64bits(f))
		}
	case history.Uint:
		d.ts, d.num, err = chunkenc.DecodeUints(d.ts, d.num, data)
	case history.Log:
		d.ts, d.str, d.meta, err = chunkenc.DecodeLogs(d.ts, d.str, d.meta, data)
	default:
		d.ts, d.str, err = chunkenc.DecodeStrings(d.ts, d.str, data)
	}
	return err
}

// merge combines src with late[li:lj] into r.merged; late wins on equal
// timestamps (it was written after the chunk was sealed).
func (r *reader) merge(src *buf, li, lj int) {
	m := &r.merged
	m.reset()
	l := r.late
	a, b := 0, li
	for a < src.len() || b < lj {
		switch {
		case b >= lj || (a < src.len() && src.ts[a] < l.ts[b]):
			r.appendFrom(m, src, a)
			a++
		case a >= src.len() || l.ts[b] < src.ts[a]:
			r.appendFrom(m, l, b)
			b++
		default: // equal
			r.appendFrom(m, l, b)
			a, b = a+1, b+1
		}
	}
}

func (r *reader) appendFrom(dst, src *buf, k int) {
	dst.ts = append(dst.ts, src.ts[k])
	switch r.vt {
	case history.Float, history.Uint:
		dst.num = append(dst.num, src.num[k])
	default:
		dst.str = append(dst.str, src.str[k])
		if r.vt == history.Log {
			dst.meta = append(dst.meta, src.meta[k])
		}
	}
}

func (r *reader) emit(src *buf, k int) bool {
	t := src.ts[k]
	o := &r.out
	*o = history.Sample{ItemID: r.q.ItemID, Clock: floorDiv(t, 1e9), Type: r.vt}
	o.NS = int32(t - o.Clock*1e9)
	switch r.vt {
	case history.Float:
		o.F = f64frombits(src.num[k])
	case history.Uint:
		o.U = src.num[k]
	default:
		o.S = src.str[k]
		if r.vt == history.Log {
			m := src.meta[k]
			r.meta = history.LogMeta{Timestamp: m.Timestamp, Source: m.Source, Severity: m.Severity, EventID: m.EventID}
			o.Log = &r.meta
		}
	}
	if !r.fn(o) {
		return true
	}
	r.sent++
	return r.q.Limit > 0 && r.sent >= r.q.Limit
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && (a < 0) {
		q--
	}
	return q
}
