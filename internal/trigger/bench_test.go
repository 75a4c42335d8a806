package trigger

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/history/engine/wal"
)

// BenchmarkProcessStorm: one batch of results turns 10,000 triggers to
// PROBLEM, the next back to OK, alternately: each op is one such batch
// (10,000 events made with macro-expanded names and tags, one commit with
// an fsync under SyncBatch). events/s is per op.
//
//	go test -run '^$' -bench BenchmarkProcessStorm -benchtime 20x -count 6 ./internal/trigger/
func BenchmarkProcessStorm(b *testing.B) {
	const n = 10_000
	dir := b.TempDir()
	cat, err := catalog.Open(context.Background(), catalog.Options{Path: filepath.Join(dir, "catalog.db"), ExprRefs: ItemRefs})
	if err != nil {
		b.Fatal(err)
	}
	defer cat.Close()
	spec := catalog.Spec{}
	for h := range 10 {
		hs := catalog.HostSpec{Host: fmt.Sprintf("host-%d", h), Groups: []string{"G"}}
		for i := range n / 10 {
			hs.Items = append(hs.Items, catalog.ItemSpec{Key: fmt.Sprintf("k[%d]", i)})
			hs.Triggers = append(hs.Triggers, catalog.TriggerSpec{Name: fmt.Sprintf("Value %d too high on {HOST.NAME}: {ITEM.VALUE}", i),
				Expression: fmt.Sprintf("last(/host-%d/k[%d])>1", h, i), Priority: "HIGH",
				Tags: []catalog.TagSpec{{Tag: "host", Value: "{HOST.HOST}"}}})
		}
		spec.Hosts = append(spec.Hosts, hs)
	}
	if _, err := cat.Apply(context.Background(), spec); err != nil {
		b.Fatal(err)
	}
	st, err := event.Open(event.Options{Dir: filepath.Join(dir, "events"), Sync: wal.SyncBatch})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	m, err := New(Options{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	snap := cat.Snapshot()
	trigs := snap.Triggers()
	rs := make([]Result, len(trigs))
	vals := []string{"7"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		v := Problem
		if i%2 == 1 {
			v = OK
		}
		for j := range trigs {
			rs[j] = Result{TriggerID: trigs[j].ID, Value: v, Clock: int64(i), ItemValues: vals}
		}
		out, err := m.Process(snap, rs)
		if err != nil {
			b.Fatal(err)
		}
		if out.Problems+out.Resolved != n {
			b.Fatalf("%+v", out)
		}
	}
	b.ReportMetric(float64(n)/(b.Elapsed().Seconds()/float64(b.N)), "events/s")
}
