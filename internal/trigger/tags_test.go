package trigger

import (
	"context"
	"slices"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
)

// TestEventItemTags: an event carries the trigger's tags, then for each
// item of the problem expression in order of appearance the item's tags
// and its host's, each pair once, as Zabbix 6.0.14 made them (the API's
// testdata/itemtags/itemtags.jsonl has the peer's answers; this test
// covers the machine's paths: the expansion cache, an OK event made by
// hand (no tags), a change of an item's tags).
func TestEventItemTags(t *testing.T) {
	e := newEnv(t)
	snap := e.cat.Snapshot()
	a, b := snap.Lookup("h1", "a").ID, snap.Lookup("h1", "b").ID
	setTags := func(id uint64, tags ...catalog.Tag) {
		t.Helper()
		if _, err := e.cat.Edit(context.Background(), func(ed *catalog.Edit) error {
			return ed.UpdateItems([]catalog.ItemUpdate{{ID: id, Tags: &tags}})
		}); err != nil {
			t.Fatal(err)
		}
	}
	setTags(a, catalog.Tag{Tag: "component", Value: "{HOST.NAME}"}, catalog.Tag{Tag: "scope", Value: "x"}, catalog.Tag{Tag: "v", Value: "{ITEM.VALUE}"})
	setTags(b, catalog.Tag{Tag: "component", Value: "b"})
	// b first in the expression, a only in the recovery expression:
	// b's tags, the host's, none of a's.
	rec := e.trigger(catalog.TriggerFields{Description: "rec", Expression: "last(/h1/b)>1", RecoveryMode: catalog.RecoverRecoveryExpression,
		RecoveryExpression: "last(/h1/a)<1", ManualClose: true})
	// b before a; {HOST.NAME} in the name makes the cached path.
	both := e.trigger(catalog.TriggerFields{Description: "both on {HOST.NAME}", Expression: "last(/h1/b)>1 or last(/h1/a)>1",
		Tags: []catalog.Tag{{Tag: "scope", Value: "x"}, {Tag: "{HOST.HOST}", Value: "{ITEM.VALUE}"}}})
	one := e.trigger(catalog.TriggerFields{Description: "one", Expression: "last(/h1/a)>1", ManualClose: true})
	if _, err := e.m.Process(e.cat.Snapshot(), []Result{
		{TriggerID: rec, Value: Problem, Clock: 10, ItemValues: []string{"5"}},
		{TriggerID: both, Value: Problem, Clock: 10, ItemValues: []string{"5", "7"}},
		{TriggerID: one, Value: Problem, Clock: 10, ItemValues: []string{"7"}},
	}); err != nil {
		t.Fatal(err)
	}
	host := []event.Tag{{Tag: "env", Value: "Host one"}, {Tag: "scope", Value: "x"}}
	aTags := []event.Tag{{Tag: "component", Value: "Host one"}, {Tag: "scope", Value: "x"}, {Tag: "v", Value: "{ITEM.VALUE}"}}
	check := func(trig uint64, want ...event.Tag) event.Event {
		t.Helper()
		ev, ok := e.store.LastEvent(trig)
		if !ok {
			t.Fatalf("no event of trigger %d", trig)
		}
		if !slices.Equal(ev.Tags, want) {
			t.Errorf("trigger %d: tags %v, want %v", trig, ev.Tags, want)
		}
		return ev
	}
	check(rec, slices.Concat([]event.Tag{{Tag: "component", Value: "b"}}, host)...)
	check(both, slices.Concat([]event.Tag{{Tag: "scope", Value: "x"}, {Tag: "h1", Value: "5"}, {Tag: "component", Value: "b"}},
		host[:1], aTags[:1], aTags[2:])...)
	pr := check(one, slices.Concat(aTags, host[:1])...)

	// Closed by hand: the OK event has no tags (6.0.14, the
	// correlation_mode conformance case).
	if err := e.m.Acknowledge(e.cat.Snapshot(), AckRequest{EventIDs: []uint64{pr.ID}, Action: event.ActionClose, UserID: 1, Clock: 11}); err != nil {
		t.Fatal(err)
	}
	check(one)

	// The item's new tags show in the next event.
	setTags(a, catalog.Tag{Tag: "new", Value: "1"})
	if _, err := e.m.Process(e.cat.Snapshot(), []Result{{TriggerID: one, Value: Problem, Clock: 12, ItemValues: []string{"8"}},
		{TriggerID: both, Value: OK, Clock: 12}}); err != nil {
		t.Fatal(err)
	}
	check(one, slices.Concat([]event.Tag{{Tag: "new", Value: "1"}}, host)...)
	check(both, slices.Concat([]event.Tag{{Tag: "scope", Value: "x"}, {Tag: "h1", Value: "*UNKNOWN*"}, {Tag: "component", Value: "b"}},
		host[:1], []event.Tag{{Tag: "new", Value: "1"}})...)
}
