package server

import (
	"strconv"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
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
