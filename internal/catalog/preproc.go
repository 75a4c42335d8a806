package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// PreprocStep is one preprocessing step of an item, in the Zabbix API's
// object form: Type is the step type (1..27 in Zabbix 6.0), Params the
// step's parameters joined with LF, ErrorHandler what a failure does (0
// default, 1 discard value, 2 set value, 3 set error) with
// ErrorHandlerParams its value or message. What the steps do is package
// preprocess's business; the catalog stores them and has them validated
// through Options.CheckPreprocessing.
type PreprocStep struct {
	Type               int    `json:"type"`
	Params             string `json:"params"`
	ErrorHandler       int    `json:"error_handler"`
	ErrorHandlerParams string `json:"error_handler_params"`
}

// PreprocSpec declares one step in the import document, in the form of
// Zabbix's template YAML: type by name (JSONPATH, MULTIPLIER, ...) or
// number, the parameters as a list, the error handler by name
// (ORIGINAL_ERROR, DISCARD_VALUE, CUSTOM_VALUE, CUSTOM_ERROR) or number.
type PreprocSpec struct {
	Type               string   `yaml:"type"`
	Parameters         []string `yaml:"parameters"`
	ErrorHandler       string   `yaml:"error_handler"`
	ErrorHandlerParams string   `yaml:"error_handler_params"`
}

// StepSpec is the PreprocSpec of a step given as the Zabbix API gives it
// (members as strings, parameters joined with LF), for API callers.
func StepSpec(typ, params, handler, handlerParams string) PreprocSpec {
	return PreprocSpec{Type: typ, Parameters: strings.Split(params, "\n"), ErrorHandler: handler, ErrorHandlerParams: handlerParams}
}

// MasterItemSpec names a dependent item's master by key, on the same host,
// as Zabbix's template YAML does (master_item: {key: ...}).
type MasterItemSpec struct {
	Key string `yaml:"key"`
}

// stepTypeNames are Zabbix's template YAML names of the step types,
// indexed by type number.
var stepTypeNames = [...]string{
	1: "MULTIPLIER", 2: "RTRIM", 3: "LTRIM", 4: "TRIM", 5: "REGEX",
	6: "BOOL_TO_DECIMAL", 7: "OCTAL_TO_DECIMAL", 8: "HEX_TO_DECIMAL",
	9: "SIMPLE_CHANGE", 10: "CHANGE_PER_SECOND", 11: "XMLPATH", 12: "JSONPATH",
	13: "IN_RANGE", 14: "MATCHES_REGEX", 15: "NOT_MATCHES_REGEX",
	16: "CHECK_JSON_ERROR", 17: "CHECK_XML_ERROR", 18: "CHECK_REGEX_ERROR",
	19: "DISCARD_UNCHANGED", 20: "DISCARD_UNCHANGED_HEARTBEAT", 21: "JAVASCRIPT",
	22: "PROMETHEUS_PATTERN", 23: "PROMETHEUS_TO_JSON", 24: "CSV_TO_JSON",
	25: "STR_REPLACE", 26: "CHECK_NOT_SUPPORTED", 27: "XML_TO_JSON",
}

// handlerNames are Zabbix's template YAML names of the error handlers.
var handlerNames = [...]string{"ORIGINAL_ERROR", "DISCARD_VALUE", "CUSTOM_VALUE", "CUSTOM_ERROR"}

// maxSteps bounds an item's chain; Zabbix has no documented limit, and
// the longest chain among its official templates has 6 steps.
const maxSteps = 64

// Dependent item limits, as Zabbix 6.0: at most 3 levels of dependent
// items below a master.
const maxDependentLevels = 3

// maxParamsLen bounds Item.Params (a formula or a script), as the Zabbix
// database's items.params column (text, 65535).
const maxParamsLen = 65535

// parseStepType reads a step type by YAML name or number.
func parseStepType(s string) (int, bool) {
	for i, n := range stepTypeNames {
		if n != "" && n == s {
			return i, true
		}
	}
	v, err := strconv.Atoi(s)
	return v, err == nil
}

func parseHandler(s string) (int, bool) {
	if s == "" {
		return 0, true
	}
	for i, n := range handlerNames {
		if n == s {
			return i, true
		}
	}
	v, err := strconv.Atoi(s)
	return v, err == nil
}

// normSteps turns the spec's steps into PreprocSteps, reporting syntax
// errors (unknown names) under p; what the steps mean is checked by
// checkSteps.
func normSteps(specs []PreprocSpec, p string, el *errList) []PreprocStep {
	if len(specs) == 0 {
		return nil
	}
	if len(specs) > maxSteps {
		el.addf(p, "%d steps is more than the limit of %d", len(specs), maxSteps)
		return nil
	}
	out := make([]PreprocStep, len(specs))
	for i, s := range specs {
		sp := p + "[" + strconv.Itoa(i) + "]"
		t, ok := parseStepType(s.Type)
		if !ok {
			el.addf(sp+".type", "unknown preprocessing step type %q: use a Zabbix name (JSONPATH, MULTIPLIER, ...) or number", s.Type)
		}
		h, ok := parseHandler(s.ErrorHandler)
		if !ok {
			el.addf(sp+".error_handler", "unknown error handler %q: use ORIGINAL_ERROR, DISCARD_VALUE, CUSTOM_VALUE, CUSTOM_ERROR or 0..3", s.ErrorHandler)
		}
		out[i] = PreprocStep{Type: t, Params: strings.Join(s.Parameters, "\n"), ErrorHandler: h, ErrorHandlerParams: s.ErrorHandlerParams}
	}
	return out
}

// specOfSteps is the inverse of normSteps.
func specOfSteps(steps []PreprocStep) []PreprocSpec {
	if len(steps) == 0 {
		return nil
	}
	out := make([]PreprocSpec, len(steps))
	for i, s := range steps {
		out[i] = PreprocSpec{Type: strconv.Itoa(s.Type), Parameters: strings.Split(s.Params, "\n"),
			ErrorHandler: strconv.Itoa(s.ErrorHandler), ErrorHandlerParams: s.ErrorHandlerParams}
	}
	return out
}

// StepCheckError is what Options.CheckPreprocessing returns to name the
// offending step: Step is its index from 0, or -1 when the chain as a
// whole breaks a rule (two "discard unchanged" steps, say).
type StepCheckError struct {
	Step int
	Err  error
}

func (e *StepCheckError) Error() string { return e.Err.Error() }

func (e *StepCheckError) Unwrap() error { return e.Err }

// checks are the validation hooks of Options, carried into Apply and
// Edit; the zero value accepts everything.
type checks struct {
	steps   func([]PreprocStep) error
	formula func(string) error
}

// checkItemExtras validates the fields of issue 12 on a normalised item:
// the steps through the hook, the formula or script, and that only
// dependent items have a master (the master itself is resolved and
// checked by the caller, which knows the host's other items).
func (ck *checks) checkItemExtras(it *Item, hasMaster bool, ip string, el *errList) {
	if len(it.Preprocessing) > 0 && ck != nil && ck.steps != nil {
		if err := ck.steps(it.Preprocessing); err != nil {
			var se *StepCheckError
			if errors.As(err, &se) && se.Step >= 0 {
				el.add(ip+".preprocessing["+strconv.Itoa(se.Step)+"]", se.Err)
			} else {
				el.add(ip+".preprocessing", err)
			}
		}
	}
	switch it.Type {
	case Dependent:
		if !hasMaster {
			el.addf(ip+".master_item", "a dependent item needs a master item")
		}
	default:
		if hasMaster {
			el.addf(ip+".master_item", "only dependent items have a master item, not %s items", it.Type)
		}
	}
	switch it.Type {
	case Calculated, Script:
		// A script of white space only is taken, as 6.0 takes it
		// (recorded from 6.0.14); its checks fail ("undefined return
		// value").
		if strings.TrimSpace(it.Ext().Params) == "" && (it.Type == Calculated || it.Ext().Params == "") {
			what := "formula"
			if it.Type == Script {
				what = "script"
			}
			el.addf(ip+".params", "a %s item needs its %s in params", it.Type, what)
		} else if len(it.Ext().Params) > maxParamsLen {
			el.addf(ip+".params", "longer than %d bytes", maxParamsLen)
		} else if it.Type == Calculated && ck != nil && ck.formula != nil {
			if err := ck.formula(it.Ext().Params); err != nil {
				el.add(ip+".params", err)
			}
		}
	case SSHAgent, TelnetAgent, ODBC:
		// The command to run, or the SQL query; 6.0 takes an empty one
		// (recorded from 6.0.14): a command that runs nothing and brings
		// an empty value, a query whose checks fail ("SQL query cannot be
		// empty.").
		if len(it.Ext().Params) > maxParamsLen {
			el.addf(ip+".params", "longer than %d bytes", maxParamsLen)
		}
	default:
		if it.Ext().Params != "" {
			el.addf(ip+".params", "only calculated, script, SSH, Telnet and odbc items have params, not %s items", it.Type)
		}
	}
}

// sameSteps reports whether two chains are equal.
func sameSteps(a, b []PreprocStep) bool { return slices.Equal(a, b) }

// encodeSteps is the items.preprocessing column: a JSON array of step
// objects, "" for none.
func encodeSteps(steps []PreprocStep) string {
	if len(steps) == 0 {
		return ""
	}
	b, err := json.Marshal(steps)
	if err != nil {
		panic("BUG: cannot encode preprocessing steps: " + err.Error()) // plain structs always encode
	}
	return string(b)
}

func decodeSteps(s string) ([]PreprocStep, error) {
	if s == "" {
		return nil, nil
	}
	var steps []PreprocStep
	if err := json.Unmarshal([]byte(s), &steps); err != nil {
		return nil, err
	}
	if len(steps) == 0 {
		return nil, nil
	}
	return steps, nil
}

// stepsInterner shares identical chains between items: templates give
// hundreds of items the same steps, and consumers cache what they
// compile from a chain by its slice's address.
type stepsInterner map[string][]PreprocStep

func (in *stepsInterner) get(steps []PreprocStep) []PreprocStep {
	if len(steps) == 0 {
		return nil
	}
	k := encodeSteps(steps)
	if *in == nil {
		*in = stepsInterner{}
	}
	if v, ok := (*in)[k]; ok {
		return v
	}
	c := slices.Clone(steps)
	for i := range c {
		c[i].Params, c[i].ErrorHandlerParams = strings.Clone(c[i].Params), strings.Clone(c[i].ErrorHandlerParams)
	}
	(*in)[k] = c
	return c
}

// dependentLinks checks the master of item id: it must be another item
// of the same host, and the tree it joins must stay acyclic and at most
// maxDependentLevels deep. masterOf returns an item's master ID (0 for
// none) and host, ok false for unknown items; below is the number of
// levels of dependents already under id (0 for a new item).
func dependentLinks(id, master, host uint64, below int, masterOf func(uint64) (uint64, uint64, bool)) error {
	// Up from the master: a cycle if id is met, then count the levels.
	// The walk is bounded: the links it follows were checked when made.
	levels := 1 + below
	for m, steps := master, 0; m != 0; steps++ {
		if m == id {
			return errors.New("the master item chain would be a cycle")
		}
		mm, mh, ok := masterOf(m)
		if !ok {
			return fmt.Errorf("master item %d does not exist", m)
		}
		if mh != host {
			return fmt.Errorf("master item %d is on another host", m)
		}
		if mm != 0 {
			levels++
		}
		if steps > 2*maxDependentLevels {
			break // only a damaged tree is this deep; the level count refuses it
		}
		m = mm
	}
	if levels > maxDependentLevels {
		return fmt.Errorf("dependent items may be at most %d levels below their master", maxDependentLevels)
	}
	return nil
}
