// Package clickhouse is the ClickHouse history backend
// (history.store: clickhouse): values are acknowledged once they are in
// Peregrine's own spool, a write-ahead log (package internal/wal, the
// one the embedded engine uses), and a shipper goroutine inserts them into ClickHouse
// asynchronously, so that a ClickHouse outage of minutes loses nothing
// and does not stop ingest until the spool holds Options.SpoolLimit
// values. Options.ReadOnly (an HA standby's history.get) reads only: no
// schema change, no spool, no inserter, and the tables an item's values
// are in looked up at every read, since another node writes them.
//
// # Protocol
//
// ClickHouse's HTTP interface (client.go), with RowBinary both ways
// (rowbinary.go): our own small encoder and a streaming decoder, because
// the format is a few lines and works unchanged from Debian's 18.16 to
// current releases. Several URLs are equivalent endpoints: a request that
// cannot reach one tries the next; an error answer is final. Passwords
// go in Basic auth and are never logged.
//
// # Schema (schema.go)
//
// One ReplacingMergeTree(ver) table per value type (history,
// history_uint, history_str, history_text, history_log), PARTITION BY
// toYYYYMMDD(clock), ORDER BY (itemid, clock, ns). The server's version
// (SELECT version()) decides the extras: column codecs (DoubleDelta,
// Gorilla, T64 with ZSTD) from 19.11, table TTL from 19.6; 18.16 gets
// the plain schema. Peregrine creates the schema and records its version
// in peregrine_schema; migrations apply only what is missing, and DDL
// runs only when the schema is behind. Schema 2 adds the trends table.
//
// # Durability and idempotence (store.go)
//
// Write appends the batch to the WAL (durable under the configured fsync
// policy when it returns) and to the in-memory spool generation. Every
// FlushInterval (or once BatchSize values wait) the shipper seals the
// generation at a WAL cut, inserts it, and only then truncates the WAL
// segments it occupied. A failed insert is retried whole after
// RetryInterval: delivery is at least once, and duplicates are harmless
// because every row carries ver (increasing in write order) and rows of
// one (itemid, clock, ns) are one value: merges keep the highest ver, and
// reads keep it before merges (unlimited reads in the RowBinary decoder,
// limited ones and aggregates in SQL with LIMIT 1 BY clock, ns). The same
// rule gives Zabbix's last-write-wins for a resent timestamp. After a crash the WAL is replayed into the spool and shipped
// again. Shipping errors are counted by cause
// (peregrine_clickhouse_ship_errors_total{kind}: unreachable, readonly,
// quota, disk_full, too_many_parts, server) and logged once a minute per
// cause; the backlog is peregrine_clickhouse_spool_values.
//
// # Acknowledging after the insert (ackinsert.go)
//
// With Options.Ack = AckInserted (history.clickhouse.ack: inserted, the
// mode of an HA cluster node, whose disk may be gone after a failover)
// there is no spool: Write queues its values for the inserter goroutine
// and returns only once ClickHouse accepted the insert holding them.
// The inserter takes every write queued and inserts them together (a
// group commit: one INSERT per table per group), up to four groups at
// once; writes that arrive while four run go together in the next, so
// the part count follows the insert rate, not the write rate. A failed insert fails every write of its group (the trapper
// answers "failed", agents and proxies send again) and, for
// RetryInterval after it, new writes are refused at once (WriteErr);
// a write waits at most AckTimeout (ErrAckTimeout). An insert that
// failed half way, or timed out after landing, leaves rows that a
// resent copy makes one value under the (itemid, clock, ns) rule
// below, so nothing acknowledged is lost with the node and nothing is
// doubled. A spool left by an AckSpooled run is inserted at Open
// before any write.
//
// # Reads (read.go)
//
// Read, Downsample and ReadTrends are pushed down to SQL (ORDER BY,
// LIMIT, GROUP BY intDiv(clock - from, width), GROUP BY hour) and decoded
// row by row from the response stream. The item's unshipped values are
// copied from the spool before ClickHouse is asked and merged in, the
// spool winning on equal timestamps, so a value is readable as soon as
// Write returns. The newest values of an item (descending with a limit:
// last values) are read in windows growing back from the range's end,
// because 18.16 cannot read in key order and would sort the whole range.
// Downsample and trends of an item with unshipped values in the range
// fold a merged Read instead. ReadMany and CountMany (many.go) ask one
// query per table for up to 8192 items. Last values for triggers and
// item.get come from the pipeline's state, never from here; only at
// start does the pipeline seed that state, through ReadNewest
// (newest.go): per chunk of 8192 items and per table holding values,
// windows growing back from now (LIMIT n BY itemid), so 100k items cost
// a few dozen queries instead of several per item.
//
// # Trends and retention (retention.go)
//
// Trends are computed from the deduplicated history at read time while
// it exists: exact under retries and last-write-wins, and an hour of one
// item is a primary-key range. DropBefore rolls each numeric day up into
// the trends table (INSERT ... SELECT, idempotent on (itemid, clock))
// and then drops the day partitions; ReadTrends reads the rolled-up
// hours where history is gone. Retention is ALTER TABLE ... DROP
// PARTITION, never DELETE.
//
// Which tables hold an item is learned from writes and, on the item's
// first read, from one primary-key lookup per table (batched for many
// items), so that later reads ask one table.
//
// # Cluster
//
// With Options.Cluster (a cluster of the servers' remote_servers) every
// server gets the local tables and a Distributed twin of each
// (history_all, ..., trends_all) sharded by itemid, so an item's rows are
// all on one shard and deduplicate there. Reads go through the twins;
// writes go through them synchronously (insert_distributed_sync) or, with
// DirectWrites, straight to the shard's local table (itemid modulo the
// shard count). DDL and retention run on each server (no ON CLUSTER: it
// needs ZooKeeper). Replication (ReplicatedMergeTree) is not set up by
// Peregrine.
//
// Concurrency: every method may be called from many goroutines; Read
// holds the spool lock only to copy one item's unshipped values.
package clickhouse
