// Package http is the HTTP agent checker (item type 19): for each check
// it makes the request of the item's Zabbix 6.0 HTTP fields
// (catalog.HTTPItem: url with query_fields, request_method GET, POST, PUT
// or HEAD, posts with the post_type's Content-Type, headers, basic
// authentication, http_proxy, verify_peer and verify_host, a client
// certificate) within the item's timeout, checks the status against
// status_codes, and returns the body, the header block or both
// (retrieve_mode), raw or as Zabbix's JSON object {"header", "body"}
// (output_format). Redirects are followed (at most 10) unless
// follow_redirects is off.
//
// Every failure makes the item not supported with a message saying what
// went wrong (Zabbix's own for a status mismatch and a timeout), as
// Zabbix's HTTP agent does; HTTP agent items keep no interface
// availability. The exception is a check cut short because the Check
// call's context ended (the server stopping), while connecting or
// reading the body: it is reported abandoned, a network error. Bounds: a body beyond Options.MaxBodySize (an endless
// one included) and a header block beyond Options.MaxHeaderSize are
// refused with "response too large" / "larger than ... bytes", each
// counted by reason in peregrine_poll_http_errors_total and logged at
// most once a minute per reason. NTLM, Kerberos and Digest
// authentication, and encrypted client keys, are not supported (the item
// says so); a bearer token goes in a header.
//
// Connections: one http.Client per distinct TLS verification, client
// certificate and proxy (in practice a handful), shared by all items, so
// requests to one host reuse kept-alive connections; at most
// Options.MaxConnsPerHost per host:port, further requests wait for one
// within their timeout. peregrine_poll_http_connections_total counts the
// connections opened.
//
// Web pages: Checker.WebPage is the checker of the web.page.get,
// web.page.perf and web.page.regexp keys as simple checks (item type 3),
// through the same clients (see webpage.go).
//
// Web scenarios: Checker.Scenarios is the checker of web scenarios
// (item type 9, scenario.go): the scheduler schedules a scenario's
// web.test.fail item only, and the checker runs its steps in order in
// one cookie jar (cookies kept across steps), each step tried up to the
// scenario's retries, with its timeout (1s..1h), macros and variables
// ({name}, or "regex:PATTERN" taken from the page) in URLs, query and
// form fields, posts and headers, stopping at the first failing step
// (transport error, status codes, required string, variable not
// found); it reports the other items' values in poll.Result.Also, as
// 6.0.14 stores them: a step that got a response stores its speed,
// time and code, the scenario its failed step (0 for none), its error
// only on failure and the floor of its steps' average speed. Bodies are
// bounded by Options.MaxBodySize, variables in number and length.
//
// Concurrency: Check hands each check to an idle worker goroutine or
// starts one, and returns; the scheduler bounds how many are in flight,
// and so the workers. A worker idle for 10 s ends (one per check would
// regrow its stack to net/http's depth every time); Close ends the idle
// ones at once and closes the idle connections. Safe for concurrent
// use.
package http
