package server

import (
	"context"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// TestTimestampPrecisionReachesEngine: history.timestamp_precision is the
// engine's precision (a value written with a nanosecond part reads back
// cut to milliseconds), and an item's own timestamp_precision in the
// catalog wins over it.
func TestTimestampPrecisionReachesEngine(t *testing.T) {
	cfg := testConfig(t, integrationSpec())
	cfg.History.TimestampPrecision = "ms"
	s, _ := runServer(t, cfg)
	id := s.Catalog.Snapshot().Lookup("peregrine-test", "trap.float").ID
	in := []history.Sample{{ItemID: id, Clock: 1_700_000_000, NS: 123_456_789, Type: history.Float, F: 1.5}}
	if err := s.Store.Write(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	var got []history.Sample
	err := s.Store.Read(context.Background(), history.Query{ItemID: id, From: 1_700_000_000, Till: 1_700_000_000}, func(v *history.Sample) bool {
		got = append(got, *v)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].NS != 123_000_000 {
		t.Fatalf("read back %+v, want ns 123000000", got)
	}

	spec := integrationSpec()
	for h := range spec.Hosts {
		for i := range spec.Hosts[h].Items {
			if spec.Hosts[h].Items[i].Key == "trap.float" {
				spec.Hosts[h].Items[i].TimestampPrecision = "s"
			}
		}
	}
	if _, err := s.Catalog.Apply(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	in[0].Clock++
	if err := s.Store.Write(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	err = s.Store.Read(context.Background(), history.Query{ItemID: id, From: in[0].Clock, Till: in[0].Clock}, func(v *history.Sample) bool {
		got = append(got, *v)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].NS != 0 {
		t.Fatalf("with the item at whole seconds, read back %+v, want ns 0", got)
	}
}
