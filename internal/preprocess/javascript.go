package preprocess

import (
	"context"
	"errors"
	"time"

	"github.com/dop251/goja"

	"github.com/peregrine-mon/peregrine/internal/jsvm"
)

// JSTimeout is the time limit of one run of a JavaScript step, Zabbix's
// limit.
const JSTimeout = 10 * time.Second

// compileJS compiles a JavaScript step's script once, when the step is
// parsed, so that a script that does not compile is refused with the
// step (jsvm.Compile: the script is the body of a function of value, as
// in Zabbix). The compiled program serves runs in this process; a pool
// of workers compiles the text itself.
func compileJS(script string) (*goja.Program, error) {
	prog, err := jsvm.Compile(script)
	if err != nil {
		return nil, errors.New(err.Error())
	}
	return prog, nil
}

// RunScript runs s, a JavaScript step, on text with r (nil: in this
// process, jsvm.Local, which is for tests and tools), bounded by the
// step's time limit (JSTimeout, or LimitJS's) and r's memory limit. It
// returns the script's result, or the step's failure worded as Run
// words it ("cannot execute script: ..."), for Resume. It is how a
// caller that Run suspended before the step (Input.Defer) runs it where
// a slow script harms no one else.
func (s *Step) RunScript(ctx context.Context, r jsvm.Runner, text string) (string, error) {
	if s.Type != StepJavaScript {
		return "", errors.New("BUG: RunScript on a step that is not JavaScript")
	}
	if r == nil {
		r = &jsvm.Local{}
	}
	limit := s.jsLimit
	if limit <= 0 {
		limit = JSTimeout
	}
	res, err := r.Run(ctx, &jsvm.Job{Kind: jsvm.Preprocessing, Script: s.Params[0], Program: s.js, Value: text, Timeout: limit})
	if err != nil {
		// The thrown value (as "Error: text"), the time or memory limit,
		// a failed worker, or the caller's cancellation.
		return "", stepErr("cannot execute script: " + err.Error())
	}
	if res.Null {
		return "", stepErr("cannot execute script: it returned no value (undefined or null)")
	}
	return res.Value, nil
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
