package api

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// TestHistoryGetPrefetch: whatever the buffer bounds (the server-wide
// budget smaller than one request, than one block, or large), a numeric
// history.get without a limit answers exactly what the unbounded server
// answers, or the api.max_rows error as a complete JSON-RPC response.
// histread's TestPrefetch checks the reads themselves (parts, counting
// passes, the budget).
func TestHistoryGetPrefetch(t *testing.T) {
	var spec []catalog.ItemSpec
	for i := range 6 {
		spec = append(spec, catalog.ItemSpec{Key: fmt.Sprintf("f%d", i), ValueType: "float"})
	}
	spec = append(spec, catalog.ItemSpec{Key: "u", ValueType: "unsigned"}, catalog.ItemSpec{Key: "s", ValueType: "character"})
	cat := catalogtest.Open(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h", Groups: []string{"G"}, Items: spec}}})
	snap := cat.Snapshot()
	st := memstore.New()
	var fids []uint64
	for i := range 6 {
		id := snap.Lookup("h", fmt.Sprintf("f%d", i)).ID
		fids = append(fids, id)
		var v []history.Sample
		// Items i and i+3 share clocks (at one ns): ties that the merge
		// by clock orders by itemid.
		for k := range 10 + 7*i { // 10, 17, ... 45 rows: 165 in all
			v = append(v, history.Sample{ItemID: id, Clock: 1000 + int64(3*k+i), NS: 500, Type: history.Float, F: float64(k)*1.25 - float64(i)})
		}
		st.Write(context.Background(), v)
	}
	uid, sid := snap.Lookup("h", "u").ID, snap.Lookup("h", "s").ID
	for k := range 30 {
		st.Write(context.Background(), []history.Sample{
			{ItemID: uid, Clock: 1000 + int64(k), Type: history.Uint, U: uint64(k) << 40},
			{ItemID: sid, Clock: 1000 + int64(k), Type: history.Str, S: fmt.Sprint("v", k)},
		})
	}
	auth := &fakeAuth{sessions: map[string]User{"t": {ID: 1, Role: RoleUser}}}
	serve := func(opts Options) string {
		opts.Catalog, opts.History, opts.Auth = cat, st, auth
		srv := httptest.NewServer(New(opts).Handler())
		t.Cleanup(srv.Close)
		return srv.URL
	}
	post := func(url, params string) string {
		t.Helper()
		resp, err := http.Post(url, "application/json-rpc", strings.NewReader(`{"jsonrpc":"2.0","method":"history.get","params":`+params+`,"id":1,"auth":"t"}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("%s: %v (a cut response)", params, err)
		}
		return string(b)
	}
	refURL := serve(Options{MaxRows: 1 << 20})
	all := fmt.Sprintf(`%d,%d,%d,%d,%d,%d`, fids[0], fids[1], fids[2], fids[3], fids[4], fids[5])
	requests := []string{
		`{"history":0,"itemids":[` + all + `]}`,
		`{"history":0,"itemids":[` + all + `],"sortorder":"DESC","output":["value","clock"]}`,
		`{"history":0,"itemids":[` + all + `],"limit":100}`,
		`{"history":0,"itemids":[` + all + `],"sortfield":"clock"}`,
		`{"history":0,"itemids":[` + all + `],"sortfield":["clock"],"sortorder":"DESC","limit":100}`,
		`{"history":0,"itemids":[` + all + `],"sortfield":"clock","sortorder":"DESC","filter":{"value":["2.5","3.75","-1","0",5]}}`,
		`{"history":0,"itemids":[` + all + `],"time_from":1030,"time_till":1090}`,
		`{"history":0,"itemids":[` + all + `],"filter":{"itemid":"` + fmt.Sprint(fids[5]) + `"}}`,
		`{"history":0,"itemids":[` + all + `],"filter":{"value":["2.5","3.75","-1","0",5]}}`,
		fmt.Sprintf(`{"history":3,"itemids":[%d]}`, uid),
		fmt.Sprintf(`{"history":1,"itemids":[%d]}`, sid), // not buffered: counted first
	}
	f := func(maxRows, prefetch int) {
		t.Helper()
		url := serve(Options{MaxRows: maxRows, PrefetchRows: prefetch})
		for _, params := range requests {
			want := post(refURL, params)
			rows := strings.Count(want, `"clock":`) // rows the request selects
			if rows == 0 {
				t.Fatalf("%s selects nothing: %s", params, want)
			}
			got := post(url, params)
			limitOK := strings.Contains(params, `"limit":100`) && 100 <= maxRows
			switch {
			case rows > maxRows && !limitOK:
				if !strings.HasPrefix(got, `{"jsonrpc":"2.0","error":{"code":-32500,`) || !strings.HasSuffix(got, `"id":1}`) ||
					!strings.Contains(got, fmt.Sprintf("more than %d history rows (api.max_rows)", maxRows)) {
					t.Errorf("max_rows %d, prefetch %d, %s: want the max_rows error, got %.200s", maxRows, prefetch, params, got)
				}
			default:
				if got != want {
					t.Errorf("max_rows %d, prefetch %d, %s:\n got %.300s\nwant %.300s", maxRows, prefetch, params, got, want)
				}
			}
		}
	}
	for _, maxRows := range []int{1000, 165, 164, 50, 5} {
		for _, prefetch := range []int{1, 7, 100, 8192 + 5, 1 << 20} {
			f(maxRows, prefetch)
		}
	}
}
