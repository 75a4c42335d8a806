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

// manyItemsServer serves, over HTTP on loopback, the API over an embedded
// engine holding a day of n float items of the realistic data set
// (historytest.Realistic, seed 1: the set's gauges, with its mix of 10 s /
// 60 s / 300 s intervals, jitter and nanoseconds), flushed every two
// hours of data and compacted into a day block. history.get reads one
// value type per call, so the items are the set's first n gauges. It
// returns the URL, the catalog ids and the generator.
func manyItemsServer(b *testing.B, n int) (string, []uint64, *historytest.Gen) {
	g := historytest.Realistic(1, n*3, 24*time.Hour) // gauges are 45 % of the set
	gauges := g.Gauges(n)
	var spec []catalog.ItemSpec
	for _, gid := range gauges {
		spec = append(spec, catalog.ItemSpec{Key: "g[" + strconv.FormatUint(gid, 10) + "]", ValueType: "float"})
	}
	if len(gauges) < n {
		b.Fatalf("the set has %d gauges, want %d", len(gauges), n)
	}
	cat := catalogtest.Open(b, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h", Groups: []string{"G"}, Items: spec}}})
	snap := cat.Snapshot()
	idOf := map[uint64]uint64{} // generator id → catalog id
	var ids []uint64
	for _, gid := range gauges {
		idOf[gid] = snap.Lookup("h", "g["+strconv.FormatUint(gid, 10)+"]").ID
		ids = append(ids, idOf[gid])
	}
	eng, err := engine.Open(engine.Options{Dir: b.TempDir(), Sync: wal.SyncNever})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { eng.Close() })
	historytest.FillItems(b, eng, g, idOf)
	srv := httptest.NewServer(New(Options{Catalog: cat, History: eng, Auth: &fakeAuth{sessions: map[string]User{"t": {ID: 1, Role: RoleUser}}}}).Handler())
	b.Cleanup(srv.Close)
	return srv.URL, ids, g
}

// go test -run '^$' -bench 'HistoryGetManyItems' -benchtime 10x -count 3 ./internal/api/
//
// BenchmarkHistoryGetManyItems is the dashboard pattern through the API:
// one history.get for many float items over a short range, from
// compacted day blocks of the realistic data set, over HTTP on loopback,
// output extend, no limit (so the API must also check the rows against
// api.max_rows before it sends any), as a Grafana panel or the UI's
// graph asks; and the hour again merged by clock (sortfield clock), as
// Grafana's Zabbix plugin asks for it.
func BenchmarkHistoryGetManyItems(b *testing.B) {
	url, ids, g := manyItemsServer(b, 5000)
	for _, c := range []struct {
		items int
		rng   int64
		sort  string // "clock": sortfield clock, ascending, as Grafana's Zabbix plugin asks
	}{{5000, 3600, ""}, {2000, 60, ""}, {5000, 3600, "clock"}} {
		name := "items=" + strconv.Itoa(c.items) + "/range=" + strconv.FormatInt(c.rng, 10) + "s"
		sortParams := ""
		if c.sort != "" {
			name += "/sort=" + c.sort
			sortParams = `,"sortfield":"clock","sortorder":"ASC"`
		}
		b.Run(name, func(b *testing.B) {
			from := g.Start + 12*3600 + 17
			quoted := make([]string, c.items)
			for i, id := range ids[:c.items] {
				quoted[i] = `"` + strconv.FormatUint(id, 10) + `"`
			}
			body := fmt.Sprintf(`{"jsonrpc":"2.0","method":"history.get","params":{"history":0,"itemids":[%s],"time_from":%d,"time_till":%d,"output":"extend"%s},"id":1,"auth":"t"}`,
				strings.Join(quoted, ","), from, from+c.rng-1, sortParams)
			benchCalls(b, url, body, func(size int64, head []byte) {
				if !strings.Contains(string(head), `"itemid"`) {
					b.Fatalf("unexpected response: %s", head)
				}
			})
			b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(b.N)/float64(c.items), "µs/item")
		})
	}
}

// go test -run '^$' -bench 'HistoryGetSortedRatio' -benchtime 20x -count 3 ./internal/api/
//
// BenchmarkHistoryGetSortedRatio is issue 30's part 7 in one figure: the
// 5,000 items × 1 h of BenchmarkHistoryGetManyItems read alternately
// unsorted and with sortfield clock (as Grafana sends it), one of each
// per iteration, so that both see the same machine load; it reports each
// one's median and the median of the per-iteration ratios sorted /
// unsorted (1 = as fast).
func BenchmarkHistoryGetSortedRatio(b *testing.B) {
	url, ids, g := manyItemsServer(b, 5000)
	from := g.Start + 12*3600 + 17
	quoted := make([]string, len(ids))
	for i, id := range ids {
		quoted[i] = `"` + strconv.FormatUint(id, 10) + `"`
	}
	body := func(sort string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"history.get","params":{"history":0,"itemids":[%s],"time_from":%d,"time_till":%d,"output":"extend"%s},"id":1,"auth":"t"}`,
			strings.Join(quoted, ","), from, from+3599, sort)
	}
	unsorted, sorted := body(""), body(`,"sortfield":"clock","sortorder":"ASC"`)
	call := func(body string) (time.Duration, int64) {
		t0 := time.Now()
		resp, err := http.Post(url, "application/json-rpc", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return time.Since(t0), n
	}
	var us, ss, ratios []float64
	for b.Loop() {
		du, nu := call(unsorted)
		ds, ns := call(sorted)
		if nu != ns || nu < 1e6 {
			b.Fatalf("unsorted %d bytes, sorted %d", nu, ns)
		}
		us, ss = append(us, du.Seconds()*1e3), append(ss, ds.Seconds()*1e3)
		ratios = append(ratios, ds.Seconds()/du.Seconds())
	}
	med := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	b.ReportMetric(med(us), "ms-unsorted")
	b.ReportMetric(med(ss), "ms-sorted")
	b.ReportMetric(med(ratios), "sorted/unsorted")
}
