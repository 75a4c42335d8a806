package polltest

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
)

// fake is a checker by key prefix: "answer" reports a value, "hang"
// waits for ctx, "expire" for ctx or its timeout, "flood" reports a
// short value. broken names the one clause it breaks ("" for none), so
// that the tests below can show the suite catches each.
type fake struct {
	broken string
	mu     sync.Mutex
	buf    []byte // "reuse": one buffer for every value
}

func (f *fake) Check(ctx context.Context, batch []poll.Check, done func(*poll.Result)) {
	var wg sync.WaitGroup
	for i := range batch {
		wg.Add(1)
		go func(ch *poll.Check) {
			defer wg.Done()
			f.check(ctx, ch, done)
		}(&batch[i])
	}
	if f.broken == "blocks" {
		wg.Wait()
	}
}

func (f *fake) check(ctx context.Context, ch *poll.Check, done func(*poll.Result)) {
	r := &poll.Result{Check: *ch, Clock: time.Now()}
	switch kind, _, _ := strings.Cut(ch.Key, "."); kind {
	case "answer":
		r.Value = []byte("value of " + strconv.FormatUint(ch.ItemID, 10) + " at " + time.Now().String())
		if f.broken == "reuse" {
			f.mu.Lock()
			f.buf = append(f.buf[:0], r.Value...)
			r.Value = f.buf
			f.mu.Unlock()
		}
		if f.broken == "noclock" {
			r.Clock = time.Time{}
		}
		if f.broken == "twice" {
			done(r)
		}
	case "hang", "expire":
		timeout := ch.Timeout
		if kind == "hang" || f.broken == "ignorestimeout" {
			timeout = 24 * time.Hour
		}
		if f.broken == "ignoresctx" {
			ctx = context.Background()
		}
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case <-ctx.Done():
			r.Status, r.Error = poll.NetworkError, "check abandoned"
			if f.broken == "valueoncancel" {
				r.Status, r.Error, r.Value = poll.OK, "", []byte("0")
			}
			if f.broken == "leak" {
				go func() { time.Sleep(time.Minute); f.check(ctx, ch, func(*poll.Result) {}) }()
			}
		case <-t.C:
			r.Status, r.Error = poll.NetworkError, "timeout"
		}
		r.Clock = time.Now()
	case "flood":
		r.Value = []byte("short")
		if f.broken == "bigvalue" {
			r.Value = make([]byte, 1<<20)
		}
		if f.broken == "alloc" {
			for range 64 {
				r.Value = make([]byte, 1<<20)[:8]
			}
		}
	}
	done(r)
}

func fakeSubject(broken string) func(t *testing.T) *Subject {
	return func(t *testing.T) *Subject {
		c := func(id uint64, key string) poll.Check {
			return poll.Check{ItemID: id, Key: key, Timeout: time.Second, Due: time.Now()}
		}
		return &Subject{
			Checker:  &fake{broken: broken},
			Answer:   []poll.Check{c(1, "answer.a"), c(2, "answer.b")},
			Hang:     []poll.Check{c(3, "hang.a")},
			Expire:   []poll.Check{c(4, "expire.a")},
			Flood:    []poll.Check{c(5, "flood.a")},
			MaxValue: 64,
			Markers:  []string{"polltest.(*fake)"},
		}
	}
}

func TestSuitePassesSoundChecker(t *testing.T) {
	Run(t, fakeSubject(""))
}

// brokenEnv names the broken fake a re-executed test binary runs the
// suite against.
const brokenEnv = "POLLTEST_BROKEN"

// TestBrokenChecker runs only in a re-executed test binary (see
// TestSuiteCatchesBrokenCheckers): it is meant to fail.
func TestBrokenChecker(t *testing.T) {
	kind := os.Getenv(brokenEnv)
	if kind == "" {
		t.Skip("run by TestSuiteCatchesBrokenCheckers")
	}
	// A broken checker is known to be broken: fail at once rather than
	// after bounds made for loaded machines.
	returnBound, cancelBound, expireSlack = time.Second, time.Second, time.Second
	Run(t, fakeSubject(kind))
}

// TestSuiteCatchesBrokenCheckers runs the suite against fakes that each
// break one clause, each in a child test binary, and wants it to fail
// saying so. The leak (the leak check waits 5 s) runs without -short.
func TestSuiteCatchesBrokenCheckers(t *testing.T) {
	f := func(kind, subtest, want string, slow bool) {
		t.Helper()
		if slow && testing.Short() {
			return
		}
		cmd := exec.Command(os.Args[0], "-test.run", "^TestBrokenChecker$/^"+subtest+"$", "-test.count=1")
		cmd.Env = append(os.Environ(), brokenEnv+"="+kind)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), want) {
			t.Errorf("a checker that breaks %q: suite error %v, want a failure saying %q; output:\n%s", kind, err, want, out)
		}
	}
	f("twice", "Answer", "reported 2 times", false)
	f("reuse", "Answer", "changed by the next check", false)
	f("noclock", "Answer", "without a Clock", false)
	f("valueoncancel", "CancelInFlight", "want a network or local error", false)
	f("bigvalue", "Flood", "more than 64", false)
	f("alloc", "Flood", "the checker keeps what a target sends", false)
	f("leak", "CancelInFlight", "leaked goroutines", true)
	f("ignoresctx", "CancelInFlight", "of ctx ending", false)
	f("ignorestimeout", "Timeout", "(timing out) not reported", false)
	f("blocks", "CancelInFlight", "Check did not return", false)
}
