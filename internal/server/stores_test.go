package server

import (
	"testing"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/engine"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// The server wires trends, flushing, retention and compaction through
// history's optional interfaces only; these are the ones each backend it
// can open provides. (The engine's are also asserted at compile time in
// the engine package.)
var (
	_ history.TrendReader = (*engine.Store)(nil)
	_ history.Flusher     = (*engine.Store)(nil)
	_ history.Dropper     = (*engine.Store)(nil)
	_ history.Compactor   = (*engine.Store)(nil)
)

func TestStoresOptionalInterfaces(t *testing.T) {
	has := func(s history.Store) [4]bool {
		_, tr := s.(history.TrendReader)
		_, fl := s.(history.Flusher)
		_, dr := s.(history.Dropper)
		_, co := s.(history.Compactor)
		return [4]bool{tr, fl, dr, co}
	}
	eng, err := engine.Open(engine.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if got := has(eng); got != [4]bool{true, true, true, true} {
		t.Errorf("engine implements [trends flush drop compact] = %v, want all", got)
	}
	// memstore keeps everything until the process ends: the housekeeper
	// has nothing to do and trend.get answers nothing.
	if got := has(memstore.New()); got != [4]bool{} {
		t.Errorf("memstore implements [trends flush drop compact] = %v, want none", got)
	}
}

// TestWALSync holds the one mapping from the fsync settings of history,
// events and alerts to WAL sync modes: "interval" relaxes, anything else
// (config accepts only "batch" besides) keeps the fsync per batch.
func TestWALSync(t *testing.T) {
	for in, want := range map[string]wal.SyncMode{"batch": wal.SyncBatch, "interval": wal.SyncInterval, "": wal.SyncBatch} {
		if got := walSync(in); got != want {
			t.Errorf("walSync(%q) = %v, want %v", in, got, want)
		}
	}
}
