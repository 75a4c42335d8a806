package ingest

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/clickhouse"
	"github.com/peregrine-mon/peregrine/internal/history/historytest"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
	"github.com/peregrine-mon/peregrine/internal/testutil"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// The trapper over ClickHouse with history.clickhouse.ack: inserted
// (issue 31): a frame answered "success" is in ClickHouse when the reply
// arrives (read by a second store, as another node would); with
// ClickHouse stopped the frame is answered "failed", and the copy the
// sender sends once ClickHouse is back is stored, each value once.
func TestIntegrationClickHouseAckInserted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts clickhouse-server")
	}
	ch := testutil.StartClickHouse(t)
	db := fmt.Sprintf("ack%d", time.Now().UnixNano()%1e6)
	opts := clickhouse.Options{URLs: []string{ch.URL}, Database: db, Ack: clickhouse.AckInserted,
		QueryTimeout: 2 * time.Second, AckTimeout: 3 * time.Second, RetryInterval: 200 * time.Millisecond}
	st, err := clickhouse.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	keys := []string{"a", "b", "c", "d"}
	var items []catalog.ItemSpec
	for _, k := range keys {
		items = append(items, catalog.ItemSpec{Key: k, ValueType: "float"})
	}
	cat := catalogtest.Open(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "ack-host", Groups: []string{"Test"}, Items: items}}})
	p, err := pipeline.New(pipeline.Options{Store: st, Catalog: cat.Snapshot, Shards: 2})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Listen: "127.0.0.1:0", Timeout: 10 * time.Second, IdleTimeout: time.Second,
		Catalog: cat, Pipeline: p, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pdone, tdone := make(chan struct{}), make(chan struct{})
	go func() { p.Run(context.Background()); close(pdone) }()
	go func() { srv.Run(ctx); close(tdone) }()
	defer func() { cancel(); <-tdone; p.Stop(); <-pdone }()
	addr := srv.Addr().String()
	frame := func(clock int) string {
		var rows []string
		for i, k := range keys {
			rows = append(rows, fmt.Sprintf(`{"host":"ack-host","key":%q,"value":"%d","clock":%d,"ns":%d}`, k, clock, clock, i))
		}
		return `{"request":"sender data","data":[` + strings.Join(rows, ",") + `]}`
	}
	// A reader that is not the writing store: what another node sees.
	ro := opts
	reader, err := clickhouse.Open(context.Background(), ro)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	count := func(k string) int {
		return len(historytest.ReadAll(t, reader, history.Query{ItemID: cat.Snapshot().Lookup("ack-host", k).ID, From: 0, Till: 1<<32 - 1}))
	}
	for c := 1_700_000_000; c < 1_700_000_003; c++ {
		if resp, processed, _, info := sendReply(t, addr, frame(c)); resp != "success" || processed != len(keys) {
			t.Fatalf("reply %s %q", resp, info)
		}
		for _, k := range keys {
			if n := count(k); n != c-1_700_000_000+1 {
				t.Fatalf("item %s: %d values in ClickHouse right after the reply, want %d", k, n, c-1_700_000_000+1)
			}
		}
	}
	ch.Stop()
	resp, _, _, info := sendReply(t, addr, frame(1_700_000_003))
	if resp != "failed" {
		t.Fatalf("with ClickHouse stopped the frame was answered %s %q, want failed", resp, info)
	}
	t.Logf("ClickHouse stopped: %s %q", resp, info)
	ch.Start()
	deadline := time.Now().Add(30 * time.Second)
	for { // the sender sends the frame again until it is acknowledged
		resp, _, _, info = sendReply(t, addr, frame(1_700_000_003))
		if resp == "success" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ClickHouse is back and the frame is still answered %s %q", resp, info)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, k := range keys {
		if n := count(k); n != 4 {
			t.Fatalf("item %s: %d values, want each of the 4 acknowledged once", k, n)
		}
	}
}
