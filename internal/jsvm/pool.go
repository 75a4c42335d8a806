package jsvm

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// PoolOptions configures a Pool.
type PoolOptions struct {
	// Path is the program started as a worker: any binary linked with
	// this package (see init). Default: the running program.
	Path string
	// Workers bounds the scripts of each kind that run at once (each
	// in a worker process of its own); a run waits for a free worker.
	// The kinds are counted apart, so that webhooks or script items
	// waiting on slow receivers cannot hold the workers preprocessing
	// needs, nor the reverse: there are at most three times Workers
	// processes. Default:
	// twice the CPUs, at least 4.
	Workers int
	// MemLimit bounds how far one run may grow its worker's heap
	// (default DefaultMemLimit, Zabbix's 512 MiB).
	MemLimit uint64
	// Nice is the workers' nice value (default 10: about a tenth of the
	// CPU weight of the server's threads when the CPU is contended), so
	// that the server's own work goes first when a script loops;
	// negative leaves them at the server's.
	Nice int
	// IdleTimeout is how long a worker without work is kept (default a
	// minute).
	IdleTimeout time.Duration
	Metrics     *selfmon.Registry
	Logger      *slog.Logger
}

// killGrace is how long past its time limit a run may take before its
// worker is killed: the worker interrupts the script itself at the
// limit, except inside one long native call, which the kill ends.
const killGrace = time.Second

// startTimeout bounds a new worker's start, up to its hello.
const startTimeout = 10 * time.Second

// Results of a run, the label values of peregrine_js_runs_total.
var resultNames = [...]string{"ok", "thrown", "timeout", "memory", "invalid", "failed", "cancelled", "too_large"}

const (
	resOK = iota
	resThrown
	resTimeout
	resMemory
	resInvalid
	resFailed
	resCancelled
	resTooLarge
)

// Pool runs scripts in worker processes: each worker runs one script at a
// time on one core, with its own heap bounded by MemLimit (the Go
// runtime's guard, exact there, and a hard limit of its address space
// for a single huge allocation), at a lower priority than the server.
// A script that loops is interrupted at its time limit and, if one
// native call does not return, killed with its worker; one that grows
// past the limit fails, and its worker ends and is replaced; a worker
// that dies fails only its run. None of it touches the server's heap or
// goroutines: the caller's goroutine only waits on a pipe.
//
// Workers start on demand, up to Workers, and end after IdleTimeout
// without work. Run is safe for concurrent use.
type Pool struct {
	opts   PoolOptions
	seed   maphash.Seed
	tokens [numKinds]chan struct{} // by kind

	mu     sync.Mutex
	idle   []*poolWorker // oldest first
	closed bool

	runs     [numKinds][len(resultNames)]*selfmon.Counter
	starts   *selfmon.Counter
	startErr *selfmon.Counter
	live     atomic.Int64
	busy     atomic.Int64
	waiting  atomic.Int64
	throttle *selfmon.LogThrottle
}

// NewPool returns a pool; it starts no worker until the first run.
func NewPool(opts PoolOptions) (*Pool, error) {
	if opts.Path == "" {
		p, err := selfPath()
		if err != nil {
			return nil, fmt.Errorf("jsvm: cannot find the program to start workers from: %w", err)
		}
		opts.Path = p
	}
	if opts.Workers <= 0 {
		opts.Workers = max(4, 2*runtime.NumCPU())
	}
	if opts.MemLimit == 0 {
		opts.MemLimit = DefaultMemLimit
	}
	if opts.Nice == 0 {
		opts.Nice = 10
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Metrics == nil {
		opts.Metrics = selfmon.NewRegistry()
	}
	p := &Pool{opts: opts, seed: maphash.MakeSeed(), throttle: selfmon.NewLogThrottle(opts.Logger, time.Minute)}
	for k := range p.tokens {
		p.tokens[k] = make(chan struct{}, opts.Workers)
	}
	m := opts.Metrics
	for _, k := range []Kind{Preprocessing, Webhook, Item} {
		for r, name := range resultNames {
			p.runs[k][r] = m.Counter("peregrine_js_runs_total", "Scripts run in worker processes, by kind (preprocessing, webhook, item) and result (ok, thrown, timeout, memory: past the memory limit, invalid, failed: the worker failed, cancelled, too_large: a result past Job.MaxResult).",
				"kind", k.String(), "result", name)
		}
	}
	p.starts = m.Counter("peregrine_js_worker_starts_total", "Script worker processes started.")
	p.startErr = m.Counter("peregrine_js_worker_start_errors_total", "Script worker processes that could not be started; their runs failed.")
	m.GaugeFunc("peregrine_js_workers", "Script worker processes alive.", func() float64 { return float64(p.live.Load()) })
	m.GaugeFunc("peregrine_js_workers_busy", "Script worker processes running a script.", func() float64 { return float64(p.busy.Load()) })
	m.GaugeFunc("peregrine_js_runs_waiting", "Scripts waiting for a free worker process (all Workers busy).", func() float64 { return float64(p.waiting.Load()) })
	m.GaugeFunc("peregrine_js_workers_max", "The most scripts of one kind running at once (javascript.workers), each in a worker process.", func() float64 { return float64(opts.Workers) })
	return p, nil
}

// MemLimit returns the bound of one run's heap.
func (p *Pool) MemLimit() uint64 { return p.opts.MemLimit }

// Close ends the idle workers, and the busy ones as their runs end.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, w := range idle {
		p.discard(w)
	}
	return nil
}

// Run implements Runner.
func (p *Pool) Run(ctx context.Context, j *Job) (Result, error) {
	res, err := p.run(ctx, j)
	k := j.Kind
	if k != Webhook && k != Item {
		k = Preprocessing
	}
	p.runs[k][resultOf(err)].Inc()
	return res, err
}

func resultOf(err error) int {
	var e *Error
	switch {
	case err == nil:
		return resOK
	case errors.As(err, &e):
		switch e.Reason {
		case Thrown:
			return resThrown
		case Timeout:
			return resTimeout
		case OutOfMemory:
			return resMemory
		case Invalid:
			return resInvalid
		case TooLarge:
			return resTooLarge
		}
		return resFailed
	}
	return resCancelled
}

func (p *Pool) run(ctx context.Context, j *Job) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if j.Kind != Preprocessing && j.Kind != Webhook && j.Kind != Item {
		return Result{}, &Error{Reason: Failed, Msg: "BUG: " + j.Kind.String()}
	}
	tokens := p.tokens[j.Kind]
	select {
	case tokens <- struct{}{}:
	default:
		p.waiting.Add(1)
		select {
		case tokens <- struct{}{}:
			p.waiting.Add(-1)
		case <-ctx.Done():
			p.waiting.Add(-1)
			return Result{}, ctx.Err()
		}
	}
	defer func() { <-tokens }()
	w, err := p.get()
	if err != nil {
		p.startErr.Inc()
		if n, ok := p.throttle.Allow("start"); ok {
			p.opts.Logger.Error("cannot start a script worker; scripts fail until one starts", "path", p.opts.Path, "err", err, "suppressed", n)
		}
		return Result{}, &Error{Reason: Failed, Msg: "cannot start a script worker: " + err.Error()}
	}
	p.busy.Add(1)
	res, keep, err := w.run(ctx, p, j)
	p.busy.Add(-1)
	if keep {
		p.put(w)
	} else {
		p.discard(w)
	}
	return res, err
}

// get returns an idle worker, or starts one.
func (p *Pool) get() (*poolWorker, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errors.New("the pool is closed")
	}
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return w, nil
	}
	p.mu.Unlock()
	return p.start()
}

// put makes w idle again, and ends the workers idle for too long.
func (p *Pool) put(w *poolWorker) {
	now := time.Now()
	w.lastUsed = now
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.discard(w)
		return
	}
	var old []*poolWorker
	for len(p.idle) > 0 && now.Sub(p.idle[0].lastUsed) > p.opts.IdleTimeout {
		old = append(old, p.idle[0])
		p.idle = p.idle[1:]
	}
	p.idle = append(p.idle, w)
	p.mu.Unlock()
	for _, o := range old {
		p.discard(o)
	}
}

// discard ends w: closing its pipe ends a healthy worker, the kill
// anything else; its exit is reaped in the background.
func (p *Pool) discard(w *poolWorker) {
	_ = w.toW.Close()
	go func() {
		select {
		case <-w.exited:
		case <-time.After(killGrace):
			w.kill(killClose)
			<-w.exited
		}
		_ = w.fromW.Close()
		p.live.Add(-1)
	}()
}

// Why a worker was killed.
const (
	killNone = iota
	killDeadline
	killCancel
	killClose
)

type poolWorker struct {
	cmd       *exec.Cmd
	toW       *os.File
	fromW     *os.File
	w         frameWriter
	r         frameReader
	stderr    *tail
	scripts   map[uint64]struct{} // hashes the worker was sent
	lastUsed  time.Time
	exited    chan struct{} // closed once the process is reaped
	killedFor atomic.Int32
}

// start starts a worker and waits for its hello.
func (p *Pool) start() (*poolWorker, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd := exec.Command(p.opts.Path)
	cmd.Env = []string{
		envWorker + "=" + helloMagic,
		envMemLimit + "=" + strconv.FormatUint(p.opts.MemLimit, 10),
		envNice + "=" + strconv.Itoa(max(p.opts.Nice, 0)),
	}
	cmd.ExtraFiles = []*os.File{inR, outW} // fds workerIn, workerOut
	st := &tail{}
	cmd.Stdout, cmd.Stderr = st, st
	cmd.SysProcAttr = workerSysProcAttr()
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	w := &poolWorker{cmd: cmd, toW: inW, fromW: outR, stderr: st, scripts: map[uint64]struct{}{}, exited: make(chan struct{})}
	w.w.w = bufio.NewWriterSize(inW, 64<<10)
	w.r.r = bufio.NewReaderSize(outR, 64<<10)
	go func() {
		_ = cmd.Wait()
		close(w.exited)
	}()
	p.live.Add(1)
	p.starts.Inc()
	_ = outR.SetReadDeadline(time.Now().Add(startTimeout))
	typ, err := w.r.next()
	magic, version := "", uint64(0)
	if err == nil && typ == msgHello {
		magic, version = w.r.str(), w.r.uint()
		err = w.r.done()
	}
	_ = outR.SetReadDeadline(time.Time{})
	if err != nil || typ != msgHello || magic != helloMagic || version != protocolVersion {
		w.kill(killClose)
		<-w.exited
		p.discard(w)
		if err == nil {
			err = fmt.Errorf("it answered %q version %d, want %q version %d", magic, version, helloMagic, protocolVersion)
		}
		return nil, fmt.Errorf("%s did not start as a script worker: %w%s", p.opts.Path, err, st.last())
	}
	return w, nil
}

func (w *poolWorker) kill(why int32) {
	w.killedFor.CompareAndSwap(killNone, why)
	_ = w.cmd.Process.Kill()
}

// run runs j on w. keep says w may run another script.
func (w *poolWorker) run(ctx context.Context, p *Pool, j *Job) (res Result, keep bool, err error) {
	timeout := j.timeout(ctx)
	if timeout <= 0 {
		return Result{}, true, timeoutError()
	}
	hard := time.AfterFunc(timeout+killGrace, func() { w.kill(killDeadline) })
	defer hard.Stop()
	// A cancelled caller ends the run at once; a deadline is the time
	// limit, which the worker keeps itself (and the hard timer).
	stop := context.AfterFunc(ctx, func() {
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			w.kill(killCancel)
		}
	})
	defer stop()
	fctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	hash := maphash.String(p.seed, j.Script)
	_, known := w.scripts[hash]
	for {
		w.w.begin(msgRun)
		w.w.byte(byte(j.Kind))
		w.w.uint(uint64(timeout))
		w.w.uint(uint64(max(j.MaxResult, 0)))
		w.w.u64(hash)
		if known {
			w.w.byte(0)
		} else {
			w.w.byte(1)
			w.w.str(j.Script)
		}
		w.w.str(j.Value)
		if err := w.w.send(); err != nil {
			if len(w.w.buf) > maxFrame {
				return Result{}, true, &Error{Reason: Failed, Msg: "the value is too large for a script: " + err.Error()}
			}
			return Result{}, false, w.failure(ctx, p, err)
		}
		w.scripts[hash] = struct{}{}
		if len(w.scripts) > 4*maxPrograms {
			clear(w.scripts) // the worker forgot most of them: it asks
		}
		res, again, err := w.converse(fctx, j)
		switch {
		case err != nil && !errors.As(err, new(*Error)):
			return Result{}, false, w.failure(ctx, p, err)
		case again && known:
			known = false // the worker forgot it: send it
			continue
		case again:
			return Result{}, false, w.failure(ctx, p, errors.New("it asked again for the script it was sent"))
		}
		// A worker whose script reached the memory limit ends after
		// answering, to give the memory back.
		return res, !IsReason(err, OutOfMemory), err
	}
}

// converse serves the worker's requests until its answer: the result,
// the script's *Error, again (send the script), or a pipe error.
func (w *poolWorker) converse(ctx context.Context, j *Job) (res Result, again bool, err error) {
	for {
		typ, err := w.r.next()
		if err != nil {
			return Result{}, false, err
		}
		switch typ {
		case msgDone:
			status, reason, text := w.r.byte(), Reason(w.r.byte()), w.r.str()
			if err := w.r.done(); err != nil {
				return Result{}, false, err
			}
			switch status {
			case doneValue:
				return Result{Value: text}, false, nil
			case doneNull:
				return Result{Null: true}, false, nil
			case doneUndefined:
				return Result{Null: true, Undefined: true}, false, nil
			case doneNeedScript:
				return Result{}, true, nil
			case doneError:
				if reason < Thrown || reason > TooLarge {
					reason = Failed
				}
				return Result{}, false, &Error{Reason: reason, Msg: text}
			}
			return Result{}, false, errFrame
		case msgLog:
			level, msg := w.r.str(), w.r.str()
			if err := w.r.done(); err != nil {
				return Result{}, false, err
			}
			if j.Log != nil {
				j.Log(level, msg)
			}
		case msgFetch:
			r := &Request{Method: w.r.str(), URL: w.r.str()}
			n := w.r.count()
			r.Header = make([]string, 0, n)
			for range n {
				r.Header = append(r.Header, w.r.str())
			}
			r.HasBody = w.r.byte() == 1
			r.Body = w.r.str()
			if err := w.r.done(); err != nil {
				return Result{}, false, err
			}
			if err := w.fetched(ctx, j, r); err != nil {
				return Result{}, false, err
			}
		default:
			return Result{}, false, errFrame
		}
	}
}

// fetched makes a webhook's request with j.Fetch and answers it.
func (w *poolWorker) fetched(ctx context.Context, j *Job, r *Request) error {
	var resp *Response
	err := errors.New("cannot send request: requests are not allowed here")
	if j.Kind.requests() && j.Fetch != nil {
		resp, err = j.Fetch(ctx, r)
	}
	w.w.begin(msgFetched)
	if err != nil {
		w.w.byte(0)
		w.w.str(err.Error())
		return w.w.send()
	}
	w.w.byte(1)
	w.w.uint(uint64(max(resp.Status, 0)))
	w.w.uint(uint64(len(resp.Header)))
	for k, v := range resp.Header {
		w.w.str(k)
		w.w.str(v)
	}
	w.w.str(resp.Body)
	return w.w.send()
}

// failure words the end of a worker that stopped answering: killed at
// the run's hard deadline (the time limit), for the caller's
// cancellation, out of memory (an allocation past the hard limit of its
// address space), or anything else, with what it printed last.
func (w *poolWorker) failure(ctx context.Context, p *Pool, cause error) error {
	w.kill(killClose) // no-op if it is gone; keeps the first reason
	<-w.exited
	switch w.killedFor.Load() {
	case killDeadline:
		return timeoutError()
	case killCancel:
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	// How a Go runtime dies when an allocation meets the address space
	// limit: "out of memory" (or, built with -race, "too many address
	// space collisions").
	out := w.stderr.String()
	for _, oom := range []string{"out of memory", "cannot allocate memory", "address space collisions"} {
		if strings.Contains(out, oom) {
			return memoryError(p.opts.MemLimit)
		}
	}
	state := "killed"
	if ps := w.cmd.ProcessState; ps != nil {
		state = ps.String()
	}
	err := &Error{Reason: Failed, Msg: "the script's worker failed (" + state + "): " + cause.Error() + w.stderr.last()}
	if n, ok := p.throttle.Allow("worker failed"); ok {
		p.opts.Logger.Error("script worker failed", "err", err, "suppressed", n)
	}
	return err
}

// tail keeps the first and the last bytes a worker printed, for its
// failure's message: a Go runtime's "fatal error: ..." comes first, and
// a goroutine dump may follow it.
type tail struct {
	mu   sync.Mutex
	head []byte
	buf  []byte
}

const tailSize = 4 << 10

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(b)
	if room := tailSize - len(t.head); room > 0 {
		k := min(room, len(b))
		t.head = append(t.head, b[:k]...)
		b = b[k:]
	}
	t.buf = append(t.buf, b...)
	if len(t.buf) > 2*tailSize {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailSize:]...)
	}
	return n, nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.head) + string(t.buf)
}

// last returns ": " and the first line the worker printed that says
// what went wrong (a Go runtime's "fatal error: ..."), or its last line,
// or "".
func (t *tail) last() string {
	s := strings.TrimSpace(t.String())
	if s == "" {
		return ""
	}
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, "fatal error:") || strings.HasPrefix(line, "panic:") {
			return ": " + line
		}
	}
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return ": " + s
}
