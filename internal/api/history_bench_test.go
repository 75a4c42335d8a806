package api

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history/engine"
	"github.com/peregrine-mon/peregrine/internal/history/historytest"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// benchStart is the clock of the first value in the history.get
// benchmarks; values are one a second from there.
const benchStart = 1_600_000_000

// historyBenchServer serves, over HTTP on loopback, the API over an
// embedded engine holding one float item's n values (a slowly varying
// gauge with two decimals, one a second), flushed and compacted into day
// blocks as the server leaves data older than a day. It returns the URL
// and the item id.
func historyBenchServer(b *testing.B, n int) (string, uint64) {
	cat := catalogtest.Open(b, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h", Groups: []string{"G"}, Items: []catalog.ItemSpec{{Key: "f", ValueType: "float"}}}}})
	id := cat.Snapshot().Lookup("h", "f").ID
	eng, err := engine.Open(engine.Options{Dir: b.TempDir(), Sync: wal.SyncNever})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { eng.Close() })
	historytest.FillGauge(b, eng, id, benchStart, n)
	srv := httptest.NewServer(New(Options{Catalog: cat, History: eng, Auth: &fakeAuth{sessions: map[string]User{"t": {ID: 1, Role: RoleUser}}}}).Handler())
	b.Cleanup(srv.Close)
	return srv.URL, id
}

// benchCalls posts body once per iteration, reads the whole response and
// reports the median call time (ms/call-median), the mean (ms/call) and
// the response size. With -benchtime 5x the median is of 5 calls.
func benchCalls(b *testing.B, url, body string, check func(size int64, head []byte)) {
	var durs []time.Duration
	var size int64
	head := make([]byte, 512)
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		resp, err := http.Post(url, "application/json-rpc", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		k, _ := io.ReadFull(resp.Body, head)
		rest, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		durs = append(durs, time.Since(t0))
		size = int64(k) + rest
		check(size, head[:k])
	}
	slices.Sort(durs)
	b.ReportMetric(float64(durs[len(durs)/2].Microseconds())/1000, "ms/call-median")
	b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N), "ms/call")
	b.ReportMetric(float64(size)/1e6, "MB/response")
}

// go test -run '^$' -bench 'HistoryGet$' -benchtime 5x -count 3 ./internal/api/
//
// BenchmarkHistoryGet reads one float item's 500k / 1M / 2M values with
// history.get over HTTP on loopback from the embedded engine (day
// blocks), ascending by clock, output extend, no limit (so the API first
// counts the rows against api.max_rows), as Grafana asks for raw history.
// B/op is what the server and the client allocate per call: it must not
// grow with the row count.
func BenchmarkHistoryGet(b *testing.B) {
	for _, n := range []int{500_000, 1_000_000, 2_000_000} {
		b.Run("rows="+strconv.Itoa(n), func(b *testing.B) {
			url, id := historyBenchServer(b, n)
			body := fmt.Sprintf(`{"jsonrpc":"2.0","method":"history.get","params":{"history":0,"itemids":["%d"],"time_from":1600000000,"time_till":1700000000,"sortfield":"clock","sortorder":"ASC","output":"extend"},"id":1,"auth":"t"}`, id)
			benchCalls(b, url, body, func(size int64, head []byte) {
				if size < int64(n)*40 {
					b.Fatalf("response of %d bytes for %d rows: %s", size, n, head)
				}
			})
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// go test -run '^$' -bench 'HistoryGetDownsample' -benchtime 20x -count 5 ./internal/api/
//
// BenchmarkHistoryGetDownsample asks history.get over HTTP on loopback
// for one float item's 1M values (day blocks) as 1,000 buckets
// ("downsample": 1000), with time_from/time_till left to the data range
// as a dashboard that wants "all of it" does.
func BenchmarkHistoryGetDownsample(b *testing.B) {
	const n = 1_000_000
	url, id := historyBenchServer(b, n)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","method":"history.get","params":{"history":0,"itemids":["%d"],"sortfield":"clock","sortorder":"ASC","output":"extend","downsample":1000},"id":1,"auth":"t"}`, id)
	b.Run("points=1M/buckets=1000", func(b *testing.B) {
		benchCalls(b, url, body, func(size int64, head []byte) {
			if !strings.Contains(string(head), `"count":"1000"`) {
				b.Fatalf("unexpected response: %s", head)
			}
		})
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "points/s")
	})
}

// go test -run '^$' -bench 'HistoryGetNewest' -benchtime 5x -count 3 ./internal/api/
//
// BenchmarkHistoryGetNewest is the read of `peregrine bench history-read`
// and of Zabbix's own pages: the newest N of an item's 2M values,
// sortfield clock DESC with limit N, over HTTP on loopback from day blocks.
func BenchmarkHistoryGetNewest(b *testing.B) {
	const total = 2_000_000
	url, id := historyBenchServer(b, total)
	for _, n := range []int{500_000, 1_000_000, 2_000_000} {
		b.Run("rows="+strconv.Itoa(n), func(b *testing.B) {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","method":"history.get","params":{"history":0,"itemids":["%d"],"sortfield":"clock","sortorder":"DESC","limit":%d,"output":"extend"},"id":1,"auth":"t"}`, id, n)
			benchCalls(b, url, body, func(size int64, head []byte) {
				if size < int64(n)*40 {
					b.Fatalf("response of %d bytes for %d rows: %s", size, n, head)
				}
			})
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
