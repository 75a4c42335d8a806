package agentsim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// ReplyMode says how a simulated agent answers one passive check.
type ReplyMode uint8

const (
	// Answer sends Value in one frame (after Delay), as an agent does.
	Answer ReplyMode = iota
	// Raw sends Bytes as they are (garbage, a header with a huge length,
	// a frame cut short) and closes.
	Raw
	// Silent reads the request and never answers, holding the
	// connection open: a hung agent or a black hole.
	Silent
	// Slow sends a valid header announcing Bytes' length, then one byte
	// of Bytes per Delay: an endless reply.
	Slow
	// Close closes the connection without a reply, as an agent does for
	// a server not in its Server= list.
	Close
)

// Reply is what a simulated agent answers to one key.
type Reply struct {
	Mode  ReplyMode
	Value string
	Bytes []byte
	Delay time.Duration
}

// NotSupported is the reply an agent gives for a key it does not know.
func NotSupported(msg string) Reply {
	return Reply{Value: "ZBX_NOTSUPPORTED\x00" + msg}
}

// Fleet is a set of simulated passive Zabbix agents, each listening
// on its own port of 127.0.0.1 and answering through one function: many
// hosts for a poller, in one process, on loopback only.
type Fleet struct {
	lns    []net.Listener
	agents []agentConns // by agent: its open connections
	answer func(agent int, key string) Reply
	// bufs holds the request and reply buffers of connections being
	// served (a stack array would escape through the net.Conn
	// interface).
	bufs   sync.Pool
	wg     sync.WaitGroup
	closed atomic.Bool
	// Checks and Replies are padded apart: every connection of every
	// agent increments both.
	Checks  atomic.Uint64 // requests read
	_       [56]byte
	Replies atomic.Uint64 // Answer replies sent
}

// agentConns is one agent's open connections, so that Close can end
// them. One lock per agent rather than one for the fleet: with a
// thousand agents the fleet shares the poller's cores, and a fleet-wide
// lock taken twice per check was its own bottleneck.
type agentConns struct {
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

// Start starts n agents. answer is called from many goroutines
// with the agent's index (0..n-1) and the requested key.
func Start(n int, answer func(agent int, key string) Reply) (*Fleet, error) {
	f := &Fleet{answer: answer, agents: make([]agentConns, n)}
	for i := 0; i < n; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("simulated agent %d of %d: %w", i, n, err)
		}
		f.lns = append(f.lns, ln)
	}
	for i, ln := range f.lns {
		f.wg.Add(1)
		go f.accept(i, ln)
	}
	return f, nil
}

// Addr returns agent i's "127.0.0.1:port".
func (f *Fleet) Addr(i int) string { return f.lns[i].Addr().String() }

// Port returns agent i's port.
func (f *Fleet) Port(i int) int { return f.lns[i].Addr().(*net.TCPAddr).Port }

// Len is the number of agents.
func (f *Fleet) Len() int { return len(f.lns) }

// Close stops every agent and closes every open connection, waiting for
// their goroutines.
func (f *Fleet) Close() {
	if f.closed.Swap(true) {
		return
	}
	for _, ln := range f.lns {
		ln.Close()
	}
	for i := range f.agents {
		a := &f.agents[i]
		a.mu.Lock()
		for c := range a.conns {
			c.Close()
		}
		a.mu.Unlock()
	}
	f.wg.Wait()
}

func (f *Fleet) accept(i int, ln net.Listener) {
	defer f.wg.Done()
	a := &f.agents[i]
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of descriptors and the like: the poller sees a
			// refused or timed-out check; keep serving.
			time.Sleep(time.Millisecond)
			continue
		}
		a.mu.Lock()
		if f.closed.Load() {
			a.mu.Unlock()
			c.Close()
			return
		}
		if a.conns == nil {
			a.conns = map[net.Conn]struct{}{}
		}
		a.conns[c] = struct{}{}
		f.wg.Add(1)
		a.mu.Unlock()
		go f.serve(i, c)
	}
}

func (f *Fleet) serve(i int, c net.Conn) {
	defer f.wg.Done()
	defer func() {
		a := &f.agents[i]
		a.mu.Lock()
		delete(a.conns, c)
		a.mu.Unlock()
		c.Close()
	}()
	bp, _ := f.bufs.Get().(*[512]byte)
	if bp == nil {
		bp = new([512]byte)
	}
	defer f.bufs.Put(bp)
	buf := bp[:]
	key, err := readKey(c, buf)
	if err != nil {
		return
	}
	f.Checks.Add(1)
	r := f.answer(i, key)
	switch r.Mode {
	case Answer:
		if r.Delay > 0 {
			time.Sleep(r.Delay)
		}
		// Framed into the request's buffer when it fits: one
		// allocation less per check in a fleet that shares the
		// poller's cores.
		c.Write(appendFrame(buf[:0], r.Value))
		f.Replies.Add(1)
	case Raw:
		c.Write(r.Bytes)
	case Silent:
		io.Copy(io.Discard, c) // until the poller gives up and closes
	case Slow:
		hdr := frame(r.Bytes)[:13]
		if _, err := c.Write(hdr); err != nil {
			return
		}
		for _, b := range r.Bytes {
			time.Sleep(r.Delay)
			if _, err := c.Write([]byte{b}); err != nil {
				return
			}
		}
	case Close:
	}
}

// readKey reads one plain passive request: a ZBXD frame holding the
// key, into buf when it fits. No read deadline, as the TCP floor's
// server (bench tcp-floor) has none: a deadline is a runtime timer set
// and deleted per connection (≈ 7 % of the fleet's CPU in profiles of
// bench poll), and a poller that connects and never asks is not waited
// for by anything but its own close or the fleet's Close, which ends
// every open connection.
func readKey(c net.Conn, buf []byte) (string, error) {
	// The poller sends header and key in one write: one read usually
	// has both.
	n, err := io.ReadAtLeast(c, buf, 13)
	if err != nil {
		return "", err
	}
	hdr := buf[:13]
	if string(hdr[:4]) != "ZBXD" || hdr[4] != 1 {
		return "", errors.New("not a plain ZBXD frame")
	}
	size := int(binary.LittleEndian.Uint32(hdr[5:9]))
	if size > 64<<10 {
		return "", errors.New("request too long")
	}
	if 13+size > len(buf) {
		nb := make([]byte, 13+size)
		copy(nb, buf[:n])
		buf = nb
	}
	if n < 13+size {
		if _, err := io.ReadFull(c, buf[n:13+size]); err != nil {
			return "", err
		}
	}
	return string(buf[13 : 13+size]), nil
}

// frame wraps payload in an uncompressed ZBXD frame, written here rather
// than with package zbx so that the fleet checks our framing instead of
// sharing its bugs.
func frame(payload []byte) []byte {
	return appendFrame(make([]byte, 0, 13+len(payload)), string(payload))
}

// appendFrame appends payload's frame to b.
func appendFrame(b []byte, payload string) []byte {
	b = append(b, "ZBXD\x01"...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
	b = append(b, 0, 0, 0, 0)
	return append(b, payload...)
}
