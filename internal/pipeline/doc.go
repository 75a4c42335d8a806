// Package pipeline moves accepted values from ingest to the history store.
//
// One way in: every source of values (the trapper's sender data, the
// API's history.push, active agents, pollers, SNMP traps, and the ways
// to come: proxies, discovery) enters through this package's intake, in
// this order, and nowhere else converts or preprocesses a value:
//
//   - acceptance (accept.go): ItemByKey or ItemByID finds the item and
//     applies Zabbix's trapper rules in its order (host exists and is
//     monitored, item exists, its type is one the way in delivers
//     (Types), item enabled); a refusal is a Refusal, whose String is
//     the metric label. A way in may add its own rules after it (the
//     trapper's TLS check, an active agent's session).
//   - Prepare (or PrepareError for a failed check): conversion to the
//     item's value type, or, for an item with preprocessing steps or
//     dependent items, the text handed on as a Raw sample.
//   - Submit, per batch: preprocessing and dependent items in the
//     item's shard, the store write, the commit hook, acknowledgement.
//
// internal/buildcheck's layer test fails if a package other than this
// one (and the API's preprocessing.test, which traces steps without
// storing) calls package preprocess's conversion or step functions.
//
// Values are routed by item id to one of N shards (N defaults to the CPU
// count). Each shard owns a bounded queue, the per-item state that
// triggers and the API read (last and previous value), and two
// goroutines, a preprocessing stage and a commit stage: the first drains
// the queue in batches and preprocesses (and converts) each, the second
// writes it to the history Writer. They overlap, so that batch N+1 is
// preprocessed while batch N is written and fsynced; the hand-off is one
// channel send per batch, and at most two batches are in flight between
// the queue and the store (one being written, one preprocessed or being
// preprocessed). The commit stage takes batches in the order the first
// drained them, so an item's values are written, and its per-item state
// updated, in the order they were submitted.
//
// Acknowledgement: Submit returns only after every value it was given has
// been accepted by the store's Write, which for the durable engine means
// "in the WAL per the fsync policy". A store error is returned to every
// submitter of the failed batch, so nothing is acknowledged that was not
// stored.
//
// All or nothing: a shard hands its batch to the store in pieces of up
// to MaxBatch values cut between submitters, so that the values one
// Submit gave a shard go to the store in one Write (a Submit larger than
// MaxBatch is written alone), and a Write is all or nothing
// (history.Writer), a restart included. A Submit whose values all went
// to shards whose write failed gets the store's error and nothing of it
// is stored; a sender told "failed" that sends again stores each value
// once. When one shard's write failed and another's succeeded (the
// store failed between the two), Submit returns a *PartialError saying
// how many values, and which items' (StoredItem), were stored, so that
// the way in can answer with exact processed and failed counts instead
// of a "failed" that would make the sender duplicate the stored ones.
//
// Refusal before writing: Options.Admit (the server's check of the
// store's WriteErr and of the data directory's free space) is asked once
// per Submit; while it says no, Submit refuses the whole request with
// its reason before any shard writes, counted in
// peregrine_pipeline_refused_values_total and logged once a minute.
//
// A failed write and the preprocessing state: Zabbix keeps the state its
// preprocessing computed (previous values of the change and discard
// steps) even when the history write then fails. Peregrine does not: a
// value sent again after the failure would be compared with its own
// unstored self, and a discard-unchanged step would discard it, so that
// it is never stored. The commit stage therefore forgets the step state
// of the items of a failed batch (as when an item's steps change: a
// change step discards its next value as a first one, a discard step
// stores it) before it fails the batch's submitters, and it fails
// without a write the batch preprocessed meanwhile on that state (its
// submitters hear the store's error, wrapped), forgetting its items'
// state too. Nothing is acknowledged that was computed from values that
// were not stored.
//
// Back-pressure: when a shard's queue holds QueueValues values, Submit
// blocks until the shard drains; nothing is dropped and no queue grows
// without bound. The preprocessing stage drains the queue only when one
// of the two in-flight slots is free, so memory per shard is bounded by
// three times QueueValues (the queue being filled plus two batches in
// flight), plus the values dependent items add.
//
// Hook: Options.OnCommit (a CommitFunc) is called once per batch the store
// accepted, before its submitters are acknowledged. It is how trigger
// evaluation and other per-value consumers attach without this package
// importing them; see CommitFunc for its contract.
//
// Preprocessing (preproc.go): a value of an item with steps or
// dependent items is submitted as text (a Raw sample, made by Prepare,
// which every way in calls) and preprocessed in the shard that owns the
// item, on the shard's preprocessing stage, just before the store write: the
// item's chain (package preprocess) runs, then the conversion to its
// value type (none for a numeric result of an item without dependents,
// stored as the number it is: finishNumber), then each dependent
// item's chain on the result, up to 3
// levels, all in the same batch. There is no central preprocessing
// manager and no extra goroutine hop per value. Values of items without
// steps or dependents are converted where they arrive (Prepare again),
// which is what the shard would do with them; a sender's value that does
// not convert counts as processed and makes the item not supported, as
// in Zabbix, set by the trapper once the request's values are durable.
// A failing step or conversion
// makes the item not supported with the message (Options.Runtime),
// counted and logged (throttled); the next good value makes it
// supported again; a discarded value stores nothing and changes no
// state. A master's failure is its dependents' input, so they become
// not supported too unless a "Check for not supported value" step turns
// it into a value.
//
// JavaScript steps (lanes.go, issue 25) never run on a shard's
// goroutines: a script may loop to its time limit or grow to its memory
// limit, and one item's script must not hold the other items of its
// shard. The chain stops before the step (preprocess's Input.Defer),
// the value waits in its item's lane, whose goroutine runs the item's
// scripts one at a time on Options.JS (the server's pool of worker
// processes, package jsvm), and the shard resumes the chain once the
// script ended. A batch waits for its scripts up to Options.JSWait
// (10 ms); a value whose script takes longer is detached: the batch is
// written without it, its submitter keeps waiting (its Ticket counts
// the value), and the value is finished and written in a later batch.
// An item's values keep their order (a value goes behind its item's
// values still in a lane, even when it needs no script); values of
// other items never wait for them. A lane drops a new value that would
// wait more than a time limit for the scripts before it, making the item
// not supported with the reason
// (peregrine_preprocessing_js_refused_total). Stop waits for the
// detached values. A Submit with NewTicketNoScripts (the poller's results
// and SNMP traps, which acknowledge to no one and carry many items'
// values in one Submit) does not wait for its detached values: they are
// written on their own when their scripts end.
//
// Dependent items are processed in the shard of their root master,
// where the master's value arrives: Submit routes by the submitted
// item (always a root: only dependent items have masters, and nothing
// submits for them), and Last and Seed look a dependent up in its
// root's shard. An item whose master changes moves with it; its last
// values in the old shard are then forgotten. The JSON document of a
// master value is parsed once for all its dependents' first JSONPath
// steps (preprocess.Cache, one per level).
//
// Chains are compiled once per shard per distinct chain of the catalog,
// except those whose parameters hold user macros ({$MULTIPLIER}): those
// are compiled per item with its host's values (catalog.ExpandSteps),
// again when the snapshot's macros change (which forgets the item's
// step state, as a change of its steps does); one that does not compile
// with the values makes the item not supported, saying why.
//
// The steps' per-item state (previous values for the change and discard
// steps) lives in the shard beside the compiled chain, and survives a
// restart through a state file (Options.StatePath,
// docs/format/preprocess-state.md) saved every StateInterval and at
// stop, and read by New; with Options.StateStore (state.store:
// postgres) the same bytes go to a row in PostgreSQL (pglog.Blob),
// each save fenced by the HA lease. It is persisted rather than rebuilt from
// history because a change step remembers its input, which history does
// not hold (it holds the change). A state file that is damaged is
// refused as a whole; the change steps then discard each item's first
// value, as after Zabbix's restarts.
//
// Restart: the per-item state lives in memory. Seed rebuilds it from the
// store at start (the newest two values of each catalog item), so that
// the API's last and previous values survive a restart.
//
// Item states: a failing step or conversion in a shard sets its item
// not supported, the next good value supported again, in the registry
// of package itemstate (Options.ItemStates), which the other ways in
// and the pollers write and the API reads.
//
// Self-monitoring: values whose script outlasted JSWait are counted
// (peregrine_preprocessing_js_detached_total), values refused by a lane
// too far behind (peregrine_preprocessing_js_refused_total), values in
// lanes (peregrine_preprocessing_js_waiting). Committed values are
// counted per value type
// (ValuesCommitted, peregrine_pipeline_values_committed_by_type_total)
// and the time both stages work (preprocessing; writing, last values and
// the commit hook) is the shards' busy time, over two goroutines per
// shard (Busy, zabbix[process,pipeline shard,avg,busy]).
//
// Concurrency: Submit may be called from any number of goroutines. A
// shard's preprocessing memory is touched by its preprocessing stage,
// under a mutex taken once per batch with Raw samples, by SaveState,
// and by the commit stage after a failed write. The hot
// path is not lock-free: it takes each touched shard's queue mutex once
// per submitted batch (not per value), and the commit stage takes its
// state lock once per written batch to update the per-item state. Last
// takes that lock shared for one map lookup. Seed writes the state under
// the same lock and may run concurrently with commits. A lane's
// goroutine (lanes.go) touches only the lane's list of scripts (under
// the lane's mutex) and the result and state of the entry it runs; the
// rest of a lane, and all step state, is the preprocessing stage's,
// under prepMu.
package pipeline
