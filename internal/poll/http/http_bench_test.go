package http

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
)

var benchBody = []byte(`{"status":"ok","uptime":123456,"version":"1.2.3","load":0.5}`)

// BenchmarkCheck runs HTTP agent checks against a local HTTP server in
// this process (its CPU counts too), 256 in flight over kept-alive
// connections (at most 32 per host, the default), each a GET of a
// 60-byte JSON body; one op is one check. server=nethttp is Go's
// net/http server; server=minimal a keep-alive responder that reads a
// request head and writes a canned answer, to show the checker's own
// cost. checks/s is b.N over the elapsed time; cpu-µs/check is the
// process's CPU time (user+system, both sides) per check, which a shared
// machine does not distort as it does checks/s.
//
//	go test -run '^$' -bench Check -benchmem -count 6 ./internal/poll/http/
func BenchmarkCheck(b *testing.B) {
	b.Run("server=nethttp", func(b *testing.B) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(benchBody)
		}))
		defer srv.Close()
		benchChecks(b, srv.URL)
	})
	b.Run("server=minimal", func(b *testing.B) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		defer ln.Close()
		go minimalServer(ln)
		benchChecks(b, "http://"+ln.Addr().String())
	})
}

// minimalServer answers every request on every connection with one
// canned 200 response, until ln closes.
func minimalServer(ln net.Listener) {
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(benchBody)) + "\r\n\r\n" + string(benchBody))
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer conn.Close()
			rd := bufio.NewReaderSize(conn, 4096)
			for {
				// A GET has no body: the head ends at the empty line.
				for {
					line, err := rd.ReadSlice('\n')
					if err != nil {
						return
					}
					if len(bytes.TrimRight(line, "\r\n")) == 0 {
						break
					}
				}
				if _, err := conn.Write(resp); err != nil {
					return
				}
			}
		}()
	}
}

func benchChecks(b *testing.B, base string) {
	its := items{}
	const nItems = 1000
	for i := range nItems {
		its[uint64(i+1)] = get(base + "/status?i=" + strconv.Itoa(i))
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
	var before, after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		slots <- struct{}{}
		c.Check(context.Background(), batches[i%nItems], done)
	}
	for range inFlight {
		slots <- struct{}{}
	}
	b.StopTimer()
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "checks/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/check")
}
