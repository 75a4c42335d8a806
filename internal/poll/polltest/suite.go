package polltest

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// Subject is one checker under test with checks against its targets.
// Every check of every list has an ItemID of its own (results are told
// apart by it).
type Subject struct {
	Checker poll.Checker
	// Close releases what the checker keeps between checks (sockets,
	// kept-alive connections, idle workers); nil when it keeps nothing.
	// The suite calls it once ctx has ended and every check reported, as
	// the server does once the scheduler has stopped.
	Close func()
	// Answer are checks whose targets answer with a value (Status OK).
	// At least one.
	Answer []poll.Check
	// Hang are checks whose targets never answer: a peer that accepts
	// and stays silent, a device that drops requests, a script that
	// sleeps, a store read that blocks. The suite gives them HangTimeout,
	// so that only ctx ending stops them. Nil when nothing the checker
	// reaches can hang (internal items).
	Hang []poll.Check
	// Expire are checks whose targets never answer, which must end by
	// their timeout: the suite sets ExpireTimeout (a checker whose key
	// carries its own timeout, ICMP's, has it there). Nil when the
	// checker applies no timeout of its own (calculated items, as in
	// Zabbix: the store's query timeout bounds them).
	Expire []poll.Check
	// Flood are checks whose targets send without end, or far more than
	// the checker keeps. Nil when no target can (ICMP replies, internal
	// figures).
	Flood []poll.Check
	// MaxValue bounds a Flood check's value, in bytes.
	MaxValue int
	// MaxAlloc bounds what the Flood checks allocate in all, in bytes;
	// default 32 MiB, where a checker that kept what a flood sends
	// would allocate gigabytes.
	MaxAlloc uint64
	// InOrder: the checker answers a batch in order on one goroutine
	// (local reads: calculated and internal items), so a hanging check
	// holds the ones after it by design; the suite then puts the Answer
	// checks before the Hang ones rather than after them.
	InOrder bool
	// Markers are substrings of the stacks of the checker's goroutines
	// ("poll/agent.(*Checker)"); none may be left once ctx has ended and
	// Close returned.
	Markers []string
}

// Timeouts the suite gives checks.
const (
	// HangTimeout is the Timeout of Hang checks: far beyond any test, so
	// that a check reported early was not hanging.
	HangTimeout = time.Hour
	// ExpireTimeout is the Timeout of Expire checks.
	ExpireTimeout = time.Second
	// FloodTimeout is the Timeout of Flood checks.
	FloodTimeout = 5 * time.Second
)

// Bounds of waits. They only tell "returned, reported" from "blocked,
// never reported" and are generous for a loaded machine; no test asserts
// how fast a checker is. Variables only so that the suite's own tests
// can fail faster.
var (
	returnBound = 10 * time.Second // Check returning
	answerBound = 30 * time.Second // answered checks reporting
	cancelBound = 15 * time.Second // checks reporting once ctx ended
	expireSlack = 20 * time.Second // beyond a check's timeout
)

// Run runs the contract suite, one subtest per clause, each on a fresh
// Subject from newSubject (which may make its targets there, closed with
// t, or share targets made before).
func Run(t *testing.T, newSubject func(t *testing.T) *Subject) {
	t.Run("Answer", func(t *testing.T) { answer(t, subject(t, newSubject)) })
	t.Run("CancelledBeforeCheck", func(t *testing.T) { cancelledBefore(t, subject(t, newSubject)) })
	t.Run("CancelInFlight", func(t *testing.T) { cancelInFlight(t, subject(t, newSubject)) })
	t.Run("Timeout", func(t *testing.T) { expire(t, subject(t, newSubject)) })
	t.Run("Flood", func(t *testing.T) { flood(t, subject(t, newSubject)) })
}

// subject makes a Subject and checks that it can be tested.
func subject(t *testing.T, newSubject func(t *testing.T) *Subject) *Subject {
	t.Helper()
	s := newSubject(t)
	switch {
	case s == nil || s.Checker == nil:
		t.Fatal("polltest: the subject has no Checker")
	case len(s.Answer) == 0:
		t.Fatal("polltest: Subject.Answer is empty: give at least one check its target answers")
	case len(s.Markers) == 0:
		t.Fatal("polltest: Subject.Markers is empty: name the checker's goroutines for the leak check")
	case len(s.Flood) > 0 && s.MaxValue <= 0:
		t.Fatal("polltest: Subject.MaxValue must bound the Flood checks' values")
	}
	seen := map[uint64]string{}
	for _, l := range [][]poll.Check{s.Answer, s.Hang, s.Expire, s.Flood} {
		for _, c := range l {
			if k, dup := seen[c.ItemID]; dup {
				t.Fatalf("polltest: item %d is both %q and %q: give every check its own ItemID", c.ItemID, k, c.Key)
			}
			seen[c.ItemID] = c.Key
		}
	}
	return s
}

// answer: every answered check reports once, OK, with its Check; a
// second round does not change the values the first reported.
func answer(t *testing.T, s *Subject) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := start(t, s, ctx, slices.Clone(s.Answer))
	first.waitAll(t, answerBound, "answered")
	kept := map[uint64][]byte{}
	for _, c := range s.Answer {
		r := first.result(c.ItemID)
		if r.Status != poll.OK {
			t.Errorf("%s: %s %q, want a value (is the target up?)", c.Key, r.Status, r.Error)
		}
		kept[c.ItemID] = slices.Clone(r.Value)
	}
	// A checker that reused a reported value's buffer for the next
	// check shows it here: the value belongs to the scheduler.
	second := start(t, s, ctx, slices.Clone(s.Answer))
	second.waitAll(t, answerBound, "answered")
	for _, c := range s.Answer {
		if r := first.result(c.ItemID); string(r.Value) != string(kept[c.ItemID]) {
			t.Errorf("%s: the value reported was changed by the next check: %q, was %q", c.Key, r.Value, kept[c.ItemID])
		}
	}
	finish(t, s, cancel, first, second)
}

// cancelledBefore: a batch handed over with ctx already ended still
// gets one report per check, at once.
func cancelledBefore(t *testing.T, s *Subject) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	batch := slices.Concat(s.Answer, withTimeout(s.Hang, HangTimeout), withTimeout(s.Expire, ExpireTimeout), withTimeout(s.Flood, FloodTimeout))
	col := start(t, s, ctx, batch)
	col.waitAll(t, cancelBound, "handed over with ctx ended")
	col.wantAbandoned(t, s.Hang)
	finish(t, s, cancel, col)
}

// cancelInFlight: targets that never answer hold neither Check nor the
// answered checks of the batch; ending ctx reports them within seconds.
func cancelInFlight(t *testing.T, s *Subject) {
	if len(s.Hang) == 0 {
		t.Skip("no target of this checker can hang")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hang := withTimeout(s.Hang, HangTimeout)
	batch := slices.Concat(hang, s.Answer)
	if s.InOrder {
		batch = slices.Concat(s.Answer, hang)
	}
	col := start(t, s, ctx, batch)
	if missing := col.wait(ids(s.Answer), answerBound); len(missing) > 0 {
		t.Errorf("answered checks %v not reported within %v beside checks that hang: one silent target holds the others", col.keys(missing), answerBound)
	}
	for _, c := range hang {
		if r := col.result(c.ItemID); r != nil {
			t.Errorf("%s reported %s %q before ctx ended, with an hour's timeout: is its target silent?", c.Key, r.Status, r.Error)
		}
	}
	cancel()
	if missing := col.wait(ids(hang), cancelBound); len(missing) > 0 {
		t.Errorf("checks %v not reported within %v of ctx ending", col.keys(missing), cancelBound)
	}
	col.wantAbandoned(t, hang)
	finish(t, s, cancel, col)
}

// expire: checks whose targets never answer end by their timeout.
func expire(t *testing.T, s *Subject) {
	if len(s.Expire) == 0 {
		t.Skip("this checker applies no timeout of its own")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	col := start(t, s, ctx, withTimeout(s.Expire, ExpireTimeout))
	col.waitAll(t, ExpireTimeout+expireSlack, "timing out")
	finish(t, s, cancel, col)
}

// flood: a target that sends without end costs bounded memory.
func flood(t *testing.T, s *Subject) {
	if len(s.Flood) == 0 {
		t.Skip("no target of this checker can flood it")
	}
	maxAlloc := s.MaxAlloc
	if maxAlloc == 0 {
		maxAlloc = 32 << 20
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	col := start(t, s, ctx, withTimeout(s.Flood, FloodTimeout))
	col.waitAll(t, FloodTimeout+expireSlack, "flooded")
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > maxAlloc {
		t.Errorf("the flooded checks allocated %d bytes, more than %d: the checker keeps what a target sends", n, maxAlloc)
	}
	for _, c := range s.Flood {
		if r := col.result(c.ItemID); r != nil && len(r.Value) > s.MaxValue {
			t.Errorf("%s: a value of %d bytes, more than %d", c.Key, len(r.Value), s.MaxValue)
		}
	}
	finish(t, s, cancel, col)
}

// start hands batch to the checker and returns once Check has, which it
// must do without waiting for the checks.
func start(t *testing.T, s *Subject, ctx context.Context, batch []poll.Check) *collector {
	t.Helper()
	col := newCollector(batch)
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		s.Checker.Check(ctx, batch, col.done)
	}()
	select {
	case <-returned:
	case <-time.After(returnBound):
		t.Fatalf("Check did not return within %v: it waits for its checks (%v)", returnBound, col.keys(ids(batch)))
	}
	return col
}

// finish ends ctx, waits for every report, closes the checker, checks
// that none of its goroutines is left and that every check reported
// exactly once, then scribbles over the batches: a checker still
// reading one after its last report races with that (go test -race).
func finish(t *testing.T, s *Subject, cancel context.CancelFunc, cols ...*collector) {
	t.Helper()
	cancel()
	for _, col := range cols {
		col.waitAll(t, cancelBound, "once ctx ended")
	}
	if s.Close != nil {
		s.Close()
	}
	if err := testutil.NoLeakedGoroutines(s.Markers...); err != nil {
		t.Errorf("after ctx ended and Close: %v", err)
	}
	for _, col := range cols {
		col.verify(t)
		for i := range col.batch {
			col.batch[i] = poll.Check{Key: "scribbled over by polltest"}
		}
	}
}

// withTimeout returns copies of checks with timeout d.
func withTimeout(checks []poll.Check, d time.Duration) []poll.Check {
	out := slices.Clone(checks)
	for i := range out {
		out[i].Timeout = d
	}
	return out
}

func ids(checks []poll.Check) []uint64 {
	out := make([]uint64, len(checks))
	for i, c := range checks {
		out[i] = c.ItemID
	}
	return out
}

// collector gathers the reports of one Check call.
type collector struct {
	batch  []poll.Check          // as handed over (scribbled over at the end)
	want   map[uint64]poll.Check // copies, to compare results with
	signal chan struct{}         // 1-buffered: "a report arrived"

	mu     sync.Mutex
	got    map[uint64][]*poll.Result
	strays []*poll.Result // reports of checks not in the batch
}

func newCollector(batch []poll.Check) *collector {
	c := &collector{batch: batch, want: map[uint64]poll.Check{}, signal: make(chan struct{}, 1), got: map[uint64][]*poll.Result{}}
	for _, ch := range batch {
		c.want[ch.ItemID] = ch
	}
	return c
}

// done is the callback handed to Check; it never blocks.
func (c *collector) done(r *poll.Result) {
	c.mu.Lock()
	if _, ok := c.want[r.ItemID]; ok {
		c.got[r.ItemID] = append(c.got[r.ItemID], r)
	} else {
		c.strays = append(c.strays, r)
	}
	c.mu.Unlock()
	select {
	case c.signal <- struct{}{}:
	default:
	}
}

// wait waits up to d for every check of ids to report and returns those
// that did not.
func (c *collector) wait(ids []uint64, d time.Duration) []uint64 {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		var missing []uint64
		c.mu.Lock()
		for _, id := range ids {
			if len(c.got[id]) == 0 {
				missing = append(missing, id)
			}
		}
		c.mu.Unlock()
		if len(missing) == 0 {
			return nil
		}
		select {
		case <-c.signal:
		case <-timer.C:
			return missing
		}
	}
}

// waitAll fails the test unless every check of the batch reports
// within d.
func (c *collector) waitAll(t *testing.T, d time.Duration, what string) {
	t.Helper()
	if missing := c.wait(ids(c.batch), d); len(missing) > 0 {
		t.Fatalf("checks %v (%s) not reported within %v", c.keys(missing), what, d)
	}
}

// result is the first report of item id, nil if none yet.
func (c *collector) result(id uint64) *poll.Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rs := c.got[id]; len(rs) > 0 {
		return rs[0]
	}
	return nil
}

// wantAbandoned checks that checks which could only end with ctx were
// reported as abandoned: a network or local error, never a value or not
// supported (see poll.Checker).
func (c *collector) wantAbandoned(t *testing.T, checks []poll.Check) {
	t.Helper()
	for _, ch := range checks {
		r := c.result(ch.ItemID)
		if r != nil && r.Status != poll.NetworkError && r.Status != poll.LocalError {
			t.Errorf("%s: abandoned when ctx ended, but reported %s %q %q, want a network or local error", ch.Key, r.Status, r.Value, r.Error)
		}
	}
}

// keys names items by their keys, for messages.
func (c *collector) keys(ids []uint64) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = fmt.Sprintf("%d %s", id, c.want[id].Key)
	}
	return out
}

// verify checks every report: one per check, carrying the check as
// handed over, a valid status, a clock and, on failure, a message.
func (c *collector) verify(t *testing.T) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.strays {
		t.Errorf("a report for item %d (%q), which was not in the batch", r.ItemID, r.Key)
	}
	for id, want := range c.want {
		rs := c.got[id]
		if len(rs) != 1 {
			t.Errorf("%s: reported %d times, want exactly once", want.Key, len(rs))
		}
		for _, r := range rs {
			switch {
			case r.Check != want:
				t.Errorf("%s: the result carries another check: %+v, want %+v", want.Key, r.Check, want)
			case r.Status >= poll.NumStatus:
				t.Errorf("%s: status %d is none of poll's", want.Key, r.Status)
			case r.Clock.IsZero():
				t.Errorf("%s: %s without a Clock (the value's time)", want.Key, r.Status)
			case (r.Status == poll.NotSupported || r.Status == poll.NetworkError) && r.Error == "":
				t.Errorf("%s: %s without a message", want.Key, r.Status)
			}
		}
	}
}
