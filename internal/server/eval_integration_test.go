package server

import (
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
