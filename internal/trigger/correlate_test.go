package trigger

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// corrEnv is a catalog with hosts h1 (group Top/Sub, nested under Top)
// and h2 (group Other), an event store and a machine applying the
// catalog's correlation rules.
type corrEnv struct {
	t     *testing.T
	cat   *catalog.Catalog
	dir   string
	store *event.Store
	m     *Machine
	trigs map[string]uint64
	clock int64
}

func newCorrEnv(t *testing.T) *corrEnv {
	t.Helper()
	dir := t.TempDir()
	cat, err := catalog.Open(context.Background(), catalog.Options{Path: filepath.Join(dir, "catalog.db"), ExprRefs: ItemRefs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	if _, err := cat.Apply(context.Background(), catalog.Spec{Hosts: []catalog.HostSpec{
		{Host: "h0", Groups: []string{"Top"}, Items: []catalog.ItemSpec{{Key: "z"}}},
		{Host: "h1", Groups: []string{"Top/Sub"}, Items: []catalog.ItemSpec{{Key: "a"}}},
		{Host: "h2", Groups: []string{"Other"}, Items: []catalog.ItemSpec{{Key: "c"}}},
	}}); err != nil {
		t.Fatal(err)
	}
	e := &corrEnv{t: t, cat: cat, dir: filepath.Join(dir, "events"), trigs: map[string]uint64{}, clock: 1000}
	e.reopen()
	return e
}

func (e *corrEnv) reopen() {
	e.t.Helper()
	if e.store != nil {
		e.store.Close()
	}
	s, err := event.Open(event.Options{Dir: e.dir, Sync: wal.SyncNever})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { s.Close() })
	e.store = s
	if e.m, err = New(Options{Store: s, Correlations: e.cat.AlertConfig}); err != nil {
		e.t.Fatal(err)
	}
}

// trigger makes trigger name on host h1 (or h2 when name starts with
// "h2-") with tags "k=v,...", multiple problem events when name ends
// with "*".
func (e *corrEnv) trigger(name, tags string) {
	e.t.Helper()
	f := catalog.TriggerFields{Description: name, Expression: "last(/h1/a)>1", Enabled: true, Multiple: strings.HasSuffix(name, "*")}
	if strings.HasPrefix(name, "h2-") {
		f.Expression = "last(/h2/c)>1"
	}
	for _, kv := range strings.Split(tags, ",") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		f.Tags = append(f.Tags, catalog.Tag{Tag: k, Value: v})
	}
	if _, err := e.cat.Edit(context.Background(), func(ed *catalog.Edit) error {
		ids, err := ed.CreateTriggers([]catalog.TriggerFields{f})
		if err == nil {
			e.trigs[name] = ids[0]
		}
		return err
	}); err != nil {
		e.t.Fatal(err)
	}
}

// rules replaces the correlation rules; a host group condition names
// its group in Value.
func (e *corrEnv) rules(rs ...catalog.Correlation) {
	e.t.Helper()
	snap := e.cat.Snapshot()
	if err := e.cat.EditAlerts(context.Background(), func(cfg *catalog.AlertConfig) error {
		cfg.Correlations = map[uint64]*catalog.Correlation{}
		for i, r := range rs {
			r.ID = uint64(i + 1)
			for j := range r.Conditions {
				c := &r.Conditions[j]
				if c.Type == catalog.CorrNewGroup {
					c.GroupID, c.Value = snap.Group(c.Value).ID, ""
				}
				if c.FormulaID == "" {
					c.FormulaID = string(rune('A' + j))
				}
			}
			cfg.Correlations[r.ID] = &r
		}
		return nil
	}); err != nil {
		e.t.Fatal(err)
	}
}

// fire makes the triggers' results, in one batch, one second after the
// last.
func (e *corrEnv) fire(v Value, names ...string) {
	e.t.Helper()
	e.clock++
	var rs []Result
	for _, n := range names {
		rs = append(rs, Result{TriggerID: e.trigs[n], Value: v, Clock: e.clock})
	}
	if _, err := e.m.Process(e.cat.Snapshot(), rs); err != nil {
		e.t.Fatal(err)
	}
}

// state lists the trigger problems in ID order: "name" when open,
// "name-" when resolved, "name-Rn" when closed by rule n.
func (e *corrEnv) state() string {
	e.t.Helper()
	names := map[uint64]string{}
	for n, id := range e.trigs {
		names[id] = n
	}
	var out []string
	for _, ev := range e.store.Events(func(ev *event.Event) bool { return ev.Value == event.ValueProblem }) {
		s := names[ev.ObjectID]
		switch {
		case ev.CorrelationID != 0:
			s += fmt.Sprintf("-R%d", ev.CorrelationID)
		case ev.REventID != 0:
			s += "-"
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func cond(typ int, tagOrOld, valueOrNew string, op int) catalog.CorrCondition {
	c := catalog.CorrCondition{Type: typ, Operator: op}
	switch typ {
	case catalog.CorrTagPair:
		c.OldTag, c.NewTag = tagOrOld, valueOrNew
	case catalog.CorrNewGroup:
		c.Value = tagOrOld
	default:
		c.Tag, c.Value = tagOrOld, valueOrNew
	}
	return c
}

func rule(ops []int, evaltype int, formula string, conds ...catalog.CorrCondition) catalog.Correlation {
	return catalog.Correlation{Name: "r", EvalType: evaltype, Formula: formula, Conditions: conds, Operations: ops}
}

var (
	closeOld  = []int{catalog.CorrCloseOld}
	closeNew  = []int{catalog.CorrCloseNew}
	closeBoth = []int{catalog.CorrCloseOld, catalog.CorrCloseNew}
)

// TestCorrelationConditions: one case per condition type and operator,
// and per evaluation type. Each case fires its triggers one by one
// ("x" a problem of x) and compares the problems after.
func TestCorrelationConditions(t *testing.T) {
	type trig struct{ name, tags string }
	cases := []struct {
		name  string
		trigs []trig
		rules []catalog.Correlation
		fire  []string
		want  string
	}{
		// Recorded from 6.0.14 (s8corr-T1, -T4, -T2 with the rule
		// s8corr-pair): the new problem's tag pair value closes the old
		// problem with it, not the one with another value; the new one
		// stays open.
		{"event tag pair and new event tag: close old",
			[]trig{{"old", "pair=v1,o=alpha-one"}, {"other", "pair=v2,o=beta"}, {"new", "pair=v1,new=yes"}},
			[]catalog.Correlation{rule(closeOld, 0, "", cond(3, "pair", "pair", 0), cond(1, "new", "", 0))},
			[]string{"old", "other", "new"}, "old-R1 other new"},
		{"event tag pair: a new event without the new tag closes nothing",
			[]trig{{"old", "pair=v1"}, {"new", "x=v1"}},
			[]catalog.Correlation{rule(closeOld, 0, "", cond(3, "pair", "pair", 0))},
			[]string{"old", "new"}, "old new"},
		{"old event tag",
			[]trig{{"old", "svc=db"}, {"plain", "other=1"}, {"new", "up=1"}},
			[]catalog.Correlation{rule(closeOld, 0, "", cond(0, "svc", "", 0), cond(1, "up", "", 0))},
			[]string{"old", "plain", "new"}, "old-R1 plain new"},
		{"old event tag value equal",
			[]trig{{"a", "svc=db"}, {"b", "svc=web"}, {"new", "up=1"}},
			[]catalog.Correlation{rule(closeOld, 0, "", cond(4, "svc", "db", 0), cond(1, "up", "", 0))},
			[]string{"a", "b", "new"}, "a-R1 b new"},
		// 6.0's "not exists (tag with that value)": a problem without
		// the tag at all is closed too. Recorded from 6.0.14 (rule
		// s8corr-ne: new tag s8corr-q and old tag s8corr-pair and old tag
		// value s8corr-old <> beta closed the open problems with
		// s8corr-pair and no s8corr-old tag).
		{"old event tag value not equal",
			[]trig{{"a", "svc=db"}, {"b", "svc=web"}, {"c", "x=1"}, {"new", "up=1"}},
			[]catalog.Correlation{rule(closeOld, 0, "", cond(4, "svc", "db", 1), cond(1, "up", "", 0))},
			[]string{"a", "b", "c", "new"}, "a b-R1 c-R1 new"},
		{"old event tag value like",
			[]trig{{"a", "svc=mydb1"}, {"b", "svc=web"}, {"new", "up=1"}},
			[]catalog.Correlation{rule(closeOld, 0, "", cond(4, "svc", "db", 2), cond(1, "up", "", 0))},
			[]string{"a", "b", "new"}, "a-R1 b new"},
		{"old event tag value not like",
			[]trig{{"a", "svc=mydb1"}, {"b", "svc=web"}, {"c", "x=1"}, {"new", "up=1"}},
			[]catalog.Correlation{rule(closeOld, 0, "", cond(4, "svc", "db", 3), cond(1, "up", "", 0))},
			[]string{"a", "b", "c", "new"}, "a b-R1 c-R1 new"},
		{"new event tag value equal and not equal",
			[]trig{{"old", "svc=db"}, {"n1", "up=no"}, {"n2", "up=yes"}},
			[]catalog.Correlation{rule(closeOld, 0, "", cond(0, "svc", "", 0), cond(5, "up", "yes", 0))},
			[]string{"old", "n1", "n2"}, "old-R1 n1 n2"},
		{"new event tag value not equal: needs the tag with another value",
			[]trig{{"n1", "up=yes"}, {"n2", "x=1"}, {"n3", "up=no"}},
			[]catalog.Correlation{rule(closeNew, 0, "", cond(5, "up", "yes", 1))},
			[]string{"n1", "n2", "n3"}, "n1 n2 n3-R1"},
		{"new event tag value like and not like",
			[]trig{{"n1", "up=yes-really"}, {"n2", "up=no"}, {"n3", "up=maybe"}},
			[]catalog.Correlation{rule(closeNew, 3, "A and B", cond(5, "up", "y", 2), cond(5, "up", "really", 3))},
			[]string{"n1", "n2", "n3"}, "n1 n2 n3-R1"},
		// Recorded from 6.0.14 (s8corr-T3, rule s8corr-closenew on group
		// s8corr-grp, the host in s8corr-grp/sub): the nested group
		// matches; the new problem is made and closed at once.
		{"new event host group, nested, close new",
			[]trig{{"n1", "cn=yes"}, {"h2-n", "cn=yes"}},
			[]catalog.Correlation{rule(closeNew, 0, "", cond(1, "cn", "", 0), cond(2, "Top", "", 0))},
			[]string{"n1", "h2-n"}, "n1-R1 h2-n"},
		{"new event host group not equal",
			[]trig{{"n1", "cn=yes"}, {"h2-n", "cn=yes"}},
			[]catalog.Correlation{rule(closeNew, 0, "", cond(2, "Top", "", 1))},
			[]string{"n1", "h2-n"}, "n1 h2-n-R1"},
		{"and/or: conditions of one type are alternatives",
			[]trig{{"old", "svc=db"}, {"n1", "a=1"}, {"n2", "b=1"}, {"n3", "c=1"}},
			[]catalog.Correlation{rule(closeNew, 0, "", cond(0, "svc", "", 0), cond(1, "a", "", 0), cond(1, "b", "", 0))},
			[]string{"old", "n1", "n2", "n3"}, "old n1-R1 n2-R1 n3"},
		{"and: every condition",
			[]trig{{"n1", "a=1"}, {"n2", "a=1,b=1"}},
			[]catalog.Correlation{rule(closeNew, 1, "", cond(1, "a", "", 0), cond(1, "b", "", 0))},
			[]string{"n1", "n2"}, "n1 n2-R1"},
		{"or: any condition",
			[]trig{{"n1", "a=1"}, {"n2", "b=1"}, {"n3", "c=1"}},
			[]catalog.Correlation{rule(closeNew, 2, "", cond(1, "a", "", 0), cond(1, "b", "", 0))},
			[]string{"n1", "n2", "n3"}, "n1-R1 n2-R1 n3"},
		{"custom formula with not, over old events",
			[]trig{{"a", "svc=db"}, {"b", "svc=db,keep=1"}, {"new", "up=1"}},
			[]catalog.Correlation{rule(closeOld, 3, "A and not B and C", cond(0, "svc", "", 0), cond(0, "keep", "", 0), cond(1, "up", "", 0))},
			[]string{"a", "b", "new"}, "a-R1 b new"},
		{"custom formula: or of an old and a new condition closes every old problem",
			[]trig{{"a", "svc=db"}, {"b", "x=1"}, {"new", "up=1"}},
			[]catalog.Correlation{rule(closeOld, 3, "A or B", cond(0, "svc", "", 0), cond(1, "up", "", 0))},
			[]string{"a", "b", "new"}, "a-R1 b-R1 new"},
		// Recorded from 6.0.14 (s8corr-T5, multiple problem events, tag
		// s8corr-pair "e{ITEM.VALUE}"): a trigger's new problem closes
		// its own older one; the new one never closes itself.
		{"same trigger: the new problem closes the old one",
			[]trig{{"m*", "pair=e5,new=m"}},
			[]catalog.Correlation{rule(closeOld, 0, "", cond(3, "pair", "pair", 0), cond(1, "new", "", 0))},
			[]string{"m*", "m*"}, "m*-R1 m*"},
		{"close old and new",
			[]trig{{"old", "svc=db"}, {"new", "svc=db"}},
			[]catalog.Correlation{rule(closeBoth, 0, "", cond(3, "svc", "svc", 0))},
			[]string{"old", "new"}, "old-R1 new-R1"},
		// From 6.0's server (events.c): with no open problem, old
		// conditions are false and the rule is matched again.
		{"no open problem: not old tag is true",
			[]trig{{"new", "up=1"}},
			[]catalog.Correlation{rule(closeNew, 3, "A and not B", cond(1, "up", "", 0), cond(0, "svc", "", 0))},
			[]string{"new"}, "new-R1"},
		{"close new needs an old problem the filter is true of",
			[]trig{{"n1", "pair=x"}, {"n2", "pair=y"}, {"n3", "pair=x"}},
			[]catalog.Correlation{rule(closeNew, 0, "", cond(3, "pair", "pair", 0))},
			[]string{"n1", "n2", "n3"}, "n1 n2 n3-R1"},
		{"the first rule closes an event; disabled rules do nothing",
			[]trig{{"old", "svc=db"}, {"new", "svc=db"}},
			[]catalog.Correlation{
				{Name: "off", Status: 1, Conditions: []catalog.CorrCondition{cond(3, "svc", "svc", 0)}, Operations: closeOld},
				rule(closeOld, 0, "", cond(3, "svc", "svc", 0)),
				rule(closeOld, 0, "", cond(0, "svc", "", 0), cond(1, "svc", "", 0)),
			},
			[]string{"old", "new"}, "old-R2 new"},
		// Recorded from 6.0.14 (s8corr-T1 and s8corr-T6 raised by one
		// value, with the rule s8corr-ne): problems of one batch do not
		// see each other; the older open problem is closed.
		{"same batch: the new problems do not see each other",
			[]trig{{"old", "pair=1"}, {"b", "pair=1"}, {"q", "q=1"}},
			[]catalog.Correlation{rule(closeOld, 1, "", cond(1, "q", "", 0), cond(0, "pair", "", 0))},
			[]string{"old", "b+q"}, "old-R1 b q"},
		// From 6.0's server: a rule decided by the new event alone that
		// closes old events closes every open problem.
		{"new event condition only, close old: every open problem",
			[]trig{{"a", "x=1"}, {"h2-b", ""}, {"new", "up=1"}},
			[]catalog.Correlation{rule(closeOld, 0, "", cond(1, "up", "", 0))},
			[]string{"a", "h2-b", "new"}, "a-R1 h2-b-R1 new"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newCorrEnv(t)
			for _, tr := range tc.trigs {
				e.trigger(tr.name, tr.tags)
			}
			e.rules(tc.rules...)
			for _, n := range tc.fire {
				names := strings.Split(n, "+") // "a+b": one batch
				if !strings.HasSuffix(n, "*") {
					e.fire(OK, names...) // a non-multiple trigger makes a problem each time it was OK
				}
				e.fire(Problem, names...)
			}
			if got := e.state(); got != tc.want {
				t.Fatalf("problems after firing %v: %q, want %q", tc.fire, got, tc.want)
			}
		})
	}
}

// TestCorrelationCloseOld checks the events and runtimes "close old
// events" makes. Recorded from 6.0.14 (event.get, problem.get and
// trigger.get after s8corr-T2 closed s8corr-T1's problem): an OK event
// of the old trigger at the new problem's time, without tags, with
// correlationid and c_eventid (the new problem); the old problem's
// r_eventid is it, its correlationid (problem.get) the rule; the old
// trigger is OK with lastchange the new problem's clock; no acknowledge.
func TestCorrelationCloseOld(t *testing.T) {
	e := newCorrEnv(t)
	e.trigger("old", "pair=v1")
	e.trigger("new", "pair=v1,new=yes")
	e.rules(rule(closeOld, 0, "", cond(3, "pair", "pair", 0), cond(1, "new", "", 0)))
	e.fire(Problem, "old")
	e.fire(Problem, "new")
	evs := e.store.Events(func(*event.Event) bool { return true })
	if len(evs) != 3 {
		t.Fatalf("%d events, want 3 (old, new, the OK event closing old): %+v", len(evs), evs)
	}
	old, nw, ok := evs[0], evs[1], evs[2]
	if ok.Value != event.ValueOK || ok.ObjectID != e.trigs["old"] || ok.Clock != nw.Clock || ok.NS != nw.NS ||
		len(ok.Tags) != 0 || ok.CorrelationID != 1 || ok.CEventID != nw.ID || ok.NoAction || ok.Name != "old" {
		t.Fatalf("OK event %+v", ok)
	}
	if old.REventID != ok.ID || old.CorrelationID != 1 || old.CEventID != 0 || old.UserID != 0 {
		t.Fatalf("old problem %+v", old)
	}
	if !nw.Open() || nw.NoAction || nw.CorrelationID != 0 {
		t.Fatalf("new problem %+v", nw)
	}
	if rt := e.m.Runtime(e.trigs["old"]); rt.Value != event.ValueOK || rt.LastChange != nw.Clock {
		t.Fatalf("old trigger runtime %+v, want OK since %d", rt, nw.Clock)
	}
	if rt := e.m.Runtime(e.trigs["new"]); rt.Value != event.ValueProblem {
		t.Fatalf("new trigger runtime %+v, want PROBLEM", rt)
	}
	if a := e.store.Acks(old.ID); len(a) != 0 {
		t.Fatalf("acknowledges %+v, want none", a)
	}
}

// TestCorrelationCloseNew checks "close new event". Recorded from 6.0.14
// (s8corr-T3 and the rule s8corr-closenew): the problem is made and
// closed at once by an OK event at its own time, without tags,
// correlationid the rule and c_eventid the problem; the trigger is OK
// again, so its next PROBLEM result makes another problem, closed too.
// From 6.0's server: neither event runs actions (NoAction).
func TestCorrelationCloseNew(t *testing.T) {
	e := newCorrEnv(t)
	e.trigger("n", "cn=yes")
	e.rules(rule(closeNew, 0, "", cond(1, "cn", "", 0), cond(2, "Top", "", 0)))
	e.fire(Problem, "n")
	evs := e.store.Events(func(*event.Event) bool { return true })
	if len(evs) != 2 {
		t.Fatalf("events %+v, want the problem and its OK event", evs)
	}
	p, ok := evs[0], evs[1]
	if p.Value != event.ValueProblem || p.REventID != ok.ID || p.RClock != p.Clock || p.CorrelationID != 1 || !p.NoAction {
		t.Fatalf("problem %+v", p)
	}
	if ok.Value != event.ValueOK || ok.Clock != p.Clock || ok.NS != p.NS || ok.CEventID != p.ID || ok.CorrelationID != 1 ||
		!ok.NoAction || len(ok.Tags) != 0 || len(ok.Resolves) != 1 || ok.Resolves[0] != p.ID {
		t.Fatalf("OK event %+v", ok)
	}
	if rt := e.m.Runtime(e.trigs["n"]); rt.Value != event.ValueOK || rt.LastChange != p.Clock {
		t.Fatalf("runtime %+v, want OK since %d", rt, p.Clock)
	}
	e.fire(Problem, "n")
	if got := e.state(); got != "n-R1 n-R1" {
		t.Fatalf("after a second PROBLEM result: %q", got)
	}
}

// TestCorrelationDurable: what correlation did is one commit, replayed
// whole after a restart (no OK event without its problem, no problem
// closed twice), and the tag index is rebuilt from the replayed store.
func TestCorrelationDurable(t *testing.T) {
	e := newCorrEnv(t)
	e.trigger("old", "svc=db")
	e.trigger("n", "svc=db")
	e.rules(rule(closeBoth, 0, "", cond(3, "svc", "svc", 0)))
	e.fire(Problem, "old")
	e.fire(Problem, "n")
	before := e.store.Events(func(*event.Event) bool { return true })
	e.reopen()
	after := e.store.Events(func(*event.Event) bool { return true })
	if fmt.Sprintf("%+v", before) != fmt.Sprintf("%+v", after) {
		t.Fatalf("after a restart:\n%+v\nbefore:\n%+v", after, before)
	}
	if e.store.OpenCount() != 0 {
		t.Fatalf("%d open problems after replay, want 0", e.store.OpenCount())
	}
	// The machine reads its runtimes back: both triggers OK, and a new
	// problem correlates against the replayed (empty) open set.
	e.trigger("old2", "svc=web")
	e.fire(Problem, "old2")
	e.fire(OK, "n")
	e.fire(Problem, "n")
	if got := e.state(); got != "old-R1 n-R1 old2 n" {
		t.Fatalf("after restart: %q", got)
	}
}

// TestCorrelationReload: rules are read at every batch: a rule added,
// disabled or deleted counts from the next one, and with no rule left
// the tag index is dropped.
func TestCorrelationReload(t *testing.T) {
	e := newCorrEnv(t)
	e.trigger("a", "svc=db")
	e.trigger("b", "svc=db")
	e.fire(Problem, "a")
	e.fire(Problem, "b")
	if got := e.state(); got != "a b" {
		t.Fatalf("without rules: %q", got)
	}
	e.rules(rule(closeOld, 0, "", cond(3, "svc", "svc", 0)))
	e.fire(OK, "b")
	e.fire(Problem, "b")
	if got := e.state(); got != "a-R1 b- b" {
		t.Fatalf("with the rule added: %q, want a closed by it", got)
	}
	e.rules()
	e.fire(Problem, "a")
	if got := e.state(); got != "a-R1 b- b a" {
		t.Fatalf("with the rule deleted: %q, want nothing closed", got)
	}
}
