// Package script runs Zabbix script items (item type 21): each check runs
// the item's JavaScript (Item.Params) in the server's JavaScript worker
// processes (package jsvm, kind jsvm.Item: the engine, sandbox, time and
// memory bounds of preprocessing and webhooks) and reports what it
// returned as the value, which the scheduler brings the pipeline's one
// way in (conversion per value type, steps, dependents).
//
// The script is the body of a function of value: the JSON object of the
// item's parameters (Item.Parameters, in their order, values as strings),
// with the host's user macros resolved in names and values, and
// {HOST.HOST}, {HOST.NAME}, {HOST.CONN}, {HOST.IP}, {HOST.DNS} (the
// host's default interface: agent, SNMP, JMX, then IPMI), {ITEM.ID},
// {ITEM.KEY} and {ITEM.KEY.ORIG}, as Zabbix 6.0 resolves them there
// (recorded from 6.0.14; {HOST.PORT}, {HOST.ID} and unknown user macros
// stay as written). It has HttpRequest (and CurlHttpRequest), whose
// requests Options.Fetch makes (by default a jsvm.HTTPFetcher: the
// webhooks' client code), Zabbix.log (to the logger, at debug level),
// btoa and atob.
//
// Results, as 6.0 words them (recorded from 6.0.14): a returned value is
// the value as text (true, 1.5, [object Object]); null is an empty value;
// undefined makes the item not supported ("Cannot execute script:
// undefined return value"), and so does a thrown value ("Cannot execute
// script: " and the thrown value as text, "Error: message" for an
// Error), the time limit ("Cannot execute script: RangeError: execution
// timeout"), the memory limit, and a script that does not compile
// ("Cannot compile script: " and the compiler's message). 6.0 appends
// Duktape's stack to its messages; Peregrine does not (there is none).
// A value longer than Options.MaxValueSize fails in the worker, which
// never sends it. A worker that could not be started is a local error
// (blames no item).
//
// Timeouts: the item's timeout (the API takes 1-60 s, as 6.0; else
// Options.DefaultTimeout) is the run's time limit, and bounds its
// requests. When the Check call's context ends (the server stopping)
// a script still running is stopped (its worker killed) and its check
// reported abandoned (a network error, which script items keep no
// availability for).
//
// Bounds: the pool's workers of kind jsvm.Item (javascript.workers)
// bound the scripts running at once; further checks wait for one, within
// the scheduler's in-flight bound, and a looping or allocating script
// costs its own worker, never the server's heap or another kind's
// workers.
//
// Metrics: peregrine_poll_script_checks_total{result} (ok,
// not_supported, timeout, local_error, abandoned); the runs themselves
// are counted by package jsvm (peregrine_js_runs_total{kind="item"}).
//
// Concurrency: Check starts one goroutine per check and returns; Close
// waits for them. Safe for concurrent use.
package script
