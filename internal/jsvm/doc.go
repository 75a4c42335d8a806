// Package jsvm runs the JavaScript that users write into the
// configuration: preprocessing steps, webhook media types and script
// items (Zabbix item type 21). Such a script is untrusted: it
// may loop, allocate without end, or call a native function that
// allocates gigabytes in one go. This package is where that is
// contained, so that a bad script costs only its own item or alert.
//
// The engine is github.com/dop251/goja (ECMAScript 5.1 and much of ES6,
// pure Go). A script is the body of a function of one argument, value,
// as in Zabbix; each run gets a fresh runtime, so nothing leaks from one
// run to the next. The objects a script sees depend on its Kind: a
// preprocessing step gets Zabbix.log (ignored) and an HttpRequest that
// throws; a webhook gets HttpRequest (and the older CurlHttpRequest
// names) whose requests the caller makes (Job.Fetch), Zabbix.log (to
// Job.Log), btoa and atob; a script item (Kind Item) the same as a
// webhook. HTTPFetcher (fetch.go) is the one FetchFunc both use: a Go
// HTTP client, the run's time limit, a bound on the body. A run tells
// undefined from null (Result.Undefined): a script item's check fails
// on the first and stores "" for the second. Calls nest at most 10,000
// deep.
//
// Two Runners:
//
//   - Pool (pool.go), the server's: worker processes started from the
//     server's own binary (init turns a process started with the pool's
//     environment into a worker before main runs), spoken to over two
//     pipes (wire.go). A worker runs one script at a time, with
//     GOMAXPROCS 1 and a lower priority (nice 10), so a looping script
//     takes at most one core and yields it to the server's work; its
//     heap is the script's, so the guard below is exact there, and a
//     hard limit of its address space ends it if one native call
//     allocates far past the limit. The pool kills a worker whose
//     script overruns its time limit by a second (a native call the
//     interrupt cannot stop), and replaces a worker that died or
//     reached the memory limit; the run fails with the reason. The
//     server's heap never holds a script's objects. Compiled scripts are
//     cached per worker by a seeded hash of their text (the pool sends
//     a script only to workers that have not seen it). Each kind may
//     run Workers scripts at once: webhooks and script items waiting on
//     slow receivers never hold the workers preprocessing needs.
//   - Local (local.go): the same code on the calling goroutine, for
//     tests and tools; in a server it is not isolation enough (see its
//     comment).
//
// Limits, the same from both: the time limit is the Job's (Zabbix's 10 s
// for preprocessing, the media type's timeout for webhooks, the item's
// for script items), the memory
// limit the runner's (DefaultMemLimit, Zabbix's 512 MiB per script, for
// every kind). A run that exceeds one fails with an *Error of reason
// Timeout or OutOfMemory; its caller makes the item not supported or
// fails the alert, with the error's text.
//
// Self-monitoring (Pool): peregrine_js_runs_total{kind,result},
// peregrine_js_workers, _workers_busy, _workers_max, _runs_waiting,
// _worker_starts_total, _worker_start_errors_total.
//
// It does not own what a failure means to an item or an alert (packages
// preprocess, pipeline, poll/script and alert), nor which client and
// limits the requests use (the callers give an HTTPFetcher's Fetch, or
// their own, as Job.Fetch).
//
// Concurrency: Runners are safe for concurrent use; a Job's Fetch and
// Log are called on the goroutine that called Run.
package jsvm
