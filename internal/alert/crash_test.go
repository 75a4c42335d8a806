package alert

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history/engine/wal"
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
