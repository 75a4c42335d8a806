// Package delay owns Zabbix 6.0 item update intervals ("delay"): parsing
// them and computing an item's next check time.
//
// Syntax (one string, parts separated by ';'):
//
//   - the main interval first: a time value, plain seconds or a number
//     with one suffix s, m, h, d or w ("30s", "1m", "3600"), at most one
//     day (86400 s) as Zabbix requires; "0" only when a flexible interval
//     with a non-zero delay or a scheduling interval follows;
//   - flexible intervals "<delay>/<period>", period "d[-d],hh:mm-hh:mm"
//     (days 1 = Monday .. 7 = Sunday, time 00:00..24:00, end after start):
//     while a period is active its delay replaces the main one; where
//     periods overlap the smallest delay wins, and 0 stops polling;
//   - scheduling intervals "md<filter>wd<filter>h<filter>m<filter>s<filter>"
//     (each prefix optional but in this order, at least one), a filter
//     being "[from[-to]][/step]" items separated by ','; month days 1-31,
//     week days 1-7, hours 0-23, minutes and seconds 0-59. An omitted
//     hour, minute or second filter matches 0 when no smaller unit has a
//     filter and every value otherwise ("h9" is 09:00:00 daily, "m0" is
//     every hour on the hour); omitted day filters match every day. A
//     scheduled check runs at exactly those local times, alongside the
//     main and flexible schedule.
//
// User macros ("{$DELAY}") are refused with an error saying so: the
// catalog has no macros yet.
//
// Next check (Interval.Next): as the Zabbix server does, a main or
// flexible delay d places an item's checks on the grid
// d*floor(t/d) + seed%d of Unix seconds, where seed is the item id: items
// sharing an interval are spread over it by id instead of all firing in
// the same second, and a restarted server finds every item on the same
// grid as before (no storm of checks after a start). When the delay
// changes at a flexible period's boundary the grid of the new delay is
// used from the boundary on. A scheduling interval's time is used when
// it comes sooner. Times of day and week days are read in the location
// of the time passed to Next.
//
// Everything here is pure and safe for concurrent use; an Interval is
// immutable once parsed.
//
// It lives under zbx, not poll, because the catalog, config and API parse
// intervals and durations with it too: it is a foundation package
// (docs/layout.md) and imports nothing from the module.
package delay
