package itemstate

import (
	"sync"
	"testing"
)

func TestRegistryItemState(t *testing.T) {
	r := New()
	if s, ok := r.ItemState(7); ok || s != (Item{}) {
		t.Fatalf("unknown item: got %+v, %v; want zero, false", s, ok)
	}
	ns := Item{NotSupported: true, Error: "Unsupported item key.", Clock: 100}
	r.SetItemState(7, ns)
	if s, ok := r.ItemState(7); !ok || s != ns {
		t.Fatalf("after set: got %+v, %v; want %+v, true", s, ok, ns)
	}
	// Another item in the same stripe is unaffected.
	if _, ok := r.ItemState(7 + stripes); ok {
		t.Fatal("item in the same stripe reported a state")
	}
	r.SetItemState(7, Item{})
	if s, ok := r.ItemState(7); ok || s != (Item{}) {
		t.Fatalf("after recovery: got %+v, %v; want no entry", s, ok)
	}
	r.SetItemState(8, Item{}) // normal item: stays absent
	if _, ok := r.ItemState(8); ok {
		t.Fatal("setting a normal state created an entry")
	}
}

func TestRegistryAvailability(t *testing.T) {
	r := New()
	if a, ok := r.Availability(3); ok || a.Available != 0 {
		t.Fatalf("unchecked interface: got %+v, %v", a, ok)
	}
	down := Availability{Available: 2, Error: "connection refused", ErrorsFrom: 10, DisableUntil: 70}
	r.SetAvailability(3, down)
	if a, ok := r.Availability(3); !ok || a != down {
		t.Fatalf("got %+v, %v; want %+v", a, ok, down)
	}
	r.SetAvailability(3, Availability{Available: 1})
	if a, _ := r.Availability(3); a != (Availability{Available: 1}) {
		t.Fatalf("after recovery: got %+v", a)
	}
	r.SetItemState(3, Item{NotSupported: true, Error: "x"})
	r.Forget([]uint64{3}, []uint64{3})
	if _, ok := r.Availability(3); ok {
		t.Fatal("Forget kept the interface")
	}
	if _, ok := r.ItemState(3); ok {
		t.Fatal("Forget kept the item")
	}
}

func TestRegistryPrune(t *testing.T) {
	r := New()
	for id := uint64(1); id <= 10; id++ {
		r.SetItemState(id, Item{NotSupported: true, Error: "x"})
		r.SetAvailability(id, Availability{Available: 2})
	}
	even := func(id uint64) bool { return id%2 == 0 }
	if items, ifaces := r.Prune(even, func(id uint64) bool { return id > 3 }); items != 5 || ifaces != 3 {
		t.Fatalf("pruned %d items and %d interfaces, want 5 and 3", items, ifaces)
	}
	for id := uint64(1); id <= 10; id++ {
		if _, ok := r.ItemState(id); ok != even(id) {
			t.Errorf("item %d: kept %v", id, ok)
		}
		if _, ok := r.Availability(id); ok != (id > 3) {
			t.Errorf("interface %d: kept %v", id, ok)
		}
	}
}

// TestRegistryConcurrent is for -race: writers and readers of overlapping
// IDs; each writer owns its IDs, so the final states are known.
func TestRegistryConcurrent(t *testing.T) {
	r := New()
	const writers, ids = 4, 500
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range ids {
				id := uint64(i*writers + w)
				r.SetItemState(id, Item{NotSupported: true, Error: "e", Clock: int64(id)})
				r.SetAvailability(id, Availability{Available: 2, ErrorsFrom: int64(id)})
				if i%2 == 0 {
					r.SetItemState(id, Item{})
				}
			}
		}()
		go func() {
			defer wg.Done()
			for i := range ids * writers {
				r.ItemState(uint64(i))
				r.Availability(uint64(i))
			}
		}()
	}
	wg.Wait()
	for id := uint64(0); id < writers*ids; id++ {
		s, ok := r.ItemState(id)
		even := (id/writers)%2 == 0
		if ok == even || (ok && s.Clock != int64(id)) {
			t.Fatalf("item %d: got %+v, %v", id, s, ok)
		}
		if a, ok := r.Availability(id); !ok || a.ErrorsFrom != int64(id) {
			t.Fatalf("interface %d: got %+v, %v", id, a, ok)
		}
	}
}

// Not-supported states are counted each time they are set, and counted
// now among the items the caller keeps.
func TestRegistryNotSupportedCounts(t *testing.T) {
	r := New()
	r.SetItemState(1, Item{NotSupported: true, Error: "a"})
	r.SetItemState(1, Item{NotSupported: true, Error: "a"})
	r.SetItemState(2, Item{NotSupported: true, Error: "b"})
	r.SetItemState(3, Item{NotSupported: true, Error: "c"})
	r.SetItemState(3, Item{})
	r.SetItemState(4, Item{})
	if n := r.NotSupportedTotal(); n != 4 {
		t.Fatalf("NotSupportedTotal = %d; want 4", n)
	}
	if n := r.CountNotSupported(func(uint64) bool { return true }); n != 2 {
		t.Fatalf("CountNotSupported(all) = %d; want 2", n)
	}
	if n := r.CountNotSupported(func(id uint64) bool { return id != 2 }); n != 1 {
		t.Fatalf("CountNotSupported(not 2) = %d; want 1", n)
	}
}
