package catalog

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"
	"unsafe"
)

// TestEditSharedTriggersMatchReload makes random edits, some that leave
// triggers alone (item updates, host renames: the new snapshot shares
// the old one's trigger slab and indexes) and some that change them
// (trigger create and delete, item delete), and after each compares the
// running snapshot with one freshly loaded from the database: hosts and
// items (diffViews) and every trigger field by field, with the by-item
// and by-ID indexes.
func TestEditSharedTriggersMatchReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	open := func() *Catalog {
		c, err := Open(context.Background(), Options{Path: path, ExprRefs: fakeRefs})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := open()
	spec := Spec{Groups: []GroupSpec{{Name: "G"}}}
	for h := range 6 {
		hs := HostSpec{Host: fmt.Sprintf("h%d", h), Groups: []string{"G"}}
		for i := range 10 {
			hs.Items = append(hs.Items, ItemSpec{Key: fmt.Sprintf("k%d", i), ValueType: "unsigned"})
		}
		spec.Hosts = append(spec.Hosts, hs)
	}
	mustApply(t, c, spec)
	rng := rand.New(rand.NewPCG(30, 4))
	newTrigger := func(s *Snapshot) TriggerFields {
		hs := s.Hosts()
		h := hs[rng.IntN(len(hs))]
		its := h.Items()
		if len(its) == 0 {
			return TriggerFields{Description: "none", Expression: "1=1"}
		}
		it := its[rng.IntN(len(its))]
		return TriggerFields{Description: fmt.Sprintf("t on %s", it.Key), Expression: fmt.Sprintf("last(/%s/%s)>%d", h.Host, it.Key, rng.IntN(9)),
			Priority: uint8(rng.IntN(6)), Enabled: true, Tags: []Tag{{Tag: "scope", Value: "x"}}}
	}
	mustEdit(t, c, func(e *Edit) error {
		var fs []TriggerFields
		for range 20 {
			fs = append(fs, newTrigger(c.Snapshot()))
		}
		_, err := e.CreateTriggers(fs)
		return err
	})
	shared, rebuilt := 0, 0
	for round := range 40 {
		before := c.Snapshot()
		_, err := c.Edit(context.Background(), func(e *Edit) error {
			s := c.Snapshot()
			var items []uint64
			for _, h := range s.Hosts() {
				for _, it := range h.Items() {
					items = append(items, it.ID)
				}
			}
			var err error
			switch op := rng.IntN(6); {
			case op <= 1 && len(items) > 0:
				id := items[rng.IntN(len(items))]
				err = e.UpdateItems([]ItemUpdate{{ID: id, Units: ptr(fmt.Sprint(round)), Name: ptr(fmt.Sprintf("n%d", rng.IntN(4)))}})
			case op == 2:
				hs := s.Hosts()
				h := hs[rng.IntN(len(hs))]
				err = e.UpdateHosts([]HostUpdate{{ID: h.ID, Host: ptr(fmt.Sprintf("%s-%d", h.Host, round))}})
			case op == 3:
				_, err = e.CreateTriggers([]TriggerFields{newTrigger(s)})
			case op == 4 && len(s.Triggers()) > 0:
				err = e.DeleteTriggers([]uint64{s.Triggers()[rng.IntN(len(s.Triggers()))].ID})
			case len(items) > 0:
				err = e.DeleteItems([]uint64{items[rng.IntN(len(items))]})
			}
			var fe *FieldError
			if err != nil && !errors.As(err, &fe) {
				return err
			}
			return nil
		})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		want := c.Snapshot()
		if want != before {
			if len(want.triggers) > 0 && unsafe.SliceData(want.triggers) == unsafe.SliceData(before.triggers) {
				shared++
			} else {
				rebuilt++
			}
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		c = open()
		got := c.Snapshot()
		if d := diffViews(want, got); d != "" {
			t.Fatalf("round %d: reloaded snapshot differs (-edited +loaded):\n%s", round, d)
		}
		wt, gt := want.Triggers(), got.Triggers()
		if len(wt) != len(gt) {
			t.Fatalf("round %d: %d triggers, reloaded %d", round, len(wt), len(gt))
		}
		for i := range wt {
			if !reflect.DeepEqual(normTrig(wt[i]), normTrig(gt[i])) {
				t.Fatalf("round %d: trigger %d differs:\nedited   %+v\nreloaded %+v", round, wt[i].ID, wt[i], gt[i])
			}
			if want.Trigger(wt[i].ID) == nil || got.Trigger(gt[i].ID) == nil {
				t.Fatalf("round %d: trigger %d not found by ID", round, wt[i].ID)
			}
		}
		for _, h := range want.Hosts() {
			for _, it := range h.Items() {
				if a, b := trigIDs(want.TriggersOfItem(it.ID)), trigIDs(got.TriggersOfItem(it.ID)); !reflect.DeepEqual(a, b) {
					t.Fatalf("round %d: triggers of item %d: %v, reloaded %v", round, it.ID, a, b)
				}
			}
		}
	}
	c.Close()
	t.Logf("%d edits shared the trigger slab, %d rebuilt it", shared, rebuilt)
	if shared == 0 || rebuilt == 0 {
		t.Fatalf("the random edits did not take both paths (shared %d, rebuilt %d)", shared, rebuilt)
	}
}

// normTrig makes empty and nil slices alike, as a reload may differ
// there without a difference a reader can see.
func normTrig(t Trigger) Trigger {
	if len(t.Tags) == 0 {
		t.Tags = nil
	}
	if len(t.Dependencies) == 0 {
		t.Dependencies = nil
	}
	if len(t.ItemIDs) == 0 {
		t.ItemIDs = nil
	}
	if len(t.HostIDs) == 0 {
		t.HostIDs = nil
	}
	return t
}

func trigIDs(ts []*Trigger) []uint64 {
	var ids []uint64
	for _, t := range ts {
		ids = append(ids, t.ID)
	}
	return ids
}
