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
//     until closed manually); a PROBLEM result of a trigger whose master
//     (a dependency, followed up the chain) is in PROBLEM is ignored;
//     UNKNOWN changes no value and no problem, only the trigger's state
//     and error. Disabled and deleted triggers are skipped.
//   - Event content: name and operational data expanded through a
//     Resolver (MacroResolver: {HOST.*}, {TRIGGER.*}, {ITEM.VALUE}-style
//     macros and user macros of the trigger's first host, with its
//     templates and the global ones, from the snapshot; secret values
//     masked as ******); in operational data {ITEM.VALUE} and
//     {ITEM.LASTVALUE} go through the item's value map, "Up (1)", as
//     Zabbix's frontend shows them (opdata.go); severity from
//     the trigger's priority, tags from the trigger and its hosts with
//     macros in values expanded, duplicates dropped; a problem is made
//     suppressed when Options.Suppress says a maintenance covers it
//     (package maintenance). With MacroResolver, a trigger whose own
//     texts have macros has them expanded once per catalog snapshot,
//     except texts with {ITEM.*} macros (per event); OK events' texts
//     are always the trigger's with *UNKNOWN* item values.
//   - Nagios-style soft and hard states (Peregrine's extension, issue
//     13 item 5): a trigger with MaxCheckAttempts N > 1 whose value is
//     OK counts consecutive PROBLEM results; below N it is SOFT (no
//     event, Machine.Soft gives the attempt), the Nth makes the problem
//     event (HARD). An OK result starts the count over; UNKNOWN keeps
//     it; recovery from a HARD problem is immediate. Options.OnSoft
//     hears a trigger enter and leave the soft state (the server then
//     re-checks its items at their retry interval). Attempts live in
//     memory: after a restart counting starts over.
//   - Acknowledge actions (Machine.Acknowledge): acknowledge,
//     unacknowledge, message, severity change and manual close with
//     Zabbix's rules and messages; a close makes an OK event carrying
//     the user, and a trigger left without open problems becomes OK.
//   - Deleted triggers (Machine.Reconcile): the open problems of
//     triggers no longer in the catalog are resolved by an OK event
//     without a user, and their runtime dropped, as Zabbix drops them.
//   - Evaluation (Evaluator, eval.go): Commit is the pipeline's commit
//     hook; it looks up the triggers of each committed value's item
//     (catalog TriggersOfItem) and adds them to a pending set keyed by
//     trigger, keeping the newest value time, under one short lock per
//     batch, then wakes Run's goroutine. Triggers already pending are
//     coalesced; past EvaluatorOptions.MaxPending distinct triggers new
//     ones are dropped and counted (peregrine_trigger_eval_dropped_total),
//     never waited for, so ingest never blocks on evaluation. Each pass
//     (Drain) swaps the set out and evaluates every pending trigger once,
//     at the time of its newest committed value (Zabbix's rule: the
//     event's clock is the value's), however many values and shards
//     touched it, and hands all results to Process in one call (one
//     commit); pass durations are observed in
//     peregrine_trigger_eval_pass_seconds: values of a trigger that
//     arrive while a pass runs are coalesced into one evaluation at the
//     newest one's time, so a late pass can skip a PROBLEM that a later
//     value already ended (Zabbix evaluates every value). A timer pass (TimerPass, every TimerInterval, 30 s by
//     default as Zabbix's timer) evaluates the time-based triggers
//     (expr.Expr.TimeBased: nodata, date/time and trend functions) at
//     the clock's time. Expressions are parsed once per trigger and kept
//     while the trigger's texts are unchanged; entries of deleted
//     triggers go at the first pass after the catalog change. Values are
//     read through exprsource.StoreSource from EvaluatorOptions.Values,
//     the value cache (package history/valuecache, fed by the same
//     commit hook before Commit), or from the history store without it;
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
// shard at once; its passes (Drain, TimerPass) are serialised with each
// other and run on Run's goroutine. A value pass of more than a few
// thousand triggers parses new expressions first, serially, then
// evaluates on up to GOMAXPROCS goroutines, so the Store, Values,
// LastValue and Macros it was given must be safe for concurrent use;
// the results go to Process in one call as before.
package trigger
