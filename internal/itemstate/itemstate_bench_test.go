package itemstate

import (
	"testing"
)

// BenchmarkRegistry measures the calls every check makes: recording a
// success for an item that is already normal (the common case, a shared
// lock and a map miss), and recording a failure.
//
//	go test -run '^$' -bench BenchmarkRegistry -count 6 ./internal/itemstate/
func BenchmarkRegistry(b *testing.B) {
	b.Run("op=set-normal/parallel", func(b *testing.B) {
		r := New()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var id uint64
			for pb.Next() {
				id++
				r.SetItemState(id, Item{})
			}
		})
	})
	b.Run("op=set-notsupported", func(b *testing.B) {
		r := New()
		b.ReportAllocs()
		for i := range b.N {
			r.SetItemState(uint64(i%100_000), Item{NotSupported: true, Error: "Unsupported item key.", Clock: int64(i)})
		}
	})
}
