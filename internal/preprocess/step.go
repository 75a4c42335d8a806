package preprocess

import (
	"context"
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/antchfx/xpath"
	"github.com/dop251/goja"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/jsvm"
	"github.com/peregrine-mon/peregrine/internal/preprocess/jsonpath"
)

// StepType is a Zabbix 6.0 preprocessing step type (the API's "type").
type StepType uint8

// The step types, numbered as the Zabbix API numbers them.
const (
	StepMultiplier        StepType = 1
	StepRTrim             StepType = 2
	StepLTrim             StepType = 3
	StepTrim              StepType = 4
	StepRegsub            StepType = 5
	StepBool2Dec          StepType = 6
	StepOct2Dec           StepType = 7
	StepHex2Dec           StepType = 8
	StepDeltaValue        StepType = 9
	StepDeltaSpeed        StepType = 10
	StepXPath             StepType = 11
	StepJSONPath          StepType = 12
	StepValidateRange     StepType = 13
	StepValidateRegex     StepType = 14
	StepValidateNotRegex  StepType = 15
	StepErrorFieldJSON    StepType = 16
	StepErrorFieldXML     StepType = 17
	StepErrorFieldRegex   StepType = 18
	StepThrottleValue     StepType = 19
	StepThrottleTimed     StepType = 20
	StepJavaScript        StepType = 21
	StepPrometheusPattern StepType = 22
	StepPrometheusToJSON  StepType = 23
	StepCSVToJSON         StepType = 24
	StepStrReplace        StepType = 25
	StepCheckUnsupported  StepType = 26
	StepXMLToJSON         StepType = 27
)

// Handler is what a failing step's error handler does (the API's
// "error_handler").
type Handler uint8

// The error handlers.
const (
	HandlerDefault  Handler = 0 // the item becomes not supported with the step's message
	HandlerDiscard  Handler = 1 // the value is dropped; the item stays supported
	HandlerSetValue Handler = 2 // the step's result is ErrorParams and the chain goes on
	HandlerSetError Handler = 3 // the item becomes not supported with ErrorParams as message
)

// Step is one preprocessing step of an item, parsed and validated.
// Params is the API's "params" split at LF.
type Step struct {
	Type         StepType
	Params       []string
	ErrorHandler Handler
	ErrorParams  string

	// re is the compiled pattern of the regular expression steps, so that
	// a chain compiles its patterns once, when it is parsed, not per value.
	re *regexp.Regexp
	// jp is the compiled path of the JSONPath steps, for the same reason.
	jp *jsonpath.Path
	// js is the compiled script of a JavaScript step; jsLimit its time
	// limit (0: JSTimeout).
	js      *goja.Program
	jsLimit time.Duration
	// xp is the compiled expression of the XPath steps.
	xp *xpath.Expr
	// prom is the parsed pattern of the Prometheus steps.
	prom *promPattern
	// mul is the parsed factor of a custom multiplier, so that the hot
	// path does not parse it per value.
	mul *factor
}

// stepInfo says how many parameters a type takes and whether it may have
// an error handler other than the default, as the Zabbix 6.0 API checks.
type stepInfo struct {
	params  int
	handler bool
}

var stepInfos = map[StepType]stepInfo{
	StepMultiplier: {1, true}, StepRTrim: {1, false}, StepLTrim: {1, false}, StepTrim: {1, false},
	StepRegsub: {2, true}, StepBool2Dec: {0, true}, StepOct2Dec: {0, true}, StepHex2Dec: {0, true},
	StepDeltaValue: {0, true}, StepDeltaSpeed: {0, true}, StepXPath: {1, true}, StepJSONPath: {1, true},
	StepValidateRange: {2, true}, StepValidateRegex: {1, true}, StepValidateNotRegex: {1, true},
	StepErrorFieldJSON: {1, true}, StepErrorFieldXML: {1, true}, StepErrorFieldRegex: {2, true},
	StepThrottleValue: {0, false}, StepThrottleTimed: {1, false}, StepJavaScript: {1, true},
	StepPrometheusPattern: {3, true}, StepPrometheusToJSON: {1, true}, StepCSVToJSON: {3, true},
	StepStrReplace: {2, false}, StepCheckUnsupported: {0, true}, StepXMLToJSON: {0, true},
}

// ParamError is a step that does not validate. Field is the member at
// fault ("type", "params", "error_handler", "error_handler_params"; ""
// for the step object itself), Param the parameter's position from 1 when
// one parameter of params is at fault (0: the member as a whole), and Msg
// the reason, worded as the Zabbix API's validator words it where it has
// a word for it. Error gives `invalid parameter "params": msg`; the API
// builds its own path ("/1/preprocessing/2/params/1") from the fields.
type ParamError struct {
	Field string
	Param int
	Msg   string
}

func (e *ParamError) Error() string {
	switch {
	case e.Field == "":
		return e.Msg
	case e.Param > 0:
		return `invalid parameter "` + e.Field + "/" + strconv.Itoa(e.Param) + `": ` + e.Msg
	}
	return `invalid parameter "` + e.Field + `": ` + e.Msg
}

func paramErr(param int, msg string) error {
	return &ParamError{Field: "params", Param: param, Msg: msg}
}

// typeList is the valid types as Zabbix lists them in its error.
var typeList = func() string {
	var b strings.Builder
	for t := StepMultiplier; t <= StepXMLToJSON; t++ {
		if t > StepMultiplier {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(int(t)))
	}
	return b.String()
}()

// ParseStep builds a Step from the API object's members (all strings, as
// the Zabbix API sends them) and validates it as the Zabbix 6.0 API does:
// a known type, the right number of LF-separated parameters, numbers and
// regular expressions that parse, and an error handler only where the
// type allows one. The error names the offending member.
func ParseStep(typ, params, handler, handlerParams string) (Step, error) {
	t, err := strconv.ParseUint(typ, 10, 8)
	info, ok := stepInfos[StepType(t)]
	if err != nil || !ok {
		return Step{}, &ParamError{Field: "type", Msg: "value must be one of " + typeList}
	}
	s := Step{Type: StepType(t)}
	if info.params == 0 {
		if params != "" {
			return Step{}, &ParamError{Field: "params", Msg: "should be empty"}
		}
	} else if info.params == 1 {
		// One parameter is the whole text, line feeds included: a
		// JavaScript step's script, trim characters, a path.
		s.Params = []string{params}
	} else {
		s.Params = strings.Split(params, "\n")
		if n := len(s.Params); n < info.params {
			return Step{}, &ParamError{Field: "params", Msg: `the parameter "` + strconv.Itoa(n+1) + `" is missing`}
		} else if n > info.params {
			return Step{}, &ParamError{Field: "params", Msg: `unexpected parameter "` + strconv.Itoa(info.params+1) + `"`}
		}
	}
	h, err := strconv.ParseUint(handler, 10, 8)
	if handler == "" {
		h, err = 0, nil
	}
	if err != nil || h > uint64(HandlerSetError) {
		return Step{}, &ParamError{Field: "error_handler", Msg: "value must be one of 0, 1, 2, 3"}
	}
	s.ErrorHandler, s.ErrorParams = Handler(h), handlerParams
	switch {
	case !info.handler && s.ErrorHandler != HandlerDefault:
		// Zabbix's validator has no error_handler member for these types.
		return Step{}, &ParamError{Msg: `unexpected parameter "error_handler"`}
	case (s.ErrorHandler == HandlerDefault || s.ErrorHandler == HandlerDiscard) && handlerParams != "":
		return Step{}, &ParamError{Field: "error_handler_params", Msg: "should be empty"}
	case s.ErrorHandler == HandlerSetError && handlerParams == "":
		return Step{}, &ParamError{Field: "error_handler_params", Msg: "cannot be empty"}
	}
	if err := s.validateParams(); err != nil {
		return Step{}, err
	}
	return s, nil
}

func (s *Step) validateParams() error {
	p := s.Params
	switch s.Type {
	case StepMultiplier:
		f, ok := parseFloat(trimNumber([]byte(p[0])))
		if !ok {
			return paramErr(1, "a numeric value is expected, got \""+p[0]+"\"")
		}
		s.mul = newFactor(p[0], f)
	case StepRTrim, StepLTrim, StepTrim:
		if p[0] == "" {
			return paramErr(1, "cannot be empty")
		}
	case StepRegsub, StepValidateRegex, StepValidateNotRegex, StepErrorFieldRegex:
		if p[0] == "" {
			return paramErr(1, "cannot be empty")
		}
		re, err := regexp.Compile(p[0])
		if err != nil {
			return paramErr(1, "invalid regular expression \""+p[0]+"\": "+err.Error())
		}
		s.re = re
	case StepValidateRange:
		if p[0] == "" && p[1] == "" {
			return paramErr(1, "minimum or maximum must be set")
		}
		lo, hi := 0.0, 0.0
		for i, v := range p {
			if v == "" {
				continue
			}
			f, ok := parseFloat(trimNumber([]byte(v)))
			if !ok {
				return paramErr(i+1, "a numeric value is expected, got \""+v+"\"")
			}
			if i == 0 {
				lo = f
			} else {
				hi = f
			}
		}
		if p[0] != "" && p[1] != "" && lo > hi {
			return paramErr(2, "the minimum must not be greater than the maximum")
		}
	case StepThrottleTimed:
		if _, err := parseHeartbeat(p[0]); err != nil {
			return paramErr(1, err.Error())
		}
	case StepCSVToJSON:
		for i := 0; i < 2; i++ {
			if len([]rune(p[i])) > 1 {
				return paramErr(i+1, "the delimiter and the quotation character must be at most one character")
			}
		}
		if p[2] != "0" && p[2] != "1" {
			return paramErr(3, "the header flag must be 0 or 1")
		}
	case StepStrReplace:
		if p[0] == "" {
			return paramErr(1, "the search string cannot be empty")
		}
	case StepJSONPath, StepErrorFieldJSON:
		jp, err := jsonpath.Compile(p[0])
		if err != nil {
			return paramErr(1, err.Error())
		}
		s.jp = jp
	case StepPrometheusToJSON:
		// An empty pattern converts every metric: Zabbix's API takes it,
		// and the GitLab, InfluxDB and TiDB templates use it.
		if strings.TrimSpace(p[0]) == "" {
			s.prom = &promPattern{}
			return nil
		}
		pat, err := parsePromPattern(p[0])
		if err != nil {
			return paramErr(1, err.Error())
		}
		s.prom = pat
	case StepPrometheusPattern:
		pat, err := parsePromPattern(p[0])
		if err != nil {
			return paramErr(1, err.Error())
		}
		s.prom = pat
		switch {
		case p[1] == "value" && p[2] == "":
		case p[1] == "label" && p[2] != "":
		case p[1] == "function" && (p[2] == "avg" || p[2] == "min" || p[2] == "max" || p[2] == "sum" || p[2] == "count"):
		default:
			return paramErr(2, "the output must be \"value\", \"label\" with a label name, or \"function\" with avg, min, max, sum or count")
		}
	case StepXPath, StepErrorFieldXML:
		if p[0] == "" {
			return paramErr(1, "cannot be empty")
		}
		xp, err := compileXPath(p[0])
		if err != nil {
			return paramErr(1, err.Error())
		}
		s.xp = xp
	case StepJavaScript:
		if p[0] == "" {
			return paramErr(1, "cannot be empty")
		}
		js, err := compileJS(p[0])
		if err != nil {
			return paramErr(1, err.Error())
		}
		s.js = js
	}
	return nil
}

// ParseChain validates a whole chain: each step's own rules (done by
// ParseStep), plus Zabbix's rules across steps: "Check for not supported
// value" only first, and at most one of the discard-unchanged steps and
// of the change steps.
func ParseChain(steps []Step) error {
	var throttle, delta int
	for i, s := range steps {
		switch s.Type {
		case StepCheckUnsupported:
			if i != 0 {
				return errors.New(`invalid parameter "preprocessing": "Check for not supported value" must be the first step`)
			}
		case StepThrottleValue, StepThrottleTimed:
			throttle++
		case StepDeltaValue, StepDeltaSpeed:
			delta++
		}
	}
	if throttle > 1 {
		return errors.New(`invalid parameter "preprocessing": only one "Discard unchanged" or "Discard unchanged with heartbeat" step is allowed`)
	}
	if delta > 1 {
		return errors.New(`invalid parameter "preprocessing": only one "Simple change" or "Change per second" step is allowed`)
	}
	return nil
}

// parseHeartbeat reads the heartbeat of "Discard unchanged with
// heartbeat": seconds, or a number with a time suffix (s, m, h, d, w), at
// least 1 second, as the Zabbix API accepts it.
func parseHeartbeat(s string) (time.Duration, error) {
	mult := int64(1)
	num := s
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 's':
			num = s[:n-1]
		case 'm':
			mult, num = 60, s[:n-1]
		case 'h':
			mult, num = 3600, s[:n-1]
		case 'd':
			mult, num = 86400, s[:n-1]
		case 'w':
			mult, num = 7*86400, s[:n-1]
		}
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || v < 1 || v > 25*365*86400/mult {
		return 0, errors.New("the heartbeat \"" + s + "\" must be a positive number of seconds, optionally with a suffix s, m, h, d or w")
	}
	return time.Duration(v*mult) * time.Second, nil
}

// Input is the value a chain runs on.
type Input struct {
	// Text is the value as text, as a check or a sender delivers it.
	Text string
	// Err, when not empty, says the check failed with that message: the
	// item would become not supported. Only a "Check for not supported
	// value" first step acts on it; any other chain returns it as the
	// error.
	Err string
	// Time is the value's timestamp; the change and discard steps use it.
	Time time.Time
	// Type is the item's value type: it decides whether numbers are
	// unsigned or float for the numeric steps, as in Zabbix.
	Type history.ValueType
	// Cache, if set, holds what was parsed of Text for other chains run
	// on the same text (see Cache); nil parses as needed.
	Cache *Cache
	// JS runs the JavaScript steps (the server's pool of worker
	// processes, jsvm.Pool); nil runs them in this process (jsvm.Local:
	// tests and tools).
	JS jsvm.Runner
	// KeepNumber lets Run end with a numeric result as a number
	// (Output.Number) without making its text: Output.Text is then ""
	// and Output.String makes it. For callers that store the value.
	KeepNumber bool
	// Defer makes Run stop before a JavaScript step instead of running
	// it, with Output.Suspended: the caller runs the step
	// (Step.RunScript) where a slow script delays no one else, then
	// calls Resume with its result.
	Defer bool
}

// Output is what a chain made of its Input.
type Output struct {
	Text string
	// Discarded says the value is dropped with no error: a change step's
	// first value, an unchanged value, or a "discard value" handler.
	Discarded bool
	// Suspended says Run stopped before the JavaScript step at index
	// Step (Input.Defer); Text is the step's input.
	Suspended bool
	Step      int

	// num is a numeric result kept as a number (Input.KeepNumber).
	num   number
	isNum bool
}

// String is the result as text: Text, or the text of a number kept by
// Input.KeepNumber.
func (o *Output) String() string {
	if o.isNum {
		return o.num.String()
	}
	return o.Text
}

// Number sets s's value of type vt to a result kept as a number
// (Input.KeepNumber) and reports whether it did: only when it is
// exactly what Convert would make of its text (an unsigned number for
// an unsigned item; a finite float within Convert's range for a float
// item). Otherwise the caller converts String().
func (o *Output) Number(vt history.ValueType, s *history.Sample) bool {
	if !o.isNum {
		return false
	}
	switch n := o.num; {
	case vt == history.Uint && n.isUint:
		s.Type, s.U = vt, n.u
		return true
	case vt == history.Float && !n.isUint && !math.IsNaN(n.f) && math.Abs(n.f) <= 1e308:
		s.Type, s.F = vt, n.f
		return true
	}
	return false
}

// StepError is a step failure that no handler absorbed: the item becomes
// not supported with Message, Zabbix's wording (or the handler's custom
// message).
type StepError struct {
	Index   int // the step's position in the chain, from 0; -1: Input.Err passed through
	Type    StepType
	Message string
}

func (e *StepError) Error() string { return e.Message }

// State is the per-item memory that the change and discard steps need
// across values. The caller owns it, one per item, and passes the same
// State to every Run of that item's chain; a zero State is an item that
// has seen no value. It is not safe for concurrent use (the owner of the
// item runs its values one at a time).
type State struct {
	steps []stepState
}

type stepState struct {
	set    bool
	isUint bool
	u      uint64
	f      float64
	text   string
	buf    []byte // backs text for the discard steps (see throttle)
	// numSet says a discard step's last kept value is num, not text
	// (throttleNum); its text is num.String().
	numSet bool
	num    number
	time   time.Time
}

// Reset forgets every previous value, as when the item's steps change.
func (st *State) Reset() { st.steps = st.steps[:0] }

func (st *State) at(i int) *stepState {
	for len(st.steps) <= i {
		st.steps = append(st.steps, stepState{})
	}
	return &st.steps[i]
}

// errDiscard is a step's own "drop this value" result, not a failure.
var errDiscard = errors.New("discarded")

// Run applies chain to in, in order, each step's output being the next
// one's input, with the error handlers: a failing step with the default
// handler stops the chain with a *StepError carrying the step's message;
// "discard value" returns a discarded Output; "set value" replaces the
// step's result with the handler's text and goes on; "set error" stops
// with a *StepError carrying the handler's text. A nil st runs without
// memory (the change steps discard every value).
//
// The output is still text (or, with in.KeepNumber, a number:
// Output.Number): converting it to the item's value type is Convert's
// job, done once after the chain.
func Run(chain []Step, in Input, st *State) (Output, error) {
	return run(chain, in, st, nil)
}

// Resume goes on with a chain that Run suspended before its JavaScript
// step i (Input.Defer), given what the step made of its input: text, or
// the error of Step.RunScript, to which the step's error handler applies
// as in Run. The steps after it then run as in Run, on the same State;
// in is the Input given to Run (its Text and Err are not used again). A
// later JavaScript step suspends the chain again.
func Resume(chain []Step, i int, text string, err error, in Input, st *State) (Output, error) {
	if i < 0 || i >= len(chain) || chain[i].Type != StepJavaScript {
		return Output{}, errors.New("BUG: Resume after a step that is not JavaScript")
	}
	if st == nil {
		st = &State{}
	}
	if err != nil {
		out, stop, herr := handle(chain[i], i, err.Error())
		if stop {
			return out, herr
		}
		text = out.Text
	}
	return runFrom(chain, in, st, nil, i+1, text)
}

// run is Run, also recording each step's part in *trace when trace is
// not nil (Trace). The hot path passes nil and pays one comparison per
// step for it.
func run(chain []Step, in Input, st *State, trace *[]StepResult) (Output, error) {
	if st == nil {
		st = &State{}
	}
	text := in.Text
	start := 0
	if in.Err != "" {
		if len(chain) == 0 || chain[0].Type != StepCheckUnsupported {
			return Output{}, &StepError{Index: -1, Message: in.Err}
		}
		out, stop, err := handle(chain[0], 0, in.Err)
		if trace != nil {
			*trace = append(*trace, failed(chain[0], in.Err, out, stop))
		}
		if stop {
			return out, err
		}
		text, start = out.Text, 1
	}
	return runFrom(chain, in, st, trace, start, text)
}

// runFrom runs chain from step start on text.
//
// The numeric steps (custom multiplier, simple change, change per
// second) hand a number to the step after them rather than its text,
// when that step takes numbers too (another of them, or a discard
// step): the text is made only for a step that needs it, for a trace,
// and at the end unless in.KeepNumber lets the caller take the number
// (Output.Number). A number is used only where it is exactly what
// parsing its text would give (cur.as), so every result is the one the
// texts would make.
func runFrom(chain []Step, in Input, st *State, trace *[]StepResult, start int, text string) (Output, error) {
	var cur value
	cur.text, cur.hasText = text, true
	for i := start; i < len(chain); i++ {
		s := &chain[i]
		if in.Defer && s.Type == StepJavaScript {
			return Output{Text: cur.String(), Suspended: true, Step: i}, nil
		}
		var err error
		switch {
		case s.Type == StepMultiplier:
			var r number
			if r, err = multiply(&cur, s.Params[0], s.mul, in.Type); err == nil {
				cur = value{num: r, isNum: true}
			}
		case s.Type == StepDeltaValue || s.Type == StepDeltaSpeed:
			var r number
			if r, err = deltaOf(s.Type, &cur, in, st.at(i)); err == nil {
				cur = value{num: r, isNum: true}
			}
		case (s.Type == StepThrottleValue || s.Type == StepThrottleTimed) && cur.isNum:
			err = throttleNum(s, cur.num, in.Time, st.at(i))
		default:
			var res string
			if res, err = s.apply(i, cur.String(), in, st); err == nil {
				cur = value{text: res, hasText: true}
			}
		}
		switch {
		case err == nil:
			if trace != nil {
				*trace = append(*trace, StepResult{Text: cur.String(), Valued: true})
			}
		case errors.Is(err, errDiscard):
			if trace != nil {
				*trace = append(*trace, StepResult{})
			}
			return Output{Discarded: true}, nil
		default:
			out, stop, herr := handle(*s, i, err.Error())
			if trace != nil {
				*trace = append(*trace, failed(*s, err.Error(), out, stop))
			}
			if stop {
				return out, herr
			}
			cur = value{text: out.Text, hasText: true}
		}
	}
	if cur.isNum && in.KeepNumber {
		return Output{num: cur.num, isNum: true}, nil
	}
	return Output{Text: cur.String()}, nil
}

// value is a step's result inside runFrom: text, or a number (isNum)
// whose text is made when asked for (String) and then kept.
type value struct {
	text    string
	hasText bool
	num     number
	isNum   bool
}

// String returns v as text, made once from its number.
func (v *value) String() string {
	if !v.hasText {
		v.text, v.hasText = v.num.String(), true
	}
	return v.text
}

// toNumber is v as a number for the numeric steps of an item of type
// vt: its number when numeric, else its text read by toNumber.
func (v *value) toNumber(vt history.ValueType) (number, bool) {
	if v.numeric(vt) {
		return v.num, true
	}
	return toNumber(v.String(), vt)
}

// numeric reports whether v is a number that toNumber would read back
// from its text unchanged for an item of type vt: an unsigned number
// for an unsigned item, a float for any other (its shortest text reads
// back to the same bits). The rare rest (a float result of an unsigned
// item) goes through the text.
func (v *value) numeric(vt history.ValueType) bool {
	return v.isNum && v.num.isUint == (vt == history.Uint)
}

// handle applies s's error handler to its failure msg: stop says the
// chain ends with out and err.
func handle(s Step, i int, msg string) (out Output, stop bool, err error) {
	switch s.ErrorHandler {
	case HandlerDiscard:
		return Output{Discarded: true}, true, nil
	case HandlerSetValue:
		return Output{Text: s.ErrorParams}, false, nil
	case HandlerSetError:
		return Output{}, true, &StepError{Index: i, Type: s.Type, Message: s.ErrorParams}
	}
	return Output{}, true, &StepError{Index: i, Type: s.Type, Message: msg}
}

// apply runs one step on text.
func (s *Step) apply(i int, text string, in Input, st *State) (string, error) {
	switch s.Type {
	case StepCheckUnsupported:
		return text, nil // the item is supported: the step lets the value through
	case StepMultiplier:
		return multiplier(text, s.Params[0], s.mul, in.Type)
	case StepRTrim, StepLTrim, StepTrim:
		return trim(s.Type, text, s.Params[0]), nil
	case StepRegsub:
		return regsub(s, text)
	case StepBool2Dec, StepOct2Dec, StepHex2Dec:
		return toDecimal(s.Type, text)
	case StepDeltaValue, StepDeltaSpeed:
		return delta(s.Type, text, in, st.at(i))
	case StepValidateRange:
		return validateRange(text, s.Params, in.Type)
	case StepValidateRegex, StepValidateNotRegex:
		return validateRegex(s, text)
	case StepErrorFieldRegex:
		return errorFromRegex(s, text)
	case StepThrottleValue, StepThrottleTimed:
		return throttle(s, text, in.Time, st.at(i))
	case StepCSVToJSON:
		return csvToJSON(text, s.Params)
	case StepXMLToJSON:
		return xmlToJSON(text)
	case StepXPath:
		return xpathStep(s, text)
	case StepJavaScript:
		return s.RunScript(context.Background(), in.JS, text)
	case StepErrorFieldXML:
		return errorFromXML(s, text)
	case StepPrometheusPattern:
		return promPatternStep(s.prom, s.Params, text)
	case StepPrometheusToJSON:
		return promToJSON(s.prom, text)
	case StepJSONPath:
		var r string
		var err error
		if d := in.Cache.jsonDoc(text); d != nil {
			r, err = s.jp.QueryDoc(d)
		} else {
			r, err = s.jp.Query(text)
		}
		if err != nil {
			return "", stepErr(`cannot extract value from json by path "` + s.Params[0] + `": ` + err.Error())
		}
		return r, nil
	case StepErrorFieldJSON:
		// Not JSON, or no such member, is no error: the value goes on.
		find := s.jp.Find
		if d := in.Cache.jsonDoc(text); d != nil {
			find = func(string) (string, bool) { return s.jp.FindDoc(d) }
		}
		if r, ok := find(text); ok {
			if msg := strings.TrimSpace(r); msg != "" {
				return "", stepErr(msg)
			}
		}
		return text, nil
	case StepStrReplace:
		return strings.ReplaceAll(text, unescapeReplace(s.Params[0]), unescapeReplace(s.Params[1])), nil
	}
	return "", errors.New("preprocessing step type " + strconv.Itoa(int(s.Type)) + " is not supported by this server yet")
}
