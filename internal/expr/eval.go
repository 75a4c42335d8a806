package expr

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// HistoryQuery selects values of one item: the Count newest values with
// a clock at or before Till when Count > 0, else the values with a clock
// in (From, Till] (unix seconds, as Zabbix's periods: "5m" at 12:00:00
// covers 11:55:01 to 12:00:00). When Before is not 0 (unix ns, in second
// Till), values after it are left out too: a window that ends at the
// evaluation's time (Options.Now) sees the values up to that nanosecond,
// so the values of one second are evaluated one by one, as Zabbix
// evaluates every value.
type HistoryQuery struct {
	Count  int
	From   int64
	Till   int64
	Before int64
}

// Source is where an evaluation reads item data. The caller implements
// it over whatever it has: the shard's per-item state, a value cache, or
// the history store for long periods.
//
// Item references are passed as written in the expression (ItemRef): the
// implementation maps "" (//key) to the host of the trigger or
// calculated item and resolves host macros such as {HOST.HOST}.
type Source interface {
	// History returns the selected values of item, newest first. An
	// unknown or unsupported item is an error, whose text becomes the
	// unknown value's reason. No values is not an error. The evaluator
	// is done with the returned slice before its next History call on
	// the same Source, so an implementation may reuse its memory.
	History(ctx context.Context, item ItemRef, q HistoryQuery) ([]history.Sample, error)
	// Trends returns item's hourly trends for the hours starting in
	// [from, till), oldest first.
	Trends(ctx context.Context, item ItemRef, from, till int64) ([]history.Trend, error)
}

// Macros resolves user macros for the hosts an expression is evaluated
// for; the implementation applies Zabbix's order (host, linked
// templates by depth, global). MacroLevels is one.
type Macros interface {
	// UserMacro returns the value of {$name} or, with a non-empty
	// context, of {$name:context}, and whether it is defined.
	UserMacro(name, context string) (string, bool)
}

// Options are the inputs of one evaluation.
type Options struct {
	// Now is the evaluation time. Required.
	Now time.Time
	// Location is the server's time zone: the date and time functions
	// and the "/d" style time shifts use it. Default UTC.
	Location *time.Location
	// Source supplies item data; history functions are unknown without it.
	Source Source
	// Macros resolves user macros; without it they are unknown.
	Macros Macros
	// FuncMacros, if set, resolves the user macros in the parameters of
	// a history function of one item (/host/key): Zabbix expands those
	// in the scope of that item's host, and Macros (for a trigger over
	// several hosts, all of its hosts) serves the rest of the
	// expression. A nil result, or a nil FuncMacros, leaves Macros.
	FuncMacros func(item ItemRef) Macros
	// Builtin resolves built-in macros such as {TRIGGER.VALUE}; nil
	// leaves them unknown.
	Builtin func(name string) (string, bool)
	// Started is when data collection started (the server's start). A
	// nodata() without "strict" answers 0 while less than its period has
	// passed since, because values may simply not have arrived yet.
	Started time.Time
	// Rand gives rand()'s values; default math/rand/v2. Tests fix it.
	Rand func() int64
}

// Eval evaluates the expression. The result is a number, a string or an
// unknown value with its reason; evaluation itself never fails.
func (e *Expr) Eval(ctx context.Context, opt Options) Value {
	if opt.Location == nil {
		opt.Location = time.UTC
	}
	// The evaluator escapes to the heap (function values take it), so
	// evaluators are pooled: a trigger storm evaluates 100k expressions
	// a second and each would otherwise allocate one.
	ev := evaluatorPool.Get().(*evaluator)
	ev.ctx, ev.opt = ctx, opt
	v := ev.eval(e.root)
	*ev = evaluator{}
	evaluatorPool.Put(ev)
	return v
}

var evaluatorPool = sync.Pool{New: func() any { return new(evaluator) }}

// evaluator holds one evaluation's inputs; it lives for one Eval call.
type evaluator struct {
	ctx context.Context
	opt Options
}

func (ev *evaluator) eval(n Node) Value {
	switch n := n.(type) {
	case *Number:
		return NumberValue(n.Val)
	case *String:
		return StringValue(ev.expandString(n.Val))
	case *Macro:
		return ev.macro(n.Raw)
	case *Paren:
		return ev.eval(n.X)
	case *Unary:
		return ev.unary(n)
	case *Binary:
		return ev.binary(n)
	case *Call:
		if n.fn == nil || n.fn.eval == nil {
			return ErrorValue(fmt.Sprintf("function %s() cannot be evaluated", n.Name))
		}
		if ev.opt.FuncMacros != nil && n.Query != nil && n.Query.Host != "*" && n.Query.Filter == "" {
			return ev.callWithItemMacros(n)
		}
		return n.fn.eval(ev, n)
	case *Empty:
		return ErrorValue("missing parameter")
	}
	return ErrorValue(fmt.Sprintf("BUG: cannot evaluate %T", n))
}

// callWithItemMacros evaluates a history function of one item with the
// user macros of that item's host (Options.FuncMacros).
func (ev *evaluator) callWithItemMacros(n *Call) Value {
	m := ev.opt.FuncMacros(ItemRef{Host: n.Query.Host, Key: n.Query.Key})
	if m == nil {
		return n.fn.eval(ev, n)
	}
	outer := ev.opt.Macros
	ev.opt.Macros = m
	v := n.fn.eval(ev, n)
	ev.opt.Macros = outer
	return v
}

func (ev *evaluator) unary(n *Unary) Value {
	x := ev.eval(n.X)
	if x.IsError() {
		return x
	}
	f, ok := x.number()
	if !ok {
		return ErrorValue(fmt.Sprintf("cannot apply %q to the non-numeric value %q", n.Op, x.Str))
	}
	if n.Op == "-" {
		return NumberValue(-f)
	}
	return boolValue(f == 0)
}

func boolValue(b bool) Value {
	if b {
		return NumberValue(1)
	}
	return NumberValue(0)
}

// binary applies Zabbix's rules: both sides are evaluated; "and" is 0 if
// either side is 0 even when the other is unknown, "or" is 1 if either
// side is non-zero likewise; any other operator with an unknown side is
// unknown. All comparisons treat numbers within epsilon as equal (so
// 0.1+0.2>0.3 is 0, as in Zabbix). = and <> compare numerically when both sides are numbers (or
// numeric strings) with Zabbix's epsilon, else as strings; the other
// operators need numbers.
func (ev *evaluator) binary(n *Binary) Value {
	return combine(n.Op, ev.eval(n.L), ev.eval(n.R))
}

// combine applies the binary operator op to its evaluated sides (binary).
func combine(op string, l, r Value) Value {
	switch op {
	case "and", "or":
		lf, lok := l.number()
		rf, rok := r.number()
		if op == "and" {
			if (lok && lf == 0) || (rok && rf == 0) {
				return NumberValue(0)
			}
		} else if (lok && lf != 0) || (rok && rf != 0) {
			return NumberValue(1)
		}
		if err := firstError(op, l, lok, r, rok); err != nil {
			return *err
		}
		return boolValue(op == "and")
	}
	if l.IsError() {
		return l
	}
	if r.IsError() {
		return r
	}
	lf, lok := l.number()
	rf, rok := r.number()
	switch op {
	case "=", "<>":
		eq := false
		if lok && rok {
			eq = numEqual(lf, rf)
		} else {
			eq = l.text() == r.text()
		}
		return boolValue(eq == (op == "="))
	}
	if !lok || !rok {
		bad := l
		if lok {
			bad = r
		}
		return ErrorValue(fmt.Sprintf("cannot apply %q to the non-numeric value %q", op, bad.text()))
	}
	r2 := arith(op, lf, rf)
	if r2.Kind == KindNumber && (math.IsInf(r2.Num, 0) || math.IsNaN(r2.Num)) {
		return ErrorValue(fmt.Sprintf("result of %q is not a finite number", op))
	}
	return r2
}

// arith applies a numeric binary operator.
func arith(op string, lf, rf float64) Value {
	switch op {
	case "<":
		return boolValue(lf < rf && !numEqual(lf, rf))
	case "<=":
		return boolValue(lf <= rf || numEqual(lf, rf))
	case ">":
		return boolValue(lf > rf && !numEqual(lf, rf))
	case ">=":
		return boolValue(lf >= rf || numEqual(lf, rf))
	case "+":
		return NumberValue(lf + rf)
	case "-":
		return NumberValue(lf - rf)
	case "*":
		return NumberValue(lf * rf)
	case "/":
		if rf == 0 {
			return ErrorValue("division by zero")
		}
		return NumberValue(lf / rf)
	}
	return ErrorValue("BUG: unknown operator " + op)
}

// firstError explains why an and/or could not be decided.
func firstError(op string, l Value, lok bool, r Value, rok bool) *Value {
	for _, v := range []struct {
		v  Value
		ok bool
	}{{l, lok}, {r, rok}} {
		if v.v.IsError() {
			return &v.v
		}
		if !v.ok {
			e := ErrorValue(fmt.Sprintf("cannot apply %q to the non-numeric value %q", op, v.v.Str))
			return &e
		}
	}
	return nil
}

// macro resolves a macro operand.
func (ev *evaluator) macro(raw string) Value {
	switch {
	case strings.HasPrefix(raw, "{$"):
		name, context := splitUserMacro(raw)
		if ev.opt.Macros != nil {
			if v, ok := ev.opt.Macros.UserMacro(name, context); ok {
				return StringValue(v)
			}
		}
		return ErrorValue("undefined user macro " + raw)
	case strings.HasPrefix(raw, "{#") || strings.HasPrefix(raw, "{{"):
		return ErrorValue("low-level discovery macro " + raw + " was not replaced")
	}
	if ev.opt.Builtin != nil {
		if v, ok := ev.opt.Builtin(raw[1 : len(raw)-1]); ok {
			return StringValue(v)
		}
	}
	return ErrorValue("unresolved macro " + raw)
}

// splitUserMacro splits {$NAME:context} into NAME and its context, the
// quotes of a quoted context removed.
func splitUserMacro(raw string) (name, context string) {
	body := raw[2 : len(raw)-1]
	name, context, _ = strings.Cut(body, ":")
	context = strings.TrimSpace(context)
	if len(context) >= 2 && context[0] == '"' && context[len(context)-1] == '"' {
		context = unquote(context)
	}
	return name, context
}

// expandString replaces user macros inside a string constant, as
// Zabbix does for count(/h/k,#1,"eq","{$STATUS}"). Undefined macros stay
// as written.
func (ev *evaluator) expandString(s string) string {
	if ev.opt.Macros == nil || !strings.Contains(s, "{$") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "{$")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end, err := scanMacro(s, i)
		if err != nil {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		name, context := splitUserMacro(s[i:end])
		if v, ok := ev.opt.Macros.UserMacro(name, context); ok {
			b.WriteString(v)
		} else {
			b.WriteString(s[i:end])
		}
		s = s[end:]
	}
}

func (ev *evaluator) rand() int64 {
	if ev.opt.Rand != nil {
		return ev.opt.Rand()
	}
	return rand.Int64N(1 << 31)
}

// LastComparison is an expression of the form last(/host/key) OP N:
// one call of last() without parameters compared with a number, Zabbix's
// commonest trigger (Expr.LastComparison). It is a small value, for a
// caller to keep beside its other data of the expression.
type LastComparison struct {
	// Ref is the item last() reads.
	Ref ItemRef
	op  string
	num float64
}

// lastComparison returns root as a LastComparison when it has that
// form, else nil.
func lastComparison(root Node) *LastComparison {
	b, ok := root.(*Binary)
	if !ok {
		return nil
	}
	// The operator as a constant, not the expression's own bytes: an
	// evaluation then reads no memory of the parsed expression.
	var op string
	switch b.Op {
	case "<":
		op = "<"
	case "<=":
		op = "<="
	case ">":
		op = ">"
	case ">=":
		op = ">="
	case "=":
		op = "="
	case "<>":
		op = "<>"
	default:
		return nil
	}
	c, ok := b.L.(*Call)
	n, isNum := b.R.(*Number)
	if !ok || !isNum || c.Name != "last" || c.fn == nil || c.Query == nil || c.Query.Host == "*" || c.Query.Filter != "" || len(c.Args) != 0 {
		return nil
	}
	return &LastComparison{Ref: ItemRef{Host: c.Query.Host, Key: c.Query.Key}, op: op, num: n.Val}
}

// LastComparison reports whether e has the form last(/host/key) OP N (a
// comparison with a number, last() without parameters), and returns it.
func (e *Expr) LastComparison() (LastComparison, bool) {
	if e.last == nil {
		return LastComparison{}, false
	}
	return *e.last, true
}

// Eval is Expr.Eval of the expression, given the value that last()
// reads as of the evaluation's time, v: the same result, without a
// Source, a period or a read (the evaluation of a trigger at the value
// that queued it). The zero LastComparison is unknown.
func (l *LastComparison) Eval(v *history.Sample) Value {
	if l.op == "" {
		return ErrorValue("BUG: not an expression of the form last(/host/key) OP N")
	}
	return combine(l.op, sampleValue(v), NumberValue(l.num))
}
