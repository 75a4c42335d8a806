package catalog

import (
	"reflect"
	"testing"
	"unsafe"
)

// TestItemSize keeps Item small (issue 30: ≤ 300 bytes per item in the
// model, indexes included): a field most items leave empty belongs in
// ItemExtra.
func TestItemSize(t *testing.T) {
	if s := unsafe.Sizeof(Item{}); unsafe.Sizeof(uintptr(0)) == 8 && s > 232 {
		t.Errorf("Item takes %d bytes, want at most 232: put rarely used fields in ItemExtra", s)
	}
}

// TestItemExtraShared checks that the copies of one template item share
// one ItemExtra, also after a reload, that an item without one has
// none, that an update leaves the previous snapshot's alone, and that
// Ext's empty ItemExtra is never written.
func TestItemExtraShared(t *testing.T) {
	f := newTmplFixture(t)
	var tid, h3 uint64
	mustEdit(t, f.c, func(e *Edit) error {
		ids, err := e.CreateItems([]NewItem{{HostID: f.tmpl, ItemSpec: ItemSpec{Key: "slow", Type: "zabbix_agent", ValueType: "uint", Timeout: "9s", Description: "Slow check"}}})
		if err != nil {
			return err
		}
		tid = ids[0]
		hs, err := e.CreateHosts([]NewHost{{Host: "h3", GroupIDs: []uint64{f.group},
			Interfaces: []Interface{{Type: InterfaceAgent, Main: true, UseIP: true, IP: "127.0.0.2"}}}})
		if err != nil {
			return err
		}
		h3 = hs[0]
		return nil
	})
	f.link(t, f.h1, f.tmpl)
	f.link(t, h3, f.tmpl)
	check := func(s *Snapshot, want string) {
		t.Helper()
		a, b := s.Host("h1").Item("slow"), s.Host("h3").Item("slow")
		if a == nil || b == nil || a.TemplateID != tid || a.Ext().Timeout != want || b.Ext().Timeout != want || b.Ext().Description != "Slow check" {
			t.Fatalf("copies: %+v / %+v", a, b)
		}
		if a.Extra != b.Extra {
			t.Error("the copies of one template item hold an ItemExtra each")
		}
		if p := s.Host("h1").Item("agent.ping"); p == nil || p.Extra != nil {
			t.Errorf("agent.ping's copy has an ItemExtra: %+v", p)
		}
		if ti := s.TemplateItem(tid); ti == nil || ti.Ext().Timeout != want || len(ti.Ext().UUID) != 32 {
			t.Errorf("template item: %+v", ti)
		}
	}
	check(f.c.Snapshot(), "9s")
	f.reload(t)
	old := f.c.Snapshot()
	check(old, "9s")
	to := "4s"
	mustEdit(t, f.c, func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: tid, Timeout: &to}}) })
	check(f.c.Snapshot(), "4s")
	check(old, "9s")
	f.reload(t)
	check(f.c.Snapshot(), "4s")
	if !reflect.DeepEqual(noExtra, ItemExtra{}) {
		t.Fatalf("the shared empty ItemExtra was written: %+v", noExtra)
	}
}
