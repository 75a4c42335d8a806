package pipeline

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/jsvm"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// gatedJS runs scripts in this process, except that a script whose
// value starts with "wait" first waits until its gate is opened: the
// tests decide when a script ends, without timing.
type gatedJS struct {
	mu      sync.Mutex
	gates   map[string]chan struct{}
	started chan string
}

func newGatedJS() *gatedJS {
	return &gatedJS{gates: map[string]chan struct{}{}, started: make(chan string, 100)}
}

func (g *gatedJS) gate(v string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.gates[v]
	if c == nil {
		c = make(chan struct{})
		g.gates[v] = c
	}
	return c
}

// open lets the script of value v end.
func (g *gatedJS) open(v string) { close(g.gate(v)) }

func (g *gatedJS) Run(ctx context.Context, j *jsvm.Job) (jsvm.Result, error) {
	if strings.HasPrefix(j.Value, "wait") {
		g.started <- j.Value
		<-g.gate(j.Value)
	}
	return (&jsvm.Local{}).Run(ctx, j)
}

// laneSpec: "js" validates its value, runs a script that strips "wait",
// and discards a repeated value; "js.copy" takes its value as it is,
// "js.bang" runs a script of its own; "plain" has no steps, "num" one
// multiplier.
func laneSpec() catalog.Spec {
	return catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h", Groups: []string{"G"}, Items: []catalog.ItemSpec{
		{Key: "js", ValueType: "text", Preprocessing: []catalog.PreprocSpec{
			step("MATCHES_REGEX", "^[a-z0-9]+$"), step("JAVASCRIPT", "return value.replace('wait', '');"), step("DISCARD_UNCHANGED", "")}},
		dep("js.copy", "js", "text"),
		dep("js.bang", "js", "text", step("JAVASCRIPT", "return value + '!';")),
		{Key: "plain"},
		{Key: "num", Preprocessing: []catalog.PreprocSpec{step("MULTIPLIER", "2")}},
	}}}}
}

func newLaneFixture(t *testing.T, store history.Writer, mem *memstore.Store, js jsvm.Runner) *fixture {
	cat := catalogtest.Open(t, laneSpec())
	f := &fixture{store: mem, rt: itemstate.New(), snap: cat.Snapshot()}
	f.p = start(t, Options{Shards: 1, Store: store, Catalog: cat.Snapshot, ItemStates: f.rt, JS: js, JSWait: time.Millisecond})
	return f
}

// pending reports whether a Submit's result has not arrived.
func pending(c <-chan error) bool {
	select {
	case err := <-c:
		panic("returned: " + errString(err))
	default:
		return true
	}
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

// TestLanesKeepOrder: a value whose script does not end is detached from
// its batch; the values of its item behind it, those that need the
// script and one whose first step fails, wait for it, and its dependents
// (one with a script of its own) follow; a value of another item does
// not wait. Once the script ends, everything is stored, and the item
// states set, in the order the values came.
func TestLanesKeepOrder(t *testing.T) {
	js := newGatedJS()
	mem := memstore.New()
	f := newLaneFixture(t, mem, mem, js)
	first := f.submitAsync(t, 100, "js", "wait1")
	if v := <-js.started; v != "wait1" {
		t.Fatalf("started %q", v)
	}
	// One at a time, so that they arrive in this order.
	second := f.submitAsync(t, 101, "js", "two")
	waitFor(t, "the second value queued", func() bool { return f.p.jsWaiting.Load() == 2 })
	third := f.submitAsync(t, 102, "js", "bad!")
	if err := <-f.submitAsync(t, 103, "plain", "7"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the queued values", func() bool { return f.p.jsWaiting.Load() == 3 })
	if pending(first) && pending(second) && pending(third) {
		js.open("wait1")
	}
	for _, c := range []<-chan error{first, second, third} {
		if err := <-c; err != nil {
			t.Fatal(err)
		}
	}
	check := func(key string, want ...string) {
		t.Helper()
		if got := strings.Join(f.values(t, key), " "); got != strings.Join(want, " ") {
			t.Errorf("%s: stored %q, want %q", key, got, want)
		}
	}
	check("js", "1", "two")
	check("js.copy", "1", "two")
	check("js.bang", "1!", "two!")
	check("plain", "7")
	// The failing value came last: the item is not supported, and so are
	// its dependents, which got its error.
	for _, key := range []string{"js", "js.copy", "js.bang"} {
		if st := f.state(key); !st.NotSupported || !strings.Contains(st.Error, "regular expression validation error") {
			t.Errorf("%s state %+v", key, st)
		}
	}
	if f.p.jsDetached.Load() == 0 || f.p.jsWaiting.Load() != 0 {
		t.Errorf("detached %d, waiting %d", f.p.jsDetached.Load(), f.p.jsWaiting.Load())
	}
	// The discard step after the script saw "two" last.
	if err := <-f.submitAsync(t, 104, "js", "two"); err != nil {
		t.Fatal(err)
	}
	check("js", "1", "two")
}

// TestLanesFailedWrite: a value finished after its batch, when a write
// of preprocessed values failed since its steps ran (which makes the
// shard forget its step state, see forgetState), is not written, and
// its submitter hears so; sent again, it is stored.
func TestLanesFailedWrite(t *testing.T) {
	js := newGatedJS()
	g := &gateStore{Store: memstore.New(), gate: make(chan struct{})}
	g.release()
	f := newLaneFixture(t, g, g.Store, js)
	res := f.submitAsync(t, 100, "js", "wait1")
	<-js.started
	waitFor(t, "the value detached", func() bool { return f.p.jsDetached.Load() == 1 })
	g.fail.Store(true)
	if err := <-f.submitAsync(t, 101, "num", "1"); err == nil {
		t.Fatal("a failing write was acknowledged")
	}
	g.fail.Store(false)
	js.open("wait1")
	if err := <-res; !errors.Is(err, errStale) {
		t.Fatalf("value finished after a failed write: %v", err)
	}
	if got := f.values(t, "js"); len(got) != 0 {
		t.Fatalf("stored %q", got)
	}
	if err := <-f.submitAsync(t, 102, "js", "again"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.values(t, "js"), " "); got != "again" {
		t.Fatalf("stored %q", got)
	}
}

// TestLanesRefuse: a new value that would wait longer than the lane's
// bound for its item's script to get through the earlier ones (one
// queued behind one that has run past the bound) is dropped, counted,
// and, in its turn, makes the item not supported with the reason; the
// submitter of a dropped value does not wait for the script.
func TestLanesRefuse(t *testing.T) {
	js := newGatedJS()
	mem := memstore.New()
	f := newLaneFixture(t, mem, mem, js)
	f.p.laneMaxWait = 20 * time.Millisecond
	first := f.submitAsync(t, 100, "js", "wait1")
	<-js.started
	second := f.submitAsync(t, 101, "js", "wait2") // waits behind wait1
	waitFor(t, "the second value queued", func() bool { return f.p.jsWaiting.Load() == 2 })
	time.Sleep(30 * time.Millisecond) // past laneMaxWait: the assertion is on what happens then
	if err := <-f.submitAsync(t, 102, "js", "three"); err != nil {
		t.Fatal(err)
	}
	if err := <-f.submitAsync(t, 103, "js", "four"); err != nil {
		t.Fatal(err)
	}
	if n := f.p.jsRefused.Load(); n != 2 {
		t.Fatalf("refused %d, want 2", n)
	}
	if pending(first) && pending(second) {
		js.open("wait1")
		js.open("wait2")
	}
	<-first
	<-second
	if got := strings.Join(f.values(t, "js"), " "); got != "1 2" {
		t.Errorf("stored %q", got)
	}
	if st := f.state("js"); !st.NotSupported || !strings.Contains(st.Error, "value dropped") {
		t.Errorf("state %+v", st)
	}
	if err := <-f.submitAsync(t, 104, "js", "five"); err != nil {
		t.Fatal(err)
	}
	if st := f.state("js"); st.NotSupported {
		t.Errorf("state after a good value %+v", st)
	}
}

// TestLanesStopWaits: Stop lets a detached value finish, and its
// submitter is acknowledged once it is stored.
func TestLanesStopWaits(t *testing.T) {
	js := newGatedJS()
	mem := memstore.New()
	cat := catalogtest.Open(t, laneSpec())
	f := &fixture{store: mem, rt: itemstate.New(), snap: cat.Snapshot()}
	p, err := New(Options{Shards: 1, Store: mem, Catalog: cat.Snapshot, ItemStates: f.rt, JS: js, JSWait: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	f.p = p
	ran := make(chan error, 1)
	go func() { ran <- p.Run(context.Background()) }()
	res := f.submitAsync(t, 100, "js", "wait1")
	<-js.started
	waitFor(t, "the value detached", func() bool { return p.jsDetached.Load() == 1 })
	p.Stop()
	if pending(res) && pending(ran) {
		js.open("wait1")
	}
	if err := <-res; err != nil {
		t.Fatal(err)
	}
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if got := f.values(t, "js"); len(got) != 1 || got[0] != "1" {
		t.Fatalf("stored %q", got)
	}
}

// TestLanesTwoScripts: a chain with two scripts and a change step
// between them gives what it gives run inline, value after value, also
// when the scripts are detached.
func TestLanesTwoScripts(t *testing.T) {
	spec := catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h", Groups: []string{"G"}, Items: []catalog.ItemSpec{
		{Key: "m", ValueType: "float", Preprocessing: []catalog.PreprocSpec{
			step("JAVASCRIPT", "return value.replace('wait', '') * 2;"), step("SIMPLE_CHANGE", ""), step("JAVASCRIPT", "return Number(value) + 1;")}},
	}}}}
	js := newGatedJS()
	mem := memstore.New()
	cat := catalogtest.Open(t, spec)
	f := &fixture{store: mem, rt: itemstate.New(), snap: cat.Snapshot()}
	f.p = start(t, Options{Shards: 1, Store: mem, Catalog: cat.Snapshot, ItemStates: f.rt, JS: js, JSWait: time.Millisecond})
	a := f.submitAsync(t, 100, "m", "1")
	if err := <-a; err != nil {
		t.Fatal(err)
	}
	b := f.submitAsync(t, 101, "m", "wait3")
	<-js.started
	c := f.submitAsync(t, 102, "m", "10")
	waitFor(t, "the third value queued", func() bool { return f.p.jsWaiting.Load() == 2 })
	d := f.submitAsync(t, 103, "m", "4")
	waitFor(t, "the queued values", func() bool { return f.p.jsWaiting.Load() == 3 })
	js.open("wait3")
	for _, r := range []<-chan error{b, c, d} {
		if err := <-r; err != nil {
			t.Fatal(err)
		}
	}
	// Doubled: 2 (the change step's first: discarded), 6 (+4, +1), 20
	// (+14, +1), 8 (smaller than 20: discarded by the change step).
	if got := strings.Join(f.values(t, "m"), " "); got != "5 15" {
		t.Fatalf("stored %q, want 5 15", got)
	}
}

// TestLanesNoScriptsTicket: a Submit with NewTicketNoScripts (the
// poller's, the SNMP traps') returns once the values without a slow
// script are stored; the value still in its script is written when it
// ends, on its own.
func TestLanesNoScriptsTicket(t *testing.T) {
	js := newGatedJS()
	mem := memstore.New()
	f := newLaneFixture(t, mem, mem, js)
	var v []history.Sample
	for _, kv := range [][2]string{{"js", "wait1"}, {"plain", "7"}} {
		var s history.Sample
		if err := Prepare(f.snap.Lookup("h", kv[0]), []byte(kv[1]), &s); err != nil {
			t.Fatal(err)
		}
		s.Clock = 100
		v = append(v, s)
	}
	if err := f.p.Submit(v, NewTicketNoScripts()); err != nil {
		t.Fatal(err)
	}
	if got := f.values(t, "plain"); len(got) != 1 || len(f.values(t, "js")) != 0 {
		t.Fatalf("after Submit: plain %q, js %q", got, f.values(t, "js"))
	}
	clear(v) // the caller reuses its buffers: the lane kept copies
	js.open("wait1")
	waitFor(t, "the script's value stored", func() bool { return len(f.values(t, "js")) == 1 })
	if got := f.values(t, "js"); got[0] != "1" {
		t.Fatalf("js stored %q", got)
	}
}
