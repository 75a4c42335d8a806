package jsvm

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/dop251/goja"
)

// The environment that makes a process a worker (see init), and what it
// passes to the worker.
const (
	envWorker   = "PEREGRINE_JSVM_WORKER" // = helloMagic
	envMemLimit = "PEREGRINE_JSVM_MEMLIMIT"
	envNice     = "PEREGRINE_JSVM_NICE"
)

// The worker's ends of the pipes: the pool passes them as the first two
// extra files. Standard output and error go to the pool's log of the
// worker, so that nothing a runtime prints can corrupt the protocol.
const (
	workerIn  = 3
	workerOut = 4
)

// init turns a process started by a Pool into a worker, before the
// program's main (or a test binary's tests) runs: any binary linked with
// this package can serve as its own workers, which is how a server
// re-executes itself, and how the tests of every package that runs
// scripts get workers without a hook of their own. It does nothing in a
// process without the pool's environment variable, and keeps no state.
func init() {
	if os.Getenv(envWorker) != helloMagic {
		return
	}
	os.Exit(serveWorker())
}

// maxPrograms bounds the compiled scripts a worker keeps; when it is
// reached the worker forgets them all and is sent scripts again.
const maxPrograms = 256

// Bounds of what one run may log through the pipe.
const (
	maxLogs   = 100
	maxLogLen = 4 << 10
)

type worker struct {
	in    frameReader
	out   frameWriter
	progs map[uint64]*goja.Program
	local Local
	logs  int
}

// serveWorker runs scripts for the pool on the pipes until the pool
// closes them, and returns the exit code.
func serveWorker() int {
	limit := uint64(DefaultMemLimit)
	if v, err := strconv.ParseUint(os.Getenv(envMemLimit), 10, 64); err == nil && v > 0 {
		limit = v
	}
	// One script at a time on one core: a looping script costs at most
	// that, and the heap is the script's own, so that the guard's
	// measure is exact.
	runtime.GOMAXPROCS(1)
	if n, err := strconv.Atoi(os.Getenv(envNice)); err == nil && n > 0 {
		setNice(n)
	}
	limitProcess(limit)
	w := &worker{
		in:    frameReader{r: bufio.NewReaderSize(os.NewFile(workerIn, "jsvm-in"), 64<<10)},
		out:   frameWriter{w: bufio.NewWriterSize(os.NewFile(workerOut, "jsvm-out"), 64<<10)},
		progs: map[uint64]*goja.Program{},
		local: Local{MemLimit: limit},
	}
	w.out.begin(msgHello)
	w.out.str(helloMagic)
	w.out.uint(protocolVersion)
	if err := w.out.send(); err != nil {
		return 3
	}
	for {
		typ, err := w.in.next()
		if errors.Is(err, io.EOF) {
			return 0 // the pool closed the pipe: done
		}
		if err != nil || typ != msgRun {
			return 3
		}
		exit, err := w.run()
		if err != nil {
			return 3
		}
		if exit {
			return 0
		}
	}
}

// run serves one msgRun; exit says the worker should end after it (its
// heap grew to the limit, and a fresh process gives the memory back).
func (w *worker) run() (exit bool, err error) {
	r := &w.in
	kind := Kind(r.byte())
	timeout := r.uint()
	maxResult := r.uint()
	hash := r.u64()
	hasScript := r.byte() == 1
	script := ""
	if hasScript {
		script = r.str()
	}
	value := r.str()
	if err := r.done(); err != nil {
		return false, err
	}
	prog := w.progs[hash]
	if prog == nil {
		if !hasScript {
			w.out.begin(msgDone)
			w.out.byte(doneNeedScript)
			w.out.byte(0)
			w.out.str("")
			return false, w.out.send()
		}
		p, err := Compile(script)
		if err != nil {
			return false, w.done(Result{}, err)
		}
		if len(w.progs) >= maxPrograms {
			clear(w.progs)
		}
		w.progs[hash] = p
		prog = p
	}
	j := &Job{Kind: kind, Program: prog, Value: value, Timeout: durationOf(timeout), MaxResult: int(min(maxResult, maxFrame))}
	if kind.requests() {
		j.Fetch, j.Log = w.fetch, w.log
	}
	w.logs = 0
	res, runErr := w.local.Run(context.Background(), j)
	return IsReason(runErr, OutOfMemory), w.done(res, runErr)
}

func (w *worker) done(res Result, err error) error {
	w.out.begin(msgDone)
	var e *Error
	switch {
	case err == nil && res.Undefined:
		w.out.byte(doneUndefined)
		w.out.byte(0)
		w.out.str("")
	case err == nil && res.Null:
		w.out.byte(doneNull)
		w.out.byte(0)
		w.out.str("")
	case err == nil:
		w.out.byte(doneValue)
		w.out.byte(0)
		w.out.str(res.Value)
	case errors.As(err, &e):
		w.out.byte(doneError)
		w.out.byte(byte(e.Reason))
		w.out.str(e.Msg)
	default:
		w.out.byte(doneError)
		w.out.byte(byte(Failed))
		w.out.str(err.Error())
	}
	if err := w.out.send(); err != nil {
		if len(w.out.buf) > maxFrame {
			// A result too large for the pipe fails the run, not the
			// worker.
			w.out.begin(msgDone)
			w.out.byte(doneError)
			w.out.byte(byte(OutOfMemory))
			w.out.str(msgMemory + ": the script's result is too large")
			return w.out.send()
		}
		return err
	}
	return nil
}

// fetch asks the pool to make a webhook's request.
func (w *worker) fetch(_ context.Context, r *Request) (*Response, error) {
	w.out.begin(msgFetch)
	w.out.str(r.Method)
	w.out.str(r.URL)
	w.out.uint(uint64(len(r.Header)))
	for _, h := range r.Header {
		w.out.str(h)
	}
	if r.HasBody {
		w.out.byte(1)
	} else {
		w.out.byte(0)
	}
	w.out.str(r.Body)
	if err := w.out.send(); err != nil {
		return nil, errors.New("cannot send request: the server's pipe is closed")
	}
	typ, err := w.in.next()
	if err != nil || typ != msgFetched {
		return nil, errors.New("cannot send request: the server's pipe is broken")
	}
	in := &w.in
	if in.byte() != 1 {
		msg := in.str()
		if err := in.done(); err != nil {
			return nil, err
		}
		return nil, errors.New(msg)
	}
	resp := &Response{Status: int(in.uint())}
	n := in.count()
	resp.Header = make(map[string]string, n)
	for range n {
		k := in.str()
		resp.Header[k] = in.str()
	}
	resp.Body = in.str()
	if err := in.done(); err != nil {
		return nil, err
	}
	return resp, nil
}

// log passes a webhook's Zabbix.log to the pool, at most maxLogs per run.
func (w *worker) log(level, msg string) {
	if w.logs >= maxLogs {
		return
	}
	w.logs++
	if len(msg) > maxLogLen {
		msg = msg[:maxLogLen]
	}
	w.out.begin(msgLog)
	w.out.str(level)
	w.out.str(msg)
	_ = w.out.send()
}

// durationOf turns the wire's nanoseconds into a Duration, saturating.
func durationOf(ns uint64) (d time.Duration) {
	if ns > 1<<62 {
		return 1 << 62
	}
	return time.Duration(ns)
}

// memoryLimitFor is the Go runtime's soft limit in a worker whose scripts
// may grow the heap by limit: room for the runtime besides, so that the
// collector works harder near the limit (and the guard measures live
// memory rather than garbage) without thrashing below it.
func memoryLimitFor(limit uint64) int64 {
	return int64(limit + limit/4 + 64<<20)
}
