package api

import (
	"context"
	"fmt"
	"math"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/engine"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// The fixture's data (see newFixture): f1 at clocks 1000, 1002, ...,
// 1018 with values 0.5, 1.5, ..., 9.5; f2 at 1001, ..., 1019 with 0, -1,
// ..., -9; u1 at 1000..1009 (ns 7) with 2^64-1; s1 strings.

func TestHistoryDownsample(t *testing.T) {
	f := newFixture(t, 1000)
	f1, f2, u1 := f.id("f1"), f.id("f2"), f.id("u1")
	get := func(params string) string {
		t.Helper()
		return f.post(t, `{"jsonrpc":"2.0","method":"history.get","params":`+params+`,"id":1,"auth":"ro"}`)
	}
	cases := []struct{ name, params, want string }{
		{"five buckets of 4 s",
			fmt.Sprintf(`{"history":0,"itemids":"%d","time_from":1000,"time_till":1019,"downsample":5,"limit":2}`, f1),
			fmt.Sprintf(`{"jsonrpc":"2.0","result":[{"itemid":"%[1]d","clock":"1000","value":"1","ns":"0","min":"0.5","max":"1.5","avg":"1","count":"2"},{"itemid":"%[1]d","clock":"1004","value":"3","ns":"0","min":"2.5","max":"3.5","avg":"3","count":"2"}],"id":1}`, f1)},
		{"bounds from the data: 1000..1018 in 2 buckets of 10 s",
			fmt.Sprintf(`{"history":0,"itemids":"%d","downsample":"2","output":["clock","value","count"]}`, f1),
			`{"jsonrpc":"2.0","result":[{"clock":"1000","value":"2.5","count":"5"},{"clock":"1010","value":"7.5","count":"5"}],"id":1}`},
		{"only time_from given: till from the data",
			fmt.Sprintf(`{"history":0,"itemids":"%d","time_from":1010,"downsample":1,"output":["clock","min","max"]}`, f1),
			`{"jsonrpc":"2.0","result":[{"clock":"1010","min":"5.5","max":"9.5"}],"id":1}`},
		{"descending",
			fmt.Sprintf(`{"history":0,"itemids":"%d","time_from":1000,"time_till":1019,"downsample":5,"sortorder":"DESC","output":["clock"]}`, f1),
			`{"jsonrpc":"2.0","result":[{"clock":"1016"},{"clock":"1012"},{"clock":"1008"},{"clock":"1004"},{"clock":"1000"}],"id":1}`},
		{"two items merged by clock, ties by itemid",
			fmt.Sprintf(`{"history":0,"itemids":[%d,%d],"time_from":1000,"time_till":1019,"downsample":2,"sortfield":"clock","output":["itemid","clock","avg"]}`, f2, f1),
			fmt.Sprintf(`{"jsonrpc":"2.0","result":[{"itemid":"%[1]d","clock":"1000","avg":"2.5"},{"itemid":"%[2]d","clock":"1000","avg":"-2"},{"itemid":"%[1]d","clock":"1010","avg":"7.5"},{"itemid":"%[2]d","clock":"1010","avg":"-7"}],"id":1}`, f1, f2)},
		{"two items, item by item without sortfield clock, descending",
			fmt.Sprintf(`{"history":0,"itemids":[%d,%d],"time_from":1000,"time_till":1019,"downsample":2,"sortorder":"DESC","output":["itemid","clock"]}`, f2, f1),
			fmt.Sprintf(`{"jsonrpc":"2.0","result":[{"itemid":"%[1]d","clock":"1010"},{"itemid":"%[1]d","clock":"1000"},{"itemid":"%[2]d","clock":"1010"},{"itemid":"%[2]d","clock":"1000"}],"id":1}`, f1, f2)},
		{"unsigned: exact min and max",
			fmt.Sprintf(`{"history":3,"itemids":"%d","downsample":1,"output":["clock","min","max","count"]}`, u1),
			`{"jsonrpc":"2.0","result":[{"clock":"1000","min":"18446744073709551615","max":"18446744073709551615","count":"10"}],"id":1}`},
		{"countOutput counts buckets",
			fmt.Sprintf(`{"history":0,"itemids":"%d","time_from":1000,"time_till":1019,"downsample":5,"countOutput":true,"limit":1}`, f1),
			`{"jsonrpc":"2.0","result":"5","id":1}`},
		{"no data in range",
			fmt.Sprintf(`{"history":0,"itemids":"%d","time_from":2000,"time_till":3000,"downsample":5}`, f1),
			`{"jsonrpc":"2.0","result":[],"id":1}`},
		{"no data at all, open bounds",
			fmt.Sprintf(`{"history":0,"itemids":"%d","time_from":2000,"downsample":5}`, f1),
			`{"jsonrpc":"2.0","result":[],"id":1}`},
		{"null means raw rows",
			fmt.Sprintf(`{"history":0,"itemids":"%d","downsample":null,"limit":1,"output":["clock","value"]}`, f1),
			`{"jsonrpc":"2.0","result":[{"clock":"1000","value":"0.5"}],"id":1}`},
	}
	for _, c := range cases {
		if got := get(c.params); got != c.want {
			t.Errorf("%s: %s\n got %s\nwant %s", c.name, c.params, got, c.want)
		}
	}
	// The unsigned avg is a float: 2^64-1 reads as 1.8446744073709552e+19.
	if got := get(fmt.Sprintf(`{"history":3,"itemids":"%d","downsample":1,"output":["value"]}`, u1)); !strings.Contains(got, `"value":"1.8446744073709552e+19"`) {
		t.Errorf("unsigned avg: %s", got)
	}
}

func TestHistoryDownsampleErrors(t *testing.T) {
	f := newFixture(t, 15)
	f1, f2, s1 := f.id("f1"), f.id("f2"), f.id("s1")
	cases := []struct{ params, want string }{
		{fmt.Sprintf(`{"history":0,"itemids":"%d","downsample":0}`, f1), `"code":-32602,"message":"Invalid params.","data":"Invalid parameter \"/downsample\": value must be one of 1-100000."`},
		{fmt.Sprintf(`{"history":0,"itemids":"%d","downsample":-3}`, f1), `Invalid parameter \"/downsample\": value must be one of 1-100000.`},
		{fmt.Sprintf(`{"history":0,"itemids":"%d","downsample":100001}`, f1), `Invalid parameter \"/downsample\": value must be one of 1-100000.`},
		{fmt.Sprintf(`{"history":0,"itemids":"%d","downsample":"many"}`, f1), `"code":-32602,"message":"Invalid params.","data":"Invalid parameter \"/downsample\": an integer is expected."`},
		{fmt.Sprintf(`{"history":0,"itemids":"%d","downsample":1.5}`, f1), `Invalid parameter \"/downsample\": an integer is expected.`},
		{fmt.Sprintf(`{"history":1,"itemids":"%d","downsample":10}`, s1), `"code":-32602,"message":"Invalid params.","data":"Invalid parameter \"/downsample\": only numeric history can be downsampled (\"history\" 0 or 3, not 1)."`},
		{fmt.Sprintf(`{"history":4,"itemids":"%d","downsample":10}`, s1), `not 4).`},
		{fmt.Sprintf(`{"history":2,"itemids":"%d","downsample":10}`, s1), `not 2).`},
		// Two items × 10 buckets over the fixture's api.max_rows of 15.
		{fmt.Sprintf(`{"history":0,"itemids":[%d,%d],"downsample":10}`, f1, f2), `"code":-32500,"message":"Application error.","data":"The request asks for up to 20 buckets (2 items × downsample 10), more than 15; lower \"downsample\" or select fewer items."`},
	}
	for _, c := range cases {
		got := f.post(t, `{"jsonrpc":"2.0","method":"history.get","params":`+c.params+`,"id":1,"auth":"ro"}`)
		if !strings.Contains(got, c.want) {
			t.Errorf("%s\n got %s\nwant %s", c.params, got, c.want)
		}
	}
	// Under the bound it is served.
	if r := f.history(t, fmt.Sprintf(`{"history":0,"itemids":[%d,%d],"downsample":7}`, f1, f2)); len(r) != 14 {
		t.Fatalf("2 items × 7 buckets: %d rows", len(r))
	}
}

// TestHistoryDownsampleEngineMatchesMemstore serves the same data from
// the engine (blocks, head and late values, through its own Downsampler)
// and from memstore, and expects byte-identical responses.
func TestHistoryDownsampleEngineMatchesMemstore(t *testing.T) {
	cat := catalogtest.Open(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h", Groups: []string{"G"}, Items: []catalog.ItemSpec{{Key: "f", ValueType: "float"}, {Key: "u", ValueType: "unsigned"}}}}})
	fid, uid := cat.Snapshot().Lookup("h", "f").ID, cat.Snapshot().Lookup("h", "u").ID
	eng, err := engine.Open(engine.Options{Dir: t.TempDir(), Sync: wal.SyncNever, ChunkValues: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	mem := memstore.New()
	write := func(v []history.Sample) {
		for _, s := range []history.Store{eng, mem} {
			if err := s.Write(context.Background(), v); err != nil {
				t.Fatal(err)
			}
		}
	}
	gen := func(from, to int64, f func(int64) float64) []history.Sample {
		var v []history.Sample
		for c := from; c < to; c++ {
			x := f(c)
			v = append(v, history.Sample{ItemID: fid, Clock: c, NS: int32(c % 3), Type: history.Float, F: x},
				history.Sample{ItemID: uid, Clock: c, Type: history.Uint, U: uint64(math.Abs(x) * 1000)})
		}
		return v
	}
	write(gen(1_000_000, 1_020_000, func(c int64) float64 { return math.Round(math.Sin(float64(c)/300)*1e4) / 100 }))
	if err := eng.Flush(); err != nil {
		t.Fatal(err)
	}
	write(gen(1_030_000, 1_040_000, func(c int64) float64 { return float64(c%97) / 4 }))
	auth := &fakeAuth{sessions: map[string]User{"ro": {ID: 2, Role: RoleUser}}}
	post := func(st history.Reader, params string) string {
		srv := httptest.NewServer(New(Options{Catalog: cat, History: st, Auth: auth}).Handler())
		defer srv.Close()
		f := &fixture{srv: srv}
		return f.post(t, `{"jsonrpc":"2.0","method":"history.get","params":`+params+`,"id":1,"auth":"ro"}`)
	}
	check := func(stage string) {
		for _, params := range []string{
			fmt.Sprintf(`{"history":0,"itemids":"%d","downsample":500}`, fid),
			fmt.Sprintf(`{"history":0,"itemids":"%d","time_from":1005000,"time_till":1035555,"downsample":77,"sortorder":"DESC"}`, fid),
			fmt.Sprintf(`{"history":3,"itemids":"%d","downsample":333}`, uid),
		} {
			e, m := post(eng, params), post(mem, params)
			if e != m {
				t.Fatalf("%s: %s: engine and memstore differ:\nengine %.300s\nmemory %.300s", stage, params, e, m)
			}
			if !strings.Contains(e, `"count":"`) {
				t.Fatalf("%s: %s: no buckets: %.300s", stage, params, e)
			}
		}
	}
	check("blocks+head")
	// Late values over flushed data: the engine's merged path.
	write(gen(1_010_000, 1_010_500, func(c int64) float64 { return -1 }))
	check("late")
}
