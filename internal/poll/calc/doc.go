// Package calc evaluates calculated items (Zabbix item type 15) as a
// poll.Checker: the scheduler runs them on their intervals like any
// polled item (without an interface: CheckerSpec.NoInterface), the
// checker evaluates the item's formula (catalog Item.Params, Zabbix 6.0
// expression syntax, package expr) at the check time, and the result goes
// the usual way (conversion to the item's value type, pipeline, history),
// so calculated values are stored, graphed and can trigger.
//
// The bridge from expressions to the server's data, an expr.Source over
// the catalog snapshot and the history store (//key is the calculated
// item's own host, as are {HOST.HOST} and {HOST.HOST1}), is
// exprsource.StoreSource, shared with trigger evaluation; it also lists
// the items of aggregate queries for item_count, bucket_percentile and
// the *_foreach functions.
//
// Results: a number or a string becomes the check's value; an unknown
// result (a missing item, no data in the period, division by zero, a
// formula that does not parse) makes the item not supported with the
// reason as its error, Zabbix's behaviour; the next good value clears it.
// An evaluation cut short because the Check call's context ended (the
// server stopping) is reported abandoned (a network error), not as not
// supported. No timeout applies beyond the store's own (as in Zabbix,
// calculated items have none).
// User macros resolve through Options.Macros, by default the snapshot's
// scope of the item's host (host, linked templates, global), so an API
// change counts from the next check on.
//
// Concurrency: Check evaluates each batch on a goroutine of its own
// (reading history may wait on disk, which the scheduler's loop must
// not); poll's in-flight bounds limit how many run at once. Parsed
// formulas are cached by text under a mutex, bounded.
package calc
