// Package maintenance decides when Zabbix maintenance periods are in
// effect and suppresses the problems of the hosts they cover, in the
// reduced form Peregrine supports (catalog.Maintenance: with data
// collection; one time, daily and weekly periods; hosts, host groups and
// problem tag conditions).
//
// # What it owns
//
//   - Active: whether a maintenance is in effect at a time, in the
//     server's time zone. The maintenance's active_since..active_till
//     bounds every period; a one time period runs from start_date for
//     period seconds; a daily one at start_time every "every" days
//     counted from active_since's date; a weekly one at start_time on
//     the days of dayofweek of every "every"th week counted from
//     active_since's week (weeks start on Monday). A period may run past
//     midnight. All times are whole minutes (the catalog rounds them).
//   - Matching (Tracker.Covers): a problem is covered by a maintenance in
//     effect when any host of its trigger is one of the maintenance's
//     hosts or in one of its groups, and its tags meet the maintenance's
//     tag conditions (tags_evaltype 0: for every tag name listed, one of
//     its conditions holds; 2: any condition holds; operator 0 equals,
//     2 contains).
//   - Suppression: a problem raised while covered is made suppressed
//     (the trigger machine asks Tracker.Covers when it makes the event);
//     the Tracker's pass, at every minute boundary (Run; Zabbix's
//     maintenance timer also works per minute, and every period starts
//     and ends on one) and at once after a catalog change, suppresses
//     the open problems a maintenance now covers and unsuppresses those
//     no maintenance covers any more, in one event store commit.
//   - Tracker.Suppressed(eventID): the hook for the "problem is (not)
//     suppressed" action condition.
//
// # What it does not own
//
// Storing maintenances (package catalog), the maintenance.* API
// (package api), storing the suppressed flag (package event), and
// maintenance without data collection (refused by the API).
//
// # Concurrency
//
// A Tracker may be used from any goroutine. Passes are serialised by
// a mutex; Covers and Suppressed take no lock of the Tracker's (they
// read the catalog snapshot and the event store). A problem made during
// a pass may be decided on the snapshot before or after a change; the
// next pass corrects it.
package maintenance
