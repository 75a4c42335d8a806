package jsvm

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// newPool returns a pool of this test binary's workers (init makes them
// workers), closed at the end of the test.
func newPool(t testing.TB, opts PoolOptions) *Pool {
	t.Helper()
	if opts.MemLimit == 0 {
		opts.MemLimit = 64 << 20
	}
	p, err := NewPool(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// runners returns the two runners, with a 64 MiB memory limit.
func runners(t *testing.T) map[string]Runner {
	return map[string]Runner{"local": &Local{MemLimit: 64 << 20}, "pool": newPool(t, PoolOptions{Workers: 2})}
}

func TestRun(t *testing.T) {
	type tc struct {
		name, script, value string
		kind                Kind
		timeout             time.Duration
		maxResult           int
		want                string
		null, undefined     bool
		reason              Reason
		errText             string
	}
	cases := []tc{
		{name: "value", script: "return value + '!'", value: "héllo", want: "héllo!"},
		{name: "number", script: "return 6 * 7", want: "42"},
		{name: "null", script: "return null", null: true},
		{name: "undefined", script: "var x = 1;", null: true, undefined: true},
		{name: "thrown", script: "throw new Error('bad value ' + value)", value: "7", reason: Thrown, errText: "Error: bad value 7"},
		{name: "thrown string", script: "throw 'plain'", reason: Thrown, errText: "plain"},
		{name: "invalid", script: "return (", reason: Invalid, errText: "cannot compile the script"},
		{name: "loop", script: "while (true) {}", timeout: 200 * time.Millisecond, reason: Timeout, errText: "execution timeout"},
		// Many 1 KiB strings; a long time limit, so that a loaded
		// machine (and -race) cannot turn it into a timeout.
		{name: "alloc", script: "var a = []; while (true) { a.push('x'.repeat(1000) + a.length); }", timeout: 5 * time.Minute, reason: OutOfMemory, errText: "memory limit exceeded (64 MiB)"},
		{name: "recursion", script: "function f(n) { return f(n + 1) + 1; } return f(0);", reason: Thrown, errText: "Maximum call stack size exceeded"},
		{name: "no requests in preprocessing", script: "new HttpRequest().get('http://x')", reason: Thrown, errText: "HttpRequest is not supported by this server"},
		{name: "log ignored", script: "Zabbix.log(4, 'x'); return 'ok'", want: "ok"},
		{name: "webhook btoa", script: "return atob(btoa(value))", value: "ünï", kind: Webhook, want: "ünï"},
		{name: "webhook without fetch", script: "new HttpRequest().get('http://x')", kind: Webhook, reason: Thrown, errText: "requests are not allowed"},
		{name: "item btoa", script: "Zabbix.log(4, 'x'); return btoa(value)", value: "a", kind: Item, want: "YQ=="},
		{name: "item undefined", script: "return;", kind: Item, null: true, undefined: true},
		{name: "item too large", script: "return 'x'.repeat(2000)", kind: Item, maxResult: 1000, reason: TooLarge, errText: "2000 bytes, more than the limit of 1000"},
		{name: "item at the limit", script: "return 'x'.repeat(10)", kind: Item, maxResult: 10, want: "xxxxxxxxxx"},
		{name: "item without fetch", script: "new HttpRequest().get('http://x')", kind: Item, reason: Thrown, errText: "requests are not allowed"},
	}
	for name, r := range runners(t) {
		for _, c := range cases {
			kind := c.kind
			if kind == 0 {
				kind = Preprocessing
			}
			res, err := r.Run(context.Background(), &Job{Kind: kind, Script: c.script, Value: c.value, Timeout: c.timeout, MaxResult: c.maxResult})
			if c.reason != 0 {
				var e *Error
				if !errors.As(err, &e) || e.Reason != c.reason || !strings.Contains(e.Msg, c.errText) {
					t.Errorf("%s/%s: %v (%#v), want reason %d with %q", name, c.name, err, err, c.reason, c.errText)
				}
				continue
			}
			if err != nil || res.Value != c.want || res.Null != c.null || res.Undefined != c.undefined {
				t.Errorf("%s/%s: %+v, %v; want %q null %v", name, c.name, res, err, c.want, c.null)
			}
		}
	}
}

// TestPoolHugeNativeAllocation: one native call that allocates far past
// the limit at once, which no interrupt can stop, ends its worker (the
// address space limit), fails its run with the memory reason, and the
// pool goes on with a new worker. In-process this would take the
// machine's memory: Local is not run on it.
func TestPoolHugeNativeAllocation(t *testing.T) {
	p := newPool(t, PoolOptions{Workers: 1})
	for _, script := range []string{"return 'x'.repeat(1e10).length", "return new Array(2e9).join('xy').length"} {
		start := time.Now()
		_, err := p.Run(context.Background(), &Job{Kind: Preprocessing, Script: script, Timeout: 2 * time.Second})
		if !IsReason(err, OutOfMemory) && !IsReason(err, Timeout) {
			t.Errorf("%s: %v, want the memory limit (or the time limit)", script, err)
		}
		t.Logf("%s: %v after %v", script, err, time.Since(start))
		res, err := p.Run(context.Background(), &Job{Kind: Preprocessing, Script: "return 'still here'"})
		if err != nil || res.Value != "still here" {
			t.Fatalf("after %s: %+v, %v", script, res, err)
		}
	}
}

// TestPoolWebhook: a webhook's requests and log lines cross the pipe to
// the caller's Fetch and Log, the answers back to the script.
func TestPoolWebhook(t *testing.T) {
	p := newPool(t, PoolOptions{Workers: 1})
	var got []Request
	var logs []string
	j := &Job{Kind: Webhook, Value: `{"to":"ops"}`, Timeout: 5 * time.Second,
		Script: `var p = JSON.parse(value);
var r = new HttpRequest();
r.addHeader('Content-Type: application/json');
var body = r.post('http://svc/send', JSON.stringify({to: p.to}));
Zabbix.log(4, 'status ' + r.getStatus());
var h = r.getHeaders();
r.clearHeader();
var again = r.Get('http://svc/again');
if (r.Status() != 404) throw 'want 404, got ' + r.Status();
return body + '|' + h['x-id'] + '|' + again;`,
		Fetch: func(_ context.Context, r *Request) (*Response, error) {
			got = append(got, *r)
			if r.Method == "GET" {
				return &Response{Status: 404, Body: "missing"}, nil
			}
			return &Response{Status: 200, Header: map[string]string{"x-id": "9"}, Body: "sent"}, nil
		},
		Log: func(level, msg string) { logs = append(logs, level+" "+msg) },
	}
	res, err := p.Run(context.Background(), j)
	if err != nil || res.Value != "sent|9|missing" {
		t.Fatalf("%+v, %v", res, err)
	}
	if len(got) != 2 || got[0].Method != "POST" || got[0].URL != "http://svc/send" || !got[0].HasBody || got[0].Body != `{"to":"ops"}` ||
		len(got[0].Header) != 1 || got[0].Header[0] != "Content-Type: application/json" || got[1].HasBody || len(got[1].Header) != 0 {
		t.Errorf("requests %+v", got)
	}
	if len(logs) != 1 || logs[0] != "4 status 200" {
		t.Errorf("logs %q", logs)
	}
	j.Fetch = func(context.Context, *Request) (*Response, error) {
		return nil, errors.New("cannot send request: refused")
	}
	if _, err := p.Run(context.Background(), j); !IsReason(err, Thrown) || !strings.Contains(err.Error(), "cannot send request: refused") {
		t.Errorf("fetch error: %v", err)
	}
}

// TestPoolScriptCache: a worker that forgot a script (it keeps
// maxPrograms) is sent it again.
func TestPoolScriptCache(t *testing.T) {
	p := newPool(t, PoolOptions{Workers: 1})
	run := func(i int) {
		t.Helper()
		res, err := p.Run(context.Background(), &Job{Kind: Preprocessing, Script: "return " + strconv.Itoa(i), Value: "x"})
		if err != nil || res.Value != strconv.Itoa(i) {
			t.Fatalf("script %d: %+v, %v", i, res, err)
		}
	}
	for i := range maxPrograms + 10 {
		run(i)
	}
	run(0)
	run(maxPrograms + 5)
}

// TestPoolConcurrent: more runs than workers wait for one; a worker that
// is killed fails its run only.
func TestPoolConcurrent(t *testing.T) {
	reg := selfmon.NewRegistry()
	p := newPool(t, PoolOptions{Workers: 2, Metrics: reg})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := p.Run(context.Background(), &Job{Kind: Preprocessing, Script: "var s = 0; for (var i = 0; i < 1e5; i++) s += i; return value + s", Value: strconv.Itoa(i)})
			if err == nil && res.Value != strconv.Itoa(i)+"4999950000" {
				err = errors.New("got " + res.Value)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := p.live.Load(); n > 2 {
		t.Errorf("%d workers alive, Workers 2", n)
	}
	// Kill the worker under a run: the run fails, the next one works.
	done := make(chan error, 1)
	go func() {
		_, err := p.Run(context.Background(), &Job{Kind: Preprocessing, Script: "while (true) {}", Timeout: 20 * time.Second})
		done <- err
	}()
	var killed bool
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && !killed; time.Sleep(10 * time.Millisecond) {
		if p.busy.Load() == 1 {
			// The busy worker is not in idle; kill every process but the idle ones.
			killed = killBusy(p)
		}
	}
	if err := <-done; !IsReason(err, Failed) {
		t.Errorf("run of a killed worker: %v", err)
	}
	if res, err := p.Run(context.Background(), &Job{Kind: Preprocessing, Script: "return 1"}); err != nil || res.Value != "1" {
		t.Errorf("after a killed worker: %+v, %v", res, err)
	}
	var b strings.Builder
	_ = reg.WriteText(&b)
	for _, want := range []string{`peregrine_js_runs_total{kind="preprocessing",result="ok"} 9`, `peregrine_js_runs_total{kind="preprocessing",result="failed"} 1`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("metrics lack %s:\n%s", want, b.String())
		}
	}
}

// TestPoolCancel: a cancelled context ends the run with its error.
func TestPoolCancel(t *testing.T) {
	p := newPool(t, PoolOptions{Workers: 1})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := p.Run(ctx, &Job{Kind: Preprocessing, Script: "while (true) {}"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := p.Run(ctx, &Job{Kind: Preprocessing, Script: "while (true) {}"}); !IsReason(err, Timeout) {
		t.Errorf("deadline: %v", err)
	}
}

// TestPoolStartFailure: a program that is not a worker fails the runs
// with the reason.
func TestPoolStartFailure(t *testing.T) {
	p := newPool(t, PoolOptions{Path: "/bin/true"})
	_, err := p.Run(context.Background(), &Job{Kind: Preprocessing, Script: "return 1"})
	if !IsReason(err, Failed) || !strings.Contains(err.Error(), "did not start as a script worker") {
		t.Errorf("%v", err)
	}
}

// killBusy kills this process's children that are not p's idle workers
// (Linux), and reports whether it killed one.
func killBusy(p *Pool) bool {
	idle := map[int]bool{}
	p.mu.Lock()
	for _, w := range p.idle {
		idle[w.cmd.Process.Pid] = true
	}
	p.mu.Unlock()
	entries, _ := os.ReadDir("/proc")
	killed := false
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || idle[pid] {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed = true
			}
		}
	}
	return killed
}

// TestPoolKindsApart: webhooks waiting on a slow receiver do not hold
// the workers preprocessing needs: the kinds have their Workers each.
func TestPoolKindsApart(t *testing.T) {
	p := newPool(t, PoolOptions{Workers: 1})
	release := make(chan struct{})
	hook := make(chan error, 1)
	go func() {
		_, err := p.Run(context.Background(), &Job{Kind: Webhook, Script: "new HttpRequest().get('http://slow/'); return 'sent';",
			Fetch: func(context.Context, *Request) (*Response, error) {
				<-release
				return &Response{Status: 200}, nil
			}})
		hook <- err
	}()
	waitBusy := time.Now().Add(10 * time.Second)
	for p.busy.Load() == 0 && time.Now().Before(waitBusy) {
		time.Sleep(time.Millisecond)
	}
	res, err := p.Run(context.Background(), &Job{Kind: Preprocessing, Script: "return 'step'"})
	close(release)
	if err != nil || res.Value != "step" {
		t.Errorf("preprocessing beside a waiting webhook: %+v, %v", res, err)
	}
	if err := <-hook; err != nil {
		t.Errorf("webhook: %v", err)
	}
}
