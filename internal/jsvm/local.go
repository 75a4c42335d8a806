package jsvm

import (
	"context"
	"errors"
	"runtime/metrics"
	"strconv"
	"time"

	"github.com/dop251/goja"
)

// Local runs scripts on the calling goroutine, in this process: what a
// worker of a Pool does inside its own process, and what tests and
// tools use where no worker process is wanted. In a server it is not
// isolation enough: the memory guard samples the process's whole heap
// (other goroutines' allocations count), it cannot stop one native call
// that allocates gigabytes at once ('x'.repeat(1e10)), and a looping
// script competes with the server's goroutines for the CPU. A Pool
// runs the same code in worker processes that have none of these
// problems.
//
// The zero Local is ready to use.
type Local struct {
	// MemLimit bounds how far one run may grow the heap (0:
	// DefaultMemLimit).
	MemLimit uint64
}

func (l *Local) memLimit() uint64 {
	if l.MemLimit > 0 {
		return l.MemLimit
	}
	return DefaultMemLimit
}

// heapCheck is how often the guard samples the heap while a script runs.
const heapCheck = 2 * time.Millisecond

// heapObjects is the runtime metric the guard reads: bytes of live and
// not yet swept heap objects, read without stopping the world.
const heapObjects = "/memory/classes/heap/objects:bytes"

// Interrupt values: why a run was stopped.
const (
	interruptTimeout = "timeout"
	interruptMemory  = "memory"
	interruptCancel  = "cancel"
)

// Run implements Runner.
func (l *Local) Run(ctx context.Context, j *Job) (Result, error) {
	prog := j.Program
	if prog == nil {
		p, err := Compile(j.Script)
		if err != nil {
			return Result{}, err
		}
		prog = p
	}
	limit := l.memLimit()
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	vm := newRuntime(ctx, j)
	timer := time.AfterFunc(j.timeout(ctx), func() { vm.Interrupt(interruptTimeout) })
	defer timer.Stop()
	stopCancel := context.AfterFunc(ctx, func() {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			vm.Interrupt(interruptTimeout)
		} else {
			vm.Interrupt(interruptCancel)
		}
	})
	defer stopCancel()
	stop := make(chan struct{})
	defer close(stop)
	go watchHeap(vm, limit, stop)
	fv, err := vm.RunProgram(prog)
	if err != nil {
		return Result{}, runError(ctx, err, limit)
	}
	fn, ok := goja.AssertFunction(fv)
	if !ok {
		return Result{}, &Error{Reason: Failed, Msg: "BUG: the compiled script is not a function"}
	}
	res, err := fn(goja.Undefined(), vm.ToValue(j.Value))
	if err != nil {
		return Result{}, runError(ctx, err, limit)
	}
	if goja.IsUndefined(res) {
		return Result{Null: true, Undefined: true}, nil
	}
	if goja.IsNull(res) {
		return Result{Null: true}, nil
	}
	s := res.String()
	if j.MaxResult > 0 && len(s) > j.MaxResult {
		return Result{}, &Error{Reason: TooLarge, Msg: "the returned value is " + strconv.Itoa(len(s)) + " bytes, more than the limit of " + strconv.Itoa(j.MaxResult)}
	}
	return Result{Value: s}, nil
}

// runError words a script's failure: the thrown value (as "Error:
// text"), the time limit or the memory limit.
func runError(ctx context.Context, err error, limit uint64) error {
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		switch ie.Value() {
		case interruptMemory:
			return memoryError(limit)
		case interruptCancel:
			return ctx.Err()
		}
		return timeoutError()
	}
	var so *goja.StackOverflowError
	if errors.As(err, &so) {
		return &Error{Reason: Thrown, Msg: "RangeError: Maximum call stack size exceeded"}
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return &Error{Reason: Thrown, Msg: ex.Value().String()}
	}
	return &Error{Reason: Thrown, Msg: err.Error()}
}

// heapBytes returns the current heap objects size.
func heapBytes(sample []metrics.Sample) uint64 {
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return sample[0].Value.Uint64()
}

// watchHeap interrupts vm once the heap has grown past limit since the
// call, until stop is closed. goja keeps no account per runtime, so the
// process's heap stands for the script's: exact in a worker process,
// which runs one script at a time, approximate in a server.
func watchHeap(vm *goja.Runtime, limit uint64, stop <-chan struct{}) {
	sample := []metrics.Sample{{Name: heapObjects}}
	start := heapBytes(sample)
	tick := time.NewTicker(heapCheck)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			if now := heapBytes(sample); now > start && now-start > limit {
				vm.Interrupt(interruptMemory)
				return
			}
		}
	}
}
