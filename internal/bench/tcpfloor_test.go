package bench

import (
	"context"
	"testing"
	"time"
)

// The floor's loops complete whole checks against the in-process floor
// server, with and without SO_LINGER 0, and account CPU per connection.
func TestTCPFloor(t *testing.T) {
	for _, linger0 := range []bool{false, true} {
		f := TCPFloor{Conns: 4, Addrs: 3, Duration: 200 * time.Millisecond, Linger0: linger0, InProcess: true}
		r, err := f.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if r.Done == 0 || r.Errors != 0 || r.FirstErr != "" {
			t.Fatalf("linger0 %v: %+v", linger0, r)
		}
		if r.PerSecond <= 0 || r.ClientCPUPerConn <= 0 {
			t.Fatalf("linger0 %v: rate %g, client CPU per connection %s", linger0, r.PerSecond, r.ClientCPUPerConn)
		}
	}
}

// With a rate the loops are paced: at 50 connections a second the
// window counts at most 50 a second of its length, plus the tokens
// waiting when it opened (one per loop) and a margin, where four unpaced
// loops on loopback do hundreds or thousands a second.
func TestTCPFloorRate(t *testing.T) {
	f := TCPFloor{Conns: 4, Addrs: 3, Duration: 300 * time.Millisecond, Rate: 50, InProcess: true}
	r, err := f.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.Done == 0 || r.Errors != 0 {
		t.Fatalf("%+v", r)
	}
	wall := float64(r.Done) / r.PerSecond // the window as measured
	if limit := 50*wall + 10; float64(r.Done) > limit {
		t.Fatalf("paced at 50/s: %d connections in a %.2f s window, want at most %.0f", r.Done, wall, limit)
	}
}
