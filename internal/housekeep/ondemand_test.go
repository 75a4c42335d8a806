package housekeep

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/engine"
	"github.com/peregrine-mon/peregrine/internal/history/historytest"
)

// TestFlushNow: an on-demand flush and compaction leaves the head empty
// and the current day in one block (where the periodic run compacts
// finished days only), every value still read back; a second one at
// the same time is refused as busy.
func TestFlushNow(t *testing.T) {
	st, err := engine.Open(engine.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	days := map[int64]bool{}
	written := 0
	// Three flushes of values over the last six hours: several 2-hour
	// blocks of the current day (and maybe of yesterday).
	for round := range 3 {
		var vals []history.Sample
		for i := range 120 {
			c := now.Add(-time.Duration(6*3600-round*7200-i*60) * time.Second).Unix()
			days[c/86400] = true
			vals = append(vals, history.Sample{ItemID: 1, Clock: c, Type: history.Float, F: float64(i)})
		}
		if err := st.Write(context.Background(), vals); err != nil {
			t.Fatal(err)
		}
		written += len(vals)
		if round < 2 {
			if err := st.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	before := st.BlockCount()
	h, err := New(Options{Store: st, Retention: func() Retention {
		return Retention{History: 90 * 86400, Trends: 365 * 86400, Item: func(uint64) (int64, bool) { return 90 * 86400, true }}
	}})
	if err != nil {
		t.Fatal(err)
	}
	onDemandMu.Lock()
	if _, err := h.FlushNow(context.Background(), true); !errors.Is(err, ErrBusy) {
		t.Errorf("FlushNow while another runs: %v, want ErrBusy", err)
	}
	onDemandMu.Unlock()
	res, err := h.FlushNow(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	if res.Flushed != 120 || res.Compacted != len(days) || st.HeadValues() != 0 {
		t.Errorf("FlushNow = %+v, head %d; want 120 flushed, %d days compacted, empty head", res, st.HeadValues(), len(days))
	}
	if got := st.BlockCount(); got != len(days) || before <= got {
		t.Errorf("blocks %d before, %d after; want one per day (%d)", before, got, len(days))
	}
	if got := len(historytest.ReadAll(t, st, history.Query{ItemID: 1, From: 0, Till: now.Unix() + 1})); got != written {
		t.Errorf("read back %d values, wrote %d", got, written)
	}
	// Without compaction: a flush only.
	if res, err := h.FlushNow(context.Background(), false); err != nil || res.Compacted != -1 {
		t.Errorf("FlushNow without compaction = %+v, %v", res, err)
	}
}
