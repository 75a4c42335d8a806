package poll

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"
)

// fixedLag reports the same lag for every span.
type fixedLag struct{ d time.Duration }

func (f *fixedLag) Stalled(_, _ time.Time) time.Duration { return f.d }

// timedOut reports checks as network errors that used their whole
// timeout (sent 3 s before their result, on the harness's clock).
func (h *harness) timedOut(checks []Check) {
	sent := h.now.Add(-3 * time.Second)
	for i := range checks {
		c := checks[i]
		c.Sent = sent
		h.s.done(&Result{Check: c, Status: NetworkError, Error: "cannot read from 10.0.0.0:10050: timed out", Clock: sent.Add(3 * time.Second)})
	}
	h.s.mu.Lock()
	rs := h.s.results
	h.s.results = nil
	h.s.mu.Unlock()
	h.s.process(rs)
}

// A check that timed out while the server was behind (lag at least a
// half of its time) blames nobody: the interface stays as it was, the
// check goes out again at once and is counted as postponed. The same
// timeouts with no lag make the interface unreachable, then unavailable.
func TestBehindBlamesNobody(t *testing.T) {
	for _, tc := range []struct {
		name string
		lag  time.Duration
	}{{"behind", 2 * time.Second}, {"on time", 100 * time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			lag := &fixedLag{tc.lag}
			h := newHarness(t, 1, 1, "1s", Options{Lag: lag, UnreachablePeriod: 10 * time.Second, UnreachableDelay: 2 * time.Second, UnavailableDelay: 5 * time.Second})
			checks := 0
			for sec := 0; sec <= 60; sec++ {
				cs := h.at(sec)
				checks += len(cs)
				h.timedOut(cs)
			}
			a, known := h.rt.Availability(100)
			postponed := metric(t, h.m, `peregrine_poll_checks_postponed_total{reason="server_behind"}`)
			if tc.lag*2 >= 3*time.Second {
				if known && (a.ErrorsFrom != 0 || a.Available == 2) {
					t.Fatalf("interface blamed while the server was behind: %+v", a)
				}
				// Every second the postponed check goes out again: it is
				// not held back like an unreachable interface's.
				if checks < 55 || postponed != strconv.Itoa(checks) {
					t.Fatalf("%d checks, %s postponed; want one a second, all postponed", checks, postponed)
				}
				return
			}
			if a.Available != 2 || a.ErrorsFrom == 0 {
				t.Fatalf("timeouts with no lag: %+v; want unavailable", a)
			}
			if postponed != "0" {
				t.Fatalf("%s postponed with no lag", postponed)
			}
		})
	}
}

// A network error that came back before its timeout (refused, reset) is
// the target's answer even while the server is behind.
func TestBehindQuickRefusalBlames(t *testing.T) {
	h := newHarness(t, 1, 1, "1s", Options{Lag: &fixedLag{time.Hour}})
	h.at(0)
	cs := h.at(1)
	sent := time.Now().Add(-10 * time.Millisecond)
	for i := range cs {
		cs[i].Sent = sent
		h.s.done(&Result{Check: cs[i], Status: NetworkError, Error: "cannot connect: connection refused", Clock: sent.Add(10 * time.Millisecond)})
	}
	h.s.mu.Lock()
	rs := h.s.results
	h.s.results = nil
	h.s.mu.Unlock()
	h.s.process(rs)
	h.at(2)
	if a, _ := h.rt.Availability(100); a.ErrorsFrom == 0 {
		t.Fatalf("a refusal during lag was not counted: %+v", a)
	}
}

// LagMeter adds up how late each wake-up came, and Stalled answers for
// a span from the running totals around it.
func TestLagMeterStalled(t *testing.T) {
	m := NewLagMeter()
	t0 := time.Unix(1000, 0)
	now := t0
	m.now = func() time.Time { return now }
	// Wake-ups every 20 ms on time for 1 s, then one 500 ms late, then
	// on time again for 1 s.
	at := t0
	m.record(at, 0)
	for i := 0; i < 50; i++ {
		at = at.Add(lagPeriod)
		m.record(at, 0)
	}
	at = at.Add(lagPeriod + 500*time.Millisecond)
	m.record(at, 500*time.Millisecond)
	late := at
	for i := 0; i < 50; i++ {
		at = at.Add(lagPeriod)
		m.record(at, 0)
	}
	now = at
	for _, tc := range []struct {
		from, to time.Time
		want     time.Duration
	}{
		{t0, t0.Add(time.Second), 0},
		{t0, now, 500 * time.Millisecond},
		{late.Add(-200 * time.Millisecond), late.Add(-100 * time.Millisecond), 500 * time.Millisecond}, // inside the late wake-up
		{late, now, 0},
		{t0.Add(-time.Hour), t0.Add(time.Second), 0},
	} {
		if got := m.Stalled(tc.from, tc.to); got != tc.want {
			t.Errorf("Stalled(%v, %v) = %v, want %v", tc.from.Sub(t0), tc.to.Sub(t0), got, tc.want)
		}
	}
	// A span reaching past the last wake-up counts the meter's own
	// oversleep so far: it may be the one waiting for a CPU.
	now = at.Add(time.Second)
	if got, want := m.Stalled(late, now), time.Second-lagPeriod-lagSlack; got != want {
		t.Errorf("Stalled up to now = %v, want %v", got, want)
	}
	if m.Total() != 500*time.Millisecond {
		t.Errorf("Total %v", m.Total())
	}
}

// Run records one sample per wake-up until ctx ends, each as late as it
// came plus its probe's wait in the pipe.
func TestLagMeterRun(t *testing.T) {
	m := NewLagMeter()
	now := time.Unix(1000, 0)
	m.now = func() time.Time { return now }
	probes := 0
	m.probe = func() (time.Duration, error) {
		probes++
		if probes == 4 {
			return 100 * time.Millisecond, nil // one byte waited in the pipe
		}
		return time.Millisecond, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	m.sleep = func(_ context.Context, d time.Duration) bool {
		n++
		switch {
		case n == 3:
			now = now.Add(d + 300*time.Millisecond)
		case n > 5:
			cancel()
			return false
		default:
			now = now.Add(d)
		}
		return true
	}
	m.Run(ctx)
	if got, want := m.Total(), 300*time.Millisecond-lagSlack+100*time.Millisecond-lagSlack; got != want {
		t.Fatalf("total %v, want %v", got, want)
	}
}

// The pipe probe measures a byte's wait between two goroutines, and
// closes without leaving its reader behind.
func TestPipeProbe(t *testing.T) {
	p, err := newPipeProbe()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		d, err := p.once()
		if err != nil || d < 0 {
			t.Fatalf("probe %d: %v %v", i, d, err)
		}
	}
	p.close()
	if _, ok := <-p.got; ok {
		t.Fatal("reader still running after close")
	}
}

// TestBehindEveryChecker: every checker's timeout takes the same path.
// Each checker reports a timeout its own way (package tests check that
// they mark it TimedOut): the agent and SNMP checkers as a network
// error, ICMP and net.tcp.service as a value (0, 100 % loss), the HTTP
// agent and external checks as not supported. While the server is
// behind, none of them is stored, makes the item not supported or
// blames the interface: each is postponed, counted, and shown by the
// queue still due when it was; on time, each counts as before.
func TestBehindEveryChecker(t *testing.T) {
	shapes := []struct {
		name   string
		status Status
		value  string
		err    string
	}{
		{"agent, SNMP", NetworkError, "", "timeout while waiting for the reply"},
		{"ICMP, net.tcp.service", OK, "0", ""},
		{"HTTP agent, external", NotSupported, "", "Timeout was reached (3s)"},
	}
	for _, sh := range shapes {
		for _, behind := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s behind=%v", sh.name, behind), func(t *testing.T) {
				lag := &fixedLag{0}
				if behind {
					lag.d = 2 * time.Second
				}
				h := newHarness(t, 1, 1, "1s", Options{Lag: lag, UnreachablePeriod: 10 * time.Second, UnreachableDelay: 2 * time.Second, UnavailableDelay: 5 * time.Second})
				checks := 0
				for sec := 0; sec <= 20; sec++ {
					cs := h.at(sec)
					checks += len(cs)
					sent := h.now.Add(-3 * time.Second)
					for i := range cs {
						c := cs[i]
						c.Sent = sent
						h.s.done(&Result{Check: c, Status: sh.status, Value: []byte(sh.value), Error: sh.err, Clock: h.now, TimedOut: true})
					}
					h.s.mu.Lock()
					rs := h.s.results
					h.s.results = nil
					h.s.mu.Unlock()
					h.s.process(rs)
				}
				postponed := metric(t, h.m, `peregrine_poll_checks_postponed_total{reason="server_behind"}`)
				st, _ := h.rt.ItemState(h.targets[0].id)
				a, _ := h.rt.Availability(100)
				if !behind {
					if postponed != "0" {
						t.Fatalf("%s postponed on time", postponed)
					}
					switch sh.status {
					case OK:
						if len(h.stored) == 0 {
							t.Fatal("on time, a timeout's value (0) was not stored")
						}
					case NotSupported:
						if !st.NotSupported {
							t.Fatal("on time, a timeout did not make the item not supported")
						}
					case NetworkError:
						if a.ErrorsFrom == 0 {
							t.Fatal("on time, a timeout did not count against the interface")
						}
					}
					return
				}
				if checks < 18 || postponed != strconv.Itoa(checks) {
					t.Fatalf("%d checks, %s postponed; want one a second, all postponed", checks, postponed)
				}
				if len(h.stored) != 0 || st.NotSupported || a.ErrorsFrom != 0 || a.Available == 2 {
					t.Fatalf("a timeout while behind counted: %d stored, item %+v, interface %+v", len(h.stored), st, a)
				}
				// zabbix[queue] and queue.get see the postponed check as
				// late as it is: it keeps its missed due time.
				h.s.computeQueue(h.now.UnixMilli())
				if q := h.s.Queue(); q.Total == 0 {
					t.Fatalf("the postponed check is not in the queue after 20 s: %+v", q)
				}
			})
		}
	}
}
