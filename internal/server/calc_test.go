package server

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// TestCalculatedItems: calculated items are evaluated by the poller on
// their interval from the values in history, their results stored like
// any value; a formula that cannot be evaluated makes its item not
// supported with the reason; the catalog refuses a formula that does
// not parse, with the position.
func TestCalculatedItems(t *testing.T) {
	spec := catalog.Spec{Hosts: []catalog.HostSpec{{Host: "calc-host", Groups: []string{"g"}, Items: []catalog.ItemSpec{
		{Key: "used", ValueType: "unsigned"},
		{Key: "total", ValueType: "unsigned"},
		{Key: "pused", Type: "calculated", Delay: "1s", Params: "last(//used)/last(//total)*100"},
		{Key: "broken", Type: "calculated", Delay: "1s", Params: "last(//nope)+1"},
	}}}}
	s, _ := runServer(t, testConfig(t, spec))
	admin := adminLogin(t, s)
	snap := s.Catalog.Snapshot()
	used, total := snap.Lookup("calc-host", "used").ID, snap.Lookup("calc-host", "total").ID
	now := time.Now().Unix()
	admin.ok("history.push", []map[string]any{
		{"itemid": used, "value": 25, "clock": now},
		{"itemid": total, "value": 200, "clock": now},
	}, nil)

	pused := snap.Lookup("calc-host", "pused").ID
	var last string
	waitFor(t, func() string { return "pused last value " + strconv.Quote(last) }, func() bool {
		rows := historyGet(admin, pused, 0)
		if len(rows) > 0 {
			last = rows[len(rows)-1].Value
		}
		return last == "12.5"
	})

	broken := strconv.FormatUint(snap.Lookup("calc-host", "broken").ID, 10)
	var state, msg string
	waitFor(t, func() string { return "broken state " + state + " error " + strconv.Quote(msg) }, func() bool {
		var rows []struct{ State, Error string }
		admin.ok("item.get", map[string]any{"itemids": []string{broken}, "output": []string{"state", "error"}}, &rows)
		if len(rows) == 1 {
			state, msg = rows[0].State, rows[0].Error
		}
		return state == "1" && strings.Contains(msg, `item "/calc-host/nope" does not exist`)
	})

	bad := catalog.Spec{Hosts: []catalog.HostSpec{{Host: "calc-host", Groups: []string{"g"}, Items: []catalog.ItemSpec{
		{Key: "worse", Type: "calculated", Params: "last(//used)+"},
	}}}}
	_, err := s.Catalog.Apply(context.Background(), bad)
	if err == nil || !strings.Contains(err.Error(), "incorrect expression") || !strings.Contains(err.Error(), "position 13") {
		t.Fatalf("Apply of a bad formula: %v; want the parse error with its position", err)
	}
}
