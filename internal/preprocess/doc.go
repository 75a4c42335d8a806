// Package preprocess owns the rules that turn a value's text into what
// is stored: its conversion to the item's value type and the item's
// preprocessing steps. It applies them to one value at a time and keeps
// no state of its own (the caller owns each item's step State).
//
// Which item a value belongs to and whether it accepts it is the
// pipeline's intake (pipeline.ItemByKey, pipeline.ItemByID), which
// every way in goes through and which calls this package; nothing else
// calls Convert or Run on values to be stored (internal/buildcheck
// enforces it). The parts:
//
//   - Conversion: Convert turns
//     a value's text into a float, unsigned, character, text or log
//     value with Zabbix's rules (what is a number, how long a string may
//     be, what becomes of invalid UTF-8).
//   - Preprocessing steps (issue 12, first slice): ParseStep and
//     ParseChain read and validate Zabbix 6.0 step objects (type, params
//     joined by LF, except that a one-parameter step's params is its
//     whole text, error_handler, error_handler_params) with the API's
//     rules; ParseExportStep reads a step as Zabbix's YAML export writes
//     it (names such as JSONPATH and DISCARD_VALUE, a parameters list;
//     names.go; the catalog's import keeps a copy, tested equal). Every
//     step of the official 6.0 templates parses but five
//     (docs/templates-conformance.md, templates_test.go). A step that does not validate is a *ParamError
//     naming the member and parameter at fault, so that the API words
//     its own path. Run applies a chain to one value's text with the error
//     handlers (default, discard value, set value, set error) and returns
//     the text, a discarded result, or a *StepError with Zabbix's
//     message. The numeric steps (custom multiplier, the change steps)
//     hand a number to a numeric or discard step after them instead of
//     its text, and with Input.KeepNumber the chain's numeric result
//     stays a number (Output.Number), which the pipeline stores without
//     formatting and parsing it; every result is what the texts would
//     make (numeric_test.go). The per-item memory of the change and discard steps is a
//     State the caller owns and passes in. Implemented: custom
//     multiplier, trims, regular expression, boolean/octal/hexadecimal
//     to decimal, simple change, change per second, in range, (does not)
//     match regex, check for error using regex, discard unchanged (with
//     heartbeat), CSV to JSON, replace, check for not supported value,
//     JSONPath and check for error in JSON (Zabbix's dialect, in package
//     jsonpath), Prometheus pattern and Prometheus to JSON (a small
//     parser of the text exposition format of its own, rather than
//     github.com/prometheus/common/expfmt, which brings client_model and
//     protobuf for one parser), XML to JSON (encoding/xml),
//     XML XPath and check for error in XML (XPath 1.0 by
//     github.com/antchfx/xpath on github.com/antchfx/xmlquery's tree),
//     JavaScript (package jsvm, on github.com/dop251/goja: the script is
//     the body of a function of value, run in a fresh runtime per value,
//     stopped after JSTimeout or at the runner's memory limit, 512 MiB
//     as Zabbix's; Zabbix.log is ignored, HttpRequest refused; the
//     runner is Input.JS, the server's pool of worker processes, or in
//     this process without one).
//     Regular expressions are Go's RE2, not PCRE: no backreferences or
//     lookaround, and no catastrophic backtracking (JavaScript's own
//     regular expressions do backtrack, bounded by the time limit).
//
// A caller that must not wait for a script (the pipeline's shards) sets
// Input.Defer: Run then stops before each JavaScript step with
// Output.Suspended, the caller runs the step elsewhere (Step.RunScript)
// and hands its result to Resume, which applies the step's error
// handler and goes on with the chain on the same State.
//
// Trace is Run reporting each step's result, error and handler's
// effect, for the API's preprocessing.test (the frontend's "Test"
// button); Run shares its code and pays one nil check per step for it.
//
// The steps are pure functions; package pipeline applies them to values
// in flight, in the shard that owns each item, and keeps each item's
// State there (saved across restarts with State.AppendBinary and
// UnmarshalBinary). Compile turns a catalog item's steps into a chain
// (CheckSteps is the catalog's validation hook). Cache lets the chains
// of many dependent items run on one master value and parse its JSON
// once (jsonpath.Parse), instead of once per dependent. Calculated
// items are not steps: package poll/calc evaluates them with package
// expr.
//
// It does not own the transport (ingest, api), the wording of replies to
// a client, counting or logging (the callers count refusals by their
// String and log them with their own context), timestamps, or storage.
//
// Hot path: the lookups take no lock and neither they nor the numeric
// conversions allocate; a string value is copied once, because the
// caller's buffer is reused after the request.
//
// Concurrency: everything here is a pure function of its arguments and
// the catalog's immutable snapshot, safe for concurrent use, except that
// a State belongs to one item and is used by one goroutine at a time.
package preprocess
