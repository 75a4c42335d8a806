package catalog

import (
	"fmt"
	"testing"
)

// go test -run '^$' -bench 'Edit' -benchtime 10x -count 6 ./internal/catalog/
//
// BenchmarkEditCreateItems creates 10,000 items in one Edit on a fresh
// host (deleted again outside the timer), beside catalogs of different
// sizes: validation, one transaction, and the snapshot rebuild, which is
// O(all items).
func BenchmarkEditCreateItems(b *testing.B) {
	const n = 10000
	for _, sz := range []struct {
		name           string
		hosts, perHost int
	}{{"base=0", 0, 0}, {"base=100k", 100, 1000}} {
		b.Run(sz.name, func(b *testing.B) {
			c, _ := openTemp(b)
			if sz.hosts > 0 {
				mustApply(b, c, genSpec(sz.hosts, sz.perHost))
			}
			var g []uint64
			mustEdit(b, c, func(e *Edit) (err error) { g, err = e.CreateGroups([]string{"bench"}); return err })
			for b.Loop() {
				b.StopTimer()
				var h []uint64
				mustEdit(b, c, func(e *Edit) (err error) { h, err = e.CreateHosts([]NewHost{{Host: "bench", GroupIDs: g}}); return err })
				items := make([]NewItem, n)
				for i := range items {
					items[i] = NewItem{HostID: h[0], ItemSpec: ItemSpec{Key: fmt.Sprintf("trap[%d]", i), ValueType: "3"}}
				}
				b.StartTimer()
				mustEdit(b, c, func(e *Edit) error { _, err := e.CreateItems(items); return err })
				b.StopTimer()
				mustEdit(b, c, func(e *Edit) error { return e.DeleteHosts(h) })
				b.StartTimer()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "items/s")
		})
	}
}
