// Package bench holds Peregrine's load generators and, later, the
// scenarios and reports of `peregrine bench`.
//
// The trapper load generator is a compliant Zabbix sender (one "sender
// data" frame, one reply) that pre-encodes its packets so that the
// generator spends its CPU on the socket, not on JSON: per round it only
// rewrites the fixed-width clock digits in place. It can keep connections
// open between frames (Peregrine's trapper allows it) or open one per
// frame as zabbix_sender does.
package bench
