package poll

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// fakeChecker records the batches it is given; the test completes them.
type fakeChecker struct {
	mu      sync.Mutex
	pending []Check
}

func (f *fakeChecker) Check(_ context.Context, batch []Check, _ func(*Result)) {
	f.mu.Lock()
	f.pending = append(f.pending, batch...)
	f.mu.Unlock()
}

func (f *fakeChecker) take() []Check {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.pending
	f.pending = nil
	return p
}

// harness drives a Scheduler by hand: step at a fake time, then complete
// the checks it handed out, without goroutines or sleeps.
type harness struct {
	t       testing.TB
	s       *Scheduler
	chk     *fakeChecker
	cat     *catalog.Catalog
	rt      *itemstate.Registry
	m       *selfmon.Registry
	mu      sync.Mutex
	stored  []history.Sample
	targets []target
	now     time.Time
}

// newHarness makes a catalog with hosts hosts of items agent items each
// (keys k0.., unsigned, delay d) and targets for them, host i on
// interface 100+i.
func newHarness(t testing.TB, hosts, items int, d string, opts Options) *harness {
	t.Helper()
	var spec catalog.Spec
	for h := 0; h < hosts; h++ {
		hs := catalog.HostSpec{Host: fmt.Sprintf("h%d", h)}
		for i := 0; i < items; i++ {
			hs.Items = append(hs.Items, catalog.ItemSpec{Key: fmt.Sprintf("k%d", i), Type: "zabbix_agent", ValueType: "unsigned", Delay: d})
		}
		spec.Hosts = append(spec.Hosts, hs)
	}
	h := &harness{t: t, chk: &fakeChecker{}, cat: catalogtest.Open(t, spec), rt: itemstate.New(), m: selfmon.NewRegistry()}
	h.now = time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC)
	for hi, host := range h.cat.Snapshot().Hosts() {
		for _, it := range host.Items() {
			h.targets = append(h.targets, target{id: it.ID, seed: it.ID, hostID: host.ID, ifaceID: uint64(100 + hi), typ: it.Type,
				key: it.Key, addr: fmt.Sprintf("10.0.0.%d:10050", hi), delay: it.Delay, timeout: 3 * time.Second})
		}
	}
	opts.Catalog = h.cat
	opts.ItemStates = h.rt
	opts.Metrics = h.m
	opts.Now = func() time.Time { return h.now }
	opts.Submit = func(s []history.Sample) error {
		h.mu.Lock()
		h.stored = append(h.stored, s...)
		h.mu.Unlock()
		return nil
	}
	checkers := map[catalog.ItemType]CheckerSpec{catalog.ZabbixAgent: {Checker: h.chk}}
	for typ, spec := range opts.Checkers { // a test's other types
		checkers[typ] = spec
	}
	opts.Checkers = checkers
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	s.targetsFn = func(*catalog.Snapshot) []target { return h.targets }
	h.s = s
	return h
}

// at steps the scheduler at the last millisecond of second start + secs
// and returns the checks it handed out: every check due within that
// second (its grid second plus its spread) is.
func (h *harness) at(secs int) []Check {
	h.now = time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC).Add(time.Duration(secs)*time.Second + 999*time.Millisecond)
	h.s.step(h.now)
	return h.chk.take()
}

// complete reports results for checks and lets the workers' code store
// them (synchronously), as the checker and a worker would.
func (h *harness) complete(checks []Check, status Status, value, errMsg string) {
	for i := range checks {
		h.s.done(&Result{Check: checks[i], Status: status, Value: []byte(value), Error: errMsg, Clock: h.now})
	}
	h.s.mu.Lock()
	rs := h.s.results
	h.s.results = nil
	h.s.mu.Unlock()
	h.s.process(rs)
}

// resync makes the next step follow h.targets as after a catalog swap.
func (h *harness) resync() { h.s.snap = nil }

func ids(cs []Check) map[uint64]bool {
	m := map[uint64]bool{}
	for _, c := range cs {
		m[c.ItemID] = true
	}
	return m
}

func metric(t *testing.T, m *selfmon.Registry, line string) string {
	t.Helper()
	var b strings.Builder
	m.WriteText(&b)
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, line+" ") {
			return strings.TrimPrefix(l, line+" ")
		}
	}
	t.Fatalf("no metric %s", line)
	return ""
}

// The first round after a start is spread over the interval by item id:
// 600 items at 1m are checked once each within the first minute, at
// most 11 in any second.
func TestFirstRoundSpread(t *testing.T) {
	h := newHarness(t, 6, 100, "1m", Options{})
	seen := map[uint64]int{}
	most := 0
	for sec := 0; sec <= 60; sec++ {
		cs := h.at(sec)
		most = max(most, len(cs))
		for _, c := range cs {
			seen[c.ItemID]++
			if c.Due.After(h.now) {
				t.Fatalf("item %d handed out at %s before it was due (%s)", c.ItemID, h.now, c.Due)
			}
		}
		h.complete(cs, OK, "1", "")
	}
	if len(seen) != 600 {
		t.Fatalf("%d of 600 items checked in the first minute", len(seen))
	}
	for id, n := range seen {
		if n > 2 {
			t.Fatalf("item %d checked %d times in 61 s at 1m", id, n)
		}
	}
	if most > 11 {
		t.Fatalf("%d checks in one second; the spread allows at most 11", most)
	}
	if len(h.stored) != 600+len(seen)-600+countTwice(seen) {
		// every completed check stored one value
		t.Fatalf("%d values stored", len(h.stored))
	}
}

func countTwice(m map[uint64]int) int {
	n := 0
	for _, c := range m {
		n += c - 1
	}
	return n
}

// After a check the item waits for its next grid point; values carry
// the reply's clock and reach Submit converted.
func TestRescheduleAndStore(t *testing.T) {
	h := newHarness(t, 1, 1, "10s", Options{})
	id := h.targets[0].id
	first := -1
	for sec := 0; sec < 10 && first < 0; sec++ {
		if cs := h.at(sec); len(cs) == 1 {
			first = sec
			if cs[0].Key != "k0" || cs[0].Addr != "10.0.0.0:10050" || cs[0].Timeout != 3*time.Second || cs[0].InterfaceID != 100 {
				t.Fatalf("check %+v does not carry the item's target", cs[0])
			}
			h.complete(cs, OK, "42", "")
		}
	}
	if first < 0 || int64(first) != int64(id%10) {
		t.Fatalf("item %d first checked at second %d; want its grid point %d", id, first, id%10)
	}
	for sec := first + 1; sec < first+10; sec++ {
		if cs := h.at(sec); len(cs) != 0 {
			t.Fatalf("item checked again at +%d s, before its 10 s interval", sec-first)
		}
	}
	if cs := h.at(first + 10); len(cs) != 1 {
		t.Fatalf("item not checked at its next grid point")
	}
	if len(h.stored) != 1 || h.stored[0].ItemID != id || h.stored[0].U != 42 || h.stored[0].Type != history.Uint {
		t.Fatalf("stored %+v; want one unsigned 42 for item %d", h.stored, id)
	}
	if got := metric(t, h.m, "peregrine_poll_check_latency_seconds_count"); got != "1" {
		t.Fatalf("latency observations %s; want 1", got)
	}
}

// A catalog swap: unchanged items keep their schedule, a changed delay
// reschedules, removed items stop, new items start within one interval.
func TestSnapshotSwap(t *testing.T) {
	h := newHarness(t, 1, 4, "1m", Options{})
	h.at(0)
	next := map[uint64]int64{}
	for id, e := range h.s.items {
		next[id] = e.next
	}
	a, b, c := h.targets[0].id, h.targets[1].id, h.targets[2].id
	h.targets[1].delay = "10s" // changed
	h.targets = append(h.targets[:2], h.targets[3:]...)
	removed := c
	h.resync()
	checked := map[uint64]bool{}
	cs := h.at(1)
	for id := range ids(cs) {
		checked[id] = true
	}
	h.complete(cs, OK, "1", "")
	if _, ok := h.s.items[removed]; ok {
		t.Fatal("a removed item is still scheduled")
	}
	if h.s.items[a].next != next[a] {
		t.Fatalf("unchanged item moved from %d to %d", next[a], h.s.items[a].next)
	}
	if e := h.s.items[b]; e.next-h.now.UnixMilli() > 10_000 {
		t.Fatalf("item whose delay became 10s is next checked in %d ms", e.next-h.now.UnixMilli())
	}
	for sec := 2; sec <= 62; sec++ {
		cs := h.at(sec)
		for id := range ids(cs) {
			checked[id] = true
		}
		h.complete(cs, OK, "1", "")
	}
	if checked[removed] || !checked[a] || !checked[b] {
		t.Fatalf("checked %v: want %d and %d, not the removed %d", checked, a, b, removed)
	}
}

// The global in-flight bound: checks beyond it wait (and show in the
// queue once more than 5 s late); nobody is lost.
func TestInFlightBound(t *testing.T) {
	h := newHarness(t, 1, 40, "1m", Options{MaxInFlight: 5})
	var held []Check
	for sec := 0; sec <= 60; sec++ {
		held = append(held, h.at(sec)...)
	}
	if len(held) != 5 {
		t.Fatalf("%d checks in flight; the bound is 5", len(held))
	}
	// Items 1..40 were due at seconds 1..40 (their grid points): at 60 s
	// all are more than 5 s late, the 5 in flight included, 10 of them
	// by 20-29 s and 30 by 30-59 s.
	q := h.s.Queue()
	if q.Total != 40 || q.ByDelay != [6]int{0, 10, 30, 0, 0, 0} || q.Over(30) != 30 {
		t.Fatalf("queue %+v", q)
	}
	// The fine queue (zabbix[queue,<from>,<to>]): at 60.999 s item k,
	// due at k s plus its spread, is 61-k s late in whole seconds
	// rounded up, but item 32 (spread 999 ms), 28 s late exactly.
	for _, c := range []struct {
		from, to int64
		want     int
	}{{6, 0, 40}, {0, 0, 40}, {20, 30, 9}, {28, 29, 2}, {29, 30, 0}, {25, 0, 36}, {0, 25, 4}, {59, 60, 1}, {60, 0, 1}, {61, 0, 0}, {3600, 7200, 0}} {
		if got := h.s.QueueRange(c.from, c.to); got != c.want {
			t.Errorf("QueueRange(%d, %d) = %d; want %d", c.from, c.to, got, c.want)
		}
	}
	if od := h.s.Overdue(); len(od) != 40 {
		t.Errorf("Overdue lists %d checks; want 40", len(od))
	} else {
		for _, c := range od {
			if e := h.s.items[c.ItemID]; e == nil || c.Late != h.now.UnixMilli()-e.next {
				t.Errorf("Overdue %+v: not an item late by that", c)
			}
		}
	}
	if got := metric(t, h.m, `peregrine_poll_queue{delay="30s"}`); got != "30" {
		t.Fatalf("queue gauge for 30s: %s", got)
	}
	if got := metric(t, h.m, `peregrine_poll_in_flight`); got != "5" {
		t.Fatalf("in-flight gauge %s", got)
	}
	if p := h.s.TakeInFlightPeak(); p != 5 {
		t.Fatalf("in-flight peak %d; want 5", p)
	}
	if p := h.s.TakeInFlightPeak(); p != 0 {
		t.Fatalf("in-flight peak %d right after a take; want 0", p)
	}
	h.complete(held, OK, "1", "")
	if cs := h.at(61); len(cs) != 5 {
		t.Fatalf("after 5 completions, %d new checks; want 5", len(cs))
	}
}

// A per-checker bound holds alongside the global one.
func TestPerCheckerBound(t *testing.T) {
	h := newHarness(t, 1, 20, "1m", Options{})
	h.s.laneOf[catalog.ZabbixAgent].spec.MaxInFlight = 3
	var n int
	for sec := 0; sec <= 60; sec++ {
		n += len(h.at(sec))
	}
	if n != 3 {
		t.Fatalf("%d in flight; the checker's bound is 3", n)
	}
}

// Missed intervals are counted, not run: after a stall of ten intervals
// each item is checked once.
func TestMissedChecksCounted(t *testing.T) {
	h := newHarness(t, 1, 3, "10s", Options{})
	h.at(0)
	h.chk.take()
	// No steps for 100 s (a stalled server): the items are due once.
	cs := h.at(100)
	if len(cs) != 3 {
		t.Fatalf("%d checks after the stall; want one per item", len(cs))
	}
	missed := metric(t, h.m, "peregrine_poll_checks_missed_total")
	if missed == "0" {
		t.Fatal("missed intervals not counted")
	}
}

// Availability, Zabbix semantics, on a fake clock: a network error makes
// the interface unreachable (its other checks wait), one probe per
// UnreachableDelay, unavailable after UnreachablePeriod, one probe per
// UnavailableDelay, back on the first answer; the other host's items are
// checked on time all along.
func TestAvailability(t *testing.T) {
	h := newHarness(t, 2, 5, "5s", Options{UnreachablePeriod: 30 * time.Second, UnreachableDelay: 10 * time.Second, UnavailableDelay: 20 * time.Second})
	const dead, good = 100, 101
	var probes []int
	goodChecks := map[int]int{} // second -> checks of the good host
	var recovered bool
	for sec := 0; sec <= 130; sec++ {
		cs := h.at(sec)
		var deadCs, goodCs []Check
		for _, c := range cs {
			if c.InterfaceID == dead {
				deadCs = append(deadCs, c)
			} else {
				goodCs = append(goodCs, c)
			}
		}
		goodChecks[sec] = len(goodCs)
		h.complete(goodCs, OK, "1", "")
		a, _ := h.rt.Availability(dead)
		if a.ErrorsFrom != 0 && len(deadCs) > 1 {
			t.Fatalf("second %d: %d checks of the failing interface; want one probe", sec, len(deadCs))
		}
		if a.ErrorsFrom != 0 && len(deadCs) == 1 {
			probes = append(probes, sec)
		}
		if sec < 100 {
			h.complete(deadCs, NetworkError, "", "cannot connect: connection refused")
		} else {
			if len(deadCs) > 0 {
				recovered = true
			}
			h.complete(deadCs, OK, "1", "")
		}
		if sec == 25 {
			a, _ := h.rt.Availability(dead)
			if a.Available != 0 || a.ErrorsFrom == 0 || a.Error != "cannot connect: connection refused" {
				t.Fatalf("at 25 s the interface should be unreachable (not yet unavailable): %+v", a)
			}
		}
		if sec == 60 {
			a, _ := h.rt.Availability(dead)
			if a.Available != 2 || a.DisableUntil <= h.now.Unix() {
				t.Fatalf("at 60 s the interface should be unavailable with a probe time ahead: %+v", a)
			}
		}
	}
	if len(probes) < 4 {
		t.Fatalf("probes at %v: want one per delay", probes)
	}
	for i := 1; i < len(probes); i++ {
		if gap := probes[i] - probes[i-1]; gap < 10 {
			t.Fatalf("probes at %v: %d s apart, less than the unreachable delay", probes, gap)
		}
	}
	if !recovered {
		t.Fatal("no probe after the agent came back")
	}
	a, _ := h.rt.Availability(dead)
	if a.Available != 1 || a.Error != "" || a.ErrorsFrom != 0 || a.DisableUntil != 0 {
		t.Fatalf("after a successful probe: %+v; want available", a)
	}
	g, _ := h.rt.Availability(good)
	if g.Available != 1 {
		t.Fatalf("good interface %+v", g)
	}
	// The good host's 5 items at 5 s: 5 checks every 5 s, never held up.
	for sec := 5; sec <= 125; sec += 5 {
		n := 0
		for s := sec; s < sec+5; s++ {
			n += goodChecks[s]
		}
		if n != 5 {
			t.Fatalf("good host: %d checks in [%d, %d); want 5", n, sec, sec+5)
		}
	}
	if metric(t, h.m, "peregrine_poll_interfaces_unavailable_total") != "1" || metric(t, h.m, "peregrine_poll_interfaces_recovered_total") != "1" {
		t.Fatal("unavailable/recovered not counted once each")
	}
}

// TestNoAvailability: checks of a type whose spec says NoAvailability
// (simple checks) run through their interface's address, on schedule
// while the interface is unreachable for agent checks, and neither their
// values nor their network errors change its availability.
func TestNoAvailability(t *testing.T) {
	simple := &fakeChecker{}
	h := newHarness(t, 1, 2, "5s", Options{UnreachableDelay: 30 * time.Second,
		Checkers: map[catalog.ItemType]CheckerSpec{catalog.SimpleCheck: {Checker: simple, NoAvailability: true}}})
	h.targets[1].typ = catalog.SimpleCheck // item 2: a simple check on the same interface 100
	simpleRuns := 0
	for sec := 0; sec < 40; sec++ {
		agentCs := h.at(sec)
		h.complete(agentCs, NetworkError, "", "connection refused")
		cs := simple.take()
		simpleRuns += len(cs)
		status := OK
		if sec%2 == 0 {
			status = NetworkError
		}
		h.complete(cs, status, "0", "")
		if len(cs) > 0 {
			a, _ := h.rt.Availability(100)
			if a.ErrorsFrom == 0 {
				t.Fatalf("second %d: a simple check's result cleared the agent interface's error: %+v", sec, a)
			}
		}
	}
	// Every 5 s for 40 s: 8 runs, none deferred by the unreachable interface.
	if simpleRuns != 8 {
		t.Fatalf("simple check ran %d times in 40 s at 5 s, want 8", simpleRuns)
	}
}

// Not supported: the item's state and error; a later value makes it
// normal again. A value that does not convert is "not supported" too.
func TestItemState(t *testing.T) {
	h := newHarness(t, 1, 1, "10s", Options{})
	id := h.targets[0].id
	var done int
	for sec := 0; sec <= 40; sec++ {
		cs := h.at(sec)
		if len(cs) == 0 {
			continue
		}
		switch done {
		case 0:
			h.complete(cs, NotSupported, "", "Unsupported item key.")
			st, ok := h.rt.ItemState(id)
			if !ok || !st.NotSupported || st.Error != "Unsupported item key." {
				t.Fatalf("state %+v after ZBX_NOTSUPPORTED", st)
			}
		case 1:
			h.complete(cs, OK, "7", "")
			if st, ok := h.rt.ItemState(id); ok {
				t.Fatalf("state %+v after a stored value; want normal", st)
			}
		case 2:
			h.complete(cs, OK, "abc", "")
			st, _ := h.rt.ItemState(id)
			if !st.NotSupported || !strings.Contains(st.Error, `"abc"`) {
				t.Fatalf("state %+v after an unconvertible value", st)
			}
		}
		done++
	}
	if done < 3 || len(h.stored) != 1 {
		t.Fatalf("%d checks, %d stored", done, len(h.stored))
	}
}

// An item whose delay cannot be parsed is not supported, saying why, and
// not scheduled.
func TestBadDelay(t *testing.T) {
	h := newHarness(t, 1, 2, "1m", Options{})
	h.targets[0].delay = "{$DELAY}"
	h.at(0)
	st, _ := h.rt.ItemState(h.targets[0].id)
	if !st.NotSupported || !strings.Contains(st.Error, "macro that is not defined") {
		t.Fatalf("state %+v", st)
	}
	if _, ok := h.s.items[h.targets[0].id]; ok {
		t.Fatal("item with a bad delay scheduled")
	}
	// Fixed: scheduled, and normal again.
	h.targets[0].delay = "1m"
	h.resync()
	h.at(1)
	if _, ok := h.s.items[h.targets[0].id]; !ok {
		t.Fatal("fixed item not scheduled")
	}
	if _, ok := h.rt.ItemState(h.targets[0].id); ok {
		t.Fatal("fixed item still not supported")
	}
}

// CheckNow runs an hourly item at once; an unknown item is an error.
func TestCheckNow(t *testing.T) {
	h := newHarness(t, 1, 1, "1h", Options{})
	id := h.targets[0].id
	h.at(0)
	h.chk.take()
	if err := h.s.CheckNow([]uint64{id}); err != nil {
		t.Fatal(err)
	}
	if cs := h.at(1); len(cs) != 1 || cs[0].ItemID != id {
		t.Fatalf("check now: %v", cs)
	}
	if err := h.s.CheckNow([]uint64{id, 999999}); err == nil || !strings.Contains(err.Error(), "999999") {
		t.Fatalf("CheckNow of an unknown item: %v", err)
	}
}

// targetsOf reads the polled items and their interfaces from a snapshot.
func TestTargetsOf(t *testing.T) {
	cat := catalogtest.Open(t, catalog.Spec{Hosts: []catalog.HostSpec{
		{Host: "a", Interfaces: []catalog.InterfaceSpec{{IP: "127.0.0.1", Port: "10050"}, {IP: "127.0.0.2", Port: "20050"}, {DNS: "agent.example", Port: "10050"}},
			Items: []catalog.ItemSpec{
				{Key: "main", Type: "zabbix_agent"},
				{Key: "second", Type: "zabbix_agent", Interface: "127.0.0.2:20050", Timeout: "7s"},
				{Key: "by.dns", Type: "zabbix_agent", Interface: "agent.example:10050"},
				{Key: "off", Type: "zabbix_agent", Status: "disabled"},
				{Key: "trap", Type: "trapper"},
			}},
		{Host: "down", Status: "disabled", Interfaces: []catalog.InterfaceSpec{{IP: "127.0.0.3"}},
			Items: []catalog.ItemSpec{{Key: "x", Type: "zabbix_agent"}}},
	}})
	got := map[string]target{}
	for _, tg := range targetsOf(cat.Snapshot(), map[catalog.ItemType]bool{catalog.ZabbixAgent: true}, nil, 3*time.Second) {
		got[tg.key] = tg
	}
	if len(got) != 3 {
		t.Fatalf("targets %v; want main, second and by.dns only", got)
	}
	f := func(key, addr string, timeout time.Duration) {
		t.Helper()
		tg := got[key]
		if tg.addr != addr || tg.timeout != timeout || tg.ifaceID == 0 || tg.bad != "" || tg.delay != "1m" {
			t.Fatalf("%s: %+v; want addr %s timeout %s", key, tg, addr, timeout)
		}
	}
	f("main", "127.0.0.1:10050", 3*time.Second)
	f("second", "127.0.0.2:20050", 7*time.Second)
	f("by.dns", "agent.example:10050", 3*time.Second)
}

// Types whose checker needs no interface (internal items) are polled on
// hosts without one, and keep no availability.
func TestNoInterfaceType(t *testing.T) {
	cat := catalogtest.Open(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "self", Items: []catalog.ItemSpec{
		{Key: "zabbix[uptime]", Type: "internal", Delay: "1m"},
		{Key: "agent.ping", Type: "zabbix_agent"},
	}}}})
	types := map[catalog.ItemType]bool{catalog.ZabbixAgent: true, catalog.Internal: true}
	got := map[string]target{}
	for _, tg := range targetsOf(cat.Snapshot(), types, map[catalog.ItemType]bool{catalog.Internal: true}, 3*time.Second) {
		got[tg.key] = tg
	}
	if tg := got["zabbix[uptime]"]; tg.bad != "" || tg.ifaceID != 0 || tg.addr != "" {
		t.Errorf("internal item: %+v; want schedulable without an interface", tg)
	}
	if tg := got["agent.ping"]; !strings.Contains(tg.bad, "no agent interface") {
		t.Errorf("agent item without an interface: %+v; want unschedulable", tg)
	}

	h := newHarness(t, 1, 3, "1m", Options{})
	for i := range h.targets {
		h.targets[i].ifaceID, h.targets[i].addr = 0, ""
	}
	var cs []Check
	for sec := 0; sec <= 60; sec++ {
		cs = append(cs, h.at(sec)...)
	}
	if len(cs) != 3 || cs[0].InterfaceID != 0 {
		t.Fatalf("checks %+v; want 3 without an interface", cs)
	}
	h.complete(cs, OK, "1", "")
	h.complete(h.at(61), OK, "1", "")
	if _, ok := h.rt.Availability(0); ok || len(h.s.ifaces) != 0 {
		t.Fatalf("availability kept for interface 0: %v", h.s.ifaces)
	}
}

// A restarted scheduler finds every item on the grid it had: the next
// checks computed by a second scheduler started later are the ones the
// first would have run (no storm of checks at start, nothing skipped).
func TestRestartKeepsSchedule(t *testing.T) {
	a := newHarness(t, 2, 50, "30s", Options{})
	a.at(0)
	b := newHarness(t, 2, 50, "30s", Options{})
	b.targets = a.targets // the same items
	b.at(17)
	for id, ea := range a.s.items {
		eb := b.s.items[id]
		next := ea.next
		for next <= b.now.UnixMilli() {
			next += 30_000
		}
		if eb == nil || eb.next != next {
			t.Fatalf("item %d: first scheduler's grid gives %d after the restart, the restarted one %v", id, next, eb)
		}
	}
}

// A local error (out of descriptors here) blames neither the item nor
// the interface: no availability change, no item state.
func TestLocalErrorBlamesNobody(t *testing.T) {
	h := newHarness(t, 1, 1, "1s", Options{})
	h.at(0) // schedules the item for second 1
	cs := h.at(1)
	if len(cs) != 1 {
		t.Fatalf("%d checks at 1 s", len(cs))
	}
	h.complete(cs, LocalError, "", "cannot connect: too many open files")
	h.at(2) // takes the completion back: next check in second 3
	if cs := h.at(3); len(cs) != 1 {
		t.Fatalf("the check did not run again at its next time: %v", cs)
	}
	if a, ok := h.rt.Availability(100); ok {
		t.Fatalf("availability %+v after a local error", a)
	}
	if st, ok := h.rt.ItemState(h.targets[0].id); ok {
		t.Fatalf("item state %+v after a local error", st)
	}
	if got := metric(t, h.m, `peregrine_poll_checks_total{result="local_error"}`); got != "1" {
		t.Fatalf("local errors counted %s", got)
	}
}

// QueueRange above an hour: minute slots up to a day, one slot beyond;
// a coarse slot counts if its first second is within the range.
func TestQueueRangeCoarse(t *testing.T) {
	h := newHarness(t, 1, 1, "1m", Options{})
	for secs, n := range map[int64]int64{30: 1, 3599: 4, 7200: 3, 7259: 10, 2 * 86400: 2} {
		h.s.queue.late[lateIndex(secs)].Add(n)
	}
	for _, c := range []struct {
		from, to int64
		want     int
	}{
		{0, 0, 20}, {0, 3600, 5}, {3599, 3600, 4}, {3600, 0, 15}, {7200, 7260, 13}, {7230, 0, 2},
		{7200, 7201, 13}, {7260, 0, 2}, {86400, 0, 2}, {86399, 86400, 0}, {3 * 86400, 0, 0}, // a day or more late is one slot
	} {
		if got := h.s.QueueRange(c.from, c.to); got != c.want {
			t.Errorf("QueueRange(%d, %d) = %d; want %d", c.from, c.to, got, c.want)
		}
	}
}

// TestStampTolerance: a value received within the tolerance of its
// scheduled time is stamped at that time, one received further away keeps
// its receive time, and without a tolerance every value keeps it.
func TestStampTolerance(t *testing.T) {
	f := func(tol, late time.Duration, wantAtDue bool) {
		t.Helper()
		h := newHarness(t, 1, 1, "10s", Options{StampTolerance: tol})
		var cs []Check
		for sec := 0; sec < 10 && len(cs) == 0; sec++ {
			cs = h.at(sec)
		}
		if len(cs) != 1 {
			t.Fatal("the item was never checked")
		}
		got := cs[0].Due.Add(late)
		h.s.done(&Result{Check: cs[0], Status: OK, Value: []byte("1"), Clock: got})
		h.s.mu.Lock()
		rs := h.s.results
		h.s.results = nil
		h.s.mu.Unlock()
		h.s.process(rs)
		if len(h.stored) != 1 {
			t.Fatalf("tolerance %v, late %v: stored %d values", tol, late, len(h.stored))
		}
		want := got
		if wantAtDue {
			want = cs[0].Due
		}
		if st := time.Unix(h.stored[0].Clock, int64(h.stored[0].NS)); !st.Equal(want) {
			t.Errorf("tolerance %v, received %v after its slot: stamped %v, want %v", tol, late, st.Sub(cs[0].Due), want.Sub(cs[0].Due))
		}
	}
	f(2*time.Millisecond, 1500*time.Microsecond, true)
	f(2*time.Millisecond, -1*time.Millisecond, true) // early (clock skew between due and receive)
	f(2*time.Millisecond, 2*time.Millisecond, true)  // the bound is inclusive
	f(2*time.Millisecond, 2*time.Millisecond+1, false)
	f(2*time.Millisecond, 300*time.Millisecond, false) // a slow host stays visibly late
	f(0, 1*time.Microsecond, false)                    // off
}

// SetRetry: an item with a retry interval is checked at that interval
// while a trigger of it is soft, then goes back to its grid; an item
// without one is left alone.
func TestRetryInterval(t *testing.T) {
	h := newHarness(t, 1, 2, "1h", Options{})
	h.targets[0].retry = 10
	id, other := h.targets[0].id, h.targets[1].id
	for sec := 0; sec < 3600; sec += 600 {
		h.complete(h.at(sec), OK, "1", "") // the first round, somewhere in the hour
	}
	h.complete(h.at(3599), OK, "1", "")
	h.s.SetRetry([]uint64{id, other}, true)
	var seen []int
	for sec := 3600; sec < 3650; sec++ {
		cs := h.at(sec)
		for _, c := range cs {
			if c.ItemID == id {
				seen = append(seen, sec)
			}
		}
		h.complete(cs, OK, "1", "")
	}
	if len(seen) < 4 || seen[1]-seen[0] != 10 || seen[2]-seen[1] != 10 {
		t.Fatalf("checks in retry mode at %v; want every 10 s", seen)
	}
	h.s.SetRetry([]uint64{id}, false)
	n := 0
	for sec := 3650; sec < 3650+3000; sec += 5 {
		cs := h.at(sec)
		for _, c := range cs {
			if c.ItemID == id {
				n++
			}
		}
		h.complete(cs, OK, "1", "")
	}
	if n > 1 {
		t.Fatalf("%d checks in 50 minutes after leaving retry mode; want its hourly grid", n)
	}
}
