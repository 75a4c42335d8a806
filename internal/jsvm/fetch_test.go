package jsvm

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestHTTPFetcher: a script item's HttpRequest through the pool's worker
// and HTTPFetcher against a server on loopback: headers and body go
// out, status, headers and body come back, a body past MaxBody fails
// the request, and an unreachable URL throws into the script.
func TestHTTPFetcher(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/big":
			_, _ = w.Write([]byte(strings.Repeat("x", 100)))
		default:
			w.Header().Set("X-Seen", r.Header.Get("X-Token"))
			w.WriteHeader(201)
			_, _ = w.Write([]byte(r.Method + " " + string(b)))
		}
	}))
	defer srv.Close()
	f := &HTTPFetcher{Client: srv.Client(), MaxBody: 64}
	p := newPool(t, PoolOptions{Workers: 1})
	run := func(script string) (Result, error) {
		return p.Run(context.Background(), &Job{Kind: Item, Script: script, Value: srv.URL, Timeout: 5 * time.Second, Fetch: f.Fetch})
	}
	res, err := run(`var r = new HttpRequest(); r.addHeader('X-Token: t1');
var b = r.post(value + '/x', 'hello'); return r.getStatus() + ' ' + r.getHeaders()['x-seen'] + ' ' + b;`)
	if err != nil || res.Value != "201 t1 POST hello" {
		t.Errorf("post: %+v, %v", res, err)
	}
	if _, err := run(`return new HttpRequest().get(value + '/big');`); !IsReason(err, Thrown) || !strings.Contains(err.Error(), "larger than 64 bytes") {
		t.Errorf("big body: %v", err)
	}
	if _, err := run(`return new HttpRequest().get('http://127.0.0.1:1/');`); !IsReason(err, Thrown) || !strings.Contains(err.Error(), "cannot send request") {
		t.Errorf("refused: %v", err)
	}
}
