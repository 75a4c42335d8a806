// Package exprsource is the bridge from expressions (package expr) to the
// server's data: StoreSource, an expr.Source that resolves an item query
// through a catalog snapshot (//key, {HOST.HOST} and {HOST.HOST1} are the
// evaluated object's own host) and reads values from the history store,
// and trends when the store keeps them (history.TrendReader). It also
// lists the items of an aggregate query ("*" in host, key name or
// parameters) for the aggregate functions (item_count,
// bucket_percentile, sum(last_foreach(...)) ...), applying item filters
// on host groups; filters on tags are refused with a clear error until
// items have tags.
//
// It sits apart from both of its users, calculated items (package
// poll/calc) and trigger evaluation (package trigger), because trigger
// must not import poll.
//
// Three opt-in savings for a caller that evaluates many expressions on
// one goroutine (the trigger evaluator's shards): Reuse returns every
// read in one buffer kept by the source (expr's functions are done with
// a read before the next), Memo remembers how each item query resolved,
// for as long as the caller keeps the snapshot and Self, and Known
// answers last() of the value that caused the evaluation without a read.
//
// Concurrency: a StoreSource without Reuse and Memo holds no state of its
// own; it is as safe for concurrent use as the snapshot (immutable) and
// the store it reads. With either it belongs to one goroutine.
package exprsource
