package api

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/engine"
	"github.com/peregrine-mon/peregrine/internal/history/engine/wal"
)

// go test -run '^$' -bench HistoryGet -benchtime 5x ./internal/api/
//
// BenchmarkHistoryGet reads one float item's 500k / 1M / 2M values with
// history.get over HTTP on loopback from the embedded engine (flushed and
// compacted into day blocks), ascending by clock, and reports ms per call
// and response bytes.
func BenchmarkHistoryGet(b *testing.B) {
	for _, n := range []int{500_000, 1_000_000, 2_000_000} {
		b.Run("rows="+strconv.Itoa(n), func(b *testing.B) {
			cat, err := catalog.Open(context.Background(), catalog.Options{Path: filepath.Join(b.TempDir(), "c.db")})
			if err != nil {
				b.Fatal(err)
			}
			defer cat.Close()
			cat.Apply(context.Background(), catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h", Groups: []string{"G"}, Items: []catalog.ItemSpec{{Key: "f", ValueType: "float"}}}}})
			id := cat.Snapshot().Lookup("h", "f").ID
			eng, err := engine.Open(engine.Options{Dir: b.TempDir(), Sync: wal.SyncNever})
			if err != nil {
				b.Fatal(err)
			}
			defer eng.Close()
			level := 20.0
			batch := make([]history.Sample, 0, 16384)
			for i := 0; i < n; i++ {
				level += math.Sin(float64(i)/50) / 20
				batch = append(batch, history.Sample{ItemID: id, Clock: 1_600_000_000 + int64(i), Type: history.Float, F: math.Round(level*100) / 100})
				if len(batch) == cap(batch) || i == n-1 {
					eng.Write(context.Background(), batch)
					batch = batch[:0]
				}
			}
			eng.Flush()
			srv := httptest.NewServer(New(Options{Catalog: cat, History: eng, Auth: &fakeAuth{sessions: map[string]User{"t": {ID: 1, Role: RoleUser}}}}).Handler())
			defer srv.Close()
			body := fmt.Sprintf(`{"jsonrpc":"2.0","method":"history.get","params":{"history":0,"itemids":["%d"],"time_from":1600000000,"time_till":1700000000,"sortfield":"clock","sortorder":"ASC","output":"extend"},"id":1,"auth":"t"}`, id)
			var size int64
			b.ReportAllocs()
			for b.Loop() {
				resp, err := http.Post(srv.URL, "application/json-rpc", strings.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				size, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N), "ms/call")
			b.ReportMetric(float64(size)/1e6, "MB/response")
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
