// Package jmx is the JMX agent checker (item type 16): it asks the
// Zabbix Java gateway (Debian's zabbix-java-gateway, which speaks JMX to
// the monitored JVMs) for the items' keys, in the gateway's protocol: a
// ZBXD frame with the JSON request {"request":"java gateway jmx",
// "username", "password", "jmx_endpoint", "keys": [...]} and its reply
// {"response":"success","data":[{"value"}|{"error"}, ...]} (one answer
// per key, in order) or {"response":"failed","error"} (proto.go; the
// bytes the 6.0.14 server and gateway exchange are in
// testdata/wire). The gateway knows the keys: jmx[object,attribute],
// jmx.discovery[mode,pattern] and jmx.get[mode,pattern], whose values
// are the JSON of low-level discovery rows (the LLD engine itself is not
// this package's); this package passes keys and values through.
//
// Batching, as the 6.0 server does it: the due checks of a batch are
// grouped by interface, resolved endpoint and credentials (and timeout),
// and each group goes to the gateway in requests of at most
// Options.MaxKeys keys (32, Zabbix's), one connection each. The
// scheduler hands a host's JMX items of one interval over together:
// they are placed on their interval's grid by their interface, as
// Zabbix seeds them. The endpoint (default
// service:jmx:rmi:///jndi/rmi://{HOST.CONN}:{HOST.PORT}/jmxrmi) has its
// host's user macros and {HOST.CONN}, {HOST.PORT}, {HOST.IP},
// {HOST.DNS}, {HOST.HOST} and {HOST.NAME} resolved, the username and
// password their user macros, as the 6.0 server resolves them.
//
// Results, as the 6.0 server shows them: a value; the gateway's error
// for one key makes that item not supported with the gateway's words
// ("Attribute not found: No such attribute: HeapMemoryUsage22"); a
// "failed" reply (the JVM refused or did not answer the gateway) is a
// network error of every check of the request with the gateway's words
// ("Connection refused: service:jmx:..."), which counts against the JMX
// interface's availability; so are a gateway that refuses connections,
// stays silent past the checks' timeout, closes without a reply or
// sends what is not a reply. Without a configured gateway every check is
// not supported, saying which setting is missing. All outcomes are
// counted on /metrics (peregrine_poll_jmx_checks_total by result,
// peregrine_poll_jmx_errors_total by reason,
// peregrine_poll_jmx_requests_total) and failures logged at most once a
// minute per reason, never with the credentials.
//
// Bounds: at most Options.MaxConns connections to the gateway at once
// (Zabbix's StartJavaPollers; keep it within the gateway's
// START_POLLERS); a request waits for one within its checks' timeout,
// and one that finds none is a local error (neither the item nor the
// interface is blamed: the shortage is this server's setting). Replies
// beyond Options.MaxReplySize are refused. A slow or dead JVM costs its
// own checks the gateway's time (the gateway's own timeout, or ours)
// and a gateway connection meanwhile; the checks of other hosts go on
// through the other connections.
//
// Concurrency: Check groups the batch and starts one goroutine per
// request, then returns; the scheduler bounds the checks in flight, and
// so the requests. Reply decoding uses pooled fastjson parsers; a
// reply's values are copied once, into one buffer its results share.
// Checker is safe for concurrent use.
package jmx
