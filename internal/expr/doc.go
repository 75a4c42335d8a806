// Package expr is the Zabbix 6.0 expression language shared by trigger
// expressions and calculated-item formulas: a hand-written lexer and
// parser (with byte positions in errors), and the evaluator and function
// library.
//
// Parsing. Parse reads an expression into an immutable *Expr: numbers
// with unit suffixes (K M G T as powers of 1024; s m h d w as seconds),
// double-quoted strings (the only escapes are \" and \\, as in Zabbix;
// any other backslash stays, so regular expressions keep "\d"),
// operators with Zabbix's precedence (unary - and not; * /; + -;
// < <= > >=; = <>; and; or; all left associative), parentheses,
// function calls, and macros as operands: user macros {$NAME},
// {$NAME:context}, {$NAME:"context"}, {$NAME:regex:"..."}, built-in ones
// such as {TRIGGER.VALUE}, and low-level discovery macros {#NAME} and
// {{#NAME}.regsub(...)} as trigger and item prototypes hold them before
// discovery replaces them.
//
// A call whose first parameter starts with '/' is a history function and
// that parameter an item query /host/key[params]: the host is a name, ""
// (//key, the host of the calculated item or trigger), a macro such as
// {HOST.HOST}, or "*" together with an item filter ?[...] in the
// aggregate functions of calculated items (avg_foreach, bucket_percentile
// ...). The query and the period parameter after it ("5m", "#10",
// "1h:now-1d", "1d:now/d", "{$PERIOD}") are read raw rather than as
// tokens. Function names, their arity, and the kind of period each
// accepts (#N or time) are checked at parse time against one table
// (table.go), so a bad trigger is refused at trigger.create with the
// position of the error; what depends on macro values is checked when
// evaluated. Errors are *ParseError values worded as Zabbix words them
// ("incorrect expression starting from ...").
//
// Expr.ItemRefs lists the (host, key) pairs an expression reads, for the
// trigger model's index; Expr.String gives a canonical spelling that
// parses back to itself.
//
// What it does not own: where values come from (the caller implements
// the data source: per-item state, a value cache or the history store),
// how user macros are resolved across host, templates and global (the
// caller's resolver), trigger states, events and scheduling.
//
// Concurrency: an *Expr is immutable after Parse and may be evaluated by
// many goroutines at once. The package has no global mutable state.
package expr
