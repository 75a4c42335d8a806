package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/engine"
	"github.com/peregrine-mon/peregrine/internal/history/historytest"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// errInjected is the storage error the tests below inject.
var errInjected = errors.New("injected storage error")

// faultyWriter is the history engine with an injected storage error: while
// armed, a write that holds a value of item poison fails before it reaches
// the engine, as a write to a full disk would.
type faultyWriter struct {
	history.Store
	poison uint64
	armed  atomic.Bool
	writes atomic.Int64
}

func (f *faultyWriter) Write(ctx context.Context, samples []history.Sample) error {
	f.writes.Add(1)
	if f.armed.Load() {
		for i := range samples {
			if samples[i].ItemID == f.poison {
				return errInjected
			}
		}
	}
	return f.Store.Write(ctx, samples)
}

// frameServer is a trapper over the embedded engine in dir, whose writes
// go through a faultyWriter.
type frameServer struct {
	addr  string
	fw    *faultyWriter
	cat   *catalog.Catalog
	p     *pipeline.Pipeline
	close func() // stops the trapper and the pipeline and closes the engine
}

func startFrameServer(t *testing.T, dir string, cat *catalog.Catalog, popts pipeline.Options) *frameServer {
	t.Helper()
	st, err := engine.Open(engine.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	fw := &faultyWriter{Store: st}
	popts.Store, popts.Catalog = fw, cat.Snapshot
	p, err := pipeline.New(popts)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Listen: "127.0.0.1:0", Timeout: 5 * time.Second, IdleTimeout: time.Second,
		Catalog: cat, Pipeline: p, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pdone, tdone := make(chan struct{}), make(chan struct{})
	go func() { p.Run(context.Background()); close(pdone) }()
	go func() { srv.Run(ctx); close(tdone) }()
	fs := &frameServer{addr: srv.Addr().String(), fw: fw, cat: cat, p: p}
	closed := false
	fs.close = func() {
		if closed {
			return
		}
		closed = true
		cancel()
		<-tdone
		p.Stop()
		<-pdone
		if err := st.Close(); err != nil {
			t.Errorf("engine close: %v", err)
		}
	}
	t.Cleanup(fs.close)
	return fs
}

// sendReply sends one sender-data frame and returns the reply's response
// and its counts (processed -1 when the reply carries none).
func sendReply(t *testing.T, addr string, payload string) (response string, processed, failed int, info string) {
	t.Helper()
	_, reply := roundTrip(t, addr, zbx.AppendFrame(nil, []byte(payload), zbx.FlagProtocol))
	var r struct{ Response, Info string }
	if err := json.Unmarshal(reply, &r); err != nil {
		t.Fatalf("reply %q: %v", reply, err)
	}
	processed = -1
	var total int
	var secs float64
	fmt.Sscanf(r.Info, "processed: %d; failed: %d; total: %d; seconds spent: %f", &processed, &failed, &total, &secs)
	return r.Response, processed, failed, r.Info
}

// TestStoreErrorFrameAllOrNothing is fault 4 of issue 25: a frame whose
// store write fails must leave behind, after a restart, exactly what its
// reply said was processed (nothing when it says "failed"), so that a
// sender that retries a failed frame never stores a value twice. Before
// the fix the sender was told "failed" for all 10 values while some were
// in history after the restart: the values of another shard (written by
// their own shard), or the first pieces of a frame the shard cut into
// MaxBatch pieces.
//
// The frames carry no clocks, as zabbix_sender sends them without -T:
// each value gets the receive time, so a resent value is a new value and
// would be stored twice next to a partly stored first attempt.
func TestStoreErrorFrameAllOrNothing(t *testing.T) {
	keys := []string{"v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9"}
	var items []catalog.ItemSpec
	for _, k := range keys {
		items = append(items, catalog.ItemSpec{Key: k, ValueType: "float"})
	}
	spec := catalog.Spec{Hosts: []catalog.HostSpec{{Host: "frame-host", Groups: []string{"Test"}, Items: items}}}
	var rows []string
	for i, k := range keys {
		rows = append(rows, fmt.Sprintf(`{"host":"frame-host","key":%q,"value":"%d"}`, k, i))
	}
	frame := `{"request":"sender data","data":[` + strings.Join(rows, ",") + `]}`

	f := func(name string, popts pipeline.Options, poisonKey string) {
		t.Run(name, func(t *testing.T) {
			cat := catalogtest.Open(t, spec)
			dir := t.TempDir()
			fs := startFrameServer(t, dir, cat, popts)
			fs.fw.poison = cat.Snapshot().Lookup("frame-host", poisonKey).ID
			fs.fw.armed.Store(true)
			resp, processed, failed, info := sendReply(t, fs.addr, frame)
			if processed < 0 {
				processed = 0 // a "failed" reply: nothing acknowledged
			}
			// The sender retries what it was told failed, whole frames
			// only: zabbix_sender and the agents resend a frame answered
			// "failed", never part of one.
			fs.fw.armed.Store(false)
			if resp == "failed" {
				if r2, p2, _, info2 := sendReply(t, fs.addr, frame); r2 != "success" || p2 != len(keys) {
					t.Fatalf("retry: %s %s", r2, info2)
				}
			}
			fs.close()

			// Restart: the engine replays what its WAL holds.
			st, err := engine.Open(engine.Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			stored := 0
			for _, k := range keys {
				n := len(historytest.ReadAll(t, st, history.Query{ItemID: cat.Snapshot().Lookup("frame-host", k).ID, From: 0, Till: 1 << 40}))
				if n > 1 {
					t.Errorf("%s stored %d times", k, n)
				}
				stored += n
			}
			t.Logf("first reply %s %q; %d of %d values in history after the restart", resp, info, stored, len(keys))
			switch {
			case resp == "failed" && stored != len(keys):
				t.Fatalf("the frame was answered failed and retried: %d values in history, want each of the %d once", stored, len(keys))
			case resp == "success" && (processed+failed != len(keys) || stored != processed):
				t.Fatalf("reply %q: processed %d failed %d, and %d values in history", info, processed, failed, stored)
			case resp != "failed" && resp != "success":
				t.Fatalf("reply %s %q", resp, info)
			}
		})
	}
	// The frame's values in one shard, written in MaxBatch pieces of 4:
	// the poisoned item's piece is the last.
	f("shard=1/maxbatch=4", pipeline.Options{Shards: 1, MaxBatch: 4}, "v9")
	// The frame's values spread over four shards; the poisoned item's
	// shard fails, the others' write.
	f("shards=4", pipeline.Options{Shards: 4}, "v3")
}
