package alert

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/pglog"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// holdSender holds the alerts to one address until the send's context
// ends (an attempt in flight at a kill) and delivers the others.
type holdSender struct {
	recSender
	hold string
	held atomic.Int64
}

func (s *holdSender) Send(ctx context.Context, mt *catalog.MediaType, a *Alert) error {
	if a.SendTo == s.hold {
		s.held.Add(1)
		<-ctx.Done()
		return ctx.Err()
	}
	return s.recSender.Send(ctx, mt, a)
}

func twoUserAction() catalog.Action {
	return catalog.Action{Name: "a", Operations: []catalog.Operation{{StepFrom: 1, StepTo: 1, DefaultMsg: 1, UserIDs: []uint64{1, 2}}}}
}

func alertTo(t *testing.T, e *Engine, sendto string) Alert {
	t.Helper()
	as := e.Alerts(func(a *Alert) bool { return a.SendTo == sendto })
	if len(as) != 1 {
		t.Fatalf("alerts to %s: %+v", sendto, as)
	}
	return as[0]
}

// TestInFlightAtKillMarked: u1's alert is in flight (its start logged)
// when the log is closed under the engine, as a kill -9 or a lost lease
// leaves it: its outcome is never logged. The reopened engine counts
// that attempt in retries, sends the alert once more and marks it
// (status sent, error RepeatSent); u2's alert, sent normally, is
// neither sent again nor marked; a third open sends nothing.
func TestInFlightAtKillMarked(t *testing.T) { eachBackend(t, testInFlightAtKillMarked) }

func testInFlightAtKillMarked(t *testing.T) {
	cfg := testConfig(twoUserAction())
	dir := t.TempDir()
	h := newHarness(t, cfg, dir, nil)
	hs := &holdSender{hold: "u1"}
	h.e.senders[catalog.MediaWebhook] = hs
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.e.Run(ctx); close(done) }()
	h.e.Notify(h.ev.put(problem(1, 4, "p")))
	waitFor(t, "u2's alert sent and u1's in flight", func() bool {
		as := h.e.Alerts(func(a *Alert) bool { return a.SendTo == "u2" && a.Status == StatusSent })
		return len(as) == 1 && hs.held.Load() == 1
	})
	h.e.Close() // the kill: nothing more reaches the log
	cancel()
	<-done

	h2 := newHarness(t, cfg, dir, nil)
	h2.ev = h.ev
	h2.e.opts.Events = h.ev
	a := alertTo(t, h2.e, "u1")
	if a.Status != StatusNotSent || a.Retries != 1 || !a.Repeat || a.Error == "" {
		t.Fatalf("u1's alert after the kill: %+v, want not sent, 1 retry, marked", a)
	}
	if got := h2.e.m.repeats.Load(); got != 1 {
		t.Fatalf("peregrine_alert_repeats_total %d, want 1", got)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	done2 := make(chan struct{})
	go func() { h2.e.Run(ctx2); close(done2) }()
	waitFor(t, "u1's alert sent again", func() bool { return alertTo(t, h2.e, "u1").Status == StatusSent })
	cancel2()
	<-done2
	if h2.snd.count() != 1 || h2.snd.sent[0].SendTo != "u1" {
		t.Fatalf("sent after the restart: %+v, want u1's alert once", h2.snd.sent)
	}
	a, b := alertTo(t, h2.e, "u1"), alertTo(t, h2.e, "u2")
	if a.Retries != 2 || a.Error != RepeatSent {
		t.Fatalf("u1's alert re-sent: retries %d error %q, want 2 and %q", a.Retries, a.Error, RepeatSent)
	}
	if b.Status != StatusSent || b.Retries != 1 || b.Error != "" || b.Repeat {
		t.Fatalf("u2's alert, sent normally: %+v", b)
	}
	h2.e.Close()

	h3 := newHarness(t, cfg, dir, nil)
	if got := h3.e.m.repeats.Load(); got != 0 {
		t.Fatalf("a third open found %d repeats", got)
	}
	if a3 := alertTo(t, h3.e, "u1"); a3.Status != StatusSent || a3.Retries != 2 || a3.Error != RepeatSent {
		t.Fatalf("u1's alert after a third open: %+v", a3)
	}
}

// TestRepeatFailedKeepsNote: a repeated alert whose next attempts fail
// ends failed with the sender's error and the note that an earlier
// attempt may have been delivered; the killed attempt counts toward
// maxattempts.
func TestRepeatFailedKeepsNote(t *testing.T) {
	cfg := testConfig(twoUserAction())
	dir := t.TempDir()
	h := newHarness(t, cfg, dir, nil)
	if err := h.e.store.write([]record{{Alert: &Alert{ID: 1, ActionID: 1, EventID: 1, PEventID: 1, UserID: 1, MediaTypeID: 1, SendTo: "u1", Status: StatusNew}}, {Started: 1}}); err != nil {
		t.Fatal(err)
	}
	h.e.Close()
	h2 := newHarness(t, cfg, dir, nil)
	h2.snd.fail = func(*Alert) error { return fmt.Errorf("HTTP 500") }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h2.e.Run(ctx); close(done) }()
	waitFor(t, "the alert failed", func() bool { return alertTo(t, h2.e, "u1").Status == StatusFailed })
	cancel()
	<-done
	a := alertTo(t, h2.e, "u1")
	if a.Retries != 3 || !strings.HasPrefix(a.Error, "HTTP 500 (an attempt before a restart or failover may have been delivered") {
		t.Fatalf("failed repeat: retries %d error %q, want 3 (the killed attempt and two more)", a.Retries, a.Error)
	}
}

// TestOldLogWithoutStarts: a log written before "send started" records
// existed (the records below are the old encoding, byte for byte)
// replays as before: the unsent alert is sent once, unmarked; the sent
// one is not sent again. An unknown member is ignored the other way
// round, so an older binary reads a newer log as before too.
func TestOldLogWithoutStarts(t *testing.T) { eachBackend(t, testOldLogWithoutStarts) }

func testOldLogWithoutStarts(t *testing.T) {
	old := []string{
		`{"w":1,"k":1}`,
		`{"a":{"id":1,"action":1,"event":1,"pevent":1,"trigger":0,"user":1,"mediatype":1,"clock":1800000000,"sendto":"u1","subject":"s","message":"m","status":3,"retries":0,"error":"","esc_step":1}}`,
		`{"a":{"id":2,"action":1,"event":1,"pevent":1,"trigger":0,"user":2,"mediatype":1,"clock":1800000000,"sendto":"u2","subject":"s","message":"m","status":1,"retries":1,"error":"","esc_step":1}}`,
	}
	dir := t.TempDir()
	var l recordLog
	if pg, ok := pgBackends.Load(t); ok {
		o := *pg.(func(string) *pglog.Options)(dir)
		o.Table = "alert_log"
		pl, err := pglog.Open(o)
		if err != nil {
			t.Fatal(err)
		}
		l = pgAlertLog{pl}
	} else {
		w, err := wal.Open(wal.Options{Dir: dir, Sync: wal.SyncBatch})
		if err != nil {
			t.Fatal(err)
		}
		l = walLog{w}
	}
	var last waiter
	for _, r := range old {
		last = l.AppendAsync([]byte(r))
	}
	if err := last.Wait(); err != nil {
		t.Fatal(err)
	}
	l.Close()

	h := newHarness(t, testConfig(twoUserAction()), dir, nil)
	if got := h.e.m.repeats.Load(); got != 0 {
		t.Fatalf("%d repeats in an old log", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.e.Run(ctx); close(done) }()
	waitFor(t, "u1's alert sent", func() bool { return alertTo(t, h.e, "u1").Status == StatusSent })
	cancel()
	<-done
	if h.snd.count() != 1 {
		t.Fatalf("sent %+v, want u1's alert once", h.snd.sent)
	}
	if a := alertTo(t, h.e, "u1"); a.Retries != 1 || a.Error != "" || a.Repeat {
		t.Fatalf("u1's alert from an old log: %+v", a)
	}
	var r record
	if err := json.Unmarshal([]byte(`{"s":7,"zz":1}`), &r); err != nil || r.Started != 7 {
		t.Fatalf("a started record: %+v %v", r, err)
	}
}

// The child of TestKill9InFlightMarked runs an engine in the directory
// named here whose sender prints "S <alert>" and never returns; the
// parent kills it with SIGKILL.
const repeatChildEnv = "PEREGRINE_ALERT_REPEAT_DIR"

type printHoldSender struct{ printSender }

func (p *printHoldSender) Send(ctx context.Context, mt *catalog.MediaType, a *Alert) error {
	p.printSender.Send(ctx, mt, a)
	<-ctx.Done()
	return ctx.Err()
}

func TestKill9InFlightChild(t *testing.T) {
	dir := os.Getenv(repeatChildEnv)
	if dir == "" {
		t.Skip("the child of TestKill9InFlightMarked")
	}
	cfg := testConfig(crashAction())
	evs := &fakeEvents{}
	ps := &printHoldSender{printSender{w: bufio.NewWriter(os.Stdout)}}
	e, err := New(Options{Dir: dir, Sync: wal.SyncBatch, Config: func() *catalog.AlertConfig { return cfg },
		Snapshot: func() *catalog.Snapshot { return nil }, Events: evs, Senders: map[int]Sender{catalog.MediaWebhook: ps}})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	go e.Run(context.Background())
	e.Notify(evs.put(problem(1, 4, "kill")))
	select {} // killed by the parent
}

// TestKill9InFlightMarked: the embedded single-node case: a process
// killed with SIGKILL while its two alerts are being delivered leaves
// their starts in the WAL; the restarted engine sends each once more,
// marked.
func TestKill9InFlightMarked(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKill9InFlightChild$")
	cmd.Env = append(os.Environ(), repeatChildEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	for n := 0; n < 2 && sc.Scan(); {
		if !strings.HasPrefix(sc.Text(), "S ") {
			t.Fatalf("child: %s", sc.Text())
		}
		n++
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	h := newHarness(t, testConfig(crashAction()), dir, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.e.Run(ctx); close(done) }()
	waitFor(t, "both alerts sent again", func() bool {
		return len(h.e.Alerts(func(a *Alert) bool { return a.Status == StatusSent })) == 2
	})
	cancel()
	<-done
	if h.snd.count() != 2 {
		t.Fatalf("sent after the kill: %+v, want each alert once", h.snd.sent)
	}
	for _, a := range h.e.Alerts(all) {
		if a.Retries != 2 || a.Error != RepeatSent {
			t.Fatalf("alert after kill -9: %+v, want retries 2 and %q", a, RepeatSent)
		}
	}
}

// TestCheckpointKeepsStarts: a checkpoint made while an attempt is in
// flight (the log outgrew what is live) carries its start, so a kill
// after it still marks the alert.
func TestCheckpointKeepsStarts(t *testing.T) {
	dir := t.TempDir()
	s, err := openLog(wal.Options{Dir: dir, Sync: wal.SyncBatch}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.write([]record{{Alert: &Alert{ID: 1, ActionID: 1, EventID: 1, UserID: 1, MediaTypeID: 1, Status: StatusNew}}, {Started: 1}}); err != nil {
		t.Fatal(err)
	}
	s.wmu.Lock()
	s.mu.Lock()
	err = s.checkpoint()
	s.mu.Unlock()
	s.wmu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	s.close()
	s, err = openLog(wal.Options{Dir: dir, Sync: wal.SyncBatch}, 100)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if as := s.Alerts(all); len(as) != 1 || !as[0].Repeat || as[0].Retries != 1 || s.repeated != 1 {
		t.Fatalf("after a checkpoint with an attempt in flight and a kill: %+v", as)
	}
}
