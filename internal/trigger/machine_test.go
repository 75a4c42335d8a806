package trigger

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

type env struct {
	t     *testing.T
	cat   *catalog.Catalog
	dir   string
	store *event.Store
	m     *Machine
}

// newEnv makes a catalog with host h1 (tagged) and items a, b, and a
// machine over an event store in a temporary directory.
func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	cat, err := catalog.Open(context.Background(), catalog.Options{Path: filepath.Join(dir, "catalog.db"), ExprRefs: ItemRefs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	if _, err := cat.Apply(context.Background(), catalog.Spec{Hosts: []catalog.HostSpec{{
		Host: "h1", Name: "Host one", Groups: []string{"G"},
		Items: []catalog.ItemSpec{{Key: "a"}, {Key: "b"}, {Key: "mem", Units: "B"}},
	}}}); err != nil {
		t.Fatal(err)
	}
	h := cat.Snapshot().Host("h1").ID
	if _, err := cat.Edit(context.Background(), func(e *catalog.Edit) error {
		return e.UpdateHosts([]catalog.HostUpdate{{ID: h, Tags: &[]catalog.Tag{{Tag: "env", Value: "{HOST.NAME}"}, {Tag: "scope", Value: "x"}}}})
	}); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, cat: cat, dir: filepath.Join(dir, "events")}
	e.reopen()
	return e
}

// reopen closes and reopens the event store and makes a new machine, as
// a restart does.
func (e *env) reopen() {
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
	if e.m, err = New(Options{Store: s}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) trigger(f catalog.TriggerFields) uint64 {
	e.t.Helper()
	f.Enabled = true
	var ids []uint64
	if _, err := e.cat.Edit(context.Background(), func(ed *catalog.Edit) error {
		var err error
		ids, err = ed.CreateTriggers([]catalog.TriggerFields{f})
		return err
	}); err != nil {
		e.t.Fatal(err)
	}
	return ids[0]
}

// step is one input of a rule test and what must hold after it.
type step struct {
	trig  int // index into the case's triggers
	value Value
	rec   bool   // recovery expression true
	err   string // Unknown's error
	close bool   // close the trigger's open problems by hand instead

	wantValue, wantState uint8
	wantOpen             int // open problems of the trigger
	wantEvents           int // events of the trigger so far
	wantCloseErr         bool
}

func TestRules(t *testing.T) {
	const e1 = "last(/h1/a)>1"
	cases := []struct {
		name  string
		trigs []catalog.TriggerFields // trigs[0] is checked; trigs[1] may be its master
		steps []step
	}{
		{"OK to PROBLEM to OK", nil, []step{
			{value: Problem, wantValue: 1, wantOpen: 1, wantEvents: 1},
			{value: Problem, wantValue: 1, wantOpen: 1, wantEvents: 1},
			{value: OK, wantValue: 0, wantOpen: 0, wantEvents: 2},
			{value: OK, wantValue: 0, wantOpen: 0, wantEvents: 2},
		}},
		{"multiple problem events", []catalog.TriggerFields{{Multiple: true}}, []step{
			{value: Problem, wantValue: 1, wantOpen: 1, wantEvents: 1},
			{value: Problem, wantValue: 1, wantOpen: 2, wantEvents: 2},
			{value: Problem, wantValue: 1, wantOpen: 3, wantEvents: 3},
			{value: OK, wantValue: 0, wantOpen: 0, wantEvents: 4}, // one OK event resolves all three
		}},
		{"recovery expression", []catalog.TriggerFields{{RecoveryMode: catalog.RecoverRecoveryExpression, RecoveryExpression: "last(/h1/b)<1"}}, []step{
			{value: Problem, wantValue: 1, wantOpen: 1, wantEvents: 1},
			{value: OK, rec: false, wantValue: 1, wantOpen: 1, wantEvents: 1},
			{value: OK, rec: true, wantValue: 0, wantOpen: 0, wantEvents: 2},
		}},
		{"recovery none: only manual close", []catalog.TriggerFields{{RecoveryMode: catalog.RecoverNone, ManualClose: true}}, []step{
			{value: Problem, wantValue: 1, wantOpen: 1, wantEvents: 1},
			{value: OK, wantValue: 0, wantOpen: 1, wantEvents: 1},
			{value: Problem, wantValue: 1, wantOpen: 2, wantEvents: 2},
			{close: true, wantValue: 0, wantOpen: 0, wantEvents: 3},
		}},
		{"manual close of a trigger without manual_close", nil, []step{
			{value: Problem, wantValue: 1, wantOpen: 1, wantEvents: 1},
			{close: true, wantCloseErr: true, wantValue: 1, wantOpen: 1, wantEvents: 1},
		}},
		{"unknown keeps the value and problems", nil, []step{
			{value: Problem, wantValue: 1, wantOpen: 1, wantEvents: 1},
			{value: Unknown, err: "Cannot evaluate function last(/h1/a): item is not supported.", wantValue: 1, wantState: 1, wantOpen: 1, wantEvents: 1},
			{value: OK, wantValue: 0, wantState: 0, wantOpen: 0, wantEvents: 2},
			{value: Unknown, err: "division by zero", wantValue: 0, wantState: 1, wantOpen: 0, wantEvents: 2},
		}},
		{"dependency: no problem while the master is in problem", []catalog.TriggerFields{{}, {Description: "master", Expression: "last(/h1/b)>1"}}, []step{
			{trig: 1, value: Problem},
			{value: Problem, wantValue: 0, wantOpen: 0, wantEvents: 0},
			{trig: 1, value: OK},
			{value: Problem, wantValue: 1, wantOpen: 1, wantEvents: 1},
		}},
		// Recorded from Zabbix 6.0.14 (trapper values to a dependent and
		// its master): while the master is in PROBLEM, the dependent's
		// results change nothing at all, neither a recovery nor a change
		// to UNKNOWN; once the master is OK, the next result counts.
		{"dependency: no recovery and no unknown while the master is in problem", []catalog.TriggerFields{{}, {Description: "master", Expression: "last(/h1/b)>1"}}, []step{
			{value: Problem, wantValue: 1, wantOpen: 1, wantEvents: 1},
			{trig: 1, value: Problem},
			{value: OK, wantValue: 1, wantOpen: 1, wantEvents: 1},
			{value: Unknown, err: "Cannot evaluate function last(/h1/a): item is not supported.", wantValue: 1, wantOpen: 1, wantEvents: 1},
			{trig: 1, value: OK},
			{value: OK, wantValue: 0, wantOpen: 0, wantEvents: 2},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			trigs := tc.trigs
			if len(trigs) == 0 {
				trigs = []catalog.TriggerFields{{}}
			}
			ids := make([]uint64, len(trigs))
			for i := len(trigs) - 1; i >= 0; i-- { // masters first
				f := trigs[i]
				if f.Description == "" {
					f.Description = "main"
				}
				if f.Expression == "" {
					f.Expression = e1
				}
				if i == 0 && len(trigs) > 1 {
					f.Dependencies = []uint64{ids[1]}
				}
				ids[i] = e.trigger(f)
			}
			for n, s := range tc.steps {
				id := ids[s.trig]
				snap := e.cat.Snapshot()
				if s.close {
					var open []uint64
					for _, p := range e.store.OpenProblemsOf(id) {
						open = append(open, p.ID)
					}
					err := e.m.Acknowledge(snap, AckRequest{EventIDs: open, Action: event.ActionClose, UserID: 7, Clock: int64(1000 + n)})
					if (err != nil) != s.wantCloseErr || err != nil && !errors.Is(err, ErrAck) {
						t.Fatalf("step %d: close: %v", n, err)
					}
				} else if _, err := e.m.Process(snap, []Result{{TriggerID: id, Value: s.value, Recovered: s.rec, Error: s.err, Clock: int64(1000 + n)}}); err != nil {
					t.Fatalf("step %d: %v", n, err)
				}
				if s.trig != 0 {
					continue
				}
				rt := e.m.Runtime(id)
				open := len(e.store.OpenProblemsOf(id))
				evs := len(e.store.Events(func(ev *event.Event) bool { return ev.ObjectID == id }))
				if rt.Value != s.wantValue || rt.State != s.wantState || open != s.wantOpen || evs != s.wantEvents {
					t.Fatalf("step %d (%+v): value %d state %d, %d open, %d events; want value %d state %d, %d open, %d events",
						n, s, rt.Value, rt.State, open, evs, s.wantValue, s.wantState, s.wantOpen, s.wantEvents)
				}
				if s.value == Unknown && s.wantState == 1 && rt.Error != s.err {
					t.Fatalf("step %d: error %q, want %q", n, rt.Error, s.err)
				}
			}
			// Restart: the runtime and the problems come back from the
			// event store.
			id := ids[0]
			before, open := e.m.Runtime(id), len(e.store.OpenProblemsOf(id))
			e.reopen()
			if got := e.m.Runtime(id); got != before || len(e.store.OpenProblemsOf(id)) != open {
				t.Fatalf("after restart: runtime %+v (was %+v), %d open (was %d)", got, before, len(e.store.OpenProblemsOf(id)), open)
			}
		})
	}
}

func TestEventContent(t *testing.T) {
	e := newEnv(t)
	id := e.trigger(catalog.TriggerFields{
		Description: "{HOST.NAME}: a is {ITEM.VALUE} ({TRIGGER.SEVERITY}, {$UNDEFINED})", Expression: "last(/h1/a)>1",
		Priority: 4, Opdata: "b={ITEM.VALUE2}", Tags: []catalog.Tag{{Tag: "scope", Value: "x"}, {Tag: "host", Value: "{HOST.HOST}"}},
	})
	if _, err := e.m.Process(e.cat.Snapshot(), []Result{{TriggerID: id, Value: Problem, Clock: 50, NS: 5, ItemValues: []string{"7.5"}}}); err != nil {
		t.Fatal(err)
	}
	p := e.store.OpenProblemsOf(id)
	if len(p) != 1 {
		t.Fatalf("open problems: %+v", p)
	}
	ev := p[0]
	if ev.Name != "Host one: a is 7.5 (High, {$UNDEFINED})" || ev.Opdata != "b=*UNKNOWN*" || ev.Severity != 4 || ev.Clock != 50 || ev.NS != 5 {
		t.Errorf("event: %+v", ev)
	}
	want := []event.Tag{{Tag: "scope", Value: "x"}, {Tag: "host", Value: "h1"}, {Tag: "env", Value: "Host one"}} // the host's duplicate scope=x dropped
	if len(ev.Tags) != len(want) {
		t.Fatalf("tags %v, want %v", ev.Tags, want)
	}
	for i := range want {
		if ev.Tags[i] != want[i] {
			t.Fatalf("tags %v, want %v", ev.Tags, want)
		}
	}
}

func TestAcknowledgeActions(t *testing.T) {
	e := newEnv(t)
	id := e.trigger(catalog.TriggerFields{Description: "t", Expression: "last(/h1/a)>1", Priority: 2})
	snap := e.cat.Snapshot()
	if _, err := e.m.Process(snap, []Result{{TriggerID: id, Value: Problem, Clock: 1}}); err != nil {
		t.Fatal(err)
	}
	pid := e.store.OpenProblemsOf(id)[0].ID
	f := func(req AckRequest, wantErr string) {
		t.Helper()
		req.EventIDs = append(req.EventIDs, pid)
		err := e.m.Acknowledge(snap, req)
		if wantErr == "" && err != nil || wantErr != "" && (err == nil || err.Error() != wantErr) {
			t.Fatalf("%+v: error %v, want %q", req, err, wantErr)
		}
	}
	f(AckRequest{Action: 0}, `Invalid parameter "/action": value must be one of 1-31.`)
	f(AckRequest{Action: 32}, `Invalid parameter "/action": value must be one of 1-31.`)
	f(AckRequest{Action: event.ActionMessage}, `Invalid parameter "/message": cannot be empty.`)
	f(AckRequest{Action: event.ActionAcknowledge | event.ActionUnacknowledge}, `Invalid parameter "/action": cannot acknowledge and unacknowledge at the same time.`)
	f(AckRequest{Action: event.ActionSeverity, Severity: 9}, `Invalid parameter "/severity": value must be one of 0-5.`)
	f(AckRequest{EventIDs: []uint64{pid + 100}, Action: event.ActionAcknowledge}, "No permissions to referred object or it does not exist!")
	if acks := e.store.Acks(pid); len(acks) != 0 {
		t.Fatalf("refused requests stored acks: %+v", acks)
	}
	f(AckRequest{Action: event.ActionAcknowledge | event.ActionMessage | event.ActionSeverity, Message: "looking", Severity: 5, UserID: 3, Clock: 10}, "")
	ev, _ := e.store.Event(pid)
	if !ev.Acknowledged || ev.Severity != 5 {
		t.Fatalf("after acknowledge: %+v", ev)
	}
	f(AckRequest{Action: event.ActionUnacknowledge, UserID: 3, Clock: 11}, "")
	acks := e.store.Acks(pid)
	if ev, _ = e.store.Event(pid); ev.Acknowledged || len(acks) != 2 || acks[0].OldSeverity != 2 || acks[0].NewSeverity != 5 || acks[0].Message != "looking" {
		t.Fatalf("after unacknowledge: %+v, acks %+v", ev, acks)
	}
}

// TestReconcileDeletedTriggers: deleting a trigger (or its item) resolves
// its open problems; other triggers' problems stay.
func TestReconcileDeletedTriggers(t *testing.T) {
	e := newEnv(t)
	a := e.trigger(catalog.TriggerFields{Description: "a", Expression: "last(/h1/a)>1", Multiple: true})
	b := e.trigger(catalog.TriggerFields{Description: "b", Expression: "last(/h1/b)>1"})
	if _, err := e.m.Process(e.cat.Snapshot(), []Result{{TriggerID: a, Value: Problem, Clock: 5}, {TriggerID: b, Value: Problem, Clock: 6}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.Process(e.cat.Snapshot(), []Result{{TriggerID: a, Value: Problem, Clock: 7}}); err != nil {
		t.Fatal(err)
	}
	if n, err := e.m.Reconcile(e.cat.Snapshot()); err != nil || n != 0 {
		t.Fatalf("nothing deleted: resolved %d (%v)", n, err)
	}
	if _, err := e.cat.Edit(context.Background(), func(ed *catalog.Edit) error { return ed.DeleteTriggers([]uint64{a}) }); err != nil {
		t.Fatal(err)
	}
	if n, err := e.m.Reconcile(e.cat.Snapshot()); err != nil || n != 2 {
		t.Fatalf("resolved %d (%v), want 2", n, err)
	}
	if got := e.store.OpenProblems(); len(got) != 1 || got[0].ObjectID != b {
		t.Fatalf("open problems %+v", got)
	}
	if r := e.m.Runtime(a); r.Value != 0 {
		t.Fatalf("deleted trigger's runtime %+v", r)
	}
	e.reopen()
	if got := e.store.OpenProblems(); len(got) != 1 || got[0].ObjectID != b {
		t.Fatalf("after restart: open problems %+v", got)
	}
}

// blockingStore is an event store whose Commit waits for a signal, as a
// slow fsync would.
type blockingStore struct {
	*event.Store
	entered, release chan struct{}
}

func (b *blockingStore) Commit(batch *event.Batch) error {
	b.entered <- struct{}{}
	<-b.release
	return b.Store.Commit(batch)
}

// TestRuntimeDoesNotWaitForCommits: reading a trigger's runtime (what
// trigger.get does for every trigger) while a Process commit waits for
// the disk returns at once with the state before the commit.
func TestRuntimeDoesNotWaitForCommits(t *testing.T) {
	e := newEnv(t)
	id := e.trigger(catalog.TriggerFields{Description: "a", Expression: "last(/h1/a)>1"})
	bs := &blockingStore{Store: e.store, entered: make(chan struct{}), release: make(chan struct{})}
	m, err := New(Options{Store: bs})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := m.Process(e.cat.Snapshot(), []Result{{TriggerID: id, Value: Problem, Clock: 1}})
		done <- err
	}()
	<-bs.entered // the commit is in progress and holds the machine's mutex
	if r := m.Runtime(id); r.Value != 0 {
		t.Fatalf("runtime during the commit: %+v, want the state before it", r)
	}
	close(bs.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if r := m.Runtime(id); r.Value != 1 || r.LastChange != 1 {
		t.Fatalf("runtime after the commit: %+v", r)
	}
}

func TestItemRefs(t *testing.T) {
	refs, err := ItemRefs("last(/h1/a)>1 and avg(/h2/b[x,\"y\"],5m)<last(/h1/a)")
	if err != nil || len(refs) != 2 || refs[0] != (catalog.ItemRef{Host: "h1", Key: "a"}) || refs[1] != (catalog.ItemRef{Host: "h2", Key: `b[x,"y"]`}) {
		t.Fatalf("refs %+v (%v)", refs, err)
	}
	if _, err := ItemRefs("last(/h1/a)>"); err == nil {
		t.Fatal("a syntax error was accepted")
	}
	if _, err := ItemRefs("sum(last_foreach(/*/a))>1"); err == nil || !strings.Contains(err.Error(), "calculated items only") {
		t.Fatalf("an aggregate function: %v", err)
	}
}

// TestExpansionCache: names, operational data and tags are expanded once
// per trigger and snapshot where they do not depend on the evaluation,
// and per event where they do ({ITEM.VALUE}); a recovery's OK event's
// texts are expanded with its own evaluation, as 6.0.14 makes them (the
// correlation_mode conformance case); a renamed host shows in the next
// event (the cache belongs to the snapshot).
func TestExpansionCache(t *testing.T) {
	e := newEnv(t)
	id := e.trigger(catalog.TriggerFields{Description: "CPU on {HOST.NAME}: {ITEM.VALUE}", Expression: "last(/h1/a)>1",
		Opdata: "host {HOST.HOST}", Tags: []catalog.Tag{{Tag: "v", Value: "{ITEM.VALUE}"}, {Tag: "trig", Value: "{TRIGGER.ID}"}}})
	plain := e.trigger(catalog.TriggerFields{Description: "plain", Expression: "last(/h1/b)>1"})
	step := func(v Value, clock int64, val string) {
		t.Helper()
		rs := []Result{{TriggerID: id, Value: v, Clock: clock, ItemValues: []string{val}}, {TriggerID: plain, Value: v, Clock: clock}}
		if _, err := e.m.Process(e.cat.Snapshot(), rs); err != nil {
			t.Fatal(err)
		}
	}
	last := func(trig uint64) event.Event {
		t.Helper()
		ev, ok := e.store.LastEvent(trig)
		if !ok {
			t.Fatalf("no event of trigger %d", trig)
		}
		return ev
	}
	tid := fmt.Sprint(id)
	want := func(ev event.Event, name, opdata string, tags ...event.Tag) {
		t.Helper()
		if ev.Name != name || ev.Opdata != opdata || !slices.Equal(ev.Tags, tags) {
			t.Errorf("event %q %q %v, want %q %q %v", ev.Name, ev.Opdata, ev.Tags, name, opdata, tags)
		}
	}
	hostTags := []event.Tag{{Tag: "env", Value: "Host one"}, {Tag: "scope", Value: "x"}}
	step(Problem, 10, "1")
	want(last(id), "CPU on Host one: 1", "host h1", append([]event.Tag{{Tag: "v", Value: "1"}, {Tag: "trig", Value: tid}}, hostTags...)...)
	want(last(plain), "plain", "", hostTags...)
	step(OK, 11, "0")
	want(last(id), "CPU on Host one: 0", "", append([]event.Tag{{Tag: "v", Value: "0"}, {Tag: "trig", Value: tid}}, hostTags...)...)
	step(Problem, 12, "2")
	want(last(id), "CPU on Host one: 2", "host h1", append([]event.Tag{{Tag: "v", Value: "2"}, {Tag: "trig", Value: tid}}, hostTags...)...)
	step(OK, 13, "0")

	h := e.cat.Snapshot().Host("h1").ID
	name := "Host uno"
	if _, err := e.cat.Edit(context.Background(), func(ed *catalog.Edit) error {
		return ed.UpdateHosts([]catalog.HostUpdate{{ID: h, Name: &name}})
	}); err != nil {
		t.Fatal(err)
	}
	step(Problem, 14, "3")
	hostTags[0].Value = "Host uno"
	want(last(id), "CPU on Host uno: 3", "host h1", append([]event.Tag{{Tag: "v", Value: "3"}, {Tag: "trig", Value: tid}}, hostTags...)...)
	want(last(plain), "plain", "", hostTags...)
}
