// Package calc evaluates calculated items (Zabbix item type 15) as a
// poll.Checker: the scheduler runs them on their intervals like any
// polled item (without an interface: CheckerSpec.NoInterface), the
// checker evaluates the item's formula (catalog Item.Params, Zabbix 6.0
// expression syntax, package expr) at the check time, and the result goes
// the usual way (conversion to the item's value type, pipeline, history),
// so calculated values are stored, graphed and can trigger.
//
// It owns the bridge from expressions to the server's data: StoreSource,
// an expr.Source that resolves an item query (//key is the calculated item's own host,
// as are {HOST.HOST} and {HOST.HOST1}) through the catalog snapshot and
// reads values from the history store, and trends when the store keeps
// them (history.TrendReader); it also lists the items of an aggregate
// query ("*" in host, key name or parameters) for the aggregate
// functions (item_count, bucket_percentile, sum(last_foreach(...)) ...),
// applying item filters on host groups; filters on tags are refused with
// a clear error until items have tags.
//
// Results: a number or a string becomes the check's value; an unknown
// result (a missing item, no data in the period, division by zero, a
// formula that does not parse) makes the item not supported with the
// reason as its error, Zabbix's behaviour; the next good value clears it.
// User macros resolve through Options.Macros, when the server has them.
//
// Concurrency: Check evaluates each batch on a goroutine of its own
// (reading history may wait on disk, which the scheduler's loop must
// not); poll's in-flight bounds limit how many run at once. Parsed
// formulas are cached by text under a mutex, bounded.
package calc
