package clickhouse

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// The outage is short in CI; the benchmark-length run is
//
//	go test -run 'TestOutage$' -v ./internal/history/clickhouse -args -clickhouse.outage=60s
var outage = flag.Duration("clickhouse.outage", 10*time.Second, "how long TestOutage keeps ClickHouse down")

// syncBuf is a log sink for assertions.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// countRows counts a table's rows in ClickHouse as stored (duplicates
// included) and as read (one per timestamp).
func countRows(t *testing.T, s *Store, table string) (raw, dedup int) {
	t.Helper()
	ctx := context.Background()
	r, err := s.c.queryString(ctx, "SELECT count() FROM "+s.db+"."+table)
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.c.queryString(ctx, "SELECT count() FROM (SELECT itemid, clock, ns FROM "+s.db+"."+table+" GROUP BY itemid, clock, ns)")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Sscan(r, &raw)
	fmt.Sscan(d, &dedup)
	return raw, dedup
}

// TestOutage: ClickHouse is killed during steady ingest and restarted.
// Every acknowledged value is read back exactly once, the backlog grows
// during the outage and drains after, and the outage is counted.
func TestOutage(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts clickhouse-server and keeps it down for a while")
	}
	ch := testutil.StartClickHouse(t)
	reg := selfmon.NewRegistry()
	var logs syncBuf
	s := openStore(t, ch, func(o *Options) {
		o.Metrics = reg
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	const items = 50
	ctx := context.Background()
	var mu sync.Mutex
	acked := map[uint64][]history.Sample{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var writeErr error
	wg.Add(1)
	go func() { // steady ingest: one batch of `items` values every 5 ms, bounded by stop
		defer wg.Done()
		base := time.Now().Unix() - 3600
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			b := make([]history.Sample, 0, items)
			for id := uint64(1); id <= items; id++ {
				b = append(b, history.Sample{ItemID: id, Clock: base + int64(i/100), NS: int32(i%100) * 1000, Type: history.Float, F: float64(i)})
			}
			if err := s.Write(ctx, b); err != nil {
				writeErr = err
				return
			}
			mu.Lock()
			for _, v := range b {
				acked[v.ItemID] = append(acked[v.ItemID], v)
			}
			mu.Unlock()
		}
	}()
	nacked := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, v := range acked {
			n += len(v)
		}
		return n
	}
	time.Sleep(time.Second)
	ch.Stop()
	stopped := time.Now()
	atStop := nacked()
	time.Sleep(*outage)
	during := nacked() - atStop
	backlog := s.Backlog()
	ch.Start()
	t.Logf("ClickHouse down %v; backlog at restart %d values", time.Since(stopped).Round(time.Millisecond), backlog)
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()
	if writeErr != nil {
		t.Fatalf("Write failed during the outage (the spool must take it): %v", writeErr)
	}
	// Ingest went on: every value acknowledged while ClickHouse was
	// down is in the spool.
	if during == 0 || backlog < int64(during) {
		t.Fatalf("backlog at restart %d values; %d were acknowledged during the outage", backlog, during)
	}
	fctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := s.Flush(fctx); err != nil {
		t.Fatalf("backlog not drained after the restart: %v (backlog %d)", err, s.Backlog())
	}
	if b := s.Backlog(); b != 0 {
		t.Fatalf("backlog %d after Flush", b)
	}
	if n := s.mShipErr["unreachable"].Load(); n == 0 {
		t.Fatal("the outage was not counted in peregrine_clickhouse_ship_errors_total{kind=\"unreachable\"}")
	}
	if !strings.Contains(logs.String(), "kind=unreachable") {
		t.Fatalf("no log line names the outage:\n%s", logs.String())
	}
	// Everything acknowledged, once, from ClickHouse alone (the spool is
	// empty now) and in order.
	total := 0
	for id := uint64(1); id <= items; id++ {
		want := acked[id]
		total += len(want)
		var got []history.Sample
		if err := s.Read(ctx, history.Query{ItemID: id, From: 0, Till: maxClock}, func(v *history.Sample) bool {
			got = append(got, *v)
			return true
		}); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("item %d: read %d values, %d were acknowledged", id, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("item %d value %d: read %+v, acknowledged %+v", id, i, got[i], want[i])
			}
		}
	}
	_, dedup := countRows(t, s, "history")
	if dedup != total {
		t.Fatalf("ClickHouse holds %d distinct values, %d were acknowledged", dedup, total)
	}
	t.Logf("%d values acknowledged, all read back once", total)
}

// TestRetryIsIdempotent: a generation inserted twice (a retry after an
// insert that landed but whose answer was lost) is stored twice and read
// once; the later write of a timestamp still wins.
func TestRetryIsIdempotent(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts clickhouse-server")
	}
	ch := testutil.StartClickHouse(t)
	s := openStore(t, ch, func(o *Options) { o.FlushInterval = time.Hour })
	g := newGen()
	var in []history.Sample
	for i := 0; i < 1000; i++ {
		in = append(in, history.Sample{ItemID: uint64(i % 10), Clock: 1000 + int64(i), Type: history.Uint, U: uint64(i)})
	}
	g.add(in)
	for id := uint64(0); id < 10; id++ { // Write would have noted the items' table
		s.types[id] = 1 << history.Uint
	}
	for i := 0; i < 2; i++ {
		if err := s.insertGen(g); err != nil {
			t.Fatal(err)
		}
	}
	raw, dedup := countRows(t, s, "history_uint")
	if raw != 2000 || dedup != 1000 {
		t.Fatalf("stored %d rows, %d distinct; want 2000 and 1000", raw, dedup)
	}
	// A later generation rewriting item 0's first timestamp wins over
	// both copies.
	g2 := newGen()
	g2.add([]history.Sample{{ItemID: 0, Clock: 1000, Type: history.Uint, U: 77}})
	if err := s.insertGen(g2); err != nil {
		t.Fatal(err)
	}
	for id := uint64(0); id < 10; id++ {
		var got []history.Sample
		if err := s.Read(context.Background(), history.Query{ItemID: id, From: 0, Till: maxClock}, func(v *history.Sample) bool {
			got = append(got, *v)
			return true
		}); err != nil {
			t.Fatal(err)
		}
		if len(got) != 100 {
			t.Fatalf("item %d: read %d values, want 100 (once each)", id, len(got))
		}
		if id == 0 && got[0].U != 77 {
			t.Fatalf("item 0 at clock 1000: read %d, want the later write 77", got[0].U)
		}
		// Limited reads, where every timestamp has two rows: a limit
		// counts values, and the last write still wins at the edges.
		for _, desc := range []bool{false, true} {
			for _, limit := range []int{1, 2, 5, 99, 100, 150} {
				var lim []history.Sample
				if err := s.Read(context.Background(), history.Query{ItemID: id, From: 0, Till: maxClock, Desc: desc, Limit: limit}, func(v *history.Sample) bool {
					lim = append(lim, *v)
					return true
				}); err != nil {
					t.Fatal(err)
				}
				want := got[:min(limit, len(got))]
				if desc {
					want = nil
					for i := len(got) - 1; i >= 0 && len(want) < limit; i-- {
						want = append(want, got[i])
					}
				}
				if !slices.Equal(lim, want) {
					t.Fatalf("item %d desc=%v limit %d: read %d values %v, want %v", id, desc, limit, len(lim), lim, want)
				}
			}
		}
	}
}

// TestRefusedInserts: ClickHouse answering errors (a read-only user, a
// used-up quota: what a full disk or an over-quota tenant look like from
// here) keeps values in the spool, readable, and is counted by kind and
// logged with the server's message.
func TestRefusedInserts(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts clickhouse-server")
	}
	ch := testutil.StartClickHouse(t)
	// The schema exists (made by a writer); then a read-only user opens it.
	owner := openStore(t, ch, nil)
	db := owner.db
	owner.Close()
	for _, c := range []struct{ user, kind string }{{"ro", "readonly"}, {"limited", "quota"}} {
		t.Run(c.user, func(t *testing.T) {
			reg := selfmon.NewRegistry()
			var logs syncBuf
			s := openStore(t, ch, func(o *Options) {
				o.URLs = []string{ch.UserURL(c.user, c.user)}
				o.Database = db
				o.Metrics = reg
				o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			})
			ctx := context.Background()
			deadline := time.Now().Add(30 * time.Second)
			// The limited user's quota lasts testutil.QuotaQueries
			// requests; every write is shipped, so it runs out.
			for i := 0; s.mShipErr[c.kind].Load() == 0; i++ {
				if time.Now().After(deadline) {
					t.Fatalf("no %s error counted after 30 s; log:\n%s", c.kind, logs.String())
				}
				if err := s.Write(ctx, []history.Sample{{ItemID: 5, Clock: 2000 + int64(i), Type: history.Float, F: 1}}); err != nil {
					t.Fatal(err)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if s.Backlog() == 0 {
				t.Fatal("refused values left the spool")
			}
			// The shipper counts the error before it logs it.
			for !strings.Contains(logs.String(), "kind="+c.kind) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if !strings.Contains(logs.String(), "kind="+c.kind) || !strings.Contains(logs.String(), "code ") {
				t.Fatalf("log does not name the cause:\n%s", logs.String())
			}
			var text bytes.Buffer
			reg.WriteText(&text)
			if !strings.Contains(text.String(), `peregrine_clickhouse_ship_errors_total{kind="`+c.kind+`"}`) || !strings.Contains(text.String(), "peregrine_clickhouse_spool_values") {
				t.Fatalf("/metrics lacks the error or the backlog:\n%s", text.String())
			}
			// Still readable from the spool.
			n := 0
			if err := s.Read(ctx, history.Query{ItemID: 5, From: 0, Till: maxClock}, func(*history.Sample) bool { n++; return true }); err != nil && c.kind != "quota" {
				t.Fatal(err)
			}
			if c.kind == "readonly" && int64(n) < s.Backlog() {
				t.Fatalf("read %d values, %d are spooled", n, s.Backlog())
			}
		})
	}
}

// TestSpoolSurvivesRestartAndLimit: values acknowledged while ClickHouse
// is down survive a restart of Peregrine (the WAL is replayed and
// shipped), and once the spool holds SpoolLimit values Write refuses more
// with ErrSpoolFull instead of growing without bound.
func TestSpoolSurvivesRestartAndLimit(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts clickhouse-server")
	}
	ch := testutil.StartClickHouse(t)
	dir := t.TempDir()
	reg := selfmon.NewRegistry()
	s := openStore(t, ch, func(o *Options) { o.Dir, o.SpoolLimit, o.BatchSize, o.Metrics = dir, 5000, 1000, reg })
	db := s.db
	ch.Stop()
	ctx := context.Background()
	var in []history.Sample
	for i := 0; i < 4000; i++ {
		in = append(in, history.Sample{ItemID: 42, Clock: 5000 + int64(i), Type: history.Str, S: fmt.Sprint("v", i)})
	}
	for i := 0; i < len(in); i += 1000 {
		if err := s.Write(ctx, in[i:i+1000]); err != nil {
			t.Fatal(err)
		}
	}
	more := make([]history.Sample, 1001)
	for i := range more {
		more[i] = history.Sample{ItemID: 43, Clock: int64(i), Type: history.Float}
	}
	if err := s.Write(ctx, more); !errors.Is(err, ErrSpoolFull) {
		t.Fatalf("Write beyond the spool limit: %v, want ErrSpoolFull", err)
	}
	if s.mSpoolFull.Load() != 1 {
		t.Fatalf("spool-full refusals counted %d, want 1", s.mSpoolFull.Load())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ch.Start()
	s2 := openStore(t, ch, func(o *Options) { o.Dir, o.Database = dir, db })
	if b := s2.Backlog(); b != 4000 {
		t.Fatalf("replayed %d values from the spool, want 4000", b)
	}
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := s2.Flush(fctx); err != nil {
		t.Fatal(err)
	}
	raw, _ := countRows(t, s2, "history_str")
	if raw != 4000 {
		t.Fatalf("ClickHouse holds %d rows after the replay, want 4000", raw)
	}
	var got []history.Sample
	if err := s2.Read(ctx, history.Query{ItemID: 42, From: 0, Till: maxClock}, func(v *history.Sample) bool { got = append(got, *v); return true }); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(in) || got[0] != in[0] || got[len(got)-1] != in[len(in)-1] {
		t.Fatalf("read %d values back (first %+v), want %d", len(got), got[:min(1, len(got))], len(in))
	}
}
