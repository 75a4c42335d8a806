// Package valuecache is the value cache: the recent values of the items
// that trigger functions and calculated items read (last, prev, avg,
// min, max, count over short windows), kept in memory so that an
// evaluation reads no history store. It is a history.Reader in front of
// the store: what it cannot answer goes to the store.
//
// # Policy (Zabbix's value cache, by requested period)
//
//   - An item is cached only once a function asks for it: the first
//     read of an item misses, loads what the read needs from the store
//     (newest first) and keeps it. From then on the pipeline's commit
//     hook (Add) appends the item's new values, so the next reads hit.
//   - Each item keeps the longest window (seconds) and the largest count
//     any read asked of it, and the cache keeps that much of the item
//     (plus a few values, so that an evaluation that runs after newer
//     values arrived still hits): older values are trimmed as new ones
//     arrive. While reads end before the newest value (evaluation behind
//     the values: a backfill, read as of each value's time), the entry
//     also keeps the window and count before the last such read's end,
//     and a miss of a count read loads every value newer than its end
//     (at most 16,384), so the reads that follow, at later times, hit:
//     otherwise each of them missed and loaded the newer values again.
//     A read at the newest value ends that. The window only grows
//     while the item is cached (Zabbix also shrinks it daily; here an
//     item read for a long window once is trimmed again only when it is
//     evicted or dropped as idle).
//   - Reads longer than Options.MaxPeriod or MaxCount, and reads of
//     other shapes (ascending, or with both a start and a limit), bypass
//     the cache and go to the store: long periods are the store's job.
//   - Memory is bounded by Options.MaxBytes (values plus a fixed cost per
//     item): past it the items read least recently are evicted until the
//     cache is under 90 % of the bound; items not read for
//     Options.IdleDrop (24 h, as Zabbix) are dropped by Run.
//   - Correctness: an item's entry holds every value of the item newer
//     than a boundary (everything, when the store had nothing older). A
//     read is answered from the entry only when the values it selects all
//     lie past the boundary; otherwise it is a miss. Values committed
//     while an entry is loading are kept aside and merged after the load,
//     so none is lost between the store read and the entry's creation.
//     An equal timestamp replaces the cached value, as the store keeps
//     the later write.
//
// Hits, misses, bypasses, evictions, memory and items are counted on
// the metrics registry (peregrine_value_cache_*).
//
// # What it does not own
//
// Item resolution and permissions (expr's Source, exprsource), storing
// values (the history store), trends.
//
// # Concurrency contract
//
// All methods may be called from any number of goroutines. Items are
// spread over shards by ID, each with its own mutex held for a map
// lookup and a copy of the selected values (bounded by MaxCount and
// MaxPeriod), never across a store read or a callback: the pipeline
// shards' Add calls and the evaluators' reads of other items do not
// wait for each other. Add must be called after the store holds the
// values (the pipeline's commit hook is) and before anything that reads
// them through the cache is told of them.
package valuecache
