package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/engine/chunkenc"
)

// TestSnapStampCompresses: a polled one-minute series received with up to
// 1.5 ms of jitter costs its jitter in every timestamp when stamped with
// the receive time, and almost nothing when history.SnapStamp puts it on
// its slot; a check that was 50 ms slow keeps its time and costs only
// itself.
func TestSnapStampCompresses(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	const n = 1000
	raw := make([]int64, n)
	snapped := make([]int64, n)
	vals := make([]uint64, n) // constant: only timestamps differ
	for i := range raw {
		slot := int64(1_700_000_000+60*i) * 1e9
		recv := slot + r.Int64N(1_500_000)
		if i == 500 {
			recv = slot + 50_000_000 // a slow check
		}
		raw[i] = recv
		snapped[i] = history.SnapStamp(slot, recv, history.DefaultStampTolerance)
	}
	if snapped[500] != raw[500] || snapped[499] != int64(1_700_000_000+60*499)*1e9 {
		t.Fatalf("snapping: slow value %d → %d, regular %d", raw[500], snapped[500], snapped[499])
	}
	rawBytes := len(chunkenc.EncodeUints(nil, raw, vals))
	snapBytes := len(chunkenc.EncodeUints(nil, snapped, vals))
	t.Logf("1000 timestamps: %d bytes received, %d bytes snapped", rawBytes, snapBytes)
	if snapBytes*10 > rawBytes {
		t.Fatalf("snapped series is %d bytes, received %d: want under a tenth", snapBytes, rawBytes)
	}
}
