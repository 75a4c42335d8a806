package server

import (
	"strconv"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/trigger"
)

// TestProblemsSurviveRestart creates a trigger through the API, feeds
// evaluation results straight into the server's state machine (no value
// is sent, so the evaluator stays out of it; evaluation on commit is
// TestIntegrationTriggerEvaluation), reads the problem back through the API, and
// again after a restart on the same data directory, where it can still
// be acknowledged and closed.
func TestProblemsSurviveRestart(t *testing.T) {
	cfg := testConfig(t, integrationSpec())
	s, stop := runServer(t, cfg)
	admin := adminLogin(t, s)
	var created struct{ TriggerIDs []string }
	admin.ok("trigger.create", map[string]any{
		"description": "Float too high on {HOST.HOST}", "expression": "last(/peregrine-test/trap.float)>10",
		"priority": 5, "manual_close": 1, "tags": []map[string]string{{"tag": "team", "value": "ops"}},
	}, &created)
	admin.fails("trigger.create", map[string]any{"description": "bad", "expression": "last(/peregrine-test/trap.float)>"}, -32602, `Invalid parameter "/1/expression"`)
	tid, _ := strconv.ParseUint(created.TriggerIDs[0], 10, 64)
	if _, err := s.Triggers.Process(s.Catalog.Snapshot(), []trigger.Result{{TriggerID: tid, Value: trigger.Problem, Clock: 1700000000, NS: 1}}); err != nil {
		t.Fatal(err)
	}
	type problem struct {
		EventID, ObjectID, Name, Severity, Clock, Acknowledged string
		Tags                                                   []struct{ Tag, Value string }
	}
	var ps []problem
	admin.ok("problem.get", map[string]any{"output": "extend", "selectTags": "extend"}, &ps)
	if len(ps) != 1 || ps[0].Name != "Float too high on peregrine-test" || ps[0].Severity != "5" || ps[0].ObjectID != created.TriggerIDs[0] || len(ps[0].Tags) != 1 {
		t.Fatalf("problem.get: %+v", ps)
	}
	stop()

	s2, _ := runServer(t, cfg)
	admin = adminLogin(t, s2)
	var again []problem
	admin.ok("problem.get", map[string]any{"output": "extend", "selectTags": "extend"}, &again)
	if len(again) != 1 || again[0].EventID != ps[0].EventID || again[0].Name != ps[0].Name {
		t.Fatalf("problem.get after restart: %+v", again)
	}
	var trigs []struct{ Value, LastChange string }
	admin.ok("trigger.get", map[string]any{"triggerids": created.TriggerIDs, "output": []string{"value", "lastchange"}}, &trigs)
	if len(trigs) != 1 || trigs[0].Value != "1" || trigs[0].LastChange != "1700000000" {
		t.Fatalf("trigger.get after restart: %+v", trigs)
	}
	admin.ok("event.acknowledge", map[string]any{"eventids": again[0].EventID, "action": 1 | 2 | 4, "message": "fixed"}, nil)
	admin.ok("problem.get", map[string]any{}, &again)
	if len(again) != 0 {
		t.Fatalf("problems after a manual close: %+v", again)
	}

	// Deleting a trigger resolves its open problems (the server
	// reconciles after every catalog change).
	if _, err := s2.Triggers.Process(s2.Catalog.Snapshot(), []trigger.Result{{TriggerID: tid, Value: trigger.Problem, Clock: 1700000100}}); err != nil {
		t.Fatal(err)
	}
	if n := s2.Events.Stats().OpenProblems; n != 1 {
		t.Fatalf("%d open problems, want 1", n)
	}
	admin.ok("trigger.delete", created.TriggerIDs, nil)
	for i := 0; s2.Events.Stats().OpenProblems != 0; i++ {
		if i == 500 {
			t.Fatalf("the deleted trigger's problem is still open after 5 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
