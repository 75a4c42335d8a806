package server

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/config"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestIntegrationSoftHardStates runs Debian's check_dummy exiting 2
// (CRITICAL) as a Nagios plugin item whose trigger has
// max_check_attempts 3: the first CRITICAL makes the trigger SOFT (no
// problem), the item is re-checked at its retry interval (1 s instead of
// 10 s), and the third consecutive CRITICAL makes exactly one HARD
// problem, whose clock is the third value's.
func TestIntegrationSoftHardStates(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: plugin processes through a whole server")
	}
	t.Setenv("PATH", "/usr/lib/nagios/plugins:"+os.Getenv("PATH"))
	plugins := filepath.Dir(testutil.Need(t, "check_dummy", "monitoring-plugins-basic"))
	key := `nagios[check_dummy,2,down]`
	spec := catalog.Spec{Hosts: []catalog.HostSpec{{Host: "svc-host", Groups: []string{"Svc"},
		Interfaces: []catalog.InterfaceSpec{{Type: "agent", IP: "127.0.0.1", Port: "10050"}},
		Items: []catalog.ItemSpec{
			{Key: key, Type: "external", ValueType: "text", Trends: "0", Delay: "10s", RetryDelay: "1s"},
			{Key: "svc.state", Type: "dependent", ValueType: "unsigned", MasterItem: &catalog.MasterItemSpec{Key: key},
				Preprocessing: []catalog.PreprocSpec{{Type: "JSONPATH", Parameters: []string{"$.state"}}}},
		},
		Triggers: []catalog.TriggerSpec{{Name: "service critical", Expression: "last(/svc-host/svc.state)=2", Priority: "HIGH", MaxCheckAttempts: 3}},
	}}}
	s := startServerTraps(t, spec, func(c *config.Config) { c.Poll.ExternalScripts = []string{plugins} })
	c := adminLogin(t, s)
	var problems []map[string]any
	end := time.Now().Add(40 * time.Second)
	for len(problems) == 0 {
		if time.Now().After(end) {
			var trigs []map[string]any
			c.ok("trigger.get", map[string]any{"output": "extend"}, &trigs)
			var rows []map[string]string
			c.ok("history.get", map[string]any{"history": 3, "itemids": []string{strconv.FormatUint(s.Catalog.Snapshot().Lookup("svc-host", "svc.state").ID, 10)}}, &rows)
			st, _ := s.ItemStates.ItemState(s.Catalog.Snapshot().Lookup("svc-host", key).ID)
			t.Fatalf("no problem after 40 s; trigger %v, state values %v, item state %+v", trigs, rows, st)
		}
		time.Sleep(200 * time.Millisecond)
		c.ok("problem.get", map[string]any{"output": "extend"}, &problems)
	}
	time.Sleep(1500 * time.Millisecond) // one more retry-interval check: still one problem
	c.ok("problem.get", map[string]any{"output": "extend"}, &problems)
	if len(problems) != 1 {
		t.Fatalf("%d problems, want one HARD problem: %v", len(problems), problems)
	}
	clock, _ := strconv.ParseInt(problems[0]["clock"].(string), 10, 64)
	var rows []map[string]string
	state := s.Catalog.Snapshot().Lookup("svc-host", "svc.state").ID
	c.ok("history.get", map[string]any{"history": 3, "itemids": []string{strconv.FormatUint(state, 10)},
		"sortfield": "clock", "sortorder": "ASC", "time_till": clock}, &rows)
	if len(rows) != 3 {
		t.Fatalf("%d CRITICAL values up to the problem's clock %d, want 3 (two soft, one hard): %v", len(rows), clock, rows)
	}
	first, _ := strconv.ParseInt(rows[0]["clock"], 10, 64)
	third, _ := strconv.ParseInt(rows[2]["clock"], 10, 64)
	if third != clock || third-first >= 10 {
		t.Fatalf("values at %v, problem at %d: the attempts were not at the 1 s retry interval", rows, clock)
	}
	// The extension fields come only when named (not with "extend").
	var trigs []map[string]any
	c.ok("trigger.get", map[string]any{"output": []string{"value", "max_check_attempts", "state_type", "attempt"}}, &trigs)
	if len(trigs) != 1 || trigs[0]["max_check_attempts"] != "3" || trigs[0]["state_type"] != "0" || trigs[0]["value"] != "1" {
		t.Fatalf("trigger.get: %v", trigs)
	}
}
