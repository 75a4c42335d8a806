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
// ("incorrect expression starting from ...") with the position and the
// reason; ParseError.Zabbix gives Zabbix 6.0's own text, which the API
// answers: from where 6.0's parser stops (a call that does not parse
// from its start), and the problems 6.0's validator finds only once the
// expression parses (an unknown function, the number or the kind of a
// call's parameters, a period of nothing) after any syntax error, the
// first by position.
//
// Expr.ItemRefs lists the (host, key) pairs an expression reads, for the
// trigger model's index; Expr.TimeBased says whether it must also be
// re-evaluated on a timer (nodata, date/time and trend functions);
// Expr.Aggregates whether it uses aggregate functions over many items
// (calculated items only, as in Zabbix); Expr.String
// gives a canonical spelling that parses back to itself.
//
// Evaluation. Expr.Eval(ctx, Options) gives a Value: a number, a
// string, or unknown (KindError) with the reason, Zabbix's unknown state.
// Nothing in evaluation fails otherwise. The rules (eval.go) are
// Zabbix's: "and" is 0 when either side is 0 even if the other is
// unknown, "or" is 1 when either side is non-zero likewise, every other
// operator and function propagates unknown; = and <> compare numerically
// when both sides are numbers or numeric strings ("5m", "1K" and "1e3"
// count) and as strings otherwise; all comparisons treat numbers within
// 2.22e-16 as equal; division by zero is unknown. Expr.LastComparison
// tells an expression of the form last(/host/key) OP N (Zabbix's
// commonest trigger), whose Eval takes the value last() reads, without
// a Source: the same rules, for the trigger evaluator's values.
//
// The caller supplies, in Options: the evaluation time; a Source of item
// values (History: the #N newest values or a time window (from, till]
// ending at the evaluation time, newest first; Trends: hourly trends) so
// that triggers and calculated items can feed it from per-item state, a
// value cache or the history store; Macros, resolving user macros (the
// server passes catalog.Snapshot.UserMacros, a usermacro.Scope; the
// small MacroLevels here applies the same order for tests) and, for an
// expression over several hosts, FuncMacros, resolving those in a history
// function's parameters in its item's host's scope as Zabbix does; the
// server's time zone for date/time functions and
// "now/d" shifts; the start of data collection for nodata().
//
// Function library (table.go, funcs_*.go): the 6.0 history functions
// (last first avg min max sum count countunique change changecount find
// nodata rate percentile forecast timeleft fuzzytime logeventid
// logseverity logsource monoinc monodec, the statistics kurtosis mad
// skewness stddevpop stddevsamp sumofsquares varpop varsamp, and trendavg
// trendcount trendmax trendmin trendsum), the math, bitwise, string and
// date/time functions, in and between. Parameter errors that depend only
// on the text are parse errors; the rest (a mode, an operator, a pattern,
// a value out of range, not enough data) make the call unknown with
// "cannot evaluate function f(...): reason".
//
// Aggregate functions of calculated items (aggregate.go) need a Source
// that is also an ItemLister, which finds the items of a query with "*"
// in the host, the key name or its parameters (MatchKey): item_count,
// bucket_percentile (the one the official templates use: a Prometheus
// histogram kept as one counter item per bucket), and the *_foreach
// functions (avg, count, exists, last, max, min, sum), which give one
// value per item with data and may only be the first parameter of avg,
// count, max, min, sum or a statistics function (checked at parse
// time), as in sum(last_foreach(/*/net.if.in[*])). Item filters
// (?[group="..." and not tag="name:value"]) are parsed and checked at
// parse time (ParseItemFilter, filter.go); the ItemLister applies them.
// bucket_rate_foreach gives (bucket bound, rate) pairs, only as the
// second parameter of histogram_quantile, which also takes explicit
// pairs.
//
// Choices where Zabbix's documentation leaves room: forecast's max, min
// and avg modes sample the fitted curve at 1000 steps (exact for lines);
// timeleft searches a century ahead and returns the largest double when
// the threshold is not reached; rate extrapolates to the period's edges
// as Prometheus's rate() does; percentile is the nearest rank; count's
// bitand pattern is "mask" or "value/mask"; global regular expressions
// (@name) are refused.
//
// testdata/*.test are the evaluator's scripts (format in
// script_test.go): values loaded per item, then "eval at T: EXPR =>
// expected value / unknown / parse error".
//
// What it does not own: where values come from (the caller implements
// the data source: per-item state, a value cache or the history store),
// how user macros are resolved across host, templates and global (the
// caller's resolver), trigger states, events and scheduling.
//
// Concurrency: an *Expr is immutable after Parse and may be evaluated by
// many goroutines at once. The package keeps no global state but a
// sync.Pool of evaluators (see Expr.Eval).
package expr
