package alert

import (
	"context"
	"runtime"
	rtmetrics "runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/jsvm"
)

// hungryHook allocates about 1 GB of strings, 256 KiB at a time (large
// enough steps that the memory limit comes well before the script's
// timeout on a loaded machine), and succeeds if nothing stops it.
const hungryHook = `var a = []; for (var i = 0; i < 4000; i++) { a.push('x'.repeat(1 << 18) + i); } return 'OK';`

// heapPeak samples the process's heap every millisecond until stop is
// closed and returns how far it grew above its size at the call.
func heapPeak(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	s := []rtmetrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { rtmetrics.Read(s); return s[0].Value.Uint64() }
	runtime.GC()
	base := read()
	go func() {
		peak := base
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				out <- peak - base
				return
			case <-t.C:
				peak = max(peak, read())
			}
		}
	}()
	return out
}

// TestWebhookMemoryBounded is issue 25's second fault: a webhook script
// that allocates without end fails its alert with the reason, and the
// server's heap grows by no more than the bound (plus slack for one
// sampling interval of the guard and the test's own sampling), with
// three such alerts sent at once: through the server's runner, the pool
// of worker processes (the heap that grows is the worker's, and the
// server's stays put), and through the in-process runner, whose guard
// bounds the process's heap.
func TestWebhookMemoryBounded(t *testing.T) {
	const bound, slack = 64 << 20, 48 << 20
	pool, err := jsvm.NewPool(jsvm.PoolOptions{MemLimit: bound})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	for name, js := range map[string]jsvm.Runner{"pool": pool, "local": &jsvm.Local{MemLimit: bound}} {
		s := &WebhookSender{JS: js}
		mt := &catalog.MediaType{Type: catalog.MediaWebhook, Script: hungryHook}
		stop := make(chan struct{})
		peak := heapPeak(stop)
		var wg sync.WaitGroup
		errs := make([]error, 3)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				errs[i] = s.Send(ctx, mt, &Alert{})
			}()
		}
		wg.Wait()
		close(stop)
		grew := <-peak
		t.Logf("%s: heap grew by %d MiB; errors %v", name, grew>>20, errs)
		for i, err := range errs {
			if err == nil || !strings.Contains(err.Error(), "webhook script: memory limit exceeded (64 MiB)") {
				t.Errorf("%s: alert %d: %v, want a memory limit failure", name, i, err)
			}
		}
		if grew > bound+slack {
			t.Errorf("%s: heap grew by %d MiB, bound %d MiB", name, grew>>20, bound>>20)
		}
	}
}

// TestWebhookMemoryAlertFailed: through the engine, the alert of an
// allocating webhook fails with the memory limit as its error (what
// alert.get shows), after its attempts.
func TestWebhookMemoryAlertFailed(t *testing.T) {
	pool, err := jsvm.NewPool(jsvm.PoolOptions{MemLimit: 32 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	act := catalog.Action{Name: "a", Operations: []catalog.Operation{{StepFrom: 1, StepTo: 1, DefaultMsg: 1, UserIDs: []uint64{1}}}}
	cfg := testConfig(act)
	mt := cfg.MediaTypes[1]
	mt.Script, mt.Timeout, mt.MaxAttempts, mt.AttemptInterval = hungryHook, "30s", 2, "0s"
	// The built-in webhook sender, with the pool (Options.JS).
	h := newHarness(t, cfg, "", func(o *Options) { delete(o.Senders, catalog.MediaWebhook); o.JS = pool })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.e.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	h.e.Notify(h.ev.put(problem(1, 4, "p")))
	waitFor(t, "the alert final", func() bool {
		return len(h.e.Alerts(func(a *Alert) bool { return a.Status == StatusSent || a.Status == StatusFailed })) == 1
	})
	a := h.e.Alerts(all)[0]
	if a.Status != StatusFailed || a.Retries != 2 || a.Error != "webhook script: memory limit exceeded (32 MiB)" {
		t.Errorf("alert %+v", a)
	}
}

// TestWebhookTimeoutIsTheMediaTypes: a script runs for as long as its
// send's deadline (the media type's timeout), not a shorter default.
func TestWebhookTimeoutIsTheMediaTypes(t *testing.T) {
	var got []time.Duration
	s := &WebhookSender{JS: runnerFunc(func(ctx context.Context, j *jsvm.Job) (jsvm.Result, error) {
		got = append(got, j.Timeout)
		return jsvm.Result{}, nil
	})}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	if err := s.Send(ctx, &catalog.MediaType{Script: "return 1"}, &Alert{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RunWebhookScript(context.Background(), "return 1", ""); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] < 40*time.Second || got[0] > 45*time.Second || got[1] != maxWebhookTimeout {
		t.Errorf("timeouts %v, want about 45s then %v", got, maxWebhookTimeout)
	}
}

type runnerFunc func(context.Context, *jsvm.Job) (jsvm.Result, error)

func (f runnerFunc) Run(ctx context.Context, j *jsvm.Job) (jsvm.Result, error) { return f(ctx, j) }
