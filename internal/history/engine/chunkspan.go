package engine

import (
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// Time-bounded chunks. A short read (an hour of 5,000 items for a
// dashboard) costs what it decodes, and a chunk is decoded whole: when a
// compacted day held one 60-second item in a single 1,440-value chunk,
// every hour of it cost the whole day (issue 10). Block writers (flush and
// compaction) therefore cut an item's values at aligned time windows as
// well as at a value count, so that a read of [lo, hi) decodes only the
// windows it touches; the block index already has each chunk's min and
// max time, which lets the read skip the rest without touching them.
//
// The window is per item, from its rate: the shortest of chunkWindows
// that holds at least minChunkValues values; none for an item so fast
// that the value bound cuts its chunks shorter than an hour anyway. A fast item (10 s) gets
// one-hour chunks of 360 values; a one-minute item two-hour chunks of
// 120; a five-minute item twelve-hour chunks of 144. Shorter windows
// would make reads cheaper still but cost bytes: each chunk pays a header
// (about 20 bytes) and restarts its delta and XOR streams, which at 120
// values is about 0.2 bytes per value and grows fast below that.
//
// Windows divide a day and are aligned to unix time, so a window never
// straddles a 2-hour partition or a day block unless it is longer than
// the partition (flush caps it at the partition).
//
// Rejected: restart points inside a chunk (an index of offsets to resume
// decoding mid-chunk). Every stream is delta-coded, so a restart point
// must carry a full decoder state per stream; that is a format change in
// every encoding for what the window gives for free.

// chunkWindows are the candidate windows, shortest first; each divides a
// day.
var chunkWindows = [...]int64{
	int64(time.Hour), int64(2 * time.Hour), int64(4 * time.Hour),
	int64(6 * time.Hour), int64(12 * time.Hour), int64(24 * time.Hour),
}

// minChunkValues is the fewest values a window should hold at the item's
// rate, see above.
const minChunkValues = 100

// chunkWindow returns the window for an item that has n values over span
// nanoseconds (span ≥ 1).
func chunkWindow(n int, span int64) int64 {
	span = max(span, int64(time.Hour)) // a burst of values in a few seconds says little about the rate
	for _, w := range chunkWindows {
		// n/span·w ≥ minChunkValues, without float rounding.
		if float64(n)*float64(w) >= float64(minChunkValues)*float64(span) {
			return w
		}
	}
	return chunkWindows[len(chunkWindows)-1]
}

// ownWindow returns the window to cut all's values at, from their own
// rate over the given span (the partition or day they fill), or 0 (no
// time window) when the shortest window would hold maxValues values or
// more: the value bound then cuts chunks at least as short, and aligning
// them to hours as well would only add chunks (a one-second item would
// get 2,048 + 1,552 values an hour instead of 2,048 a chunk).
func ownWindow(all *buf, over int64, maxValues int) int64 {
	if all.len() == 0 {
		return chunkWindows[0]
	}
	over = max(over, int64(time.Hour))
	if float64(all.len())*float64(chunkWindows[0]) >= float64(maxValues)*float64(over) {
		return 0
	}
	return chunkWindow(all.len(), over)
}

// cutChunks splits all (sorted, unique) into chunks of at most maxValues
// values that do not cross a multiple of window (0: no window), encodes
// each and passes it to add.
func cutChunks(vt history.ValueType, all *buf, window int64, maxValues int, add func(c chunk)) {
	for i := 0; i < all.len(); {
		end := int64(1<<63 - 1)
		if window > 0 {
			end = floorDiv(all.ts[i], window)*window + window // exclusive
			if end < all.ts[i] {
				end = 1<<63 - 1 // the last window before the int64 limit
			}
		}
		j := i + 1
		for j < all.len() && j-i < maxValues && all.ts[j] < end {
			j++
		}
		tmp := series{vt: vt, open: all.slice(vt, i, j)}
		tmp.seal()
		add(tmp.chunks[0])
		i = j
	}
}
