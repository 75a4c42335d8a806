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
//     macros and user macros through a lookup function), severity from
//     the trigger's priority, tags from the trigger and its hosts with
//     macros in values expanded, duplicates dropped.
//   - Acknowledge actions (Machine.Acknowledge): acknowledge,
//     unacknowledge, message, severity change and manual close with
//     Zabbix's rules and messages; a close makes an OK event carrying
//     the user, and a trigger left without open problems becomes OK.
//   - Deleted triggers (Machine.Reconcile): the open problems of
//     triggers no longer in the catalog are resolved by an OK event
//     without a user, and their runtime dropped, as Zabbix drops them.
//   - Runtime persistence: every change of value, state or error is
//     written to the event store with the events it goes with, in one
//     commit; New reads the runtimes back, so they survive a restart.
//
// # What it does not own
//
// Evaluating expressions (package expr; the evaluator calls Process with
// its results), storing events (package event, behind the Store
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
// whole batch.
package trigger
