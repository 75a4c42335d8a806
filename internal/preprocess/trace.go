package preprocess

// StepResult is one step's part in a traced run: what Zabbix's
// preprocessing test (the frontend's "Test" button) shows per step.
type StepResult struct {
	// Text is the step's result when Valued: its output, or the "set
	// value" handler's value. A step that discarded the value, or failed
	// with any other handler, has none.
	Text   string
	Valued bool
	// Err is the step's own failure, "" when it succeeded; Action is the
	// error handler that then acted (HandlerDefault when none did).
	Err    string
	Action Handler
}

// failed records a step that failed with msg and what its handler made of
// it.
func failed(s Step, msg string, out Output, stop bool) StepResult {
	r := StepResult{Err: msg, Action: s.ErrorHandler}
	if !stop {
		r.Text, r.Valued = out.Text, true
	}
	return r
}

// Trace is Run that also reports each step's result, in chain order, up
// to the step that ended the chain: the steps after a discarded value or
// an unhandled failure did not run and have no entry. When in.Err is set
// and the chain does not start with "Check for not supported value",
// nothing ran and the trace is empty. It is for the API's
// preprocessing.test, not the hot path: it allocates the trace.
func Trace(chain []Step, in Input, st *State) ([]StepResult, Output, error) {
	trace := make([]StepResult, 0, len(chain))
	out, err := run(chain, in, st, &trace)
	return trace, out, err
}
