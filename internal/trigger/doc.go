// Package trigger is the problem state machine: it turns evaluation
// results of triggers (OK, PROBLEM or UNKNOWN with an error, at a time)
// into events with Zabbix's semantics and keeps each trigger's runtime
// (value, state, error, last change).
//
// # What it owns
//
//   - The rules (Machine.Process): OK→PROBLEM makes a problem event;
//     PROBLEM→PROBLEM makes another only for "multiple problem events"
//     triggers; PROBLEM→OK resolves the trigger's open problems with one
//     OK event under recovery mode "expression", only once the recovery
//     expression is also true under "recovery expression", and never
//     under "none" (the value goes back to OK, the problems stay open
//     until closed manually); under "OK event closes: all problems if
//     tag values match" (CorrelationMode 1, machine.go recover) the OK
//     event resolves only the problems whose CorrelationTag tag has its
//     value, is not made when none has, and the trigger stays PROBLEM
//     while problems stay open (recorded from 6.0.14, corrmode_test.go);
//     any result of a trigger whose master (a
//     dependency, followed up the chain) is in PROBLEM is ignored, as
//     Zabbix 6.0 ignores it: no problem, no recovery, no UNKNOWN;
//     UNKNOWN changes no value and no problem, only the trigger's state
//     and error. Disabled and deleted triggers are skipped.
//   - Event content: name and operational data expanded through a
//     Resolver (MacroResolver: {HOST.*}, {TRIGGER.*}, {ITEM.VALUE}-style
//     macros and user macros of the trigger's first host, with its
//     templates and the global ones, from the snapshot; secret values
//     masked as ******); {ITEM.VALUE} and {ITEM.LASTVALUE} in names,
//     tag values and operational data show as the Zabbix 6.0 server
//     writes them: through the item's value map, "Up (1)", else with
//     the item's units ("1.4 GB", "1h 2m 5s"; package zbx/units), the
//     table recorded from 6.0 in opdata.go; severity from
//     the trigger's priority; tags (tags.go) as the Zabbix 6.0 server
//     makes them: the trigger's, then for each item of the problem
//     expression in order of appearance its tags and its host's, names
//     and values expanded (item and host tags in their host's context,
//     {ITEM.*} left as written), each pair once; a problem is made
//     suppressed when Options.Suppress says a maintenance covers it
//     (package maintenance). With MacroResolver, a trigger whose own
//     texts have macros has them expanded once per catalog snapshot,
//     except texts with {ITEM.*} macros (per event); a recovery's OK
//     event has the texts a problem of its evaluation would have (no
//     operational data), as 6.0.14 makes it; the OK events made without
//     an evaluation (a manual close, correlation rules) have no tags and
//     show {ITEM.*} as *UNKNOWN* in their names.
//   - Nagios-style soft and hard states (Peregrine's extension, issue
//     13 item 5): a trigger with MaxCheckAttempts N > 1 whose value is
//     OK counts consecutive PROBLEM results; below N it is SOFT (no
//     event, Machine.Soft gives the attempt), the Nth makes the problem
//     event (HARD). An OK result starts the count over; UNKNOWN keeps
//     it; recovery from a HARD problem is immediate. Options.OnSoft
//     hears a trigger enter and leave the soft state (the server then
//     re-checks its items at their retry interval). Attempts live in
//     memory: after a restart counting starts over.
//   - Global event correlation (correlate.go, corrformula.go): each new
//     problem is matched against the enabled rules of
//     Options.Correlations (catalog.AlertConfig.Correlations, read at
//     each Process: an edit counts from the next batch), with Zabbix
//     6.0's semantics; "close old events" and "close new event" make
//     OK events carrying the rule and the new problem, committed with
//     the problem in one batch (durable together), and the triggers
//     left without open problems become OK. Old problems are found
//     through the event store's tag index (CorrelationStore). Without
//     rules, a batch costs one configuration load and nothing else.
//   - Acknowledge actions (Machine.Acknowledge): acknowledge,
//     unacknowledge, message, severity change and manual close with
//     Zabbix's rules and messages; a close makes an OK event carrying
//     the user, and a trigger left without open problems becomes OK
//     (one with problems left stays PROBLEM; either way its last change
//     is the close's, as in 6.0.14).
//   - Deleted triggers (Machine.Reconcile): the open problems of
//     triggers no longer in the catalog are resolved by an OK event
//     without a user, and their runtime dropped, as Zabbix drops them.
//   - Evaluation (Evaluator, eval.go): triggers are sharded by id over
//     EvaluatorOptions.Shards evaluation shards (GOMAXPROCS by
//     default), each with its own queue, lock, parse cache, timer and
//     goroutine; no lock is shared by all of them. Commit is the
//     pipeline's commit hook: it looks up the triggers of each committed
//     value's item (catalog TriggersOfItem), buckets them by shard and
//     appends them, with the value's time, to each affected shard's
//     queue under one short lock per shard and batch, then wakes the
//     shard. A pass sorts its queue by trigger ID (a radix sort) and
//     walks the snapshot's triggers and the parse cache, a slice indexed
//     like them, in that order: at a million triggers, maps keyed by ID
//     made every evaluation a string of cache misses (BenchmarkEvaluatePass:
//     3.6x faster this way). Every value is evaluated, in order (Zabbix's
//     rule: its history syncer hands triggers every value): a queued
//     trigger keeps one evaluation time per distinct timestamp of its
//     values, and a pass (Drain) evaluates round by round (round r is
//     each trigger's r-th oldest time), handing each round's results to
//     Process in one call (one commit), so a 1 followed by a 0 makes a
//     problem and its recovery even when both arrive before or during a
//     pass, or within one second: history functions evaluated as of a
//     time read the values up to that nanosecond (expr.HistoryQuery's
//     Before). Values with the same timestamp (of one item, or of several
//     items of the trigger) are one evaluation; no time is merged into
//     another, however many wait. Memory is bounded without losing an
//     evaluation or blocking ingest (eval_backlog.go): past
//     EvaluatorOptions.MaxPending queued evaluations a shard enters
//     backlog mode, where every commit only widens its triggers' spans of
//     value times (one map entry per trigger); a pass evaluates the queue,
//     then reads each backlogged trigger's items' values in its span back
//     from Store, oldest first and in chunks, and evaluates the trigger at
//     each distinct time, until the backlog is empty
//     (peregrine_trigger_eval_backlogged_total, _reread_total,
//     peregrine_trigger_eval_backlog; a span that cannot be read back is
//     counted in peregrine_trigger_eval_dropped_total and logged). While
//     backlogged a trigger's evaluations only move forward in time: a
//     value arriving older than one already evaluated is seen by later
//     reads, not evaluated at its own time. OK results of triggers that are OK and normal
//     (Machine.Settled), most of them under load, are not sent to
//     Process. An event's clock is its value's; pass durations are
//     observed per shard in peregrine_trigger_eval_pass_seconds.
//     {ITEM.VALUE} of an event is the item's value as of the evaluated
//     time (read as last() reads it), so a pass running late still names
//     the value that raised it.
//     Each shard's timer pass (TimerPass, every TimerInterval, 30 s by
//     default as Zabbix's timer) evaluates its time-based triggers
//     (expr.Expr.TimeBased: nodata, date/time and trend functions) at
//     the clock's time. Expressions are parsed once per trigger and kept
//     while the trigger's texts are unchanged; entries of deleted
//     triggers go at the first pass after the catalog change. Values are
//     read through exprsource.StoreSource from EvaluatorOptions.Values,
//     the value cache (package history/valuecache, fed by the same
//     commit hook before Commit), or from the history store without it.
//     An evaluation caused by a numeric value carries it (the queue
//     keeps it), so last() of that item at that time, the common
//     trigger, reads nothing (exprsource.StoreSource.Known), and a
//     trigger of exactly the form last(/host/key) OP N without a
//     recovery expression is not even walked: expr.Expr.CompareLast
//     applies the comparison to that value, the result Eval gives;
//     //key names the trigger's host when it has exactly one. The
//     User macros in expressions ({$CPU.UTIL.CRIT}, with contexts)
//     resolve in the evaluated snapshot's scope of the trigger's host
//     (catalog.Snapshot.UserMacros), so a macro changed through the
//     API counts from the next evaluation; an undefined one makes the
//     trigger unknown. A trigger over several hosts resolves, as Zabbix
//     does, each item function's parameters in its item's host's scope
//     and the other macros over all of its hosts
//     (catalog.Snapshot.UserMacrosOfHosts; hostmacros.go). The
//     recovery expression is evaluated when the expression is false and
//     the trigger's recovery mode is "recovery expression"; a result
//     that is not a number is UNKNOWN.
//   - Runtime persistence: every change of value, state or error is
//     written to the event store with the events it goes with, in one
//     commit; New reads the runtimes back, so they survive a restart.
//
// # What it does not own
//
// The expression language and its functions (package expr), storing events (package event, behind the Store
// interface), permissions and the API's parameter checks, actions and
// notifications.
//
// # Concurrency contract
//
// A Machine may be used from any number of goroutines: Process and
// Acknowledge are serialised by one mutex, held while their batch is
// committed, so a trigger's events are decided and stored in order.
// Runtime takes only a read lock that writers hold for a map update, never
// across an fsync, so readers do not wait for evaluation. Evaluation callers
// should hand over results in batches: one commit (and fsync) covers a
// whole batch. An Evaluator's Commit may be called by every pipeline
// shard at once; each evaluation shard's passes are serialised with each
// other and run on its own goroutine under Run (Drain and TimerPass run
// all shards at once), so the Store, Values and Macros it was
// given must be safe for concurrent use, and Process is called by
// several shards at once (its mutex orders them).
package trigger
