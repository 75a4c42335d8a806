// Package agent is the passive Zabbix agent checker (item type 0,
// "Zabbix agent"): for each check it connects to the host's agent
// interface, sends the item key in one ZBXD frame (the plain protocol of
// spec §3.1, understood by every 5.x-7.x agent) and reads one frame back.
//
// Replies: a value; "ZBX_NOTSUPPORTED\0<message>" (or ZBX_ERROR) makes the
// item not supported with the agent's message. A reply that is not a
// frame (garbage), announces or inflates beyond Options.MaxReplySize, or
// stops in the middle makes the item not supported with an error naming
// what was wrong: the agent did answer. Refused connections, timeouts
// (connect within Options.ConnectTimeout, the whole check within the
// item's timeout, an endless slow reply included), resets and a close
// without a reply (what an agent does for a server not in its Server=)
// are network errors, which count against the interface's availability
// in package poll. Every outcome is counted on /metrics
// (peregrine_poll_agent_checks_total by result,
// peregrine_poll_agent_errors_total by reason) and failures are logged
// at most once a minute per reason.
//
// The last chance (issue 30): when a plain connection's deadline fires,
// the reply is read from what the socket already holds (non-blocking
// reads, lastChance) before the check is called a timeout: a reply that
// arrived in time but waited unread while this process was behind is a
// value (peregrine_poll_agent_late_replies_total). Nothing is waited for
// past the timeout. Under TLS the record layer reads the socket itself,
// and a timeout there stays a timeout. Timeouts are marked
// poll.Result.TimedOut, so the scheduler can excuse one that ran while
// the server was behind.
//
// Encryption: with Options.TLS, a host whose tls_connect is 4
// (certificate) is checked over TLS started at once on the agent's port:
// the server's certificate as the client's, the agent's verified against
// tls.ca_file (no host-name check, as Zabbix) and against the host's
// tls_issuer and tls_subject when set. A host whose tls_connect is 2 is
// checked over TLS with its pre-shared key (tls_psk_identity, tls_psk;
// package zbx/zbxpsk, OpenSSL), with Zabbix 6.0's suites, the one agreed
// counted (peregrine_poll_agent_tls_psk_total by cipher). A failed
// handshake (an identity the agent does not know or a key that differs
// included), a refused certificate (with TLS 1.3 the agent's alert
// arrives on the first read) and a pre-shared key in a build without
// OpenSSL are network errors with reason "tls", as Zabbix counts a
// failed TLS connection against the interface; the message names the
// identity, never the key.
//
// Concurrency: Check runs each check on a goroutine of its own and
// returns at once; the scheduler (package poll) bounds how many are in
// flight. The goroutines are reused: one that finished a check takes the
// next handed over, and ends after 2 s without one or when its context
// ends (workers.go), so a steady load neither starts a goroutine nor
// grows a fresh stack per check. A stopping server closes the
// connections of a batch's checks through one registration on its
// context per batch, not one per check (batchGuard). A goroutine
// blocked on a socket costs a few KiB and no thread: the runtime's
// netpoller is the event loop. Profiles of the simulated fleet show the
// time going to the kernel (connect, accept, close: the plain protocol is
// one TCP connection per check), not to goroutines, so a hand-written
// epoll loop would not buy much: BenchmarkCheck costs within a few µs of
// CPU of BenchmarkBareConn (connect, write, read, close and nothing
// else, ≈ 80 µs per check for both ends on this machine). The connect
// timeout is the socket's own deadline rather than a context timer.
// Frame readers are pooled, and read a short reply with one read(2)
// (lastChance's buffer; the header and payload were two); a reply's
// value is copied once, into the Result. Checker is safe for concurrent
// use.
package agent
