package histread

import (
	"bufio"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// Merging by clock with buckets of one second.
//
// The heap merge (writeMerged) pays about log2(items) comparisons a row:
// for a dashboard's 5,000 items, twelve levels of the heap for each of
// half a million rows, which made history.get with sortfield "clock"
// (what Grafana's Zabbix data source always sends) two to three times
// slower than the same read unsorted. But the rows of one read span a
// short range of time, spread over it: a counting sort places every row
// in its bucket (a second, or a part of a second: about two buckets a
// row) in two linear passes, and only a bucket's own rows (one or two)
// are ordered by ns and item. The rows are copied into the order they are written in, so
// the writing pass reads memory in sequence.
//
// A read whose rows are sparse over its seconds (a week of a few
// items) would need more buckets than rows: it keeps the heap.

// mergedRow is a buffered row in the merged order; item indexes the
// merge's table of items (every part's, in turn).
type mergedRow struct {
	clock int64
	bits  uint64
	item  uint32
	ns    int32
}

// bucketSpanFactor bounds the seconds a merge by buckets may span: at
// most this many per row (plus bucketSpanSlack), so the counts cost no
// more than the rows.
const (
	bucketSpanFactor = 4
	bucketSpanSlack  = 4096
)

// coarseRows is about how many rows a coarse bucket holds.
const coarseRows = 4096

var mergedPool = sync.Pool{New: func() any { return new([]mergedRow) }}

// writeMergedBuckets writes the parts' buffered rows merged by time
// (clock, then ns, descending when desc), ties by item id ascending, at
// most limit when limit > 0: the order writeMerged writes. It reports
// false, having written nothing, when the rows are too sparse over their
// seconds for buckets, or when budget (the prefetch's rows shared by all
// requests; nil: no bound) cannot lend the two rows per row the sort
// needs.
func writeMergedBuckets(w *bufio.Writer, parts []*pfPart, e *rowEncoder, typ history.ValueType, desc bool, limit int, budget *atomic.Int64) bool {
	n := 0
	minC, maxC := int64(0), int64(0)
	for _, p := range parts {
		for _, blk := range p.pf.blocks {
			for i := range blk.rows {
				c := blk.rows[i].clock
				if n == 0 || c < minC {
					minC = c
				}
				if n == 0 || c > maxC {
					maxC = c
				}
				n++
			}
		}
	}
	if n == 0 {
		return true
	}
	span := maxC - minC + 1
	if span > int64(bucketSpanFactor)*int64(n)+bucketSpanSlack {
		return false
	}
	if budget != nil {
		if budget.Add(-2*int64(n)) < 0 {
			budget.Add(2 * int64(n))
			return false
		}
		defer budget.Add(2 * int64(n))
	}
	// The items of all parts in one table, with each one's id and the
	// head of its rows: consecutive rows are of different items, so the
	// head is made once per item, not once per row.
	var ids []uint64
	var heads [][]byte
	for _, p := range parts {
		for _, id := range p.pf.ids {
			ids = append(ids, id)
			heads = append(heads, e.headOf(id))
		}
	}
	// Pass 1: rows into coarse buckets of g seconds, about coarseRows
	// rows each, in the order they were read (a few hundred buckets:
	// their write positions stay in cache).
	// g is a power of two so that a row's bucket is a shift, not a
	// division (four divisions a row cost as much as the rest of the
	// sort).
	gs := uint(bits.Len64(uint64(max(1, span*coarseRows/int64(n)))))
	g := int64(1) << gs
	nc := (span + g - 1) >> gs
	starts := make([]int32, nc+1) // starts[k]: where coarse bucket k begins
	for _, p := range parts {
		for _, blk := range p.pf.blocks {
			for i := range blk.rows {
				starts[(blk.rows[i].clock-minC)>>gs+1]++
			}
		}
	}
	for k := 1; k < len(starts); k++ {
		starts[k] += starts[k-1]
	}
	bufp := mergedPool.Get().(*[]mergedRow)
	defer mergedPool.Put(bufp)
	if cap(*bufp) < 2*n {
		*bufp = make([]mergedRow, 2*n)
	}
	rows, scratch := (*bufp)[:n], (*bufp)[n:2*n]
	next := append([]int32(nil), starts[:nc]...)
	base := uint32(0)
	for _, p := range parts {
		for _, blk := range p.pf.blocks {
			for i := range blk.rows {
				r := &blk.rows[i]
				k := (r.clock - minC) >> gs
				rows[next[k]] = mergedRow{clock: r.clock, bits: r.bits, item: base + r.item, ns: r.ns}
				next[k]++
			}
		}
		base += uint32(len(p.pf.ids))
	}
	// cmp orders rows by time (descending when desc), then item id; a
	// stable sort with it keeps an item's rows of equal time in the
	// order they were read, as the heap does.
	cmp := func(a, b *mergedRow) int {
		if a.clock != b.clock || a.ns != b.ns {
			if (a.clock < b.clock || a.clock == b.clock && a.ns < b.ns) != desc {
				return -1
			}
			return 1
		}
		switch ia, ib := ids[a.item], ids[b.item]; {
		case ia < ib:
			return -1
		case ia > ib:
			return 1
		}
		return 0
	}
	sent := 0
	b := w.AvailableBuffer()
	var fine []int32
	// write orders one coarse bucket (pass 2: a counting sort into
	// about two fine buckets per row, then each fine bucket's row or
	// two by cmp) and writes it; false when the limit is reached.
	write := func(k int64) bool {
		c0 := minC + k*g
		sub, out := rows[starts[k]:starts[k+1]], scratch[:starts[k+1]-starts[k]]
		m := int64(len(sub))
		if m == 0 {
			return true
		}
		// Fine buckets of 2^fs ns, the least power of two that makes
		// at most about two buckets a row.
		width := g * 1e9 // ns the bucket spans
		fs := uint(0)
		if width > 2*m {
			fs = uint(bits.Len64(uint64((width - 1) / (2 * m))))
		}
		nf := (width-1)>>fs + 1
		fkey := func(r *mergedRow) int64 { return ((r.clock-c0)*1e9 + int64(r.ns)) >> fs }
		fine = slices.Grow(fine[:0], int(nf)+1)[:nf+1]
		clear(fine)
		for i := range sub {
			fine[fkey(&sub[i])+1]++
		}
		for f := 1; f < len(fine); f++ {
			fine[f] += fine[f-1]
		}
		for i := range sub {
			f := fkey(&sub[i])
			out[fine[f]] = sub[i]
			fine[f]++
		}
		// fine[f] is now fine bucket f's end: order each bucket and
		// write the buckets, last first when descending.
		for x := range nf {
			f := x
			if desc {
				f = nf - 1 - x
			}
			from := int32(0)
			if f > 0 {
				from = fine[f-1]
			}
			bk := out[from:fine[f]]
			if len(bk) <= 12 {
				for i := 1; i < len(bk); i++ {
					for j := i; j > 0 && cmp(&bk[j], &bk[j-1]) < 0; j-- {
						bk[j], bk[j-1] = bk[j-1], bk[j]
					}
				}
			} else {
				slices.SortStableFunc(bk, func(a, b mergedRow) int { return cmp(&a, &b) })
			}
			for i := range bk {
				if cap(b)-len(b) < maxNumericRow {
					w.Write(b)
					if w.Available() < maxNumericRow {
						w.Flush()
					}
					b = w.AvailableBuffer()
				}
				r := &bk[i]
				b = e.appendNumericHead(b, heads[r.item], r.clock, r.ns, typ, r.bits)
				if sent++; limit > 0 && sent >= limit {
					return false
				}
			}
		}
		return true
	}
	if desc {
		for k := nc - 1; k >= 0 && write(k); k-- {
		}
	} else {
		for k := int64(0); k < nc && write(k); k++ {
		}
	}
	w.Write(b)
	return true
}
