package agent

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// lateConn is a check's connection whose goroutine, after sending the
// request, gets no CPU until the check's timeout has passed (what an
// overloaded server does to it): Write returns only once the agent has
// answered and the deadline is over.
type lateConn struct {
	*net.TCPConn // SyscallConn and the deadlines are the real socket's
	replied      <-chan struct{}
	until        time.Time
}

func (c *lateConn) Write(p []byte) (int, error) {
	n, err := c.TCPConn.Write(p)
	if c.replied != nil {
		<-c.replied
	}
	time.Sleep(time.Until(c.until))
	return n, err
}

// lateAgent accepts one connection at a time, reads the request and, if
// reply, answers "1" and closes; it signals on replied once it has.
func lateAgent(t *testing.T, reply bool) (string, <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	replied := make(chan struct{}, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 256)
				if _, err := c.Read(buf); err != nil {
					return
				}
				if !reply {
					replied <- struct{}{}
					time.Sleep(5 * time.Second) // silent until the check gives up
					return
				}
				c.Write(zbx.AppendFrame(nil, []byte("1"), zbx.FlagProtocol))
				replied <- struct{}{}
			}()
		}
	}()
	return ln.Addr().String(), replied
}

// TestLastChanceRead: a reply that reached the socket before the
// timeout but was read after it fired is a value, not a timeout (issue
// 30: a server that is behind must not blame its targets); with nothing
// in the socket the check times out as before, marked TimedOut.
func TestLastChanceRead(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply bool
	}{{"reply waiting in the socket", true}, {"no reply", false}} {
		t.Run(tc.name, func(t *testing.T) {
			addr, replied := lateAgent(t, tc.reply)
			const timeout = 300 * time.Millisecond
			m := selfmon.NewRegistry()
			var start time.Time
			c := New(Options{Metrics: m, Dial: func(ctx context.Context, network, a string) (net.Conn, error) {
				var d net.Dialer
				conn, err := d.DialContext(ctx, network, a)
				if err != nil {
					return nil, err
				}
				return &lateConn{TCPConn: conn.(*net.TCPConn), replied: replied, until: start.Add(timeout + 50*time.Millisecond)}, nil
			}})
			col := newCollect(1)
			start = time.Now()
			c.Check(context.Background(), []poll.Check{{ItemID: 1, Key: "agent.ping", Addr: addr, Timeout: timeout}}, col.done)
			col.wait(t, 1)
			r := col.got[1]
			if !tc.reply {
				if r.Status != poll.NetworkError || !r.TimedOut {
					t.Fatalf("no reply: got status %v TimedOut %v (%s), want a network error marked TimedOut", r.Status, r.TimedOut, r.Error)
				}
				if got := counter(t, m, "peregrine_poll_agent_late_replies_total"); got != "0" {
					t.Fatalf("late replies %s, want 0", got)
				}
				return
			}
			if r.Status != poll.OK || string(r.Value) != "1" || r.TimedOut {
				t.Fatalf("got status %v value %q TimedOut %v (%s), want the reply that was waiting in the socket", r.Status, r.Value, r.TimedOut, r.Error)
			}
			if got := counter(t, m, "peregrine_poll_agent_late_replies_total"); got != "1" {
				t.Fatalf("late replies %s, want 1", got)
			}
		})
	}
}

// countConn is a connection that hands out data in the sizes its
// reader asks for and counts the reads that reached it.
type countConn struct {
	net.Conn
	data  []byte
	reads int
}

func (c *countConn) Read(p []byte) (int, error) {
	c.reads++
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.data)
	c.data = c.data[n:]
	return n, nil
}

// A short reply arriving at once is read from the socket once, not once
// for the header and once for the payload (two without the buffer); a
// long one takes no more reads than without it, and the frame is the
// same either way.
func TestLastChanceOneRead(t *testing.T) {
	for _, n := range []int{1, 100, 243, 244, 5000} {
		value := strings.Repeat("x", n)
		frame := zbx.AppendFrame(nil, []byte(value), zbx.FlagProtocol)
		bare := &countConn{data: frame}
		if _, _, err := zbx.NewReader(bare, zbx.ReaderOptions{MaxSize: 1 << 20}).ReadFrame(); err != nil {
			t.Fatal(err)
		}
		cc := &countConn{data: frame}
		rd := zbx.NewReader(&lastChance{Conn: cc}, zbx.ReaderOptions{MaxSize: 1 << 20})
		_, payload, err := rd.ReadFrame()
		if err != nil || string(payload) != value {
			t.Fatalf("%d bytes: %q, %v", n, payload, err)
		}
		if want := min(1, bare.reads); (len(frame) <= lastChanceBuf && cc.reads != want) || cc.reads > bare.reads {
			t.Errorf("%d-byte reply: %d reads of the connection, %d without the buffer", n, cc.reads, bare.reads)
		}
	}
}
