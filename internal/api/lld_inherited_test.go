package api

import (
	"context"
	"fmt"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// TestInheritedPrototypeEdits: the owner of a rule copied from a
// template changes its item prototype's status (the name is ignored),
// and is refused the trigger prototype's name and both deletes, worded
// as 6.0.14 (conformance case inherited_edits); a discovered trigger
// whose status changed stays discovered.
func TestInheritedPrototypeEdits(t *testing.T) {
	f, rule := newLLDFixture(t)
	ip, tp := rule.Ext().LLD.ItemPrototypes[0], rule.Ext().LLD.TriggerPrototypes[0]
	f.must(t, "itemprototype.update", fmt.Sprintf(`{"itemid":"%d","status":1,"name":"renamed"}`, ip.ID))
	got := f.cat.Snapshot().Lookup("h", "lld.disc").Ext().LLD.ItemPrototypes[0]
	if got.Item.Status != "disabled" || got.Item.Name != ip.Item.Name {
		t.Errorf("copy's item prototype after update: status %q, name %q", got.Item.Status, got.Item.Name)
	}
	for _, c := range []struct{ method, params, want string }{
		{"triggerprototype.update", fmt.Sprintf(`{"triggerid":"%d","description":"x"}`, tp.ID), `Cannot update "description" for templated trigger prototype "x".`},
		{"itemprototype.delete", fmt.Sprintf(`["%d"]`, ip.ID), "Cannot delete templated item prototype."},
		{"triggerprototype.delete", fmt.Sprintf(`["%d"]`, tp.ID), `Cannot delete templated trigger prototype "tp {#X}:last(/h/lld.p[{#X}])>1".`},
	} {
		if _, e := f.call(t, "super", c.method, c.params); e == nil || e.Data != c.want {
			t.Errorf("%s %s: %+v, want %q", c.method, c.params, e, c.want)
		}
	}
	var tr *catalog.Trigger
	for _, x := range f.cat.Snapshot().Triggers() {
		if x.Discovery != nil {
			tr = &x
			break
		}
	}
	if tr == nil {
		t.Fatal("no discovered trigger")
	}
	if _, err := f.cat.Edit(context.Background(), func(e *catalog.Edit) error {
		return e.UpdateTriggers([]catalog.TriggerUpdate{{ID: tr.ID, Enabled: new(false)}})
	}); err != nil {
		t.Fatal(err)
	}
	if n := f.cat.Snapshot().Trigger(tr.ID); n == nil || n.Discovery == nil || n.Enabled {
		t.Errorf("discovered trigger after a status change: %+v", n)
	}
}
