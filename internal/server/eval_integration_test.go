package server

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestIntegrationTriggerEvaluation: a trapper item and triggers created
// through the API; values sent with the real zabbix_sender raise and
// resolve problems visible in problem.get, with no help from the test
// (evaluation on commit, the pipeline's hook).
func TestIntegrationTriggerEvaluation(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs the real zabbix_sender")
	}
	testutil.Need(t, "zabbix_sender", "zabbix-agent")
	s, _ := runServer(t, testConfig(t, catalog.Spec{}))
	admin := adminLogin(t, s)
	var g struct{ GroupIDs []string }
	admin.ok("hostgroup.create", map[string]any{"name": "Eval"}, &g)
	var h struct{ HostIDs []string }
	admin.ok("host.create", map[string]any{"host": "eval-host", "groups": []map[string]string{{"groupid": g.GroupIDs[0]}}}, &h)
	admin.ok("item.create", map[string]any{"name": "load", "key_": "load", "hostid": h.HostIDs[0], "type": 2, "value_type": 0}, nil)
	var plain, rec struct{ TriggerIDs []string }
	admin.ok("trigger.create", map[string]any{
		"description": "Load on {HOST.HOST} is {ITEM.VALUE}", "expression": "last(/eval-host/load)>10", "priority": 4,
	}, &plain)
	admin.ok("trigger.create", map[string]any{
		"description": "Load stays high", "expression": "last(/eval-host/load)>10", "priority": 2,
		"recovery_mode": 1, "recovery_expression": "last(/eval-host/load)<5",
	}, &rec)

	type problem struct{ EventID, ObjectID, Name, Severity, Clock string }
	// problems polls problem.get until it holds want problems: evaluation
	// runs on its own goroutine after the sender's values are committed.
	problems := func(want int) []problem {
		t.Helper()
		var ps []problem
		for i := 0; ; i++ {
			admin.ok("problem.get", map[string]any{"output": "extend", "sortfield": "eventid"}, &ps)
			if len(ps) == want {
				return ps
			}
			if i == 500 {
				t.Fatalf("problem.get: %d problems after 10 s, want %d: %+v", len(ps), want, ps)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	send := func(v string) {
		t.Helper()
		if r := testutil.RunSender(t, s.TrapperAddr().String(), "-s", "eval-host", "-k", "load", "-o", v); r.Processed != 1 {
			t.Fatalf("zabbix_sender: %+v", r)
		}
	}

	send("42")
	ps := problems(2)
	byTrigger := map[string]problem{}
	for _, p := range ps {
		byTrigger[p.ObjectID] = p
	}
	if p := byTrigger[plain.TriggerIDs[0]]; p.Name != "Load on eval-host is 42" || p.Severity != "4" {
		t.Fatalf("problem of last()>10: %+v", p)
	}
	if p := byTrigger[rec.TriggerIDs[0]]; p.Name != "Load stays high" || p.Severity != "2" {
		t.Fatalf("problem of the recovery-expression trigger: %+v", p)
	}

	// 7: the plain trigger recovers; the other waits for its recovery
	// expression (< 5).
	send("7")
	ps = problems(1)
	if ps[0].ObjectID != rec.TriggerIDs[0] {
		t.Fatalf("after 7 the open problem is of trigger %s, want %s", ps[0].ObjectID, rec.TriggerIDs[0])
	}
	send("1")
	problems(0)
	var trigs []struct{ TriggerID, Value string }
	admin.ok("trigger.get", map[string]any{"output": []string{"value"}, "hostids": h.HostIDs}, &trigs)
	if len(trigs) != 2 || trigs[0].Value != "0" || trigs[1].Value != "0" {
		t.Fatalf("trigger.get after recovery: %+v", trigs)
	}
	var events []struct{ EventID, ObjectID, Value string }
	admin.ok("event.get", map[string]any{"output": "extend", "objectids": plain.TriggerIDs}, &events)
	if len(events) != 2 {
		t.Fatalf("events of last()>10: %+v, want one PROBLEM and one OK", events)
	}
}

// TestIntegrationTriggerBurstEveryValue: a backfill (the real
// zabbix_sender sending 3,000 timestamped values of one item in one go,
// as a proxy catching up after an outage does) is evaluated value by
// value: each spike of a 9 among 0s raises a problem and its recovery at
// the values' clocks, for last() and for avg(#3). Before issue 30 a
// trigger kept 16 times waiting and merged the rest, so spikes inside a
// merged span made no event. With triggers.max_pending at its minimum and
// one evaluation shard, a frame's 250 values to five triggers (1,250
// evaluations) overflow the queue: the burst is re-read from the history
// store, with the same events.
func TestIntegrationTriggerBurstEveryValue(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs the real zabbix_sender")
	}
	testutil.Need(t, "zabbix_sender", "zabbix-agent")
	for _, maxPending := range []int{0, 1024} {
		t.Run(fmt.Sprint("max_pending=", maxPending), func(t *testing.T) {
			cfg := testConfig(t, catalog.Spec{})
			if maxPending > 0 {
				cfg.Triggers.MaxPending, cfg.Triggers.EvalShards = maxPending, 1
			}
			s, _ := runServer(t, cfg)
			admin := adminLogin(t, s)
			var g struct{ GroupIDs []string }
			admin.ok("hostgroup.create", map[string]any{"name": "Burst"}, &g)
			var h struct{ HostIDs []string }
			admin.ok("host.create", map[string]any{"host": "burst-host", "groups": []map[string]string{{"groupid": g.GroupIDs[0]}}}, &h)
			admin.ok("item.create", map[string]any{"name": "v", "key_": "v", "hostid": h.HostIDs[0], "type": 2, "value_type": 0}, nil)
			var last, avg, max2, last6, last7 struct{ TriggerIDs []string }
			admin.ok("trigger.create", map[string]any{"description": "last", "expression": "last(/burst-host/v)>5"}, &last)
			admin.ok("trigger.create", map[string]any{"description": "avg", "expression": "avg(/burst-host/v,#3)>2"}, &avg)
			admin.ok("trigger.create", map[string]any{"description": "max", "expression": "max(/burst-host/v,#2)>5"}, &max2)
			admin.ok("trigger.create", map[string]any{"description": "last6", "expression": "last(/burst-host/v)>6"}, &last6)
			admin.ok("trigger.create", map[string]any{"description": "last7", "expression": "last(/burst-host/v)>7"}, &last7)

			const n = 3000
			spikes := []int{500, 1700, 2900}
			start := time.Now().Add(-2 * time.Hour).Unix()
			var file strings.Builder
			for i := range n {
				v := 0
				if slices.Contains(spikes, i) {
					v = 9
				}
				fmt.Fprintf(&file, "burst-host v %d %d\n", start+int64(i), v)
			}
			path := filepath.Join(t.TempDir(), "values")
			if err := os.WriteFile(path, []byte(file.String()), 0o600); err != nil {
				t.Fatal(err)
			}
			if r := testutil.RunSender(t, s.TrapperAddr().String(), "-T", "-i", path); r.Processed != n {
				t.Fatalf("zabbix_sender: processed %d of %d: %+v", r.Processed, n, r)
			}
			type ev struct{ Clock, Value string }
			events := func(triggerID string) []ev {
				t.Helper()
				var evs []ev
				for i := 0; ; i++ {
					admin.ok("event.get", map[string]any{"output": []string{"clock", "value"}, "objectids": triggerID, "sortfield": []string{"clock", "eventid"}}, &evs)
					if len(evs) >= 2*len(spikes) {
						return evs
					}
					if i == 1000 {
						t.Fatalf("event.get: %d events after 20 s, want %d: %+v", len(evs), 2*len(spikes), evs)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			for _, tc := range []struct {
				id    string
				after int // values from the spike to the recovery
			}{{last.TriggerIDs[0], 1}, {avg.TriggerIDs[0], 3}, {max2.TriggerIDs[0], 2}, {last6.TriggerIDs[0], 1}, {last7.TriggerIDs[0], 1}} {
				var want []ev
				for _, sp := range spikes {
					want = append(want, ev{fmt.Sprint(start + int64(sp)), "1"}, ev{fmt.Sprint(start + int64(sp+tc.after)), "0"})
				}
				if got := events(tc.id); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("trigger %s events %v, want %v", tc.id, got, want)
				}
			}
			var m strings.Builder
			s.Metrics.WriteText(&m)
			backlogged := ""
			for _, line := range strings.Split(m.String(), "\n") {
				if v, ok := strings.CutPrefix(line, "peregrine_trigger_eval_backlogged_total "); ok {
					backlogged = v
				}
			}
			if (maxPending > 0) != (backlogged != "0") {
				t.Fatalf("peregrine_trigger_eval_backlogged_total %s with max_pending %d", backlogged, maxPending)
			}
		})
	}
}
