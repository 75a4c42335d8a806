// Package bench is `peregrine bench`: load generators, the measurement
// scenarios of the public performance studies, and their reports. It
// measures any server that speaks the Zabbix protocols — Peregrine or a
// real Zabbix server — through the same two doors: the trapper port for
// values and the JSON-RPC API for setup and for reading back.
//
// What it owns:
//
//   - Sender (sender.go): the one load generator, a compliant Zabbix
//     sender used by every scenario and by cmd/loadgen. Every frame is one
//     "sender data" request answered by one reply whose
//     "processed: N; failed: M; total: T" is checked against the frame.
//     Frames are encoded once per plan; per round only the fixed-width
//     clock digits are rewritten, so the generator's CPU goes to the
//     socket. Connections are kept across frames until the server closes
//     them after a reply (Zabbix 6.0 does; Peregrine does not). A plan
//     may be paced to a rate shared by all connections.
//   - APIClient and Provision (api.go, target.go): hostgroup.create,
//     host.create, item.create (type 2 trapper, value type float) in
//     batches, reusing what exists, then a probe until the trapper accepts
//     the new items (Zabbix loads them into its configuration cache only
//     every CacheUpdateFrequency). "Readable" is always history.get with
//     countOutput, the same call on both servers.
//   - The scenarios (write_scaling.go, sender_flood.go, history_read.go,
//     ingest_max.go), each a Scenario returning a report Section.
//   - CPU accounting (cpu.go): the generator's own getrusage and the
//     server's process trees from /proc, found by the listening ports.
//   - Reports (report.go, svg.go, compare.go): report.md, hand-written SVG
//     plots, raw CSV; compare joins two reports' CSVs side by side.
//   - The command line (cli.go), called by cmd/peregrine.
//   - `bench poll` (poll.go), the exception to the two doors: it runs
//     Peregrine's own poller (catalog, scheduler, agent checker,
//     pipeline, values then discarded) in this process against simulated
//     passive agents (package agentsim) in a child process, steps hosts ×
//     items up and reports checks/s against the ideal, the in-flight peak,
//     latency p50/p99 and the poller's CPU per check.
//
// What it does not own: starting or configuring the server under test
// (use `peregrine serve` or ../shared/peers/zabbix/setup.sh), except the
// in-process poller of `bench poll`.
//
// Value clocks: every send carries its own clock range and a random
// nanosecond value per run, so runs that reuse items never write the same
// (item, clock, ns) twice and each count is over a range no other step
// uses (before/after counts make reused items harmless).
//
// Concurrency: a Sender and an APIClient (after Login) are safe for
// concurrent use; a Scenario and an Env run one at a time.
package bench
