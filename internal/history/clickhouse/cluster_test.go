package clickhouse

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/historytest"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestCluster: two servers, one shard each, Distributed tables sharded by
// itemid. The contract suite passes with direct writes to the shards
// (every run, not -short: its small data sets take 37 s on the loaded
// 2-core machine, in parallel with this package's other servers; see
// BENCHMARKS.md for what it adds to CI);
// with writes through the Distributed table the same values land on the
// same shards; either way each item lives on exactly one shard.
func TestCluster(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts two clickhouse-servers")
	}
	chs := testutil.StartClickHouseCluster(t, 2)
	urls := []string{chs[0].URL, chs[1].URL}
	cluster := func(direct bool) func(*Options) {
		return func(o *Options) { o.URLs, o.Cluster, o.DirectWrites = urls, testutil.ClusterName, direct }
	}
	t.Run("Contract", func(t *testing.T) {
		historytest.Run(t, func(t *testing.T) history.Store { return openStore(t, chs[0], cluster(true)) })
	})
	for _, direct := range []bool{true, false} {
		t.Run(fmt.Sprintf("Split/direct=%v", direct), func(t *testing.T) {
			s := openStore(t, chs[0], cluster(direct))
			ctx := context.Background()
			var in []history.Sample
			for id := uint64(1); id <= 10; id++ {
				for c := int64(0); c < 100; c++ {
					in = append(in, history.Sample{ItemID: id, Clock: 1000 + c, Type: history.Float, F: float64(c)})
				}
			}
			if err := s.Write(ctx, in); err != nil {
				t.Fatal(err)
			}
			fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			if err := s.Flush(fctx); err != nil {
				t.Fatal(err)
			}
			for i, sc := range s.shards {
				v, err := sc.queryString(ctx, "SELECT count(), countIf(itemid % 2 != "+strconv.Itoa(i)+") FROM "+s.db+".history")
				if err != nil {
					t.Fatal(err)
				}
				if v != "500\t0" {
					t.Fatalf("shard %d holds (rows, rows of other shards' items) = %q, want 500 and 0", i, v)
				}
			}
			for id := uint64(1); id <= 10; id++ {
				n := 0
				if err := s.Read(ctx, history.Query{ItemID: id, From: 0, Till: maxClock}, func(*history.Sample) bool { n++; return true }); err != nil {
					t.Fatal(err)
				}
				if n != 100 {
					t.Fatalf("item %d: read %d values through the Distributed table, want 100", id, n)
				}
			}
		})
	}
}
