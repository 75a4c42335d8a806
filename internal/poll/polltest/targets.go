package polltest

import (
	"bytes"
	"io"
	"net"
	"sync"
	"testing"
)

// SilentTCP starts a peer on 127.0.0.1 that accepts connections, reads
// and discards what they send and never answers: a hung agent, web
// server or service. It returns its "host:port"; it stops, closing every
// connection, when the test ends.
func SilentTCP(t testing.TB) string {
	return ServeTCP(t, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
}

// FloodTCP starts a peer on 127.0.0.1 that sends each connection prefix
// (a protocol header, say), then filler bytes without end, until the
// peer goes or the test ends. It writes one buffer over and over, so the
// flood allocates nothing here.
func FloodTCP(t testing.TB, prefix []byte) string {
	filler := bytes.Repeat([]byte("flood "), 64<<10/6)
	return ServeTCP(t, func(c net.Conn) {
		if _, err := c.Write(prefix); err != nil {
			return
		}
		// What the client sends is read, so that it never blocks on a
		// full window while we flood.
		go func() { _, _ = io.Copy(io.Discard, c) }()
		for {
			if _, err := c.Write(filler); err != nil {
				return
			}
		}
	})
}

// ServeTCP listens on 127.0.0.1 and runs serve for each connection; at
// the test's end it closes the listener and every connection and waits
// for its goroutines.
func ServeTCP(t testing.TB, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns = map[net.Conn]bool{}
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				serve(c)
				c.Close()
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}
