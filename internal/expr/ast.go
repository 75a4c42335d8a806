package expr

import (
	"strings"
)

// Node is one node of a parsed expression.
type Node interface {
	// Pos is the byte offset in the source where the node starts.
	Pos() int
	appendTo(b *strings.Builder)
}

// Number is a numeric constant; Val has the suffix applied (5m = 300,
// 1K = 1024).
type Number struct {
	P   int
	Raw string
	Val float64
}

// String is a string constant; Val is unescaped.
type String struct {
	P   int
	Val string
}

// Macro is a macro operand: a user macro {$NAME[:context]}, a low-level
// discovery macro {#NAME} (only meaningful in prototypes, before
// discovery replaces it), a built-in macro such as {TRIGGER.VALUE}, or a
// function macro {{#NAME}.regsub(...)}.
type Macro struct {
	P   int
	Raw string
}

// Unary is "-X" or "not X".
type Unary struct {
	P  int
	Op string
	X  Node
}

// Binary is "L op R".
type Binary struct {
	P    int
	Op   string
	L, R Node
}

// Paren is "(X)": kept so that String gives back the grouping as
// written.
type Paren struct {
	P int
	X Node
}

// Empty is an omitted parameter of a history function, as in
// find(/h/k,,"like","x").
type Empty struct {
	P int
}

// Call is a function call. For a history function Query is set and Args
// are the parameters after it; Args[0], when present, is the period
// (a *Period or an *Empty) for the functions that take one.
type Call struct {
	P     int
	Name  string
	Query *Query
	Args  []Node
	fn    *funcSpec
}

// Query is the item query of a history function: /host/key, with an
// optional filter ?[...] (aggregate calculated-item functions only).
type Query struct {
	P      int
	Host   string // "" in //key (the host of the evaluated item), "*", a name or a macro
	Key    string // the item key with its parameters, as written
	Filter string // the text between "?[" and "]", or ""
}

// Period is the raw period parameter of a history function: "5m", "#3",
// "1h:now-1d", "{$PERIOD}". It is checked at parse time when it holds no
// macro, and after macro expansion otherwise.
type Period struct {
	P   int
	Raw string
	// spec is Raw checked at parse time; nil when Raw holds a macro.
	spec *periodSpec
}

func (n *Number) Pos() int { return n.P }
func (n *String) Pos() int { return n.P }
func (n *Macro) Pos() int  { return n.P }
func (n *Unary) Pos() int  { return n.P }
func (n *Binary) Pos() int { return n.P }
func (n *Paren) Pos() int  { return n.P }
func (n *Empty) Pos() int  { return n.P }
func (n *Call) Pos() int   { return n.P }
func (n *Query) Pos() int  { return n.P }
func (n *Period) Pos() int { return n.P }

func (n *Number) appendTo(b *strings.Builder) { b.WriteString(n.Raw) }
func (n *String) appendTo(b *strings.Builder) { b.WriteString(quote(n.Val)) }
func (n *Macro) appendTo(b *strings.Builder)  { b.WriteString(n.Raw) }
func (n *Empty) appendTo(*strings.Builder)    {}
func (n *Period) appendTo(b *strings.Builder) { b.WriteString(n.Raw) }

func (n *Unary) appendTo(b *strings.Builder) {
	b.WriteString(n.Op)
	if n.Op == "not" {
		b.WriteByte(' ')
	}
	n.X.appendTo(b)
}

func (n *Binary) appendTo(b *strings.Builder) {
	n.L.appendTo(b)
	if n.Op == "and" || n.Op == "or" {
		b.WriteByte(' ')
		b.WriteString(n.Op)
		b.WriteByte(' ')
	} else {
		b.WriteString(n.Op)
		// "1- -1" must not print as "1--1"... which would still
		// parse the same, but a space keeps it readable.
		if u, ok := n.R.(*Unary); ok && u.Op == "-" {
			b.WriteByte(' ')
		}
	}
	n.R.appendTo(b)
}

func (n *Paren) appendTo(b *strings.Builder) {
	b.WriteByte('(')
	n.X.appendTo(b)
	b.WriteByte(')')
}

func (n *Call) appendTo(b *strings.Builder) {
	b.WriteString(n.Name)
	b.WriteByte('(')
	if n.Query != nil {
		n.Query.appendTo(b)
	}
	for i, a := range n.Args {
		if i > 0 || n.Query != nil {
			b.WriteByte(',')
		}
		a.appendTo(b)
	}
	b.WriteByte(')')
}

func (n *Query) appendTo(b *strings.Builder) {
	b.WriteByte('/')
	b.WriteString(n.Host)
	b.WriteByte('/')
	b.WriteString(n.Key)
	if n.Filter != "" {
		b.WriteString("?[")
		b.WriteString(n.Filter)
		b.WriteByte(']')
	}
}

// Expr is a parsed expression. It is immutable after Parse and safe for
// concurrent evaluation.
type Expr struct {
	src       string
	root      Node
	refs      []ItemRef
	timeBased bool
	aggregate bool
	// last is set for last(/host/key) OP N (LastComparison).
	last *LastComparison
}

// ItemRef names an item an expression reads: the host as written ("" for
// //key, meaning the host of the calculated item or trigger) and the key
// with its parameters as written.
type ItemRef struct {
	Host string
	Key  string
}

// Root is the expression's syntax tree.
func (e *Expr) Root() Node { return e.root }

// Source is the text the expression was parsed from.
func (e *Expr) Source() string { return e.src }

// String gives the expression back in a canonical spelling: operators
// without surrounding spaces except and/or/not, parentheses as written.
// Parse(e.String()) gives an equal expression.
func (e *Expr) String() string {
	var b strings.Builder
	e.root.appendTo(&b)
	return b.String()
}

// ItemRefs lists the distinct items the expression reads, in order of
// first appearance. The trigger model indexes triggers by them.
func (e *Expr) ItemRefs() []ItemRef {
	return append([]ItemRef(nil), e.refs...)
}

// TimeBased reports whether the expression's value can change with time
// alone, without a new value of its items: it calls nodata(), a
// date/time function (date, dayofmonth, dayofweek, now, time) or a trend
// function (whose whole-hour periods move with the clock, while a new
// value does not change them). Zabbix re-evaluates such triggers on a
// timer as well as on new values.
func (e *Expr) TimeBased() bool { return e.timeBased }

// Aggregates reports whether the expression uses an aggregate function
// over many items (*_foreach, item_count, bucket_*). Zabbix allows them
// in calculated items only: the trigger model refuses such expressions.
func (e *Expr) Aggregates() bool { return e.aggregate }

// timeFuncs are the functions that make an expression TimeBased.
var timeFuncs = map[string]bool{
	"nodata": true, "date": true, "dayofmonth": true, "dayofweek": true, "now": true, "time": true,
	"trendavg": true, "trendcount": true, "trendmax": true, "trendmin": true, "trendsum": true,
}

// walk calls fn for n and every node below it, parents first.
func walk(n Node, fn func(Node)) {
	fn(n)
	switch n := n.(type) {
	case *Unary:
		walk(n.X, fn)
	case *Binary:
		walk(n.L, fn)
		walk(n.R, fn)
	case *Paren:
		walk(n.X, fn)
	case *Call:
		if n.Query != nil {
			fn(n.Query)
		}
		for _, a := range n.Args {
			walk(a, fn)
		}
	}
}

// FuncUse is one call of a history function, as Zabbix 6.0 keeps it in
// its functions table (trigger.get's selectFunctions): the function's
// name, the item it reads and its parameters in Zabbix's stored form,
// "$" for the item query followed by the other parameters as written
// ("$,#3", "$,5m,,\"like\"").
type FuncUse struct {
	Name   string
	Item   ItemRef
	Params string
}

// Functions lists the history function calls of the expression in the
// order they are written, one per call (a function called twice on the
// same item is listed twice, as Zabbix keeps it).
func (e *Expr) Functions() []FuncUse {
	var out []FuncUse
	walk(e.root, func(n Node) {
		c, ok := n.(*Call)
		if !ok || c.Query == nil {
			return
		}
		var b strings.Builder
		b.WriteString("$")
		for _, a := range c.Args {
			b.WriteByte(',')
			a.appendTo(&b)
		}
		out = append(out, FuncUse{Name: c.Name, Item: ItemRef{Host: c.Query.Host, Key: c.Query.Key}, Params: b.String()})
	})
	return out
}
