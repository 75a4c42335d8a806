package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/api/zjson"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/preprocess"
	"github.com/peregrine-mon/peregrine/internal/zbx/delay"
)

// preprocessing.test runs preprocessing steps on a value given in the
// request and returns each step's result: the frontend's "Test" button.
// Zabbix's frontend sends this request, by this name, to its server's
// trapper port, not to the API; Peregrine serves it as an API method with
// the request's "data" object as params and the reply's "data" object as
// result (docs/api.md).

// Bounds of one test: the body limit bounds the request too, but a test
// runs its steps twice (history and value), and a JavaScript step up to
// preprocess.JSTimeout each, so the work of one call is bounded apart.
const (
	// maxTestValueBytes bounds the value and the history value: the
	// largest master item values the official templates parse
	// (Kubernetes and Prometheus exporters' metrics pages) are a few MiB.
	maxTestValueBytes = 8 << 20
	// maxTestSteps bounds the chain; the official templates' chains have
	// at most a handful of steps.
	maxTestSteps = 64
	// testJSBudget is the time all JavaScript runs of one test may take
	// together, within the request's own deadline.
	testJSBudget = 20 * time.Second
)

func (s *Server) registerPreprocessing() {
	// Zabbix's server answers only users of type Zabbix Admin or above
	// ("Permission denied."): a test runs scripts on the server.
	s.methods["preprocessing.test"] = &method{role: RoleAdmin, call: s.preprocessingTest}
}

// testParams are preprocessing.test's params, Zabbix's request "data".
type testParams struct {
	Value     opt[textValue]       `json:"value" zbx:"null"`
	ValueType opt[int64]           `json:"value_type"`
	Single    opt[flexBool]        `json:"single"`
	State     opt[int64]           `json:"state"`
	History   opt[testHist]        `json:"history" as:"object" zbx:"null"`
	Steps     opt[json.RawMessage] `json:"steps" as:"json"`
}

// testHist is preprocessing.test's "history": the previous value and
// when it was ("now-1m").
type testHist struct {
	Value     opt[textValue] `json:"value" zbx:"null"`
	Timestamp opt[string]    `json:"timestamp"`
}

// textValue is a value to test: a JSON string, or a number whose text is
// the value (Zabbix reads both).
type textValue struct{ s string }

func (v *textValue) decodeParam(b []byte, _ *fieldCtx) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) > 0 && b[0] == '"':
		return json.Unmarshal(b, &v.s)
	case len(b) > 0 && (b[0] == '-' || (b[0] >= '0' && b[0] <= '9')):
		v.s = string(b)
		return nil
	}
	return kindError{kind: reflect.String}
}

// stepInput is one preprocessing object as the API takes it: numbers as
// JSON numbers or numeric strings, params as one string with parameters
// joined by LF.
type stepInput struct {
	Type               opt[json.RawMessage] `json:"type" as:"json"`
	Params             opt[string]          `json:"params" zbx:"null"`
	ErrorHandler       opt[json.RawMessage] `json:"error_handler" as:"json"`
	ErrorHandlerParams opt[string]          `json:"error_handler_params" zbx:"null"`
}

// decodeSteps decodes a list of preprocessing objects strictly (a
// misspelt "error_handler" is an error, not a default); path names the
// list in errors ("steps", "1/preprocessing").
func decodeSteps(raw json.RawMessage, path string) ([]stepInput, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	elems, ok := arrayElems(raw)
	if !ok {
		return nil, errParams(`Invalid parameter "/%s": an array is expected.`, path)
	}
	out := make([]stepInput, len(elems))
	for i, el := range elems {
		if err := decodeElement(el, strconv.Itoa(i+1), &out[i], &writeRules); err != nil {
			var ve *valueError
			if errors.As(err, &ve) {
				return nil, errParams(`Invalid parameter "/%s/%s": %s.`, path, ve.sub, ve.msg)
			}
			return nil, errParams(`Invalid parameter "/%s": %v.`, path, err)
		}
	}
	return out, nil
}

// parseSteps validates steps as the Zabbix API does, each with ParseStep
// and the chain with ParseChain; errors name the member with path as
// prefix ("/steps", "/1/preprocessing"): "/steps/2/params/1".
func parseSteps(in []stepInput, path string) ([]preprocess.Step, error) {
	chain := make([]preprocess.Step, len(in))
	for i, si := range in {
		at := path + "/" + strconv.Itoa(i+1)
		if len(si.Type.Value) == 0 {
			return nil, errParams(`Invalid parameter "%s": the parameter "type" is missing.`, at)
		}
		typ, ok := numText(si.Type.Value)
		if !ok {
			return nil, errParams(`Invalid parameter "%s/type": an integer is expected.`, at)
		}
		handler := "0"
		if len(si.ErrorHandler.Value) > 0 {
			if handler, ok = numText(si.ErrorHandler.Value); !ok {
				return nil, errParams(`Invalid parameter "%s/error_handler": an integer is expected.`, at)
			}
		}
		var params, hparams string
		if si.Params.Given() {
			params = si.Params.Value
		}
		if si.ErrorHandlerParams.Given() {
			hparams = si.ErrorHandlerParams.Value
		}
		// Zabbix's API takes CRLF line ends in params as LF.
		params = strings.ReplaceAll(params, "\r\n", "\n")
		step, err := preprocess.ParseStep(typ, params, handler, hparams)
		if err != nil {
			return nil, stepError(at, err)
		}
		chain[i] = step
	}
	if err := preprocess.ParseChain(chain); err != nil {
		msg := err.Error()
		if _, m, ok := strings.Cut(msg, `": `); ok {
			msg = m
		}
		return nil, errParams(`Invalid parameter "%s": %s.`, path, msg)
	}
	return chain, nil
}

// numText reads a JSON number or numeric string as its text.
func numText(b json.RawMessage) (string, bool) {
	s := unquote(b)
	if _, err := strconv.ParseInt(s, 10, 32); err != nil {
		return "", false
	}
	return s, true
}

// stepError words ParseStep's error with the step's path, as Zabbix's
// validator does: `Invalid parameter "/steps/1/params/1": ...`.
func stepError(at string, err error) error {
	var pe *preprocess.ParamError
	if !errors.As(err, &pe) {
		return errParams(`Invalid parameter "%s": %v.`, at, err)
	}
	switch {
	case pe.Field == "":
		return errParams(`Invalid parameter "%s": %s.`, at, pe.Msg)
	case pe.Param > 0:
		return errParams(`Invalid parameter "%s/%s/%d": %s.`, at, pe.Field, pe.Param, pe.Msg)
	}
	return errParams(`Invalid parameter "%s/%s": %s.`, at, pe.Field, pe.Msg)
}

// itemNotSupported is Zabbix's answer to a test of a not supported item
// whose chain cannot process it.
const itemNotSupported = `This item is not supported. Please, add a preprocessing step "Check for not supported value" to process it.`

// preprocessingTest serves preprocessing.test as Zabbix's server answers
// the request: with "history", the chain first runs on the history value
// (timestamp "now" or "now-<time>") and then on the value (now), sharing
// the change and discard steps' memory, so that "Simple change" shows a
// difference. "steps" reports the last run; "result" is the final value,
// converted to value_type unless "single", or "error" says why there is
// none, and "previous": true says the history value's run failed.
func (s *Server) preprocessingTest(ctx context.Context, c *call) (any, error) {
	var p testParams
	if err := decodeStrictObject(c.params, &p); err != nil {
		return nil, err
	}
	switch {
	case !p.Value.Given():
		return nil, errParams(`Invalid parameter "/": the parameter "value" is missing.`)
	case !p.ValueType.Given():
		return nil, errParams(`Invalid parameter "/": the parameter "value_type" is missing.`)
	case p.ValueType.Value < 0 || p.ValueType.Value > 4:
		return nil, errParams(`Invalid parameter "/value_type": value must be one of 0, 1, 2, 3, 4.`)
	case p.State.Given() && p.State.Value != 0 && p.State.Value != 1:
		return nil, errParams(`Invalid parameter "/state": value must be one of 0, 1.`)
	case len(p.Value.Value.s) > maxTestValueBytes:
		return nil, errParams(`Invalid parameter "/value": the value is %d bytes, more than %d.`, len(p.Value.Value.s), maxTestValueBytes)
	case !p.Steps.Set:
		return nil, errParams(`Invalid parameter "/": the parameter "steps" is missing.`)
	}
	in, err := decodeSteps(p.Steps.Value, "steps")
	if err != nil {
		return nil, err
	}
	if len(in) > maxTestSteps {
		return nil, errParams(`Invalid parameter "/steps": %d steps, more than %d.`, len(in), maxTestSteps)
	}
	chain, err := parseSteps(in, "/steps")
	if err != nil {
		return nil, err
	}
	now := time.Now()
	type run struct {
		text string
		at   time.Time
	}
	var runs []run
	if p.History.Given() {
		if !p.History.Value.Value.Given() {
			return nil, errParams(`Invalid parameter "/history": the parameter "value" is missing.`)
		}
		if len(p.History.Value.Value.Value.s) > maxTestValueBytes {
			return nil, errParams(`Invalid parameter "/history/value": the value is %d bytes, more than %d.`, len(p.History.Value.Value.Value.s), maxTestValueBytes)
		}
		at, ok := historyTime(p.History.Value.Timestamp.Value, now)
		if !ok {
			return nil, errParams(`Invalid parameter "/history/timestamp": "now" or "now-<time>" (e.g. "now-1m") is expected.`)
		}
		runs = append(runs, run{p.History.Value.Value.Value.s, at})
	}
	runs = append(runs, run{p.Value.Value.s, now})
	vt := history.ValueType(p.ValueType.Value)
	notSupported := p.State.Value == 1

	// A supported item's "Check for not supported value" step does
	// nothing; Zabbix leaves it out of the run and reports it as passed.
	bypass := !notSupported && len(chain) > 0 && chain[0].Type == preprocess.StepCheckUnsupported
	if bypass {
		chain = chain[1:]
	}
	if notSupported && (len(chain) == 0 || chain[0].Type != preprocess.StepCheckUnsupported) {
		return object{"steps": []object{}, "error": itemNotSupported}, nil
	}
	limitJS(ctx, chain, len(runs))

	var (
		st      preprocess.State
		trace   []preprocess.StepResult
		out     preprocess.Output
		failure string
		prevErr bool
	)
	for i, r := range runs {
		// Scripts run where the pipeline's do (Options.JS): a test of a
		// script that loops or allocates costs a worker, not the server.
		input := preprocess.Input{Text: r.text, Time: r.at, Type: vt, JS: s.opts.JS}
		if notSupported {
			input = preprocess.Input{Err: r.text, Time: r.at, Type: vt, JS: s.opts.JS}
		}
		if len(chain) == 0 {
			trace, out, err = nil, preprocess.Output{Text: r.text}, nil
		} else {
			trace, out, err = preprocess.Trace(chain, input, &st)
		}
		if err != nil {
			failure = err.Error()
			prevErr = i < len(runs)-1
			break
		}
		if !p.Single.Value.v && !out.Discarded {
			text, cerr := convertForTest(vt, out.Text)
			if cerr != nil {
				failure = cerr.Error()
				prevErr = i < len(runs)-1
				break
			}
			out.Text = text
			// The conversion is the last step's result too, as in Zabbix.
			if n := len(trace); n > 0 && trace[n-1].Valued {
				trace[n-1].Text = text
			}
		}
	}

	steps := make([]object, 0, len(trace)+1)
	if bypass {
		// Zabbix answers {"result": "value"} here; Peregrine gives the
		// value that passed the step.
		steps = append(steps, object{"result": runs[len(runs)-1].text})
	}
	for i, r := range trace {
		o := object{}
		if r.Err != "" {
			o["error"] = r.Err
		}
		if r.Action != preprocess.HandlerDefault {
			o["action"] = rawJSON(strconv.Itoa(int(r.Action)))
		}
		if i == len(trace)-1 && r.Err != "" && r.Action == preprocess.HandlerSetError {
			o["failed"] = failure
		}
		switch {
		case r.Valued:
			o["result"] = r.Text
		case r.Err == "" || r.Action == preprocess.HandlerDiscard:
			o["result"] = rawJSON("null")
		}
		steps = append(steps, o)
	}
	res := object{"steps": steps}
	if prevErr {
		res["previous"] = true
	}
	switch {
	case failure != "":
		res["error"] = failure
	case out.Discarded:
		res["result"] = rawJSON("null")
	default:
		res["result"] = out.Text
	}
	return res, nil
}

// historyTime reads the history value's timestamp as Zabbix's server
// does: "now" or "now-" and a time ("now-30s", "now-1h").
func historyTime(ts string, now time.Time) (time.Time, bool) {
	rest, ok := strings.CutPrefix(ts, "now")
	if !ok {
		return time.Time{}, false
	}
	if rest == "" {
		return now, true
	}
	rest, ok = strings.CutPrefix(rest, "-")
	if !ok {
		return time.Time{}, false
	}
	sec, err := delay.ParseSeconds(rest)
	if err != nil {
		return time.Time{}, false
	}
	return now.Add(-time.Duration(sec) * time.Second), true
}

// limitJS shares the test's JavaScript budget (testJSBudget, and no more
// than the request has left) among its script runs, so that a test of
// endless scripts ends within the request's deadline; a script that
// returns in time is not affected.
func limitJS(ctx context.Context, chain []preprocess.Step, runs int) {
	n := 0
	for i := range chain {
		if chain[i].Type == preprocess.StepJavaScript {
			n++
		}
	}
	if n == 0 {
		return
	}
	budget := testJSBudget
	if d, ok := ctx.Deadline(); ok {
		budget = min(budget, time.Until(d)*3/4)
	}
	each := max(budget/time.Duration(n*runs), time.Millisecond)
	for i := range chain {
		chain[i].LimitJS(each)
	}
}

// convertForTest converts a chain's output to the item's value type as
// the pipeline will, and formats it back: a float as history.get shows
// it, a string as stored (cut to the type's length).
func convertForTest(vt history.ValueType, text string) (string, error) {
	var smp history.Sample
	if err := preprocess.Convert(vt, []byte(text), &smp); err != nil {
		return "", err
	}
	switch vt {
	case history.Float:
		return string(zjson.AppendFloat(nil, smp.F)), nil
	case history.Uint:
		return strconv.FormatUint(smp.U, 10), nil
	}
	return smp.S, nil
}
