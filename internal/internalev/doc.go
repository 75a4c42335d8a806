// Package internalev makes Zabbix 6.0's internal events (event source
// 3): an item (object 4) or LLD rule (object 5) becoming not supported,
// a trigger (object 0) becoming unknown, each a problem event (value 1,
// the error as its name), and the OK event (value 0) that resolves it
// when the object is normal again.
//
// # What it owns
//
//   - The transitions: Producer.ItemState (the item states' OnChange
//     hook), TriggerState (the trigger batches' runtimes), LLDRuleState
//     (for the low-level discovery rules' processing). Only changes make
//     events; the internal problems open at start are read from the
//     event store, so a restart does not open them twice. A problem and
//     its recovery that meet before the problem is stored make nothing.
//   - A bounded queue (Options.QueueSize; overflow counted in
//     peregrine_internal_events_dropped_total) stored in batches by Run.
//
// # What it does not own
//
// Item and trigger states (packages itemstate and trigger), the actions
// on internal events (package alert matches them: event type, host
// group, host, template, tags), event.get (the API).
//
// # Concurrency contract
//
// ItemState, TriggerState and LLDRuleState may be called from any
// goroutine and never block on storage; Run's goroutine alone commits.
package internalev
