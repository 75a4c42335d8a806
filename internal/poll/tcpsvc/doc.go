// Package tcpsvc is the TCP service checker of the simple checks (item
// type 3): net.tcp.service[service,<ip>,<port>] (1 if the service runs,
// 0 if not) and net.tcp.service.perf[...] (the check's time in seconds,
// at least 0.0001, or 0 if the service does not run), as Zabbix 6.0
// defines them. Services and what counts as running:
//
//	tcp     the connection is accepted (the port is required)
//	ssh     a "SSH-" identification line (we answer with ours)
//	smtp    a "220" greeting (then QUIT)        ftp  a "220" greeting (then QUIT)
//	pop     a "+OK" greeting (then QUIT)        imap a "* OK" greeting (then LOGOUT)
//	nntp    a "200" or "201" greeting (then QUIT)
//	http    any HTTP response to GET /; https the same over TLS (certificate not verified)
//	telnet  any first bytes (option negotiation or a prompt)
//	ldap    an LDAP BindResponse to an anonymous bind
//
// with Zabbix's default ports. An empty ip is the interface's address.
// The whole check runs within the item's timeout; a refused connection, a
// timeout (a peer that accepts and never speaks), a greeting of another
// protocol: each is the value 0, not an error, since a service being down
// is what the item measures; the reasons are counted in
// peregrine_poll_tcpsvc_down_total and logged at most once a minute each.
// Greetings are read up to 4 KiB or the first line. A bad key (unknown
// service, ntp which is UDP, a missing port for tcp) makes the item not
// supported, saying what to change.
//
// Concurrency: Check starts one goroutine per check and returns; the
// scheduler bounds how many are in flight (see package poll/agent on why
// goroutines on the netpoller are the event loop). Safe for concurrent
// use.
package tcpsvc
