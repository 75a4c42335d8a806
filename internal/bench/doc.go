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
//     Host and key are encoded once per plan; values, clocks and
//     nanoseconds are generated per frame, in unit order under one lock,
//     so a send's data depends on its seed, not on its connections.
//     Connections are kept across frames until the server closes them
//     after a reply (Zabbix 6.0 does; Peregrine does not). A plan may be
//     paced to a rate shared by all connections.
//   - The values (values.go): realistic by default — per item, from a
//     seeded hash of host and key, a full-precision random-walk gauge, a
//     counter, a disk size or a 0/1 status, with nanoseconds uniform per
//     value — or the old constant data for comparison. Env.Data carries
//     the run's shape and seed into every scenario.
//   - Fairness (scenario.go, cli.go, compare.go, compare_old.go): an
//     unmeasured warm-up before each scenario's first step, then a wait
//     until the server's processes idle; steps of at least a minute (a
//     shorter one is flagged); the measurement settings of a run in its
//     report and settings.csv; compare naming every setting in which two
//     runs differ and, given an earlier pair, which headline ratios
//     shrank.
//   - APIClient and Provision (api.go, target.go): hostgroup.create,
//     host.create, item.create (type 2 trapper, value type float) in
//     batches, reusing what exists, then a probe until the trapper accepts
//     the new items (Zabbix loads them into its configuration cache only
//     every CacheUpdateFrequency). "Readable" is always history.get with
//     countOutput, the same call on both servers.
//   - The scenarios (write_scaling.go, sender_flood.go, history_read.go,
//     ingest_max.go, backfill.go, dashboard.go, disk_bytes.go, storm.go,
//     trigger_latency.go, preprocess.go, uidash.go), each a Scenario
//     returning a report Section. ui-dashboard alone speaks to a
//     frontend instead of the API (uidash_web.go): web sessions of
//     Peregrine's UI or Zabbix's PHP frontend, each widget's refresh
//     request as that frontend's page sends it. storm also creates triggers (trigger.create in
//     arrays, Zabbix 6.0's shape) and counts open problems with
//     problem.get countOutput; its sends carry one fixed value
//     (SendPlan.Fixed) instead of the realistic data. trigger-latency
//     reuses storm's triggers but sends with its own loop (0 or 1 per
//     item, clocked with the send time, paced to a rate) so that it knows
//     which frame's acknowledgement carried each firing value, and polls
//     problem.get with eventid_from for the problems. preprocess creates
//     items with preprocessing steps and dependent items (Layout.Steps,
//     master_itemid) and sends its JSON masters one fixed document
//     (SendPlan.FixedText).
//   - CPU accounting (cpu.go): the generator's own getrusage and the
//     server's process trees from /proc, found by the listening ports.
//   - Reports (report.go, svg.go, compare.go): report.md, hand-written SVG
//     plots, raw CSV; compare joins two reports' CSVs side by side
//     (compare_storm.go for the storm).
//     history-read fingerprints the values it reads, so two reports show
//     whether both servers were read on the same data.
//   - The command line (cli.go), called by cmd/peregrine.
//   - `bench poll` (poll.go), the exception to the two doors: it runs
//     Peregrine's own poller (catalog, scheduler, agent checker,
//     pipeline, values then discarded) in this process against simulated
//     passive agents (package sim/agentsim) in a child process, steps hosts ×
//     items up and reports checks/s against the ideal, the in-flight peak,
//     latency p50/p99 and the poller's CPU per check. With --target
//     (poll_zabbix.go) a real Zabbix server's pollers poll the same
//     agents instead, configured through its API; both targets are
//     counted at the agents and by their queue. --overload F adds a step
//     at F times the knee's offered rate (the done rate must stay at the
//     knee's, no healthy interface blamed: TestPollBenchOverload);
//     --floor measures bench tcp-floor first, in the same run, and sets
//     the knee beside it (checks/s and CPU per check against bare
//     connections).
//   - `bench tcp-floor` (tcpfloor.go): the machine's floor under bench
//     poll, a bare Go client and server (child process) doing connect,
//     write, read, close on loopback, with the CPU per connection of each.
//   - `bench overload` (overload.go): ingest at twice its capacity. It
//     starts `peregrine serve` (this binary) on a fresh data directory
//     with small stated bounds, measures the capacity (closed loop), then
//     offers a baseline, twice the capacity (open loop) and the baseline
//     again from simulated senders, the real zabbix_sender and simulated
//     proxies; reports acknowledged and failed values, ack latency, peak
//     RSS against the configuration's bound, every stage's backlog from
//     /metrics, and the values stored against those acknowledged.
//   - `bench ha` (ha.go, haengines.go): the cost of high availability
//     (issue 31). It starts a private PostgreSQL and clickhouse-server on
//     127.0.0.1 (Debian's packages, own data under a temporary
//     directory, removed at the end), then runs scenarios (default
//     write-scaling, history-read, storm) against `peregrine serve` with
//     the embedded default and against the same binary as the one node
//     of a cluster on those engines (their CPU counted as the server's),
//     one after the other, and joins the two reports with Compare;
//     write-scaling's rows carry the acknowledge latency (p50/p99 of a
//     frame's send to its reply). --quick is a smoke run of seconds.
//   - `bench icmp` (icmp.go): re-executes itself under `unshare -rn` and
//     sweeps live and dead addresses of that namespace with Peregrine's
//     ICMP checker in this process, then, given --zabbix-target, with a
//     Zabbix server started in the same namespace, through Checks.
//   - `bench checks` and Checks (checks_cli.go, checks.go): a server's own
//     pollers (SNMP on the simulated devices of bench snmp, external
//     checks) measured through its API only: items created, made due at
//     once with task.create ("Execute now") or polled on a delay, values
//     read back with history.get; the same calls on Zabbix and Peregrine.
//   - `bench proxy` (proxy.go): N simulated Zabbix 6.0 active proxies
//     (created through the API with hosts and trapper items behind them)
//     push "proxy data" history batches to a server's trapper as
//     zabbix_proxy sends them (its row fields, up to 1,000 rows a
//     request, zlib, one request at a time per proxy), stepping the
//     offered rate; values/s acknowledged, reply latency, the server's
//     CPU per value (also net of its idle CPU), values readable after.
//   - `bench lld` (lld.go, lld_zabbix.go): templates and low-level
//     discovery at fleet size, in this process: a fresh catalog imports a
//     template file, hosts are created linked to it, every rule gets a
//     simulated agent's discovery reply through package lld (applied
//     twice: the second changes nothing); link and LLD times, items and
//     triggers made, heap per item. With --target, the same hosts on a
//     Zabbix server through its API and its configuration syncer's sync
//     time from its process title (/proc), deleted at the end.
//   - The simulated peers, in subpackages: sim/agentsim (passive Zabbix
//     agents) and sim/snmpsim (SNMPv1/v2c devices). They are here, not
//     in internal/testutil, because the production binary runs them
//     (bench poll, bench snmp); tests use them too. They import no
//     testing package, and cmd/peregrine's TestBinaryLinksNoTestHelpers
//     fails if the binary links internal/testutil or a *test package.
//
// What it does not own: starting or configuring the server under test
// (use `peregrine serve` or ../shared/peers/zabbix/setup.sh), except the
// in-process pollers of `bench poll`, `bench snmp` and `bench icmp`, the
// servers `bench overload` and `bench ha` start (with `bench ha`'s
// PostgreSQL and ClickHouse), and the commands --start/--zabbix-start
// run (bench/zabbix-private.sh).
//
// Value clocks: every send carries its own clock range, and its values'
// nanoseconds are shifted by a random number per run, so runs that reuse
// items never write the same (item, clock, ns) twice and each count is
// over a range no other step uses (before/after counts make reused items
// harmless).
//
// Concurrency: a Sender and an APIClient (after Login) are safe for
// concurrent use; a Scenario and an Env run one at a time.
package bench
