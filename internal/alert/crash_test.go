package alert

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// The child of TestCrashKeepsEscalations runs an engine in the
// directory named here, makes problems and prints "X <event>" once each
// problem's escalation is durable; the parent kills it with SIGKILL.
const crashChildEnv = "PEREGRINE_ALERT_CRASH_DIR"

// printSender "delivers" by printing.
type printSender struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (p *printSender) Send(_ context.Context, _ *catalog.MediaType, a *Alert) error {
	p.mu.Lock()
	fmt.Fprintf(p.w, "S %d\n", a.ID)
	p.w.Flush()
	p.mu.Unlock()
	return nil
}

func crashAction() catalog.Action {
	return catalog.Action{Name: "a", Period: "1h", Operations: []catalog.Operation{{StepFrom: 1, StepTo: 2, DefaultMsg: 1, UserIDs: []uint64{1, 2}}}}
}

func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashChildEnv)
	if dir == "" {
		t.Skip("the child of TestCrashKeepsEscalations")
	}
	cfg := testConfig(crashAction())
	evs := &fakeEvents{}
	ps := &printSender{w: bufio.NewWriter(os.Stdout)}
	e, err := New(Options{Dir: dir, Sync: wal.SyncBatch, Config: func() *catalog.AlertConfig { return cfg },
		Snapshot: func() *catalog.Snapshot { return nil }, Events: evs, Senders: map[int]Sender{catalog.MediaWebhook: ps}})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	go e.Run(context.Background())
	start, _ := strconv.ParseUint(os.Getenv(crashChildEnv+"_START"), 10, 64)
	for id := start; id < start+100_000; id++ {
		e.Notify(evs.put(problem(id, 4, "crash")))
		for {
			found := false
			for _, x := range e.Escalations() {
				found = found || x.EventID == id && x.Step == 2
			}
			if found {
				break
			}
			time.Sleep(time.Millisecond)
		}
		ps.mu.Lock()
		fmt.Fprintf(ps.w, "X %d\n", id)
		ps.w.Flush()
		ps.mu.Unlock()
	}
}

// TestCrashKeepsEscalations: after kill -9, every escalation the engine
// had made durable is there at its next step, and no alert recorded as
// sent is sent again; alerts not yet recorded as sent are.
func TestCrashKeepsEscalations(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	next := uint64(1)
	for round := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dir, crashChildEnv+"_START="+strconv.FormatUint(next, 10))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		var escalated []uint64
		parse := func(line string) {
			f := strings.Fields(line)
			if len(f) == 2 && f[0] == "X" {
				id, _ := strconv.ParseUint(f[1], 10, 64)
				escalated = append(escalated, id)
			}
		}
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) != 2 || f[0] != "X" && f[0] != "S" {
				t.Fatalf("child: %s", sc.Text())
			}
			parse(sc.Text())
			if len(escalated) >= 30+round*17 {
				break
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		for sc.Scan() {
			parse(sc.Text())
		}
		cmd.Wait()

		h := newHarness(t, testConfig(crashAction()), dir, nil)
		byEvent := map[uint64]Escalation{}
		for _, x := range h.e.Escalations() {
			byEvent[x.EventID] = x
		}
		for _, id := range escalated {
			if x, ok := byEvent[id]; !ok || x.Step != 2 {
				t.Fatalf("round %d: escalation of acknowledged event %d: %+v, %v", round, id, x, ok)
			}
		}
		sentBefore := map[uint64]bool{}
		pending := 0
		for _, a := range h.e.Alerts(all) {
			if a.Status == StatusSent {
				sentBefore[a.ID] = true
			} else if a.Status == StatusNew || a.Status == StatusNotSent {
				pending++
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { h.e.Run(ctx); close(done) }()
		waitFor(t, "pending alerts delivered after the restart", func() bool { return h.snd.count() == pending })
		cancel()
		<-done
		h.snd.mu.Lock()
		for _, a := range h.snd.sent {
			if sentBefore[a.ID] {
				h.snd.mu.Unlock()
				t.Fatalf("round %d: alert %d recorded as sent before the kill was sent again", round, a.ID)
			}
		}
		h.snd.mu.Unlock()
		h.e.Close()
		for _, id := range escalated {
			next = max(next, id+1)
		}
		next += 1000 // events the child made but did not report
		t.Logf("round %d: %d escalations survived, %d alerts were sent, %d re-queued", round, len(escalated), len(sentBefore), pending)
	}
}

// The child of TestCrashReplaysAcks commits problems and acknowledges
// through a real event store in the directory named here, hands each
// batch to the engine, and prints "A <ack>" as soon as an acknowledge is
// committed (durable in the event store, perhaps not yet decided by the
// engine); the parent kills it with SIGKILL. The ack numbered _HOLD (of
// this run) is committed and never handed to the engine: the kill then
// lands, for sure, in the window between the event store's commit and
// the engine's decision, which a plain kill hits only by chance.
const ackCrashEnv = "PEREGRINE_ALERT_ACK_CRASH_DIR"

// ackAction messages user 1 at step 1 and user 2 on every update.
func ackAction() catalog.Action {
	return catalog.Action{Name: "a", Period: "1h",
		Operations:       []catalog.Operation{{StepFrom: 1, StepTo: 1, DefaultMsg: 1, UserIDs: []uint64{1}}},
		UpdateOperations: []catalog.Operation{{OperationType: catalog.OpSendMessage, DefaultMsg: 1, UserIDs: []uint64{2}}}}
}

func openAckCrash(dir string) (*event.Store, error) {
	return event.Open(event.Options{Dir: filepath.Join(dir, "events"), Sync: wal.SyncBatch})
}

func TestCrashAckChild(t *testing.T) {
	dir := os.Getenv(ackCrashEnv)
	if dir == "" {
		t.Skip("the child of TestCrashReplaysAcks")
	}
	evs, err := openAckCrash(dir)
	if err != nil {
		fmt.Println("open events:", err)
		os.Exit(2)
	}
	cfg := testConfig(ackAction())
	ps := &printSender{w: bufio.NewWriter(os.Stdout)}
	e, err := New(Options{Dir: filepath.Join(dir, "alerts"), Sync: wal.SyncBatch, Config: func() *catalog.AlertConfig { return cfg },
		Snapshot: func() *catalog.Snapshot { return nil }, Events: evs, Senders: map[int]Sender{catalog.MediaWebhook: ps}})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	go e.Run(context.Background())
	start, _ := strconv.ParseUint(os.Getenv(ackCrashEnv+"_START"), 10, 64)
	hold, _ := strconv.ParseUint(os.Getenv(ackCrashEnv+"_HOLD"), 10, 64)
	for trig := start; trig < start+100_000; trig++ {
		b := &event.Batch{Events: []event.Event{{ObjectID: trig, Value: event.ValueProblem, Severity: 4, Name: "crash", Clock: time.Now().Unix()}}}
		if err := evs.Commit(b); err != nil {
			fmt.Println("commit:", err)
			os.Exit(2)
		}
		e.Notify(b)
		id := b.Events[0].ID
		// The update operations run for escalated problems only: wait
		// until this one's escalation is durable.
		for !slices.ContainsFunc(e.Escalations(), func(x Escalation) bool { return x.EventID == id }) {
			time.Sleep(time.Millisecond)
		}
		a := &event.Batch{Acks: []event.Ack{{EventID: id, UserID: 1, Clock: time.Now().Unix(), Action: event.ActionAcknowledge | event.ActionMessage, Message: "on it"}}}
		if err := evs.Commit(a); err != nil {
			fmt.Println("commit:", err)
			os.Exit(2)
		}
		ps.mu.Lock()
		fmt.Fprintf(ps.w, "A %d\n", a.Acks[0].ID)
		ps.w.Flush()
		ps.mu.Unlock()
		if trig-start+1 == hold {
			select {} // killed here
		}
		e.Notify(a)
	}
}

// TestCrashReplaysAcks: after kill -9, every acknowledge the event store
// committed gets its update operations exactly once, whether or not the
// engine had decided it before the kill.
func TestCrashReplaysAcks(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	next := uint64(1)
	for round := range 3 {
		hold := 20 + round*11
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashAckChild$")
		cmd.Env = append(os.Environ(), ackCrashEnv+"="+dir, ackCrashEnv+"_START="+strconv.FormatUint(next, 10),
			ackCrashEnv+"_HOLD="+strconv.Itoa(hold))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		var acked []uint64
		parse := func(line string) {
			if f := strings.Fields(line); len(f) == 2 && f[0] == "A" {
				id, _ := strconv.ParseUint(f[1], 10, 64)
				acked = append(acked, id)
			}
		}
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) != 2 || f[0] != "A" && f[0] != "S" {
				t.Fatalf("child: %s", sc.Text())
			}
			parse(sc.Text())
			if len(acked) >= hold {
				break
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		for sc.Scan() {
			parse(sc.Text())
		}
		cmd.Wait()

		evs, err := openAckCrash(dir)
		if err != nil {
			t.Fatal(err)
		}
		snd := &recSender{}
		cfg := testConfig(ackAction())
		e, err := New(Options{Dir: filepath.Join(dir, "alerts"), Sync: wal.SyncBatch, Config: func() *catalog.AlertConfig { return cfg },
			Snapshot: func() *catalog.Snapshot { return nil }, Events: evs, Senders: map[int]Sender{catalog.MediaWebhook: snd}})
		if err != nil {
			t.Fatal(err)
		}
		updates := func() map[uint64]int {
			n := map[uint64]int{}
			for _, a := range e.Alerts(func(a *Alert) bool { return a.AckID != 0 }) {
				if a.UserID != 2 {
					t.Fatalf("round %d: update alert %d to user %d, want 2", round, a.ID, a.UserID)
				}
				n[a.AckID]++
			}
			return n
		}
		before := updates()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { e.Run(ctx); close(done) }()
		waitFor(t, "an update alert for every committed acknowledge", func() bool {
			n := updates()
			for _, id := range acked {
				if n[id] == 0 {
					return false
				}
			}
			return true
		})
		cancel()
		<-done
		for id, c := range updates() {
			if c != 1 {
				t.Fatalf("round %d: acknowledge %d has %d update alerts, want 1", round, id, c)
			}
		}
		replayed := 0
		for _, id := range acked {
			if before[id] == 0 {
				replayed++
			}
		}
		if last := acked[len(acked)-1]; before[last] != 0 {
			t.Fatalf("round %d: acknowledge %d, never handed to the engine before the kill, had update alerts before the restart", round, last)
		}
		e.Close()
		if err := evs.Close(); err != nil {
			t.Fatal(err)
		}
		next += 100_000
		t.Logf("round %d: %d acknowledges committed, %d of them decided only after the restart", round, len(acked), replayed)
	}
}

// The child of TestCrashFloodDeliversOnce commits a flood of problems
// (up to _N in all, through a real event store in the directory named
// here, continuing where the last run stopped) into an engine whose
// queue holds a tenth of it, and prints "S <alert> <event>" as each
// delivery succeeds, before the engine records it; the parent kills it
// with SIGKILL mid-flood.
const floodCrashEnv = "PEREGRINE_ALERT_FLOOD_CRASH_DIR"

const floodCrashSessions = 4

func floodCrashOptions(dir string, snd Sender, cfg *catalog.AlertConfig, evs Events) Options {
	return Options{Dir: filepath.Join(dir, "alerts"), Sync: wal.SyncBatch, QueueSize: 100, Config: func() *catalog.AlertConfig { return cfg },
		Snapshot: func() *catalog.Snapshot { return nil }, Events: evs, Senders: map[int]Sender{catalog.MediaWebhook: snd}}
}

func floodCrashConfig() *catalog.AlertConfig {
	cfg := testConfig(catalog.Action{Name: "flood", Operations: []catalog.Operation{{StepFrom: 1, StepTo: 1, DefaultMsg: 1, UserIDs: []uint64{1}}}})
	cfg.MediaTypes[1].MaxSessions = floodCrashSessions
	return cfg
}

// slowPrintSender takes a millisecond per alert, then prints it.
type slowPrintSender struct{ printSender }

func (p *slowPrintSender) Send(_ context.Context, _ *catalog.MediaType, a *Alert) error {
	time.Sleep(time.Millisecond)
	p.mu.Lock()
	fmt.Fprintf(p.w, "S %d %d\n", a.ID, a.PEventID)
	p.w.Flush()
	p.mu.Unlock()
	return nil
}

func TestCrashFloodChild(t *testing.T) {
	dir := os.Getenv(floodCrashEnv)
	if dir == "" {
		t.Skip("the child of TestCrashFloodDeliversOnce")
	}
	total, _ := strconv.Atoi(os.Getenv(floodCrashEnv + "_N"))
	evs, err := openAckCrash(dir)
	if err != nil {
		fmt.Println("open events:", err)
		os.Exit(2)
	}
	ps := &slowPrintSender{printSender{w: bufio.NewWriter(os.Stdout)}}
	e, err := New(floodCrashOptions(dir, ps, floodCrashConfig(), evs))
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	go e.Run(context.Background())
	for have := len(evs.Events(func(*event.Event) bool { return true })); have < total; {
		b := &event.Batch{}
		for range min(200, total-have) {
			have++
			b.Events = append(b.Events, event.Event{ObjectID: uint64(have), Value: event.ValueProblem, Severity: 4, Name: "flood", Clock: time.Now().Unix()})
		}
		if err := evs.Commit(b); err != nil {
			fmt.Println("commit:", err)
			os.Exit(2)
		}
		e.Notify(b)
		time.Sleep(20 * time.Millisecond) // a flood of ≈ 10,000 events/s
	}
	select {} // killed by the parent
}

// TestCrashFloodDeliversOnce: a flood of problems through a queue a
// tenth its size, killed with SIGKILL four times mid-flood: in the end
// every problem's alert is delivered; none is made twice (a step's
// alerts and its next step are durable together); an alert recorded as
// sent before a kill is never sent again; only alerts in flight at a
// kill (at most maxsessions) may be delivered a second time, the
// at-least-once of any sender that cannot take back a request.
func TestCrashFloodDeliversOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	const total, kills = 3000, 4
	dir := t.TempDir()
	deliveries := map[uint64]int{} // by event
	byAlert := map[uint64]int{}
	sentBefore := map[uint64]bool{}
	dups := 0
	for round := 0; round <= kills; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashFloodChild$")
		cmd.Env = append(os.Environ(), floodCrashEnv+"="+dir, floodCrashEnv+"_N="+strconv.Itoa(total))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		roundDups := 0
		parse := func(line string) {
			f := strings.Fields(line)
			if len(f) != 3 || f[0] != "S" {
				t.Fatalf("child: %s", line)
			}
			a, _ := strconv.ParseUint(f[1], 10, 64)
			ev, _ := strconv.ParseUint(f[2], 10, 64)
			if sentBefore[a] {
				t.Fatalf("round %d: alert %d, recorded as sent before the kill, was sent again", round, a)
			}
			if byAlert[a]++; byAlert[a] > 1 {
				roundDups++
			}
			deliveries[ev]++
		}
		// Kill after a few hundred deliveries of this run; the last run
		// goes until every problem has its alert.
		stopAt := 200 + round*150
		n := 0
		for sc.Scan() {
			parse(sc.Text())
			n++
			if round < kills && n >= stopAt || round == kills && len(deliveries) == total {
				break
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		for sc.Scan() {
			parse(sc.Text())
		}
		cmd.Wait()
		if roundDups > floodCrashSessions {
			t.Fatalf("round %d: %d alerts delivered a second time, more than the %d that can be in flight at a kill", round, roundDups, floodCrashSessions)
		}
		dups += roundDups

		// What the log says now: each problem has at most one alert, and
		// the alerts recorded as sent must never be sent again.
		evs, err := openAckCrash(dir)
		if err != nil {
			t.Fatal(err)
		}
		e, err := New(floodCrashOptions(dir, &recSender{}, floodCrashConfig(), evs))
		if err != nil {
			t.Fatal(err)
		}
		perEvent := map[uint64]int{}
		pending := 0
		for _, a := range e.Alerts(all) {
			if perEvent[a.PEventID]++; perEvent[a.PEventID] > 1 {
				t.Fatalf("round %d: problem %d has %d alerts: its step ran twice", round, a.PEventID, perEvent[a.PEventID])
			}
			switch a.Status {
			case StatusSent:
				sentBefore[a.ID] = true
			case StatusNew, StatusNotSent:
				pending++
			default:
				t.Fatalf("round %d: alert %+v", round, a)
			}
		}
		e.Close()
		evs.Close()
		t.Logf("round %d: %d problems delivered so far, %d alerts recorded as sent, %d queued at the kill, %d delivered twice (in flight)",
			round, len(deliveries), len(sentBefore), pending, roundDups)
	}
	for ev := uint64(1); ev <= total; ev++ {
		if deliveries[ev] == 0 {
			t.Fatalf("problem %d: no alert delivered", ev)
		}
	}
	t.Logf("%d problems, %d kills: every alert delivered, %d delivered twice (in flight at a kill)", total, kills, dups)
}
