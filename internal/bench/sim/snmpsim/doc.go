// Package snmpsim is a fleet of simulated SNMPv1/v2c agents for tests and
// benchmarks: one UDP socket per agent on 127.0.0.0/8 (distinct
// addresses 127.0.x.y, or ports of 127.0.0.1), each answering GET,
// GETNEXT and GETBULK from one shared MIB table, with hooks to misbehave
// (drop requests, answer with arbitrary bytes, tooBig beyond a number of
// OIDs). It decodes and encodes with gosnmp, the library the checker
// uses; the real net-snmp agent is testutil.StartSnmpd.
//
// Concurrency: one goroutine per agent reads its socket; Close stops
// them all and waits. Counters are atomic.
package snmpsim
