// Package itemstate holds the runtime state of monitored objects that
// is not history: whether each item is supported (and why not), and the
// availability of each host interface, as Zabbix's item.get and
// host.get show them.
//
// Writers are the ways values come in and the checks that make them:
// pollers and their availability tracking, the active-agent server, the
// SNMP trap receiver, and the pipeline shards, which set the state of
// an item with preprocessing steps from the steps' result. Readers are
// the API (item.get's state and error, host.get's interfaces), the
// internal items (zabbix[items_unsupported], zabbix[wcache,values,not
// supported]) and the UI. It imports nothing of Peregrine but sqlitedb
// (for pg.go), so every stage may write to it without importing another
// stage.
//
// The embedded server keeps it in memory only: after a restart every
// item is normal and every interface unknown until checked again, as
// Zabbix shows an interface not yet checked. A cluster node
// (state.store: postgres, docs/ha.md) copies it to PostgreSQL (pg.go):
// the active node's Writer upserts what changed every second, fenced
// by its lease, one row per item not supported and per interface
// checked; a standby's Follower reads the rows into the standby's own
// Registry, which its API reads; a node taking over starts from them
// (Restore). It does not own the values themselves (package history)
// nor the last values (package pipeline).
//
// Concurrency: a Registry is safe for concurrent use. IDs are striped
// over 64 locks; there is no global lock, and recording a success for an
// item that is already normal costs an atomic load.
package itemstate
