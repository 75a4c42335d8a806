package expr

import (
	"fmt"
	"strings"
)

// periodRule says what a history function accepts as its period.
type periodRule uint8

const (
	perNone     periodRule = iota // no period parameter (change)
	perOptional                   // may be omitted (last, find, log*)
	perRequired                   // must be given (avg, count, ...)
)

// funcSpec describes one function: whether it reads history (its first
// parameter is an item query), its arity (parameters after the query),
// what period it takes, and how it is evaluated.
type funcSpec struct {
	history   bool
	aggregate bool // calculated-item aggregate over many items (*_foreach, bucket_*)
	period    periodRule
	counts    bool // #N accepted as period
	times     bool // a time length accepted as period
	min, max  int  // parameters after the query (history) or in total (others); max -1 = any
	eval      evalFunc
}

// evalFunc evaluates one call.
type evalFunc func(ev *evaluator, c *Call) Value

// lookup finds the function a call names: history functions by name
// when the call has a query, others otherwise. avg, min, max and sum are
// both (of a period of an item, or of their arguments).
func lookup(name string, history bool) *funcSpec {
	if history {
		return historyFuncs[name]
	}
	return mathFuncs[name]
}

// takesPeriod reports whether the first parameter after the query of a
// history function is a period, to be read raw.
func takesPeriod(name string) bool {
	f := historyFuncs[name]
	return f != nil && f.period != perNone
}

// checkCall validates a call against the function table at parse time:
// the function exists in this form, the number of parameters, and the
// kind of period given.
func checkCall(c *Call) error {
	f := lookup(c.Name, c.Query != nil)
	fn := `function "` + c.Name + `"`
	if f == nil {
		if c.Query != nil && mathFuncs[c.Name] != nil {
			return checkErrorf("incorrect usage of "+fn, "function %s() does not take an item query", c.Name)
		}
		if c.Query == nil && historyFuncs[c.Name] != nil {
			return checkErrorf("incorrect usage of "+fn, "function %s() needs an item query (/host/key) as its first parameter", c.Name)
		}
		return checkErrorf("unknown "+fn, "unknown function %s()", c.Name)
	}
	c.fn = f
	n := len(c.Args)
	if c.Query != nil && f.period == perRequired && n == 0 {
		return checkErrorf("mandatory parameter is missing in "+fn, "%s() needs a period", c.Name)
	}
	if n < f.min || (f.max >= 0 && n > f.max) {
		return checkErrorf("invalid number of parameters in "+fn, "wrong number of parameters for %s(): %s", c.Name, arity(f))
	}
	if c.Query != nil && !f.aggregate && (c.Query.Host == "*" || c.Query.Key == "*" || c.Query.Filter != "") {
		// A syntax error to Zabbix 6.0: no zabbix reason.
		return checkErrorf("", "%s() reads one item: wildcards and filters are for aggregate functions", c.Name)
	}
	if c.Query != nil && f.period != perNone && n > 0 {
		switch a := c.Args[0].(type) {
		case *Empty:
			if f.period == perRequired {
				return checkErrorf("invalid second parameter in "+fn, "%s() needs a period", c.Name)
			}
		case *Period:
			// A period that did not parse (#0) was reported by the parser.
			if a.spec == nil {
				break
			}
			if err := checkPeriodKind(c.Name, f, a.Raw); err != nil {
				return &checkError{zabbix: "invalid second parameter in " + fn, msg: err.Error()}
			}
		}
	}
	return nil
}

// checkError is a call checkCall refuses: msg is Peregrine's text,
// zabbix Zabbix 6.0's validator's reason ("" for what 6.0 finds a
// syntax error).
type checkError struct{ zabbix, msg string }

func (e *checkError) Error() string { return e.msg }

func checkErrorf(zabbix, format string, args ...any) error {
	return &checkError{zabbix: zabbix, msg: fmt.Sprintf(format, args...)}
}

// checkPeriodKind refuses #N where only time is allowed and the reverse,
// when the period holds no macro (else it is checked once expanded).
func checkPeriodKind(name string, f *funcSpec, raw string) error {
	if strings.Contains(raw, "{") {
		return nil
	}
	ps, err := parsePeriodSpec(raw)
	if err != nil {
		return err
	}
	if ps.count && !f.counts {
		return fmt.Errorf("%s() does not accept a number of values (#N) as period", name)
	}
	if !ps.count && !f.times {
		return fmt.Errorf("%s() accepts only a number of values (#N) as period", name)
	}
	return nil
}

func arity(f *funcSpec) string {
	switch {
	case f.max < 0:
		return fmt.Sprintf("at least %d", f.min)
	case f.min == f.max:
		return fmt.Sprintf("exactly %d", f.min)
	}
	return fmt.Sprintf("%d to %d", f.min, f.max)
}
