package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// newTestServer serves the API over reader for a catalog of one host "h1"
// with a float item "f1" and an unsigned item "u1"; opts fills the rest.
func newTestServer(t *testing.T, reader history.Reader, opts Options) (*httptest.Server, *catalog.Catalog) {
	t.Helper()
	cat := catalogtest.Open(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h1", Groups: []string{"G"}, Items: []catalog.ItemSpec{
		{Key: "f1", ValueType: "float"}, {Key: "u1", ValueType: "unsigned"},
	}}}})
	opts.Catalog, opts.History = cat, reader
	opts.Auth = &fakeAuth{sessions: map[string]User{"ro": {ID: 2, Username: "viewer", Role: RoleUser}}}
	srv := httptest.NewServer(New(opts).Handler())
	t.Cleanup(srv.Close)
	return srv, cat
}

func postRaw(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json-rpc", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestBatchElements: a batch answers every call with an id in order,
// nothing for notifications, an error object for a call that fails after
// others succeeded (bad params, unknown method, not a request), and the
// whole answer is one valid JSON array.
func TestBatchElements(t *testing.T) {
	f := newFixture(t, 1000)
	f1 := f.id("f1")
	body := `[` +
		fmt.Sprintf(`{"jsonrpc":"2.0","method":"history.get","params":{"history":0,"itemids":"%d","limit":2},"auth":"ro","id":1},`, f1) +
		fmt.Sprintf(`{"jsonrpc":"2.0","method":"history.get","params":{"history":0,"itemids":"%d"},"auth":"ro"},`, f1) +
		`{"jsonrpc":"2.0","method":"history.get","params":{"history":0,"bogus":1},"auth":"ro","id":"two"},` +
		`17,` +
		`{"jsonrpc":"2.0","method":"host.frobnicate","params":{},"auth":"ro","id":3},` +
		fmt.Sprintf(`{"jsonrpc":"2.0","method":"history.get","params":{"history":0,"itemids":"%d","sortorder":"DESC","limit":1},"auth":"ro","id":4}`, f1) +
		`]`
	got := f.post(t, body)
	var elems []struct {
		ID     json.RawMessage
		Result json.RawMessage
		Error  *struct {
			Code int
			Data string
		}
	}
	if err := json.Unmarshal([]byte(got), &elems); err != nil {
		t.Fatalf("not a JSON array: %v\n%s", err, got)
	}
	want := []struct {
		id, result string
		code       int
	}{
		{id: `1`, result: fmt.Sprintf(`[{"itemid":"%d","clock":"1000","value":"0.5","ns":"0"},{"itemid":"%d","clock":"1002","value":"1.5","ns":"0"}]`, f1, f1)},
		{id: `"two"`, code: codeParams},
		{id: `null`, code: codeInvalidReq},
		{id: `3`, code: codeNoMethod},
		{id: `4`, result: fmt.Sprintf(`[{"itemid":"%d","clock":"1018","value":"9.5","ns":"0"}]`, f1)},
	}
	if len(elems) != len(want) {
		t.Fatalf("%d elements, want %d (the notification answers nothing):\n%s", len(elems), len(want), got)
	}
	for i, w := range want {
		e := elems[i]
		if string(e.ID) != w.id {
			t.Errorf("element %d: id %s, want %s", i, e.ID, w.id)
		}
		if w.code != 0 {
			if e.Error == nil || e.Error.Code != w.code || e.Result != nil {
				t.Errorf("element %d: want error %d, got %s", i, w.code, got)
			}
			continue
		}
		if string(e.Result) != w.result {
			t.Errorf("element %d:\n got %s\nwant %s", i, e.Result, w.result)
		}
	}
	if !strings.Contains(got, `"data":"Invalid parameter \"/\": unexpected parameter \"bogus\"."`) {
		t.Errorf("the failing element does not say why: %s", got)
	}
}

// TestBatchNotificationsOnly: a batch of notifications only is answered
// with an empty body (JSON-RPC 2.0: "nothing at all"), as is a single
// notification; the calls still run.
func TestBatchNotificationsOnly(t *testing.T) {
	f := newFixture(t, 1000)
	for _, body := range []string{
		`[{"jsonrpc":"2.0","method":"apiinfo.version","params":{}},{"jsonrpc":"2.0","method":"history.get","params":{"history":0},"auth":"ro"}]`,
		`{"jsonrpc":"2.0","method":"apiinfo.version","params":{}}`,
	} {
		if got := f.post(t, body); got != "" {
			t.Errorf("%s\nanswered %q, want an empty body", body, got)
		}
	}
}

// TestBatchCallLimit: a batch over api.max_batch_calls is refused whole,
// with the bound in the error; one at the bound is served.
func TestBatchCallLimit(t *testing.T) {
	srv, _ := newTestServer(t, nil, Options{MaxBatchCalls: 3})
	call := `{"jsonrpc":"2.0","method":"apiinfo.version","params":{},"id":1}`
	_, got := postRaw(t, srv.URL, "["+strings.Repeat(call+",", 3)+call+"]")
	want := `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request.","data":"Invalid parameter \"/\": the batch has 4 calls, more than 3 (api.max_batch_calls); split it into smaller batches."},"id":null}`
	if got != want {
		t.Fatalf("over the bound:\n got %s\nwant %s", got, want)
	}
	_, got = postRaw(t, srv.URL, "["+strings.Repeat(call+",", 2)+call+"]")
	if got != "["+strings.Repeat(`{"jsonrpc":"2.0","result":"6.0.14","id":1},`, 2)+`{"jsonrpc":"2.0","result":"6.0.14","id":1}]` {
		t.Fatalf("at the bound: %s", got)
	}
}

// gatedReader serves rows synthetic values of any item; the first Read
// stops after half of them until gate is closed. The test closes the gate
// only once the client has received part of the response, so the read
// can finish only if rows leave the server while their call is still
// running: a response gathered in memory before it is sent never gets
// there.
type gatedReader struct {
	rows  int
	gate  chan struct{}
	calls int
}

func (g *gatedReader) Read(ctx context.Context, q history.Query, fn func(*history.Sample) bool) error {
	g.calls++
	first := g.calls == 1
	for i := 0; i < g.rows; i++ {
		if first && i == g.rows/2 {
			select {
			case <-g.gate:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		s := history.Sample{ItemID: q.ItemID, Clock: q.From + int64(i), Type: history.Float, F: float64(i) / 4}
		if !fn(&s) {
			return nil
		}
	}
	return nil
}

// TestBatchStreamsWithinAnElement: the rows of a batch's first
// history.get reach the client while that call is still reading, and the
// batch (two reads) then completes with every row.
func TestBatchStreamsWithinAnElement(t *testing.T) {
	const rows = 40_000 // about 2 MB of rows: far over the 64 KiB write buffer
	g := &gatedReader{rows: rows, gate: make(chan struct{})}
	srv, cat := newTestServer(t, g, Options{Timeout: 30 * time.Second})
	id := cat.Snapshot().Lookup("h1", "f1").ID
	call := fmt.Sprintf(`{"jsonrpc":"2.0","method":"history.get","params":{"history":0,"itemids":"%d","time_from":1000,"limit":%d},"auth":"ro","id":%%d}`, id, rows)
	body := "[" + fmt.Sprintf(call, 1) + "," + fmt.Sprintf(call, 2) + "]"
	resp, err := http.Post(srv.URL, "application/json-rpc", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	// Half of the first call's rows are out before the gate: at least
	// 256 KiB of them must arrive while the read waits.
	head := make([]byte, 256<<10)
	if _, err := io.ReadFull(br, head); err != nil {
		t.Fatalf("the first 256 KiB never arrived while the first read was running (response held back?): %v", err)
	}
	close(g.gate)
	rest, err := io.ReadAll(br)
	if err != nil {
		t.Fatal(err)
	}
	var elems []struct {
		ID     int
		Result []row
	}
	if err := json.Unmarshal(append(head, rest...), &elems); err != nil {
		t.Fatalf("batch response is not JSON: %v", err)
	}
	if len(elems) != 2 || elems[0].ID != 1 || elems[1].ID != 2 || len(elems[0].Result) != rows || len(elems[1].Result) != rows {
		t.Fatalf("got %d elements", len(elems))
	}
	if last := elems[1].Result[rows-1]; last.Clock != fmt.Sprint(1000+rows-1) {
		t.Fatalf("last row %+v", last)
	}
}
