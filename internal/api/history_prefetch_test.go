package api

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/catalog/catalogtest"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
)

// countingStore counts the counting passes history.get asks for: a
// CountMany, or a second ReadMany (filter and search count by reading).
type countingStore struct {
	*memstore.Store
	counts, reads atomic.Int32
}

func (c *countingStore) ReadMany(ctx context.Context, items []uint64, q history.Query, fn func(*history.Sample) bool) error {
	c.reads.Add(1)
	return history.ReadEach(ctx, c.Store, items, q, fn)
}

func (c *countingStore) CountMany(ctx context.Context, items []uint64, q history.Query, max int) (int, error) {
	c.counts.Add(1)
	return history.CountMany(ctx, c.Store, items, q, max)
}

// TestHistoryGetPrefetch: whatever the buffer bounds (the server-wide
// budget smaller than one request, than one block, or large), a numeric
// history.get without a limit answers exactly what the unbounded server
// answers, or the api.max_rows error as a complete JSON-RPC response;
// only a read that does not fit its buffer pays a counting pass, and
// every buffered row's budget comes back.
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
		for k := range 10 + 7*i { // 10, 17, ... 45 rows: 165 in all
			v = append(v, history.Sample{ItemID: id, Clock: 1000 + int64(3*k+i), NS: int32(k * 1000), Type: history.Float, F: float64(k)*1.25 - float64(i)})
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
	serve := func(opts Options) (*Server, *countingStore, string) {
		cs := &countingStore{Store: st}
		opts.Catalog, opts.History, opts.Auth = cat, cs, auth
		s := New(opts)
		srv := httptest.NewServer(s.Handler())
		t.Cleanup(srv.Close)
		return s, cs, srv.URL
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
	_, _, refURL := serve(Options{MaxRows: 1 << 20})
	all := fmt.Sprintf(`%d,%d,%d,%d,%d,%d`, fids[0], fids[1], fids[2], fids[3], fids[4], fids[5])
	requests := []string{
		`{"history":0,"itemids":[` + all + `]}`,
		`{"history":0,"itemids":[` + all + `],"sortorder":"DESC","output":["value","clock"]}`,
		`{"history":0,"itemids":[` + all + `],"limit":100}`,
		`{"history":0,"itemids":[` + all + `],"time_from":1030,"time_till":1090}`,
		`{"history":0,"itemids":[` + all + `],"filter":{"itemid":"` + fmt.Sprint(fids[5]) + `"}}`,
		`{"history":0,"itemids":[` + all + `],"filter":{"value":["2.5","3.75","-1","0",5]}}`,
		fmt.Sprintf(`{"history":3,"itemids":[%d]}`, uid),
		fmt.Sprintf(`{"history":1,"itemids":[%d]}`, sid), // not buffered: counted first
	}
	f := func(maxRows, prefetch int) {
		t.Helper()
		s, cs, url := serve(Options{MaxRows: maxRows, PrefetchRows: prefetch})
		for _, params := range requests {
			r := struct {
				params string
				rows   int
			}{params: params}
			want := post(refURL, r.params)
			r.rows = strings.Count(want, `"clock":`) // rows the request selects
			if r.rows == 0 {
				t.Fatalf("%s selects nothing: %s", params, want)
			}
			before, readsBefore := cs.counts.Load(), cs.reads.Load()
			got := post(url, r.params)
			counted := cs.counts.Load() > before || cs.reads.Load() > readsBefore+1
			limitOK := strings.Contains(r.params, `"limit":100`) && 100 <= maxRows
			switch {
			case r.rows > maxRows && !limitOK:
				if !strings.HasPrefix(got, `{"jsonrpc":"2.0","error":{"code":-32500,`) || !strings.HasSuffix(got, `"id":1}`) ||
					!strings.Contains(got, fmt.Sprintf("more than %d history rows (api.max_rows)", maxRows)) {
					t.Errorf("max_rows %d, prefetch %d, %s: want the max_rows error, got %.200s", maxRows, prefetch, r.params, got)
				}
			default:
				if got != want {
					t.Errorf("max_rows %d, prefetch %d, %s:\n got %.300s\nwant %.300s", maxRows, prefetch, r.params, got, want)
				}
			}
			// A numeric read that fits its buffer is never counted; one
			// that does not is counted once it fills.
			fits := r.rows <= min(prefetch, maxRows) || limitOK || r.rows > maxRows && maxRows < prefetch
			if strings.Contains(r.params, `"history":1`) {
				fits = false
			}
			if fits && counted {
				t.Errorf("max_rows %d, prefetch %d, %s: counted though the rows fit the buffer", maxRows, prefetch, r.params)
			}
			if r.rows > min(prefetch, maxRows) && !limitOK && !counted && r.rows <= maxRows {
				t.Errorf("max_rows %d, prefetch %d, %s: served beyond the buffer without a count", maxRows, prefetch, r.params)
			}
		}
		if got := s.prefetchBudget.Load(); got != int64(prefetch) {
			t.Errorf("max_rows %d, prefetch %d: budget %d after the requests, want it all back", maxRows, prefetch, got)
		}
	}
	for _, maxRows := range []int{1000, 165, 164, 50, 5} {
		for _, prefetch := range []int{1, 7, 100, 8192 + 5, 1 << 20} {
			f(maxRows, prefetch)
		}
	}
}
