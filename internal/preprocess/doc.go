// Package preprocess owns what happens to a value between the way it came
// in and the pipeline: which item it belongs to, whether that item
// accepts it, and its conversion to the item's value type.
//
// Today that is two things, used by every way in (the trapper's sender
// data, the API's history.push and, later, the pollers) so that the rules
// are written once:
//
//   - Acceptance: ItemByKey and ItemByID find the item and check, in the
//     Zabbix trapper's order, that its host exists and is monitored, the
//     item exists, its type is one the way in delivers (Types: trapper
//     items for sender data and history.push; a poller passes its own
//     types) and it is enabled. A refusal is a Refusal value, whose
//     String is the metric label the callers count it under.
//   - Conversion: Convert (and Value, which also sets the item ID) turns
//     a value's text into a float, unsigned, character, text or log
//     value with Zabbix's rules (what is a number, how long a string may
//     be, what becomes of invalid UTF-8).
//
// It will later hold the preprocessing step library and per-item step
// chains (issue 12: multipliers, regular expressions, JSONPath, change
// per second, discard unchanged, ...), which run between acceptance and
// conversion.
//
// It does not own the transport (ingest, api), the wording of replies to
// a client, counting or logging (the callers count refusals by their
// String and log them with their own context), timestamps, or storage.
//
// Hot path: the lookups take no lock and neither they nor the numeric
// conversions allocate; a string value is copied once, because the
// caller's buffer is reused after the request.
//
// Concurrency: everything here is a pure function of its arguments and
// the catalog's immutable snapshot, safe for concurrent use.
package preprocess
