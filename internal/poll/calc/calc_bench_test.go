package calc

import (
	"context"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/poll"
)

// BenchmarkAnswer evaluates calculated items of the fixture against the
// in-memory store: the cost of one calculated value before conversion
// and storage (catalog lookups, history reads, evaluation). The time
// period read (cpu.avg) costs what memstore's unlimited reads cost: a
// chunk buffer per read; the engine reads differently.
//
//	go test -run '^$' -bench BenchmarkAnswer -benchmem -count 6 ./internal/poll/calc/
func BenchmarkAnswer(b *testing.B) {
	for _, key := range []string{"pused", "cpu.avg"} {
		f := newFixture(b)
		it := f.snap.Lookup("a", key)
		ch := &poll.Check{ItemID: it.ID, HostID: it.HostID, Key: key}
		if r := f.c.Answer(context.Background(), f.snap, ch); r.Status != poll.OK {
			b.Fatalf("%s: %s", key, r.Error)
		}
		b.Run("item="+key, func(b *testing.B) {
			b.ReportAllocs()
			ctx := context.Background()
			for b.Loop() {
				f.c.Answer(ctx, f.snap, ch)
			}
		})
	}
}
