package histread

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
)

// countingStore counts the counting passes a read asks for: a
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

// answer runs req's plan and returns what it writes, or Run's error.
func answer(t *testing.T, r *Reader, req Request) (string, error) {
	t.Helper()
	run, err := r.Plan(req).Run(context.Background())
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	w := bufio.NewWriterSize(&buf, 512) // small: rows cross flushes
	if err := run(w); err != nil {
		t.Fatalf("%+v: write: %v", req, err)
	}
	w.Flush()
	return buf.String(), nil
}

// TestPrefetch: whatever the buffer bounds (the budget shared by all
// requests smaller than one request, than one block, or large), a
// numeric read without a limit answers exactly what the unbounded
// reader answers, or a TooManyRowsError before writing anything,
// whether its items are read in one part or several at once; only a
// read that does not fit its buffer pays a counting pass, and every
// buffered row's budget comes back.
func TestPrefetch(t *testing.T) {
	st := memstore.New()
	var fids []uint64
	for i := range 6 {
		id := uint64(101 + i)
		fids = append(fids, id)
		var v []history.Sample
		// Items i and i+3 share clocks (at one ns): ties that the merge
		// by clock orders by itemid.
		for k := range 10 + 7*i { // 10, 17, ... 45 rows: 165 in all
			v = append(v, history.Sample{ItemID: id, Clock: 1000 + int64(3*k+i), NS: 500, Type: history.Float, F: float64(k)*1.25 - float64(i)})
		}
		st.Write(context.Background(), v)
	}
	const uid, sid = 201, 301
	for k := range 30 {
		st.Write(context.Background(), []history.Sample{
			{ItemID: uid, Clock: 1000 + int64(k), Type: history.Uint, U: uint64(k) << 40},
			{ItemID: sid, Clock: 1000 + int64(k), Type: history.Str, S: fmt.Sprint("v", k)},
		})
	}
	values := func(v *history.Sample) bool { return slices.Contains([]float64{2.5, 3.75, -1, 0, 5}, v.F) }
	lastItem := func(v *history.Sample) bool { return v.ItemID == fids[5] }
	floats := Request{Items: fids, Type: history.Float, Fields: AllFields}
	with := func(f func(*Request)) Request {
		r := floats
		f(&r)
		return r
	}
	requests := []Request{
		floats,
		with(func(r *Request) { r.Desc, r.Fields = true, FieldValue|FieldClock }),
		with(func(r *Request) { r.Limit = 100 }),
		with(func(r *Request) { r.ByClock = true }),
		with(func(r *Request) { r.ByClock, r.Desc, r.Limit = true, true, 100 }),
		with(func(r *Request) { r.ByClock, r.Desc, r.Match = true, true, values }),
		with(func(r *Request) { r.From, r.Till, r.HasFrom, r.HasTill = 1030, 1090, true, true }),
		with(func(r *Request) { r.Match = lastItem }),
		with(func(r *Request) { r.Match = values }),
		{Items: []uint64{uid}, Type: history.Uint, Fields: AllFields},
		{Items: []uint64{sid}, Type: history.Str, Fields: AllFields}, // not buffered: counted first
	}
	ref := New(Options{Store: st, MaxRows: 1 << 20, PrefetchRows: 4 << 20})
	f := func(maxRows, prefetch, partItems int) {
		t.Helper()
		cs := &countingStore{Store: st}
		r := New(Options{Store: cs, MaxRows: maxRows, PrefetchRows: prefetch})
		r.partItems = partItems
		for i, req := range requests {
			name := fmt.Sprintf("max_rows %d, prefetch %d, parts of %d items, request %d", maxRows, prefetch, partItems, i)
			want, err := answer(t, ref, req)
			if err != nil {
				t.Fatalf("%s: reference: %v", name, err)
			}
			rows := strings.Count(want, `"clock":`) // rows the request selects
			if rows == 0 {
				t.Fatalf("%s selects nothing: %s", name, want)
			}
			cs.mu.Lock()
			before, readsBefore := cs.counts.Load(), len(cs.reads)
			cs.mu.Unlock()
			got, err := answer(t, r, req)
			// The rows' read is of all the items when one part reads
			// them; parts read fewer each.
			nids := len(req.Items)
			nparts := 1
			if req.Limit == 0 || req.ByClock { // a merge reads all, then limits
				nparts = max(1, min(runtime.GOMAXPROCS(0), 4, nids/partItems))
			}
			mainFull := 0
			if nparts == 1 {
				mainFull = 1
			}
			counted := cs.counts.Load() > before || cs.fullReads(readsBefore, nids) > mainFull
			limitOK := req.Limit == 100 && 100 <= maxRows
			switch tm := (*TooManyRowsError)(nil); {
			case rows > maxRows && !limitOK:
				if !errors.As(err, &tm) || tm.Max != maxRows {
					t.Errorf("%s: want a TooManyRowsError of %d, got %v, %.200s", name, maxRows, err, got)
				}
			case err != nil:
				t.Errorf("%s: %v", name, err)
			case got != want:
				t.Errorf("%s:\n got %.300s\nwant %.300s", name, got, want)
			}
			// A numeric read that fits its buffer is never counted; one
			// that does not is counted once it fills.
			fits := rows <= min(prefetch, maxRows) || limitOK || rows > maxRows && maxRows < prefetch
			if req.Type == history.Str {
				fits = false
			}
			// Parts split the request's buffer between them, so in parts
			// a read may overflow one part's share with room in others:
			// counted, but still the same answer.
			if fits && counted && nparts == 1 {
				t.Errorf("%s: counted though the rows fit the buffer", name)
			}
			if rows > min(prefetch, maxRows) && !limitOK && !counted && rows <= maxRows {
				t.Errorf("%s: served beyond the buffer without a count", name)
			}
		}
		if got := r.budget.Load(); got != int64(prefetch) {
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

// TestPlan: the way of reading follows from the request and the bounds
// alone.
func TestPlan(t *testing.T) {
	r := New(Options{MaxRows: 1000, PrefetchRows: 100})
	two := []uint64{1, 2}
	for _, c := range []struct {
		req  Request
		want string
	}{
		{Request{Items: two, Type: history.Float}, "prefetch"},
		{Request{Items: two, Type: history.Uint, ByClock: true}, "prefetch/merge"},
		{Request{Items: two[:1], Type: history.Float, ByClock: true}, "prefetch"},
		{Request{Items: two, Type: history.Float, Limit: 1000}, "stream"},
		{Request{Items: two, Type: history.Float, Limit: 1001}, "prefetch"},
		{Request{Items: two, Type: history.Log, ByClock: true, Limit: 10}, "stream/merge"},
		{Request{Items: two, Type: history.Text}, "count+stream"},
		{Request{Items: two, Type: history.Float, Count: true, ByClock: true}, "count"},
		{Request{Items: two, Type: history.Float, Count: true, Downsample: 10}, "downsample"},
	} {
		if got := r.Plan(c.req).String(); got != c.want {
			t.Errorf("%+v: plan %q, want %q", c.req, got, c.want)
		}
	}
}
