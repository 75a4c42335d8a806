// Package audit is the durable audit log of the API: who changed what,
// when and from where, as Zabbix 6.0's auditlog table records it and
// auditlog.get returns it (user, IP, action, resource type and ID, the
// resource's name, a record set per request and the changes in
// Zabbix's details format). The API writes it (internal/api decides
// what each method records); this package keeps it.
//
// # What it owns
//
//   - Record, Zabbix's numbers for actions and resource types, and the
//     CUIDs that name records and record sets (NewCUID).
//   - The log (Log): one write-ahead log per UTC day of writing under
//     Options.Dir (docs/format/audit.md), written through internal/wal
//     under the fsync policy given (audit.fsync): Append returns nil
//     only once its records are durable, and the API answers a write
//     only after that. Replayed at Open. Or, with Options.Postgres
//     (state.store: postgres), the same records as rows of table
//     audit_log in PostgreSQL, the day as each row's part, every write
//     fenced by the HA lease (package daylog places them either way).
//   - Retention: day directories whose day ended more than the
//     retention ago are deleted whole (Zabbix's hk_audit, 365 days by
//     default; SetRetention changes it at run time, 0 keeps everything),
//     and the records older than it leave memory. Nothing is rewritten.
//   - The memory bound: at most Options.MaxRecords records are kept in
//     memory for auditlog.get, the oldest dropped first; a day directory
//     whose records have all left memory is deleted too.
//   - A follower (OpenFollower, follow.go: an HA standby's
//     auditlog.get): the PostgreSQL log read without writing, Follow
//     applying what the active node committed since and forgetting what
//     its retention deleted; Append fails with ErrReadOnly.
//
// # What it does not own
//
// Which API calls make which records, their details and the masking of
// secrets (internal/api); who may read the log (super admins, checked
// by the API).
//
// # Concurrency contract
//
// Every method is safe for concurrent use. Appends are serialised by
// one mutex while their records are queued to the WAL, then wait for
// durability outside it, so concurrent appends share fsyncs. Readers
// (Walk) hold a read lock while they walk the records in memory, which
// are kept in clock order; they must not call Append from the walk.
package audit
