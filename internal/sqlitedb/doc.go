// Package sqlitedb opens the small SQLite databases Peregrine keeps its
// transactional state in (the catalog of hosts and items, the API's users,
// sessions and tokens) in one way: one owning process enforced by a lock
// file, durable commits, a versioned schema created or migrated at open.
//
// History never goes through SQLite; see internal/history/engine.
package sqlitedb
