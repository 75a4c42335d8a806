package api

import (
	"context"
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

// stuckReader is a store read that never finishes by itself: it returns
// only when its context ends.
type stuckReader struct{}

func (stuckReader) Read(ctx context.Context, _ history.Query, _ func(*history.Sample) bool) error {
	<-ctx.Done()
	return ctx.Err()
}

// TestRequestTimeout: a history.get whose read outlives api.timeout is
// cut off with an error, and the server answers the next request.
func TestRequestTimeout(t *testing.T) {
	cat := catalogtest.Open(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h1", Items: []catalog.ItemSpec{{Key: "f1"}}}}})
	srv := httptest.NewServer(New(Options{Catalog: cat, History: stuckReader{}, Timeout: 100 * time.Millisecond,
		Auth: &fakeAuth{sessions: map[string]User{"tok": {ID: 1, Username: "Admin", Role: RoleSuperAdmin}}}}).Handler())
	defer srv.Close()
	post := func(body string) (string, error) {
		resp, err := http.Post(srv.URL, "application/json-rpc", strings.NewReader(body))
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	id := cat.Snapshot().Lookup("h1", "f1").ID
	for _, params := range []string{`{"itemids":"%d","history":0,"countOutput":true}`, `{"itemids":"%d","history":0}`} {
		body := `{"jsonrpc":"2.0","method":"history.get","params":` + strings.Replace(params, "%d", itoa(id), 1) + `,"auth":"tok","id":1}`
		out, err := post(body)
		// Either an error object, or (once the stream has begun) a cut
		// connection: never a complete, successful answer.
		if err == nil && !strings.Contains(out, `"error"`) {
			t.Fatalf("%s: answered %q after the timeout", params, out)
		}
	}
	if out, err := post(`{"jsonrpc":"2.0","method":"apiinfo.version","params":[],"id":2}`); err != nil || !strings.Contains(out, `"result":"6.0.14"`) {
		t.Fatalf("after a timed-out request: %q %v", out, err)
	}
}

func itoa(v uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}
