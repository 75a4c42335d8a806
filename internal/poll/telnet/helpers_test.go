package telnet

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/poll/polltest"
)

// items is an item table for Options.Item.
type items map[uint64]*catalog.Item

func (m items) item(id uint64) *catalog.Item { return m[id] }

func telnetItem(user, pw, command string) *catalog.Item {
	return &catalog.Item{Type: catalog.TelnetAgent, Extra: &catalog.ItemExtra{Params: command, Login: &catalog.LoginItem{Username: user, Password: pw}}}
}

// key is telnet.run for a server at addr.
func key(desc, addr string, extra ...string) string {
	host, port, _ := net.SplitHostPort(addr)
	return "telnet.run[" + strings.Join(append([]string{desc, host, port}, extra...), ",") + "]"
}

func check(id uint64, k string) poll.Check {
	return poll.Check{ItemID: id, HostID: 1, InterfaceID: 1, Key: k, Addr: "127.0.0.1:10050", Timeout: 5 * time.Second, Due: time.Now()}
}

// checkAll runs checks through c and returns their results by item.
func checkAll(t *testing.T, c *Checker, checks ...poll.Check) map[uint64]*poll.Result {
	t.Helper()
	var mu sync.Mutex
	out := map[uint64]*poll.Result{}
	var wg sync.WaitGroup
	wg.Add(len(checks))
	c.Check(context.Background(), checks, func(r *poll.Result) {
		mu.Lock()
		out[r.ItemID] = r
		mu.Unlock()
		wg.Done()
	})
	wg.Wait()
	return out
}

// fakeServer is a scripted Telnet server on loopback that behaves as a
// telnetd with a shell behind it: it opens with option negotiation
// (DO TERMINAL-TYPE, WILL ECHO, WILL SGA, DO NAWS, a subnegotiation),
// prompts "login: " and "Password: ", echoes what it is sent but the
// password (as a terminal does), then answers commands with the prompt
// "$ ". Commands: "echo ARGS", "flood" (output without end), "hang"
// (no answer), "iacflood" (negotiation without end), "bye" (closes).
// Replies records the negotiation answers the client sent, one list
// per connection so that concurrent checks do not interleave them.
type fakeServer struct {
	Addr    string
	user    string
	pw      string
	mu      sync.Mutex
	replies [][][3]byte
}

func startFake(t *testing.T, user, pw string) *fakeServer {
	f := &fakeServer{user: user, pw: pw}
	f.Addr = polltest.ServeTCP(t, f.serve)
	return f
}

// Replies returns each connection's answers, connections in the order
// they were accepted.
func (f *fakeServer) Replies() [][][3]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([][][3]byte, len(f.replies))
	for i, r := range f.replies {
		out[i] = append([][3]byte(nil), r...)
	}
	return out
}

// lineReader reads lines of data from the client, recording its
// negotiation answers.
type lineReader struct {
	f    *fakeServer
	conn int // index into f.replies
	r    *bufio.Reader
}

func (l *lineReader) line() (string, error) {
	var b []byte
	for {
		c, err := l.r.ReadByte()
		if err != nil {
			return "", err
		}
		if c == cmdIAC {
			verb, _ := l.r.ReadByte()
			opt, _ := l.r.ReadByte()
			l.f.mu.Lock()
			l.f.replies[l.conn] = append(l.f.replies[l.conn], [3]byte{cmdIAC, verb, opt})
			l.f.mu.Unlock()
			continue
		}
		if c == '\n' {
			return strings.TrimSuffix(string(b), "\r"), nil
		}
		b = append(b, c)
	}
}

func (f *fakeServer) serve(c net.Conn) {
	w := func(s string) bool { _, err := c.Write([]byte(s)); return err == nil }
	const ttype, naws, echo = 24, 31, 1
	// Options first, a subnegotiation with an escaped IAC among them.
	if !w(string([]byte{cmdIAC, cmdDO, ttype, cmdIAC, cmdWILL, echo, cmdIAC, cmdWILL, optSGA, cmdIAC, cmdDO, naws,
		cmdIAC, cmdSB, ttype, 1, cmdIAC, cmdIAC, 'x', cmdIAC, cmdSE})) {
		return
	}
	f.mu.Lock()
	f.replies = append(f.replies, nil)
	r := &lineReader{f: f, conn: len(f.replies) - 1, r: bufio.NewReader(c)}
	f.mu.Unlock()
	if !w("Debian GNU/Linux 12\r\nlogin: ") {
		return
	}
	user, err := r.line()
	if err != nil || !w(user+"\r\nPassword: ") {
		return
	}
	pw, err := r.line()
	if err != nil {
		return
	}
	if user != f.user || pw != f.pw {
		w("\r\nLogin incorrect\r\n")
		return
	}
	if !w("\r\nLast login: today\r\n$ ") {
		return
	}
	for {
		cmd, err := r.line()
		if err != nil {
			return
		}
		if !w(cmd + "\r\n") { // the terminal's echo
			return
		}
		switch {
		case strings.HasPrefix(cmd, "echo "):
			w(cmd[5:] + "\r\n$ ")
		case cmd == "flood":
			for writeAll(c, floodText) {
			}
			return
		case cmd == "iacflood":
			for writeAll(c, floodIAC) {
			}
			return
		case cmd == "hang":
			_, _ = r.line()
			return
		case cmd == "bye":
			return
		default:
			w("sh: 1: " + cmd + ": not found\r\n$ ")
		}
	}
}

const cmdNOP = 241

// The floods are written from buffers made once: the contract suite
// counts every allocation of the process, the server's too.
var (
	floodText = bytes.Repeat([]byte("flood "), 1000)
	floodIAC  = bytes.Repeat([]byte{cmdIAC, cmdWILL, 99, cmdIAC, cmdDO, 98, cmdIAC, cmdNOP}, 1000)
)

func writeAll(c net.Conn, b []byte) bool {
	_, err := c.Write(b)
	return err == nil
}

// nopConn is a net.Conn that does nothing, for parser tests.
type nopConn struct{ net.Conn }
