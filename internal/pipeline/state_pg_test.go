package pipeline

import (
	"bytes"
	"context"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/ha"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/historytest"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/pglog"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
	"github.com/peregrine-mon/peregrine/internal/testutil/hatest"
)

// TestIntegrationPreprocessStateInPostgres: with the state in
// PostgreSQL (a real PostgreSQL 15, saves fenced by an active HA
// node's lease) the change step's previous value survives a restart as
// with the file; once the cluster's epoch moved on (a takeover this
// node has not noticed) a save is refused and the saved state stays as
// it was.
func TestIntegrationPreprocessStateInPostgres(t *testing.T) {
	c := hatest.Start(t, "pipeline-a")
	n := c.Node
	blob, err := pglog.OpenBlob(pglog.Options{Pool: n.Pool(), Write: n.Lease().Write, Table: "preprocess_state"}, "state")
	if err != nil {
		t.Fatal(err)
	}

	cat := catalogtest.Open(t, preprocSpec())
	run := func(clock int64, v string) (p *Pipeline, stored []string) {
		store := memstore.New()
		p, err := New(Options{Shards: 2, Store: store, Catalog: cat.Snapshot, StateStore: blob})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- p.Run(context.Background()) }()
		it := cat.Snapshot().Lookup("h", "rate")
		var s history.Sample
		if err := Prepare(it, []byte(v), &s); err != nil {
			t.Fatal(err)
		}
		s.Clock = clock
		if err := p.Submit([]history.Sample{s}, nil); err != nil {
			t.Fatal(err)
		}
		p.Stop()
		<-done // its last save's error is logged; checked below
		for _, s := range historytest.ReadAll(t, store, history.Query{ItemID: it.ID, From: 0, Till: 1 << 40}) {
			stored = append(stored, trimFloat(s.F))
		}
		return p, stored
	}
	if _, got := run(100, "10"); len(got) != 0 {
		t.Fatalf("first value ever: stored %q, want it discarded", got)
	}
	p, got := run(110, "30")
	if len(got) != 1 || got[0] != "2" {
		t.Fatalf("after a restart with state: stored %q, want 2 per second", got)
	}
	saved, err := blob.Load()
	if err != nil || len(saved) == 0 {
		t.Fatalf("saved state: %d bytes (%v)", len(saved), err)
	}
	if _, err := n.Pool().Exec(context.Background(), `UPDATE peregrine_ha.cluster SET epoch = epoch + 1`); err != nil {
		t.Fatal(err)
	}
	if err := p.SaveState(); !ha.IsFenced(err) {
		t.Fatalf("save after the epoch moved: %v, want ErrFenced", err)
	}
	if after, err := blob.Load(); err != nil || !bytes.Equal(after, saved) {
		t.Fatalf("a refused save changed the state (%v)", err)
	}
}
