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
	lns     []net.Listener
	answer  func(agent int, key string) Reply
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	closed  atomic.Bool
	Checks  atomic.Uint64 // requests read
	Replies atomic.Uint64 // Answer replies sent
}

// Start starts n agents. answer is called from many goroutines
// with the agent's index (0..n-1) and the requested key.
func Start(n int, answer func(agent int, key string) Reply) (*Fleet, error) {
	f := &Fleet{answer: answer, conns: map[net.Conn]struct{}{}}
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
	f.mu.Lock()
	for c := range f.conns {
		c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
}

func (f *Fleet) accept(i int, ln net.Listener) {
	defer f.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		if f.closed.Load() {
			f.mu.Unlock()
			c.Close()
			return
		}
		f.conns[c] = struct{}{}
		f.wg.Add(1)
		f.mu.Unlock()
		go f.serve(i, c)
	}
}

func (f *Fleet) serve(i int, c net.Conn) {
	defer f.wg.Done()
	defer func() {
		f.mu.Lock()
		delete(f.conns, c)
		f.mu.Unlock()
		c.Close()
	}()
	key, err := readKey(c)
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
		c.Write(frame([]byte(r.Value)))
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

// readKey reads one plain passive request: a ZBXD frame holding the key.
func readKey(c net.Conn) (string, error) {
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	var hdr [13]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return "", err
	}
	if string(hdr[:4]) != "ZBXD" || hdr[4] != 1 {
		return "", errors.New("not a plain ZBXD frame")
	}
	n := binary.LittleEndian.Uint32(hdr[5:9])
	if n > 64<<10 {
		return "", errors.New("request too long")
	}
	key := make([]byte, n)
	if _, err := io.ReadFull(c, key); err != nil {
		return "", err
	}
	c.SetReadDeadline(time.Time{})
	return string(key), nil
}

// frame wraps payload in an uncompressed ZBXD frame, written here rather
// than with package zbx so that the fleet checks our framing instead of
// sharing its bugs.
func frame(payload []byte) []byte {
	b := make([]byte, 13, 13+len(payload))
	copy(b, "ZBXD\x01")
	binary.LittleEndian.PutUint32(b[5:9], uint32(len(payload)))
	return append(b, payload...)
}
