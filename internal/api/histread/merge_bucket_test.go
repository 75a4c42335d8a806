package histread

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// TestMergeBuckets: the bucket merge writes exactly what the heap merge
// writes — ascending and descending, with and without a limit, with
// ties on clock and ns between items and between parts, rows split over
// blocks — and declines (writing nothing) only when the rows are sparse
// over their seconds.
func TestMergeBuckets(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		desc := trial%2 == 1
		span := []int64{1, 5, 60, 3600, 1 << 20}[trial%5]
		nparts := 1 + rng.IntN(4)
		// ns from three values (ties across items) or anywhere in the
		// second (rows spread over buckets within it).
		nsOf := func() int32 { return int32(rng.IntN(3)) * 500 }
		if trial%4 >= 2 {
			nsOf = func() int32 { return rng.Int32N(1e9) }
		}
		var parts []*pfPart
		next := uint64(100)
		total := 0
		for range nparts {
			pf := &prefetch{}
			blk := &pfBlock{}
			blockRows := 1 + rng.IntN(50)
			for range rng.IntN(20) {
				pf.ids = append(pf.ids, next)
				next += uint64(1 + rng.IntN(3))
				var rows []pfRow
				for range rng.IntN(30) {
					rows = append(rows, pfRow{
						clock: 1_700_000_000 + rng.Int64N(span),
						ns:    nsOf(),
						bits:  rng.Uint64(),
						item:  uint32(len(pf.ids) - 1),
					})
				}
				slices.SortFunc(rows, func(a, b pfRow) int {
					c := a.clock*1e9 + int64(a.ns) - b.clock*1e9 - int64(b.ns)
					if desc {
						c = -c
					}
					return int(max(-1, min(1, c)))
				})
				for _, r := range rows {
					if len(blk.rows) == blockRows {
						pf.blocks = append(pf.blocks, blk)
						blk = &pfBlock{}
					}
					blk.rows = append(blk.rows, r)
					total++
				}
			}
			pf.blocks = append(pf.blocks, blk)
			parts = append(parts, &pfPart{pf: pf})
		}
		limit := 0
		if trial%3 == 0 {
			limit = rng.IntN(total + 2)
		}
		name := fmt.Sprintf("trial %d: %d rows over %d s in %d parts, desc %v, limit %d", trial, total, span, nparts, desc, limit)
		run := func(f func(*bufio.Writer)) string {
			var buf bytes.Buffer
			w := bufio.NewWriterSize(&buf, 256) // small: rows cross flushes
			f(w)
			w.Flush()
			return buf.String()
		}
		want := run(func(w *bufio.Writer) { writeMerged(w, parts, newRowEncoder(AllFields), history.Float, desc, limit) })
		used := true
		got := run(func(w *bufio.Writer) {
			used = writeMergedBuckets(w, parts, newRowEncoder(AllFields), history.Float, desc, limit, nil)
		})
		sparse := total > 0 && span > bucketSpanFactor*int64(total)+bucketSpanSlack
		switch {
		case used == sparse:
			t.Fatalf("%s: buckets used %v, sparse %v", name, used, sparse)
		case !used && got != "":
			t.Fatalf("%s: declined but wrote %q", name, got)
		case used && got != want:
			t.Fatalf("%s:\n got %.400s\nwant %.400s", name, got, want)
		}
	}
}

// go test -run '^$' -bench 'Merge' ./internal/api/histread/
//
// BenchmarkMerge compares, on the buffered rows of a dashboard's read
// (5,000 items over an hour at 10 s, 60 s and 300 s intervals with
// nanoseconds, in two parts), writing them in the order read
// (unsorted), merged by clock by the heap, and merged by buckets.
func BenchmarkMerge(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	var parts []*pfPart
	for p := range 2 {
		pf := &prefetch{}
		blk := &pfBlock{}
		for i := range 2500 {
			pf.ids = append(pf.ids, uint64(10000+p*2500+i))
			step := []int64{10, 60, 300}[i%3]
			for c := rng.Int64N(step); c < 3600; c += step {
				if len(blk.rows) == prefetchBlockRows {
					pf.blocks = append(pf.blocks, blk)
					blk = &pfBlock{}
				}
				blk.rows = append(blk.rows, pfRow{clock: 1_700_000_000 + c, ns: rng.Int32N(1e9), bits: rng.Uint64(), item: uint32(i)})
			}
		}
		pf.blocks = append(pf.blocks, blk)
		parts = append(parts, &pfPart{pf: pf})
	}
	w := bufio.NewWriterSize(io.Discard, 64<<10)
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"unsorted", func() {
			e := newRowEncoder(AllFields)
			for _, p := range parts {
				p.pf.writeTo(w, e, history.Float)
			}
		}},
		{"heap", func() { writeMerged(w, parts, newRowEncoder(AllFields), history.Float, false, 0) }},
		{"buckets", func() { writeMergedBuckets(w, parts, newRowEncoder(AllFields), history.Float, false, 0, nil) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				c.f()
				w.Flush()
			}
		})
	}
}
