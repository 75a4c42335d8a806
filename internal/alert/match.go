package alert

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
)

// matchInput is what an action's conditions are checked against.
type matchInput struct {
	ev         *event.Event
	trig       *catalog.Trigger
	snap       *catalog.Snapshot
	suppressed bool
}

// Matches reports whether an action's filter accepts a problem event:
// Zabbix's rules for event source 0 (see the package documentation).
func (e *Engine) matches(a *catalog.Action, in *matchInput) bool {
	return FilterHolds(&a.Filter, func(c *catalog.Condition) bool { return condTrue(c, in) })
}

// FilterHolds reports whether an action's filter accepts what cond
// checks its conditions against, by the filter's evaluation: and/or
// (conditions of one type or-ed, types and-ed), and, or, or the custom
// formula. An empty filter accepts everything. Auto-registration
// (package autoreg) applies it with its own conditions.
func FilterHolds(f *catalog.Filter, cond func(*catalog.Condition) bool) bool {
	if len(f.Conditions) == 0 {
		return true
	}
	res := make([]bool, len(f.Conditions))
	for i := range f.Conditions {
		res[i] = cond(&f.Conditions[i])
	}
	switch f.EvalType {
	case 1: // and
		for _, r := range res {
			if !r {
				return false
			}
		}
		return true
	case 2: // or
		for _, r := range res {
			if r {
				return true
			}
		}
		return false
	case 3: // custom formula
		vals := map[string]bool{}
		for i, c := range f.Conditions {
			vals[c.FormulaID] = res[i]
		}
		v, err := evalFormula(f.Formula, vals)
		if err != nil {
			return false // refused when stored (CheckFormula); unreachable
		}
		return v
	}
	// 0, and/or: conditions of one type are or-ed, types are and-ed.
	byType := map[int]bool{}
	for i, c := range f.Conditions {
		byType[c.ConditionType] = byType[c.ConditionType] || res[i]
	}
	for _, v := range byType {
		if !v {
			return false
		}
	}
	return true
}

// opConditionsHold reports whether an escalation operation's conditions
// hold for the problem now (Zabbix's opconditions; only "event
// acknowledged" exists). They are checked when the step runs, so an
// acknowledge between steps stops a "not acknowledged" operation.
func opConditionsHold(op *catalog.Operation, prob *event.Event) bool {
	if len(op.Conditions) == 0 {
		return true
	}
	res := make([]bool, len(op.Conditions))
	for i, c := range op.Conditions {
		switch c.ConditionType {
		case catalog.OpCondAcknowledged:
			res[i] = prob.Acknowledged == (c.Value == "1")
		}
	}
	switch op.EvalType {
	case 1:
		return !slices.Contains(res, false)
	case 2:
		return slices.Contains(res, true)
	}
	byType := map[int]bool{}
	for i, c := range op.Conditions {
		byType[c.ConditionType] = byType[c.ConditionType] || res[i]
	}
	for _, v := range byType {
		if !v {
			return false
		}
	}
	return true
}

// CheckOpCondition validates an operation condition as Zabbix's API does.
func CheckOpCondition(c *catalog.OpCondition) error {
	switch {
	case c.ConditionType != catalog.OpCondAcknowledged:
		return textError("Incorrect action operation condition type.")
	case c.Operator != catalog.OpEqual:
		return textError("Incorrect action operation condition operator.")
	case c.Value != "0" && c.Value != "1":
		return textError(`Incorrect action operation condition value: "0" (not acknowledged) or "1" (acknowledged).`)
	}
	return nil
}

// like is Zabbix's "contains" (operators like and not like).
func like(s, sub string) bool { return strings.Contains(s, sub) }

func condTrue(c *catalog.Condition, in *matchInput) bool {
	eqID := func(ids []uint64) bool {
		want, err := strconv.ParseUint(c.Value, 10, 64)
		if err != nil {
			return c.Operator == catalog.OpNotEqual
		}
		has := false
		for _, id := range ids {
			if id == want {
				has = true
			}
		}
		if c.Operator == catalog.OpNotEqual {
			return !has
		}
		return has
	}
	str := func(s string) bool {
		switch c.Operator {
		case catalog.OpEqual:
			return s == c.Value
		case catalog.OpNotEqual:
			return s != c.Value
		case catalog.OpLike:
			return like(s, c.Value)
		case catalog.OpNotLike:
			return !like(s, c.Value)
		}
		return false
	}
	t := in.trig
	switch c.ConditionType {
	case catalog.CondHostGroup:
		var groups []uint64
		if t != nil && in.snap != nil {
			for _, hid := range t.HostIDs {
				if h := in.snap.HostByID(hid); h != nil {
					groups = append(groups, h.GroupIDs...)
				}
			}
		}
		return eqID(groups)
	case catalog.CondHost:
		if t == nil {
			return eqID(nil)
		}
		return eqID(t.HostIDs)
	case catalog.CondTrigger:
		return eqID([]uint64{in.ev.ObjectID})
	case catalog.CondEventName:
		return str(in.ev.Name)
	case catalog.CondSeverity:
		want, err := strconv.Atoi(c.Value)
		if err != nil {
			return false
		}
		s := int(in.ev.Severity)
		switch c.Operator {
		case catalog.OpEqual:
			return s == want
		case catalog.OpNotEqual:
			return s != want
		case catalog.OpGreaterEq:
			return s >= want
		case catalog.OpLessEq:
			return s <= want
		}
		return false
	case catalog.CondSuppressed:
		if c.Operator == catalog.OpYes {
			return in.suppressed
		}
		return !in.suppressed
	case catalog.CondTag:
		// Negated operators hold when no tag has the name (Zabbix's
		// "does not equal" / "does not contain" over the event's tags).
		if c.Operator == catalog.OpNotEqual || c.Operator == catalog.OpNotLike {
			for _, tg := range in.ev.Tags {
				if !str(tg.Tag) {
					return false
				}
			}
			return true
		}
		for _, tg := range in.ev.Tags {
			if str(tg.Tag) {
				return true
			}
		}
		return false
	case catalog.CondTagValue:
		neg := c.Operator == catalog.OpNotEqual || c.Operator == catalog.OpNotLike
		for _, tg := range in.ev.Tags {
			if tg.Tag != c.Value2 {
				continue
			}
			if neg && !str(tg.Value) {
				return false
			}
			if !neg && str(tg.Value) {
				return true
			}
		}
		return neg
	}
	return false
}

// CheckCondition validates a trigger action condition as Zabbix's API
// does; the error text is Zabbix's.
func CheckCondition(c *catalog.Condition) error {
	ops := map[int][]int{
		catalog.CondHostGroup:  {0, 1},
		catalog.CondHost:       {0, 1},
		catalog.CondTrigger:    {0, 1},
		catalog.CondEventName:  {2, 3},
		catalog.CondSeverity:   {0, 1, 5, 6},
		catalog.CondSuppressed: {10, 11},
		catalog.CondTag:        {0, 1, 2, 3},
		catalog.CondTagValue:   {0, 1, 2, 3},
	}
	allowed, ok := ops[c.ConditionType]
	if !ok {
		return textError("Incorrect filter condition type for action.")
	}
	okOp := false
	for _, o := range allowed {
		okOp = okOp || o == c.Operator
	}
	if !okOp {
		return textError("Incorrect filter condition operator for action.")
	}
	switch c.ConditionType {
	case catalog.CondHostGroup, catalog.CondHost, catalog.CondTrigger:
		if _, err := strconv.ParseUint(c.Value, 10, 64); err != nil {
			return textError("Incorrect filter condition value for action.")
		}
	case catalog.CondSeverity:
		if n, err := strconv.Atoi(c.Value); err != nil || n < 0 || n > 5 {
			return textError("Incorrect filter condition value for action.")
		}
	case catalog.CondEventName, catalog.CondTag:
		if c.Value == "" {
			return textError("Empty filter condition value for action.")
		}
	case catalog.CondTagValue:
		if c.Value2 == "" {
			return textError("Empty filter condition value for action.")
		}
	}
	return nil
}

// textError is an error whose text is Zabbix's, capital and full stop
// included, shown to API callers as is.
type textError string

func (e textError) Error() string { return string(e) }

// errFormula is a custom expression that does not parse.
var errFormula = errors.New("incorrect custom expression")

// CheckFormula validates a custom filter formula against the formula IDs
// of the conditions.
func CheckFormula(formula string, ids []string) error {
	vals := map[string]bool{}
	for _, id := range ids {
		vals[id] = false
	}
	_, err := evalFormula(formula, vals)
	return err
}

// evalFormula evaluates a custom condition formula ("A and (B or not
// C)"): identifiers of capital letters, and, or, not, parentheses.
func evalFormula(f string, vals map[string]bool) (bool, error) {
	p := formulaParser{s: f, vals: vals}
	v := p.or()
	p.space()
	if p.err == nil && p.i < len(p.s) {
		p.err = fmt.Errorf("%w: unexpected %q at position %d", errFormula, p.s[p.i:], p.i+1)
	}
	return v, p.err
}

type formulaParser struct {
	s    string
	i    int
	vals map[string]bool
	err  error
}

func (p *formulaParser) space() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *formulaParser) word(w string) bool {
	p.space()
	if strings.HasPrefix(p.s[p.i:], w) {
		end := p.i + len(w)
		if end == len(p.s) || p.s[end] == ' ' || p.s[end] == '(' {
			p.i = end
			return true
		}
	}
	return false
}

func (p *formulaParser) or() bool {
	v := p.and()
	for p.err == nil && p.word("or") {
		w := p.and()
		v = v || w
	}
	return v
}

func (p *formulaParser) and() bool {
	v := p.unary()
	for p.err == nil && p.word("and") {
		w := p.unary()
		v = v && w
	}
	return v
}

func (p *formulaParser) unary() bool {
	if p.err != nil {
		return false
	}
	if p.word("not") {
		return !p.unary()
	}
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '(' {
		p.i++
		v := p.or()
		p.space()
		if p.err == nil && (p.i >= len(p.s) || p.s[p.i] != ')') {
			p.err = fmt.Errorf("%w: missing \")\" at position %d", errFormula, p.i+1)
		}
		p.i++
		return v
	}
	start := p.i
	for p.i < len(p.s) && p.s[p.i] >= 'A' && p.s[p.i] <= 'Z' {
		p.i++
	}
	id := p.s[start:p.i]
	v, ok := p.vals[id]
	if id == "" || !ok {
		if p.err == nil {
			p.err = fmt.Errorf("%w: unknown condition %q at position %d", errFormula, id, start+1)
		}
		return false
	}
	return v
}

// inPeriod reports whether t is within a Zabbix time period list
// ("1-5,09:00-18:00;6-7,10:00-12:00"; days 1 Monday .. 7 Sunday).
func inPeriod(period string, t time.Time) bool {
	if period == "" {
		return true
	}
	for _, p := range strings.Split(period, ";") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		d1, d2, m1, m2, err := parsePeriod(p)
		if err != nil {
			continue
		}
		wd := int(t.Weekday())
		if wd == 0 {
			wd = 7
		}
		m := t.Hour()*60 + t.Minute()
		if wd >= d1 && wd <= d2 && m >= m1 && m < m2 {
			return true
		}
	}
	return false
}

// CheckPeriod validates a time period list as Zabbix's user media "period".
func CheckPeriod(period string) error {
	for _, p := range strings.Split(period, ";") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if _, _, _, _, err := parsePeriod(p); err != nil {
			return err
		}
	}
	return nil
}

func parsePeriod(p string) (d1, d2, m1, m2 int, err error) {
	days, hours, ok := strings.Cut(p, ",")
	if !ok {
		return 0, 0, 0, 0, fmt.Errorf("invalid time period %q: want d[-d],hh:mm-hh:mm", p)
	}
	a, b, ok := strings.Cut(days, "-")
	if !ok {
		b = a
	}
	d1, e1 := strconv.Atoi(a)
	d2, e2 := strconv.Atoi(b)
	if e1 != nil || e2 != nil || d1 < 1 || d2 > 7 || d1 > d2 {
		return 0, 0, 0, 0, fmt.Errorf("invalid time period %q: days must be 1-7", p)
	}
	h1, h2, ok := strings.Cut(hours, "-")
	m1, e1 = hhmm(h1)
	m2, e2 = hhmm(h2)
	if !ok || e1 != nil || e2 != nil || m1 >= m2 {
		return 0, 0, 0, 0, fmt.Errorf("invalid time period %q: hours must be hh:mm-hh:mm, start before end", p)
	}
	return d1, d2, m1, m2, nil
}

func hhmm(s string) (int, error) {
	h, m, ok := strings.Cut(s, ":")
	hi, e1 := strconv.Atoi(h)
	mi, e2 := strconv.Atoi(m)
	if !ok || e1 != nil || e2 != nil || hi < 0 || hi > 24 || mi < 0 || mi > 59 || hi == 24 && mi != 0 {
		return 0, errors.New("bad time")
	}
	return hi*60 + mi, nil
}
