package api

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// countingStore counts the counting passes history.get asks for: a
// CountMany, or a ReadMany of all the request's items besides the read
// of the rows (filter and search count by reading).
type countingStore struct {
	*memstore.Store
	counts atomic.Int32
	mu     sync.Mutex
	reads  []int // items of each ReadMany
}

func (c *countingStore) ReadMany(ctx context.Context, items []uint64, q history.Query, fn func(*history.Sample) bool) error {
	c.mu.Lock()
	c.reads = append(c.reads, len(items))
	c.mu.Unlock()
	return history.ReadEach(ctx, c.Store, items, q, fn)
}

// fullReads returns how many ReadMany calls since the from'th read n
// items.
func (c *countingStore) fullReads(from, n int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := 0
	for _, r := range c.reads[from:] {
		if r == n {
			k++
		}
	}
	return k
}

func (c *countingStore) CountMany(ctx context.Context, items []uint64, q history.Query, max int) (int, error) {
	c.counts.Add(1)
	return history.CountMany(ctx, c.Store, items, q, max)
}

// TestHistoryGetPrefetch: whatever the buffer bounds (the server-wide
// budget smaller than one request, than one block, or large), a numeric
// history.get without a limit answers exactly what the unbounded server
// answers, or the api.max_rows error as a complete JSON-RPC response,
// whether its items are read in one part or several at once;
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
		`{"history":0,"itemids":[` + all + `],"sortfield":"clock"}`,
		`{"history":0,"itemids":[` + all + `],"sortfield":["clock"],"sortorder":"DESC","limit":100}`,
		`{"history":0,"itemids":[` + all + `],"sortfield":"clock","sortorder":"DESC","filter":{"value":["2.5","3.75","-1","0",5]}}`,
		`{"history":0,"itemids":[` + all + `],"time_from":1030,"time_till":1090}`,
		`{"history":0,"itemids":[` + all + `],"filter":{"itemid":"` + fmt.Sprint(fids[5]) + `"}}`,
		`{"history":0,"itemids":[` + all + `],"filter":{"value":["2.5","3.75","-1","0",5]}}`,
		fmt.Sprintf(`{"history":3,"itemids":[%d]}`, uid),
		fmt.Sprintf(`{"history":1,"itemids":[%d]}`, sid), // not buffered: counted first
	}
	f := func(maxRows, prefetch, partItems int) {
		t.Helper()
		s, cs, url := serve(Options{MaxRows: maxRows, PrefetchRows: prefetch})
		s.prefetchPartItems = partItems
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
			cs.mu.Lock()
			before, readsBefore := cs.counts.Load(), len(cs.reads)
			cs.mu.Unlock()
			got := post(url, r.params)
			// The rows' read is of all the items when one part reads
			// them; parts read fewer each.
			nids := strings.Count(params[strings.Index(params, "["):strings.Index(params, "]")], ",") + 1
			nparts := 1
			if !strings.Contains(params, `"limit"`) || strings.Contains(params, `"sortfield"`) { // a merge reads all, then limits
				nparts = max(1, min(runtime.GOMAXPROCS(0), 4, nids/partItems))
			}
			mainFull := 0
			if nparts == 1 {
				mainFull = 1
			}
			counted := cs.counts.Load() > before || cs.fullReads(readsBefore, nids) > mainFull
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
			// Parts split the request's buffer between them, so in parts
			// a read may overflow one part's share with room in others:
			// counted, but still the same answer.
			if fits && counted && nparts == 1 {
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
			// One part, and the six items read in parts concurrently
			// (up to GOMAXPROCS of them, at most 4).
			for _, partItems := range []int{prefetchPartItems, 1} {
				f(maxRows, prefetch, partItems)
			}
		}
	}
}
