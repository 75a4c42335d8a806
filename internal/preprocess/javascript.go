package preprocess

import (
	"errors"
	"time"

	"github.com/dop251/goja"
)

// JSTimeout is the time limit of one run of a JavaScript step, Zabbix's
// limit.
const JSTimeout = 10 * time.Second

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
	timer := time.AfterFunc(limit, func() { vm.Interrupt("execution timeout") })
	defer timer.Stop()
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

// jsError words a script's failure: the thrown value (as "Error: text")
// or the time limit.
func jsError(err error) error {
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
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
