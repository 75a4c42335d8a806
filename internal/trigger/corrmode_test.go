package trigger

import (
	"context"
	"slices"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
)

// cmStep is one input of a correlation-by-tag test and what holds after
// it. The trigger's tag "port" is {ITEM.VALUE}, so val makes a problem
// (or an OK event) of its own value.
type cmStep struct {
	clock int64
	v     Value
	rec   bool   // the recovery expression is true
	val   string // {ITEM.VALUE} of the evaluation
	close string // instead of evaluating: close by hand the problem whose first tag is this

	open       []string // the open problems' first tags, "name=value", in ID order
	value      uint8    // the trigger's value
	lastChange int64
	events     int // the trigger's events so far
}

// TestCorrelationByTag replays what the Zabbix 6.0.14 peer did with
// triggers whose OK event closes "all problems if tag values match"
// (correlation_mode 1, correlation_tag "port"): the correlation_mode
// conformance case (testdata/golden/correlation_mode.json in package
// conformance) holds its answers, clock for clock. An OK event that
// matches no problem is not made and changes nothing; while problems
// stay open the trigger stays PROBLEM with its last change at the OK
// event's (or the manual close's) time.
func TestCorrelationByTag(t *testing.T) {
	port := []catalog.Tag{{Tag: "port", Value: "{ITEM.VALUE}"}}
	byTag := func(f catalog.TriggerFields) catalog.TriggerFields {
		f.Description, f.Expression, f.ManualClose = "T {ITEM.VALUE}", "last(/h1/a)>1", true
		if f.CorrelationMode == 0 && f.CorrelationTag == "" && f.Tags == nil {
			f.CorrelationMode, f.CorrelationTag = 1, "port"
		}
		if f.Tags == nil {
			f.Tags = port
		}
		return f
	}
	f := func(name string, tf catalog.TriggerFields, steps ...cmStep) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			id := e.trigger(byTag(tf))
			for i, s := range steps {
				if s.close != "" {
					var target uint64
					for _, ev := range e.store.OpenProblemsOf(id) {
						if len(ev.Tags) > 0 && ev.Tags[0].Tag+"="+ev.Tags[0].Value == s.close {
							target = ev.ID
							break
						}
					}
					if err := e.m.Acknowledge(e.cat.Snapshot(), AckRequest{EventIDs: []uint64{target}, Action: event.ActionClose, UserID: 1, Clock: s.clock}); err != nil {
						t.Fatalf("step %d: close %s: %v", i, s.close, err)
					}
				} else if _, err := e.m.Process(e.cat.Snapshot(), []Result{{TriggerID: id, Value: s.v, Recovered: s.rec, Clock: s.clock, ItemValues: []string{s.val}}}); err != nil {
					t.Fatal(err)
				}
				var open []string
				for _, ev := range e.store.OpenProblemsOf(id) {
					open = append(open, ev.Tags[0].Tag+"="+ev.Tags[0].Value)
				}
				rt := e.m.Runtime(id)
				n := len(e.store.Events(func(ev *event.Event) bool { return ev.ObjectID == id }))
				if !slices.Equal(open, s.open) || rt.Value != s.value || rt.LastChange != s.lastChange || n != s.events {
					t.Errorf("step %d (%+v): open %q value %d last change %d, %d events; want %q %d %d %d",
						i, s, open, rt.Value, rt.LastChange, n, s.open, s.value, s.lastChange, s.events)
				}
			}
		})
	}
	p := func(clock int64, val string, open []string, lc int64, events int) cmStep {
		return cmStep{clock: clock, v: Problem, val: val, open: open, value: 1, lastChange: lc, events: events}
	}
	ok := func(clock int64, val string, open []string, value uint8, lc int64, events int) cmStep {
		return cmStep{clock: clock, v: OK, rec: true, val: val, open: open, value: value, lastChange: lc, events: events}
	}
	o := func(s ...string) []string { return s }

	// cf-cm-Ta: recovery by expression; an empty value is a value.
	f("expression", catalog.TriggerFields{Multiple: true},
		p(20, "1", o("port=1"), 20, 1),
		p(30, "2", o("port=1", "port=2"), 30, 2),
		p(40, "", o("port=1", "port=2", "port="), 40, 3),
		p(50, "1", o("port=1", "port=2", "port=", "port=1"), 50, 4),
		cmStep{clock: 55, close: "port=2", open: o("port=1", "port=", "port=1"), value: 1, lastChange: 55, events: 5},
		ok(60, "1", o("port="), 1, 60, 6), // one OK event closes both port=1
		ok(70, "9", o("port="), 1, 60, 6), // nothing matches: no event
		ok(80, "", nil, 0, 80, 7),
	)
	// cf-cm-Tb: recovery expression; false, then true twice.
	f("recovery expression", catalog.TriggerFields{Multiple: true, RecoveryMode: catalog.RecoverRecoveryExpression, RecoveryExpression: "last(/h1/b)=2"},
		p(20, "1", o("port=1"), 20, 1),
		p(30, "2", o("port=1", "port=2"), 30, 2),
		p(40, "3", o("port=1", "port=2", "port=3"), 40, 3),
		cmStep{clock: 50, v: OK, val: "3", open: o("port=1", "port=2", "port=3"), value: 1, lastChange: 40, events: 3},
		ok(60, "3", o("port=1", "port=2"), 1, 60, 4),
		ok(70, "1", o("port=2"), 1, 70, 5),
	)
	// cf-cm-Ts: single problem event mode.
	f("single", catalog.TriggerFields{},
		p(20, "1", o("port=1"), 20, 1),
		p(30, "2", o("port=1"), 20, 1), // no second problem
		ok(40, "2", o("port=1"), 1, 20, 1),
		ok(50, "1", nil, 0, 50, 2),
	)
	// cf-cm-Tm: the tag's name is the value, the correlation tag p1:
	// an OK event without p1 closes nothing, a problem without it is
	// never closed by a recovery.
	f("tag missing on the recovery", catalog.TriggerFields{Multiple: true, CorrelationMode: 1, CorrelationTag: "p1",
		Tags: []catalog.Tag{{Tag: "{ITEM.VALUE}", Value: "v"}}},
		p(20, "p1", o("p1=v"), 20, 1),
		p(30, "p2", o("p1=v", "p2=v"), 30, 2),
		ok(40, "p2", o("p1=v", "p2=v"), 1, 30, 2),
		ok(50, "p1", o("p2=v"), 1, 50, 3),
	)
	// cf-cm-Tn: without correlation, one OK event closes all.
	f("all problems", catalog.TriggerFields{Multiple: true, CorrelationTag: "", Tags: port},
		p(20, "1", o("port=1"), 20, 1),
		p(30, "5", o("port=1", "port=5"), 30, 2),
		ok(40, "5", nil, 0, 40, 3),
	)
}

// TestCorrelationByTagEvents: the events' texts as 6.0.14 made them (the
// correlation_mode conformance case): a recovery's OK event is named and
// tagged with its own evaluation's values and resolves only the
// matching problems; a manual close's OK event has no tags.
func TestCorrelationByTagEvents(t *testing.T) {
	e := newEnv(t)
	id := e.trigger(catalog.TriggerFields{Description: "T {ITEM.VALUE}", Expression: "last(/h1/a)>1", Multiple: true, ManualClose: true,
		CorrelationMode: 1, CorrelationTag: "port", Tags: []catalog.Tag{{Tag: "port", Value: "{ITEM.VALUE}"}}})
	for i, v := range []string{"1", "2", "1"} {
		if _, err := e.m.Process(e.cat.Snapshot(), []Result{{TriggerID: id, Value: Problem, Clock: int64(10 + i), ItemValues: []string{v}}}); err != nil {
			t.Fatal(err)
		}
	}
	open := e.store.OpenProblemsOf(id)
	if _, err := e.m.Process(e.cat.Snapshot(), []Result{{TriggerID: id, Value: OK, Clock: 20, ItemValues: []string{"1"}}}); err != nil {
		t.Fatal(err)
	}
	ok, _ := e.store.LastEvent(id)
	host := []event.Tag{{Tag: "env", Value: "Host one"}, {Tag: "scope", Value: "x"}}
	if ok.Value != event.ValueOK || ok.Name != "T 1" || !slices.Equal(ok.Tags, append([]event.Tag{{Tag: "port", Value: "1"}}, host...)) ||
		!slices.Equal(ok.Resolves, []uint64{open[0].ID, open[2].ID}) || ok.UserID != 0 || ok.CorrelationID != 0 {
		t.Errorf("OK event %+v, want T 1 with port=1 resolving %d and %d", ok, open[0].ID, open[2].ID)
	}
	if err := e.m.Acknowledge(e.cat.Snapshot(), AckRequest{EventIDs: []uint64{open[1].ID}, Action: event.ActionClose, UserID: 1, Clock: 30}); err != nil {
		t.Fatal(err)
	}
	closed, _ := e.store.LastEvent(id)
	if closed.Value != event.ValueOK || len(closed.Tags) != 0 || closed.UserID != 1 || !slices.Equal(closed.Resolves, []uint64{open[1].ID}) {
		t.Errorf("manual close's OK event %+v, want no tags, user 1, resolving %d", closed, open[1].ID)
	}
	if rt := e.m.Runtime(id); rt.Value != event.ValueOK || rt.LastChange != 30 {
		t.Errorf("runtime %+v, want OK since 30", rt)
	}
}

// TestCorrelationByTagWithRules: recorded from 6.0.14 (s9-corrmode-Tg):
// a global rule closing old events with the same "port" (and the new
// event's tag s9cm) and a trigger with correlation by tag. The third
// problem (port 1) closes the first by the rule, the trigger stays
// PROBLEM; the recovery with port 1 then closes the third only, the one
// with port 2 the second, and the trigger becomes OK. (6.0.14 also made,
// at each of these recoveries, a second OK event without tags that
// resolves nothing; Peregrine does not: docs/compat.md.)
func TestCorrelationByTagWithRules(t *testing.T) {
	e := newEnv(t)
	var err error
	if e.m, err = New(Options{Store: e.store, Correlations: e.cat.AlertConfig}); err != nil {
		t.Fatal(err)
	}
	id := e.trigger(catalog.TriggerFields{Description: "Tg", Expression: "last(/h1/a)>1", Multiple: true,
		CorrelationMode: 1, CorrelationTag: "port", Tags: []catalog.Tag{{Tag: "port", Value: "{ITEM.VALUE}"}, {Tag: "s9cm", Value: "1"}}})
	if err := e.cat.EditAlerts(context.Background(), func(cfg *catalog.AlertConfig) error {
		cfg.Correlations = map[uint64]*catalog.Correlation{1: {ID: 1, Name: "pair", Conditions: []catalog.CorrCondition{
			{Type: catalog.CorrTagPair, OldTag: "port", NewTag: "port", FormulaID: "A"}, {Type: catalog.CorrNewTag, Tag: "s9cm", FormulaID: "B"}},
			Operations: []int{catalog.CorrCloseOld}}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	step := func(v Value, clock int64, val string, wantOpen []string, wantValue uint8, wantLC int64) {
		t.Helper()
		if _, err := e.m.Process(e.cat.Snapshot(), []Result{{TriggerID: id, Value: v, Clock: clock, ItemValues: []string{val}}}); err != nil {
			t.Fatal(err)
		}
		var open []string
		for _, ev := range e.store.OpenProblemsOf(id) {
			open = append(open, ev.Tags[0].Value)
		}
		if rt := e.m.Runtime(id); !slices.Equal(open, wantOpen) || rt.Value != wantValue || rt.LastChange != wantLC {
			t.Errorf("after %d at %d: open %q, value %d since %d; want %q %d %d", v, clock, open, rt.Value, rt.LastChange, wantOpen, wantValue, wantLC)
		}
	}
	step(Problem, 10, "1", []string{"1"}, 1, 10)
	step(Problem, 20, "2", []string{"1", "2"}, 1, 20)
	step(Problem, 30, "1", []string{"2", "1"}, 1, 30)
	evs := e.store.Events(func(ev *event.Event) bool { return ev.ObjectID == id })
	if len(evs) != 4 || evs[3].CorrelationID != 1 || evs[3].Value != event.ValueOK || len(evs[3].Tags) != 0 || !slices.Equal(evs[3].Resolves, []uint64{evs[0].ID}) {
		t.Fatalf("events %+v, want the rule's OK event closing the first problem", evs)
	}
	step(OK, 40, "1", []string{"2"}, 1, 40)
	step(OK, 50, "2", nil, 0, 50)
	if n := len(e.store.Events(func(ev *event.Event) bool { return ev.ObjectID == id })); n != 6 {
		t.Errorf("%d events, want 6", n)
	}
}
