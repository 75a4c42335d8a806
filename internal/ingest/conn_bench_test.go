package ingest

import (
	"bytes"
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// BenchmarkPersistentConn is a client that keeps one connection and
// sends frame after frame (a proxy, a loader, peregrine bench): the whole
// connection loop over loopback TCP, reads, decoding, the reply and what
// the connection keeps or drops of its buffers between frames. Values go
// to a submitter that acknowledges at once. B/op is mostly those buffers.
//
//	go test -run '^$' -bench BenchmarkPersistentConn -benchtime 2000x -count 6 ./internal/ingest/
func BenchmarkPersistentConn(b *testing.B) {
	cat := catalogtest.Open(b, benchSpec(10, 1000))
	s, err := New(Options{Listen: "127.0.0.1:0", Catalog: cat, Pipeline: &discardSubmitter{}, Timeout: 5 * time.Second, IdleTimeout: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	b.Cleanup(func() { cancel(); <-done })
	for _, n := range []int{250, 1000, 4000} {
		frame := zbx.AppendFrame(nil, senderPayload(n, 10, 1000), zbx.FlagProtocol)
		want := []byte("processed: " + strconv.Itoa(n) + ";")
		b.Run("values="+strconv.Itoa(n), func(b *testing.B) {
			c, err := net.Dial("tcp", s.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			rd := zbx.NewReader(c, zbx.ReaderOptions{Timeout: 5 * time.Second})
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Write(frame); err != nil {
					b.Fatal(err)
				}
				_, reply, err := rd.ReadFrame()
				if err != nil {
					b.Fatal(err)
				}
				if !bytes.Contains(reply, want) {
					b.Fatalf("reply %s", reply)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "values/s")
		})
	}
}
