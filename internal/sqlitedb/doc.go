// Package sqlitedb opens the small SQLite databases Peregrine keeps its
// transactional state in (the catalog of hosts and items, the API's users,
// sessions and tokens) in one way: one owning process enforced by a lock
// file, durable commits, a versioned schema created or migrated at open,
// and files readable by the owner only (a new database, its -wal and -shm
// files and the lock file are 0600 whatever the umask).
//
// With state.store: postgres the same stores live in PostgreSQL
// instead (OpenPG, docs/ha.md): a new store is made from a new SQLite
// database of the same schema put in PostgreSQL's dialect, and a
// wrapper of pgx's database/sql driver rewrites the stores' SQLite
// statements (pgtranslate.go), so each store keeps one copy of its SQL;
// every write transaction is begun fenced by the HA lease (Begin).
// OpenStore is the stores' one way in: PostgreSQL when configured, else
// the SQLite file under its lock.
// PG.ReadOnly opens a store an active node made without writing (an
// HA standby's reads; every Begin fails with ErrReadOnly), and
// CopyToPG replaces a PostgreSQL store's rows with an SQLite file's
// (peregrine ha migrate).
// MigratePG is every PostgreSQL state store's one way to version its
// tables: a row per store in schema_version of the state schema.
//
// History never goes through SQLite; see internal/history/engine.
package sqlitedb
