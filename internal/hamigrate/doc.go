// Package hamigrate moves a single node's embedded data directory into
// the engines of a high-availability cluster (issue 31): its state into
// PostgreSQL (state.store: postgres) and its history into ClickHouse
// (history.store: clickhouse). `peregrine ha migrate` runs it, as the
// node that is being moved, once the server is stopped.
//
// # Steps
//
// The migration is a list of steps (Steps), one per store, run in
// order; each reads its embedded store and writes through the store's
// own PostgreSQL backend or the ClickHouse store:
//
//   - catalog, auth, services: the SQL stores (catalog.db, auth.db,
//     services.db), each migrated to this binary's schema in its file
//     (as a start of the server would), its PostgreSQL store made at the
//     same version (sqlitedb.OpenPG), then every table's rows replaced
//     by the file's (sqlitedb.CopyToPG, sqlite_sequence last, so IDs go
//     on where the file's stopped) and the progress row set, in one
//     fenced transaction (Options.FenceSQL): all or nothing per store.
//   - events, audit, alerts: the records of the embedded logs (a WAL
//     per day under events/ and audit/, one WAL under alerts/), in
//     order, into the pglog tables event_log, audit_log and alert_log
//     (the day is the part; the alert log has one part), byte for byte:
//     both backends hold the same record encoding.
//   - preprocess_state: the preprocess.state file into the pglog.Blob
//     row pipeline.StateName of table pipeline.StateTable.
//   - log_positions: agent-state.db's positions through
//     ingest.OpenLogPositionsPG.
//   - autoreg: autoreg.db's hosts through autoreg.OpenStorePG.
//   - history: every item's values of the embedded engine, in batches,
//     into ClickHouse (Options.History, a store acknowledging once
//     inserted), items in ascending id order.
//
// # Resuming, exactly once
//
// Progress is kept in table migrate_progress of the state schema: one
// row per (store, part) with the records done and whether the part is
// finished. Log records are copied in chunks (at most 1,024 records or
// 4 MiB), each chunk in one fenced transaction (Options.Write, the HA
// lease's) together with its progress row, so a chunk is either stored
// with its progress or not at all; a rerun skips finished parts and the
// records already counted in an unfinished one (an embedded log replays
// in the same order every time). The SQL stores are one transaction
// each, with their progress row; a rerun redoes an unfinished one whole.
// The whole-value stores
// (preprocess_state, log_positions, autoreg) write by key and are
// marked finished after; a rerun writes the same keys again. History
// is marked per chunk of items after their values were inserted; an
// interrupted chunk is inserted again on the rerun, and ClickHouse's
// (itemid, clock, ns) key keeps one value of each copy (package
// clickhouse): read back, every value is there once.
//
// The migration is meant for a fresh cluster: the tables it appends to
// should hold nothing of another server. The node must be active (its
// lease fences every write), which is why `peregrine ha migrate` joins
// the cluster under the configuration's ha.node_name and waits until
// it is active; the server on that data directory must be stopped (the
// embedded stores are opened, and refused while locked).
//
// Progress is printed to Options.Out as each part ends, and every
// 100,000 history values.
package hamigrate
