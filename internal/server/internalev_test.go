package server

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/lld"
)

// TestInternalEvents: an item becoming not supported, then normal again,
// makes an internal problem (source 3, object 4, the error as its name)
// and the OK event that resolves it, both in event.get.
func TestInternalEvents(t *testing.T) {
	s := startServer(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h", Groups: []string{"G"},
		Items: []catalog.ItemSpec{{Key: "k", Type: "trapper", ValueType: "float"}}}}})
	c := adminLogin(t, s)
	it := s.Catalog.Snapshot().Lookup("h", "k")
	s.ItemStates.SetItemState(it.ID, itemstate.Item{NotSupported: true, Error: "Unsupported item key."})
	s.ItemStates.SetItemState(it.ID, itemstate.Item{NotSupported: true, Error: "Unsupported item key."})
	var evs []map[string]any
	get := func() {
		c.ok("event.get", map[string]any{"source": 3, "object": 4, "output": "extend", "sortfield": "eventid"}, &evs)
	}
	waitFor(t, func() string { return "no internal problem" }, func() bool { get(); return len(evs) == 1 })
	s.ItemStates.SetItemState(it.ID, itemstate.Item{})
	waitFor(t, func() string { return "no recovery" }, func() bool { get(); return len(evs) == 2 })
	p, ok := evs[0], evs[1]
	if p["value"] != "1" || p["name"] != "Unsupported item key." || p["objectid"] != strconv.FormatUint(it.ID, 10) || ok["value"] != "0" {
		t.Fatalf("events %v", evs)
	}
	if p["r_eventid"] != ok["eventid"] {
		t.Errorf("problem's r_eventid %v, want %v", p["r_eventid"], ok["eventid"])
	}
	time.Sleep(100 * time.Millisecond)
	var probs []map[string]any
	c.ok("problem.get", map[string]any{"output": "extend"}, &probs)
	if len(probs) != 0 {
		t.Errorf("problem.get shows internal events: %v", probs)
	}
}

// TestInternalEventsLLDRule: a discovery rule whose value is not LLD
// JSON makes an internal problem of an LLD rule (source 3, object 5),
// not of an item, and its next good value resolves it.
func TestInternalEventsLLDRule(t *testing.T) {
	s := startServer(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h", Groups: []string{"G"}}}})
	c := adminLogin(t, s)
	var rule uint64
	host := s.Catalog.Snapshot().Host("h").ID
	if _, err := s.Catalog.Edit(context.Background(), func(e *catalog.Edit) error {
		ids, err := e.CreateItems([]catalog.NewItem{{HostID: host, ItemSpec: catalog.ItemSpec{Key: "r", Type: "trapper"},
			LLD: &catalog.LLDRule{}}})
		if err == nil {
			rule = ids[0]
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	s.LLD.Apply(context.Background(), []lld.Value{{RuleID: rule, Value: "not json"}})
	var evs []map[string]any
	get := func(object int) {
		c.ok("event.get", map[string]any{"source": 3, "object": object, "output": "extend", "sortfield": "eventid"}, &evs)
	}
	waitFor(t, func() string { return "no LLD rule problem" }, func() bool { get(5); return len(evs) == 1 })
	if evs[0]["objectid"] != strconv.FormatUint(rule, 10) || evs[0]["value"] != "1" || evs[0]["name"] == "" {
		t.Fatalf("LLD rule events %v", evs)
	}
	s.LLD.Apply(context.Background(), []lld.Value{{RuleID: rule, Value: "[]"}})
	waitFor(t, func() string { return "no recovery" }, func() bool { get(5); return len(evs) == 2 })
	get(4)
	if len(evs) != 0 {
		t.Errorf("the rule's state made item events: %v", evs)
	}
}
