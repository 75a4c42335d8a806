// Package poll is the check scheduler: for every enabled item of a polled
// type (one with a Checker in Options.Checkers) on a monitored host, it
// keeps the next check time, hands due checks in batches to the checker
// of the item's type (poll/agent for Zabbix agent items, poll/snmp for SNMP, poll/icmp,
// poll/tcpsvc and poll/http for simple checks and the HTTP agent,
// poll/calc for calculated items, poll/external for external checks and
// Nagios plugins, poll/ipmi for IPMI items, poll/ssh and poll/telnet for SSH
// and Telnet checks, poll/jmx for JMX items through the Java gateway,
// poll/odbc for database monitor items, poll/script for script items)
// and
// brings the results the trapper's way, the pipeline's one way in:
// acceptance (pipeline.ItemByID), pipeline.Prepare (conversion, or the text for the shard's
// preprocessing steps and dependent items), then the pipeline
// (Options.Submit); item states and interface availability go to the
// itemstate.Registry. The state of an item with steps or dependents is
// set by the shard from the steps' result, and its failed checks go to
// the shard too (for "Check for not supported value" steps and the
// dependents).
//
// Scheduling. One loop goroutine owns all schedule state: one min-heap
// of next check times per item type (no goroutine or timer per item) and
// the item and interface tables. Next check times come from package
// delay: the Zabbix grid of the item's interval offset by its id, so the
// first round after a start is spread over the interval (no storm) and a
// restart keeps every item on the grid it had. Within its grid second an
// item has a fixed offset from a hash of its id (schedules are kept in
// milliseconds): items sharing a second, all of them at a 1 s interval,
// do not open their connections at the same instant. SNMP items with a
// plain OID are placed by their interface's id instead, as Zabbix seeds
// them: a device's items of one interval fall due at the same instant,
// reach the checker in one batch and go out in one GET (package
// poll/snmp); so are JMX items, which go to the Java gateway in one
// request (package poll/jmx). The loop follows catalog
// swaps (Catalog.Subscribe): new and changed items are scheduled from
// the swap on, items whose delay did not change keep their next check,
// removed and disabled items stop; so an API change takes effect within
// one interval, without restart. An item that cannot be scheduled (a bad
// interval or timeout, no interface) becomes not supported, saying why.
// Item types whose CheckerSpec says NoInterface (internal items, package
// poll/selfcheck) are checked without one and keep no availability;
// those whose spec says NoAvailability (simple checks: packages
// poll/icmp and poll/tcpsvc behind a KeyRouter, which hands each check
// to the checker of its key) are checked through their interface's
// address but neither change its availability nor wait while it is
// unreachable, as in Zabbix; SSH and Telnet checks (packages poll/ssh and
// poll/telnet) are such types too, connecting to their interface's address
// (or their key's).
// Retry interval (Nagios soft states): SetRetry puts items with a retry
// interval (Item.RetryDelay) into retry mode while a trigger of theirs
// is soft (trigger.Options.OnSoft, wired by the server): they are then
// checked every retry interval, counted from the previous check, instead
// of on their grid, and go back to the grid when the trigger becomes
// HARD or OK. User macros of the item's host resolve in keys, intervals,
// timeouts and retry intervals (targets.go, catalog.Snapshot.UserMacros).
// A check that waited whole intervals (an overloaded or stopped server)
// runs once and the missed intervals are counted, not run.
//
// Bounds. Options.MaxInFlight bounds the checks of all types from
// hand-over until their result is stored, CheckerSpec.MaxInFlight those
// of one type; beyond them due checks wait in the heap, where the queue
// sees them. While the process is behind (its goroutines waited for a
// CPU at least a quarter of the last second, by Lag) a lower bound
// holds (inflight.go, Options.MaxInFlightBehind; by default the checks
// completed a second, smoothed, scaled to a third of DefaultTimeout, at
// least 1,000, falling by at most half a second): past its capacity a
// poller opening sockets up to MaxInFlight reads most replies after
// their timeout and spends its CPU on checks it then postpones. Once
// caught up the bound doubles each second back to MaxInFlight
// (peregrine_poll_in_flight_limit, and
// peregrine_poll_in_flight_limit_hits_total when it held checks back;
// TestInFlightLimitWhileBehind). Checkers never block the loop (see
// Checker), so a slow or
// dead host costs its own checks a timeout and nobody else anything.
//
// A checker may bring values of other items with a check's own
// (Result.Also: a web scenario's step items beside its web.test.fail
// item); they are stored with it, the same way. Web scenarios' other
// items are never scheduled themselves.
//
// Results. Checkers report through a callback; worker goroutines (as
// many as CPUs, at least two) take results in batches, convert them and
// call Submit, which blocks until the values are durable; then the
// checks come back to the loop, which applies availability and
// reschedules. A not supported reply or a value that does not convert
// sets the item's state and error; the next stored value clears it. A
// local error (this process out of descriptors or ports) blames neither
// the item nor the interface; it is counted and the check runs again at
// its next time.
//
// Availability (per interface, Zabbix 6.0 semantics): a network error
// (refused, timeout, reset) starts a run of failures: the interface is
// "unreachable", its checks are postponed until DisableUntil (each to
// its own grid point after it, so they stay spread) and one check at a
// time probes it, every UnreachableDelay; once failures have lasted
// UnreachablePeriod it is unavailable (available 2) and probed once per
// UnavailableDelay; the first answer (a value or not supported) makes it
// available (1) and its checks resume their schedule. Until an
// interface is first checked it is unknown (0).
//
// Our lateness is not the target's (Lag, Scheduler.behind): a
// LagMeter goroutine sleeps 20 ms at a time and adds up how late it
// wakes, the wait a runnable goroutine has for a CPU. A network error of
// a check that ran out its timeout while the lag between its hand-over
// and its result was at least half of that span says nothing of the
// target (its reply may have sat in the socket, or the agent been
// starved beside us): the interface is not blamed, the check goes back
// to the heap still due when it was (so the queue shows it) and out
// again as soon as there is room; counted as
// peregrine_poll_checks_postponed_total{reason="server_behind"} and
// logged once a minute. A refusal before the timeout is the target's
// answer whatever the lag. Every checker marks a result that came from
// its time running out (Result.TimedOut) whatever its status: the agent's
// and SNMP's network errors, ICMP's unanswered packets and
// net.tcp.service's 0 (values), the HTTP agent's and external checks'
// "Timeout ..." (not supported); while the server was behind none of
// them is stored or blames the item or interface: all are postponed the
// same way (TestBehindEveryChecker). The agent checker also reads a
// reply already in the socket when its timeout fires (package
// poll/agent, lastChance), so a reply that came in time is a value. Without this an overloaded server made its
// healthy interfaces unreachable, whose checks then waited for probes,
// and the done rate collapsed (TestIntegrationOverloadNoBlame).
//
// Queue and latency. Once a second the loop counts the checks overdue
// by more than 5 s, waiting or in flight, by Zabbix's delay buckets
// (Scheduler.Queue, peregrine_poll_queue{delay=...}), and finer, by the
// second below an hour and the minute below a day, for Zabbix's
// zabbix[queue,<from>,<to>] (Scheduler.QueueRange), and the overdue
// checks themselves (Scheduler.Overdue, for the API's queue.get); the check latency
// histogram (peregrine_poll_check_latency_seconds) measures from a
// check's scheduled time to its value's durability (or its not supported
// state), and leaves out network errors, whose time is the timeout.
// CheckNow moves items to the front (Zabbix task.create "check now");
// TakeInFlightPeak gives the highest in-flight count since its last call
// (bench poll). Busy is the loop goroutine's time in its turns
// (peregrine_poll_busy_seconds_total, zabbix[process,poller,avg,busy]).
//
// Checkers: every checker's package runs package polltest's contract
// suite (Check returns at once, one report per check, abandoned checks
// reported as such when ctx ends, timeouts kept, bounded memory, no
// goroutine left) against realistic targets on loopback.
//
// Concurrency: Run owns the loop; CheckNow and Queue are safe from any
// goroutine. Nothing is persisted: schedules are recomputed from the
// grid at start, states and availability start over (see
// itemstate.Registry).
package poll
