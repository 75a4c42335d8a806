package trigger

import (
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
)

// TestSoftHardStates: with max_check_attempts 3 a problem is raised
// (one HARD event) only at the third consecutive PROBLEM; an OK in
// between starts the count over; OnSoft hears the soft state start and
// end; recovery is immediate; max_check_attempts 1 is Zabbix's behaviour.
func TestSoftHardStates(t *testing.T) {
	e := newEnv(t)
	var calls []bool
	var err error
	e.m, err = New(Options{Store: e.store, OnSoft: func(_ *catalog.Trigger, soft bool) { calls = append(calls, soft) }})
	if err != nil {
		t.Fatal(err)
	}
	id := e.trigger(catalog.TriggerFields{Description: "svc", Expression: "last(/h1/a)>0", MaxCheckAttempts: 3})
	snap := e.cat.Snapshot()
	run := func(v Value, clock int64) Outcome {
		t.Helper()
		out, err := e.m.Process(snap, []Result{{TriggerID: id, Value: v, Clock: clock}})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	check := func(step string, soft bool, attempt uint8, value uint8, open int) {
		t.Helper()
		st := e.m.Soft(id)
		if st.Soft != soft || st.Attempt != attempt || e.m.Runtime(id).Value != value || len(e.store.OpenProblemsOf(id)) != open {
			t.Fatalf("%s: soft %+v, value %d, %d open; want soft %v attempt %d, value %d, %d open",
				step, st, e.m.Runtime(id).Value, len(e.store.OpenProblemsOf(id)), soft, attempt, value, open)
		}
	}
	run(Problem, 100)
	check("1st problem", true, 1, event.ValueOK, 0)
	run(OK, 110)
	check("ok resets", false, 0, event.ValueOK, 0)
	run(Problem, 120)
	run(Problem, 130)
	check("2nd problem", true, 2, event.ValueOK, 0)
	run(Unknown, 135)
	check("unknown keeps the count", true, 2, event.ValueOK, 0)
	out := run(Problem, 140)
	check("3rd problem: HARD", false, 0, event.ValueProblem, 1)
	if out.Problems != 1 || e.store.OpenProblemsOf(id)[0].Clock != 140 {
		t.Fatalf("hard problem: outcome %+v, events %+v", out, e.store.OpenProblemsOf(id))
	}
	run(Problem, 150)
	check("still a problem", false, 0, event.ValueProblem, 1)
	run(OK, 160)
	check("recovery is immediate", false, 0, event.ValueOK, 0)
	if want := []bool{true, false, true, false}; len(calls) != len(want) || calls[0] != want[0] || calls[1] != want[1] || calls[2] != want[2] || calls[3] != want[3] {
		t.Fatalf("OnSoft calls %v, want %v", calls, want)
	}
	// max_check_attempts 1: the first PROBLEM is the event.
	one := e.trigger(catalog.TriggerFields{Description: "plain", Expression: "last(/h1/b)>0"})
	snap = e.cat.Snapshot()
	if out, _ := e.m.Process(snap, []Result{{TriggerID: one, Value: Problem, Clock: 200}}); out.Problems != 1 {
		t.Fatalf("max_check_attempts 1: %+v", out)
	}
}
