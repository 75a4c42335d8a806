package http

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
)

// BenchmarkCheck runs HTTP agent checks against a local HTTP server (in
// this process: its CPU counts too), 256 in flight over kept-alive
// connections (poll.http_max_conns_per_host's default, 32), each a GET
// of a 60-byte JSON body; one op is one check. checks/s is b.N over the
// elapsed time.
//
//	go test -run '^$' -bench Check -benchmem -count 6 ./internal/poll/http/
func BenchmarkCheck(b *testing.B) {
	body := []byte(`{"status":"ok","uptime":123456,"version":"1.2.3","load":0.5}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer srv.Close()
	its := items{}
	const nItems = 1000
	for i := range nItems {
		its[uint64(i+1)] = get(srv.URL + "/status?i=" + strconv.Itoa(i))
	}
	c := New(Options{Item: its.item})
	defer c.Close()
	const inFlight = 256
	slots := make(chan struct{}, inFlight)
	done := func(r *poll.Result) {
		if r.Status != poll.OK {
			b.Errorf("check failed: %s", r.Error)
		}
		<-slots
	}
	batches := make([][]poll.Check, nItems)
	for i := range batches {
		batches[i] = []poll.Check{{ItemID: uint64(i + 1), Key: "api.status", Timeout: 5 * time.Second}}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		slots <- struct{}{}
		c.Check(context.Background(), batches[i%nItems], done)
	}
	for range inFlight {
		slots <- struct{}{}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "checks/s")
}
