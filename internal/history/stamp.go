package history

// Timestamp tolerance, for values Peregrine stamps itself (the pollers:
// internal/poll applies it with poll.timestamp_tolerance; trapper and
// agent values carry the sender's stamp and are never moved). A poller runs each check on a grid (its scheduled
// slot), but the value is received a little later, by a jitter of
// microseconds to milliseconds that carries no information. Stamped with
// the receive time, a perfectly regular one-minute series costs its
// jitter's entropy in every timestamp; stamped with the slot, its
// timestamps are one constant delta, which the chunk encoder stores in a
// few bytes per chunk. Prometheus does the same for scrapes (a scrape
// that starts within a small tolerance of its scheduled time is stamped
// at that time).
//
// The tolerance bounds the lie: a value received further than it from
// its slot (a slow host) keeps its real time, so a late or early value
// stays visibly late or early.

// DefaultStampTolerance is the tolerance pollers use unless configured:
// two milliseconds, well above a loopback or LAN round trip's scheduling
// noise and well below anything a graph or a trigger could resolve.
const DefaultStampTolerance = 2_000_000 // ns

// SnapStamp returns the timestamp (unix nanoseconds) to store for a value
// scheduled at slot and received at actual: slot when actual lies within
// tolerance of it (either side), actual otherwise. A negative tolerance
// is treated as 0.
func SnapStamp(slot, actual, tolerance int64) int64 {
	if tolerance < 0 {
		return actual
	}
	// The distance as unsigned, exact even where actual - slot overflows.
	var d uint64
	if actual >= slot {
		d = uint64(actual) - uint64(slot)
	} else {
		d = uint64(slot) - uint64(actual)
	}
	if d <= uint64(tolerance) {
		return slot
	}
	return actual
}
