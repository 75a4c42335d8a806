package engine

import (
	"math"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/engine/chunkenc"
)

// Late values: a sample older than its item's newest sealed chunk (what a
// proxy or an agent sends after an outage, or a backfill) cannot go into
// the open buffer. Until issue 10 they went into one sorted buffer per
// item by insertion, which moves half the buffer per value: a backfill of
// 500k values in random order took 40 times as long as in order, and a
// read copied the buffer under the item's lock.
//
// lateBuf is a small log-structured merge instead. Values are appended,
// in arrival order, to a tail of at most lateTail values. A full tail is
// sorted (a later arrival wins on an equal timestamp) into an immutable
// run, and runs are merged size-tiered: while the newest run is at least
// half the size of the one before it, the two become one. Each value is
// so copied O(log n) times in all, the runs are at most about log2(n /
// lateTail) + 1, and sealed runs never change, so a read takes references
// to them under the lock and copies only the tail (bounded) there; it
// merges the runs in its range outside the lock.
//
// Rejected: a balanced tree or skip list per item (a pointer and an
// allocation per value, against two machine words in a column), and
// compressing runs with chunkenc (a merge would decode and re-encode; the
// head is bounded by the flush policy, which counts late values too).

// lateTail is the size of the unsorted tail.
const lateTail = 512

// lateBuf holds an item's late values; see above. runs[i] is older than
// runs[i+1] (wins less on an equal timestamp); tail is newer than every
// run.
type lateBuf struct {
	runs       []*buf
	tail       buf // arrival order
	n          int // values held, duplicates included until merged
	minT, maxT int64
}

func (l *lateBuf) len() int { return l.n }

// add appends one late value, sealing the tail when it is full.
func (l *lateBuf) add(vt history.ValueType, t int64, v *history.Sample) {
	if l.n == 0 {
		l.minT, l.maxT = t, t
	} else {
		l.minT, l.maxT = min(l.minT, t), max(l.maxT, t)
	}
	tl := &l.tail
	tl.ts = append(tl.ts, t)
	switch vt {
	case history.Float, history.Uint:
		tl.num = append(tl.num, 0)
	default:
		tl.str = append(tl.str, "")
		if vt == history.Log {
			tl.meta = append(tl.meta, chunkenc.LogMeta{})
		}
	}
	tl.set(vt, tl.len()-1, v)
	l.n++
	if tl.len() >= lateTail {
		l.seal(vt)
	}
}

// seal turns the tail into a run and merges runs size-tiered.
func (l *lateBuf) seal(vt history.ValueType) {
	if l.tail.len() == 0 {
		return
	}
	run := sortRun(vt, &l.tail, 0, l.tail.len())
	l.n -= l.tail.len() - run.len()
	l.tail = buf{} // the run owns nothing of it, but strings must be released
	// Readers never share l.runs itself (a snapshot copies the list), and
	// the runs it points to are never written after this: a merge makes
	// a new run.
	l.runs = append(l.runs, run)
	for k := len(l.runs); k >= 2 && 2*l.runs[k-1].len() >= l.runs[k-2].len(); k = len(l.runs) {
		m := mergeBufs(vt, l.runs[k-2], l.runs[k-1])
		l.n -= l.runs[k-2].len() + l.runs[k-1].len() - m.len()
		l.runs[k-1] = nil
		l.runs[k-2] = m
		l.runs = l.runs[:k-1]
	}
}

// sortRun returns src[i:j] (arrival order) sorted by timestamp, one value
// per timestamp, the last arrival winning.
func sortRun(vt history.ValueType, src *buf, i, j int) *buf {
	keys := make([]lateKey, j-i)
	lo := int64(math.MaxInt64)
	for k := i; k < j; k++ {
		lo = min(lo, src.ts[k])
	}
	for k := range keys {
		keys[k] = lateKey{u: uint64(src.ts[i+k]) - uint64(lo), i: int32(i + k)}
	}
	keys = radixSort(keys, make([]lateKey, len(keys)))
	out := newBuf(vt, len(keys))
	r := reader{vt: vt}
	for k, x := range keys {
		if k+1 < len(keys) && keys[k+1].u == x.u {
			continue // a later arrival of the same timestamp follows
		}
		r.appendFrom(out, src, int(x.i))
	}
	return out
}

// lateKey is a timestamp as an offset from the smallest one of its run
// (so unsigned order is time order) and the value's index.
type lateKey struct {
	u uint64
	i int32
}

// radixSort sorts keys by u, stably, using tmp (of the same length) as
// scratch, and returns the sorted slice (keys or tmp). Stable matters: of
// equal timestamps the last arrival must stay last. A tail spans at most
// a few days of nanoseconds (about 48 bits), so six byte passes at most,
// and passes whose byte is the same in every key are skipped.
func radixSort(keys, tmp []lateKey) []lateKey {
	var all uint64
	for _, k := range keys {
		all |= k.u
	}
	for shift := uint(0); shift < 64 && all>>shift != 0; shift += 8 {
		var count [257]int
		for _, k := range keys {
			count[(k.u>>shift)&0xff+1]++
		}
		if count[(keys[0].u>>shift)&0xff+1] == len(keys) {
			continue // one digit value: this pass would not move anything
		}
		for d := 1; d < 257; d++ {
			count[d] += count[d-1]
		}
		for _, k := range keys {
			d := (k.u >> shift) & 0xff
			tmp[count[d]] = k
			count[d]++
		}
		keys, tmp = tmp, keys
	}
	return keys
}

// snapshot copies what a read of [lo, hi) needs: references to the
// immutable runs that hold values in range (in their order, so a later
// run still wins) and a copy of the tail's values in range (at most
// lateTail). The caller holds the stripe lock.
func (l *lateBuf) snapshot(vt history.ValueType, lo, hi int64) lateBuf {
	if l.n == 0 || l.maxT < lo || l.minT >= hi {
		return lateBuf{}
	}
	// n, minT and maxT of the snapshot are of the values in range, so
	// that a read's sources look disjoint when they are (disjointSpans).
	out := lateBuf{minT: math.MaxInt64, maxT: math.MinInt64}
	for _, run := range l.runs {
		if i, j := run.search(lo), run.search(hi); i < j {
			out.runs = append(out.runs, run)
			out.n += j - i
			out.minT, out.maxT = min(out.minT, run.ts[i]), max(out.maxT, run.ts[j-1])
		}
	}
	r := reader{vt: vt}
	for k, t := range l.tail.ts {
		if t >= lo && t < hi {
			r.appendFrom(&out.tail, &l.tail, k)
			out.n++
			out.minT, out.maxT = min(out.minT, t), max(out.maxT, t)
		}
	}
	return out
}

// collect merges the late values in [lo, hi) into one sorted buffer, a
// later write winning on an equal timestamp. It only reads l, so many
// readers may collect from one (flushing) series at once.
func (l *lateBuf) collect(vt history.ValueType, lo, hi int64) *buf {
	if l.n == 0 || l.maxT < lo || l.minT >= hi {
		return &buf{}
	}
	var acc *buf
	for _, run := range l.runs {
		i, j := run.search(lo), run.search(hi)
		if i == j {
			continue
		}
		part := &buf{ts: run.ts[i:j:j]}
		switch vt {
		case history.Float, history.Uint:
			part.num = run.num[i:j:j]
		default:
			part.str = run.str[i:j:j]
			if vt == history.Log {
				part.meta = run.meta[i:j:j]
			}
		}
		if acc == nil {
			acc = part // read only: merges below make new buffers
			continue
		}
		acc = mergeBufs(vt, acc, part)
	}
	var tail *buf
	if n := l.tail.len(); n > 0 {
		// The tail is in arrival order; select the range, then sort.
		sel := &buf{}
		r := reader{vt: vt}
		for k, t := range l.tail.ts {
			if t >= lo && t < hi {
				r.appendFrom(sel, &l.tail, k)
			}
		}
		if sel.len() > 0 {
			tail = sortRun(vt, sel, 0, sel.len())
		}
	}
	switch {
	case acc == nil && tail == nil:
		return &buf{}
	case acc == nil:
		return tail
	case tail != nil:
		acc = mergeBufs(vt, acc, tail)
	}
	return acc
}

// bytes estimates the memory l holds.
func (l *lateBuf) bytes() int {
	size := func(b *buf) int { return cap(b.ts)*8 + cap(b.num)*8 + cap(b.str)*16 + cap(b.meta)*48 }
	n := cap(l.runs)*8 + size(&l.tail)
	for _, r := range l.runs {
		n += size(r)
	}
	return n
}

// bounds returns the smallest and largest timestamp l holds; ok is false
// when it is empty.
func (l *lateBuf) bounds() (minT, maxT int64, ok bool) {
	if l.n == 0 {
		return math.MaxInt64, math.MinInt64, false
	}
	return l.minT, l.maxT, true
}
