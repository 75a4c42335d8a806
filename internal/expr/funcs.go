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
	if f == nil {
		if c.Query != nil && mathFuncs[c.Name] != nil {
			return fmt.Errorf("function %s() does not take an item query", c.Name)
		}
		if c.Query == nil && historyFuncs[c.Name] != nil {
			return fmt.Errorf("function %s() needs an item query (/host/key) as its first parameter", c.Name)
		}
		return fmt.Errorf("unknown function %s()", c.Name)
	}
	c.fn = f
	n := len(c.Args)
	if c.Query != nil && f.period == perRequired && n == 0 {
		return fmt.Errorf("%s() needs a period", c.Name)
	}
	if n < f.min || (f.max >= 0 && n > f.max) {
		return fmt.Errorf("wrong number of parameters for %s(): %s", c.Name, arity(f))
	}
	if c.Query != nil && !f.aggregate && (c.Query.Host == "*" || c.Query.Key == "*" || c.Query.Filter != "") {
		return fmt.Errorf("%s() reads one item: wildcards and filters are for aggregate functions", c.Name)
	}
	if c.Query != nil && f.period != perNone && n > 0 {
		switch a := c.Args[0].(type) {
		case *Empty:
			if f.period == perRequired {
				return fmt.Errorf("%s() needs a period", c.Name)
			}
		case *Period:
			if err := checkPeriodKind(c.Name, f, a.Raw); err != nil {
				return err
			}
		}
	}
	return nil
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
