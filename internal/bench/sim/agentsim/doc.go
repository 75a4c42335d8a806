// Package agentsim simulates passive Zabbix agents for tests and
// benchmarks: a Fleet listens on many ports of 127.0.0.1 (loopback only)
// and answers each plain passive request (spec §3.1) through one
// function, which can answer a value, ZBX_NOTSUPPORTED, garbage, a frame
// cut short, an endless slow reply, silence or a close. It frames its
// replies itself rather than with package zbx, so that tests check our
// framing instead of sharing its bugs.
//
// It does not import package testing, so `peregrine bench poll` runs it
// too. A Fleet is safe for concurrent use; Close stops it and every
// connection it holds. It is as lean per connection as bench
// tcp-floor's server, the fair comparison for its CPU: no read deadline
// (a connection that never asks waits for its peer's close or Close).
package agentsim
