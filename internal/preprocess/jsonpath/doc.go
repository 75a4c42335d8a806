// Package jsonpath evaluates Zabbix's JSONPath dialect, as the "JSONPath"
// and "Check for error in JSON" preprocessing steps use it.
//
// Supported: the root $, dot and bracket member names ($.a, $['a b']),
// indexes (negative from the end), unions ([0,2], ['a','b']), wildcards
// (.* and [*]), recursive descent (..name, ..*, ..[0]), slices
// ([start:end:step]), filters ([?(@.a == "x" && @.b > 1)], with == != <
// <= > >= =~ ! && || and parentheses, operands @-relative or $-absolute
// paths, numbers, strings, true, false and null), and trailing
// functions: .length() .min() .max() .avg() .sum() .first(), chained as
// Zabbix chains them (each applies to the previous one's result, which
// must then be an array: $[?(@.a == 1)].v.first().first()). As in
// Zabbix, ".[" is read as "[" ($.['a-b'], $.[?(...)]).
//
// Results are formatted as Zabbix formats them: a definite path (no
// wildcard, union, slice, filter or descent) gives its one value, a
// string unquoted and anything else as its JSON text; an indefinite path
// gives a JSON array of its matches; no match is ErrNoMatch. Matched
// values are copied from the document's text, so their formatting and
// member order are kept.
//
// The JSON parser is this package's own: it keeps each value's text span,
// which encoding/json does not, and bounds nesting at MaxDepth so that a
// hostile document cannot exhaust the stack. No library implements the
// Zabbix dialect (its functions and result formatting) exactly.
//
// It does not own the step semantics around a query (error handlers,
// the "Check for error in JSON" rules): package preprocess does.
//
// Concurrency: a compiled Path is immutable and safe for concurrent use.
package jsonpath
