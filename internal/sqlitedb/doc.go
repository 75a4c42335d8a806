// Package sqlitedb opens the small SQLite databases Peregrine keeps its
// transactional state in (the catalog of hosts and items, the API's users,
// sessions and tokens) in one way: one owning process enforced by a lock
// file, durable commits, a versioned schema created or migrated at open,
// and files readable by the owner only (a new database, its -wal and -shm
// files and the lock file are 0600 whatever the umask).
//
// MigratePG is the PostgreSQL state stores' one way to version their
// tables: a row per component in schema_version of their schema.
//
// History never goes through SQLite; see internal/history/engine.
package sqlitedb
