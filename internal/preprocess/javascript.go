package preprocess

import (
	"errors"
	"runtime/metrics"
	"time"

	"github.com/dop251/goja"
)

// JSTimeout is the time limit of one run of a JavaScript step, Zabbix's
// limit.
const JSTimeout = 10 * time.Second

// jsHeapLimit bounds how far one run of a JavaScript step may grow the
// heap (Zabbix caps a script's Duktape heap at 512 MiB). goja keeps no
// account per runtime, so a watchdog samples the process's live heap
// every jsHeapCheck while the script runs and interrupts it once the heap
// has grown this much since the start: approximate (other goroutines'
// allocations count too), but it stops a script that allocates without
// bound long before it takes the server down, and the bound is far above
// what the rest of the server allocates in ten seconds. A variable so
// that the tests can lower it.
var jsHeapLimit uint64 = 512 << 20

const jsHeapCheck = 5 * time.Millisecond

// heapObjects is the runtime metric the watchdog reads: bytes of live and
// not yet swept heap objects, read without stopping the world.
const heapObjects = "/memory/classes/heap/objects:bytes"

// Interrupt values: why a run was stopped.
const (
	jsInterruptTimeout = "execution timeout"
	jsInterruptMemory  = "memory limit exceeded"
)

// heapBytes returns the current heap objects size.
func heapBytes(sample []metrics.Sample) uint64 {
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return sample[0].Value.Uint64()
}

// watchHeap interrupts vm once the heap has grown past limit since the
// call, until stop is closed.
func watchHeap(vm *goja.Runtime, limit uint64, stop <-chan struct{}) {
	sample := []metrics.Sample{{Name: heapObjects}}
	start := heapBytes(sample)
	tick := time.NewTicker(jsHeapCheck)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			if now := heapBytes(sample); now > start && now-start > limit {
				vm.Interrupt(jsInterruptMemory)
				return
			}
		}
	}
}

// compileJS compiles a JavaScript step's script once, when the step is
// parsed: the script is the body of a function of value, the step's input
// text, as in Zabbix. The engine is github.com/dop251/goja (ECMAScript
// 5.1 and much of ES6, pure Go).
func compileJS(script string) (*goja.Program, error) {
	prog, err := goja.Compile("script", "(function (value) {\n"+script+"\n})", false)
	if err != nil {
		return nil, errors.New("cannot compile the script: " + err.Error())
	}
	return prog, nil
}

// runJS runs prog on text in a fresh runtime (no state leaks from one
// value to the next), stopped after limit. Zabbix.log is accepted and
// ignored; HttpRequest and CurlHttpRequest throw: this server makes no
// requests from scripts.
func runJS(prog *goja.Program, text string, limit time.Duration) (string, error) {
	vm := goja.New()
	zbx := vm.NewObject()
	_ = zbx.Set("log", func(goja.FunctionCall) goja.Value { return goja.Undefined() })
	_ = vm.Set("Zabbix", zbx)
	for _, name := range []string{"HttpRequest", "CurlHttpRequest"} {
		msg := name + " is not supported by this server: scripts cannot make requests"
		_ = vm.Set(name, func(goja.ConstructorCall) *goja.Object { panic(vm.NewTypeError(msg)) })
	}
	timer := time.AfterFunc(limit, func() { vm.Interrupt(jsInterruptTimeout) })
	defer timer.Stop()
	stop := make(chan struct{})
	defer close(stop)
	go watchHeap(vm, jsHeapLimit, stop)
	fv, err := vm.RunProgram(prog)
	if err != nil {
		return "", jsError(err)
	}
	fn, ok := goja.AssertFunction(fv)
	if !ok {
		return "", errors.New("BUG: the compiled script is not a function")
	}
	res, err := fn(goja.Undefined(), vm.ToValue(text))
	if err != nil {
		return "", jsError(err)
	}
	if goja.IsUndefined(res) || goja.IsNull(res) {
		return "", stepErr("cannot execute script: it returned no value (undefined or null)")
	}
	return res.String(), nil
}

// jsError words a script's failure: the thrown value (as "Error: text"),
// the time limit or the memory limit.
func jsError(err error) error {
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		if ie.Value() == jsInterruptMemory {
			return stepErr("cannot execute script: memory limit exceeded")
		}
		return stepErr("cannot execute script: execution timeout")
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return stepErr("cannot execute script: " + ex.Value().String())
	}
	return stepErr("cannot execute script: " + err.Error())
}

// LimitJS sets the time limit of one run of a JavaScript step to d
// (at most JSTimeout); other steps ignore it. The API's
// preprocessing.test shortens it so that a test's scripts together end
// within the request's deadline.
func (s *Step) LimitJS(d time.Duration) {
	if s.Type == StepJavaScript {
		s.jsLimit = min(d, JSTimeout)
	}
}
