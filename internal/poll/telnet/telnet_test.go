package telnet

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/poll/polltest"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// TestDialogue: the login, the command and its output against the
// scripted server; the options it offers are answered once each,
// refusing all but suppress go-ahead, and its subnegotiation skipped.
func TestDialogue(t *testing.T) {
	srv := startFake(t, "zbx", "pw")
	its := items{1: telnetItem("zbx", "pw", "echo hello"), 2: telnetItem("zbx", "pw", "nosuch"), 3: telnetItem("zbx", "pw", "echo a b  ")}
	got := checkAll(t, New(Options{Item: its.item}), check(1, key("a", srv.Addr)), check(2, key("b", srv.Addr)), check(3, key("c", srv.Addr)))
	for id, want := range map[uint64]string{1: "hello", 2: "sh: 1: nosuch: not found", 3: "a b  "} {
		if r := got[id]; r.Status != poll.OK || string(r.Value) != want {
			t.Errorf("item %d: %s %q %q, want %q", id, r.Status, r.Value, r.Error, want)
		}
	}
	const ttype, naws, echo = 24, 31, 1
	want := [][3]byte{{cmdIAC, cmdWONT, ttype}, {cmdIAC, cmdDONT, echo}, {cmdIAC, cmdDO, optSGA}, {cmdIAC, cmdWONT, naws}}
	all := srv.Replies()
	if len(all) != 3 {
		t.Fatalf("answers %v, want %v for each of 3 connections", all, want)
	}
	for _, got := range all {
		if !slices.Equal(got, want) {
			t.Errorf("answers %v, want %v", got, want)
		}
	}
}

// TestNegotiation: the parser's answers to option requests, by state
// (RFC 854: no answer to a request that changes nothing).
func TestNegotiation(t *testing.T) {
	f := func(in []byte, wantData string, wantReplies []byte) {
		t.Helper()
		var w recorder
		c := &conn{c: &w, max: 1 << 10}
		var data []byte
		for _, b := range in {
			if d, ok := c.feed(b); ok {
				data = append(data, d)
			}
		}
		if string(data) != wantData || string(w.b) != string(wantReplies) {
			t.Errorf("%v: data %q answers %v, want %q %v", in, data, w.b, wantData, wantReplies)
		}
	}
	f([]byte{cmdIAC, cmdWILL, optSGA, cmdIAC, cmdWILL, optSGA}, "", []byte{cmdIAC, cmdDO, optSGA})
	f([]byte{cmdIAC, cmdDO, optSGA, cmdIAC, cmdDONT, optSGA, cmdIAC, cmdDONT, optSGA}, "", []byte{cmdIAC, cmdWILL, optSGA, cmdIAC, cmdWONT, optSGA})
	f([]byte{cmdIAC, cmdWONT, 1, cmdIAC, cmdDONT, 1}, "", nil)
	f([]byte{'a', cmdIAC, cmdIAC, 'b', cmdIAC, 241, 'c'}, "a\xffbc", nil)
	f([]byte{'a', cmdIAC, cmdSB, 24, 0, cmdIAC, cmdIAC, 'x', cmdIAC, cmdSE, 'b'}, "ab", nil)
	f([]byte{cmdIAC, cmdDO, 24, 'x'}, "x", []byte{cmdIAC, cmdWONT, 24})
}

type recorder struct {
	nopConn
	b []byte
}

func (r *recorder) Write(p []byte) (int, error) { r.b = append(r.b, p...); return len(p), nil }

// TestOutput: what Zabbix keeps of what came after the command.
func TestOutput(t *testing.T) {
	f := func(in, cmd, want string) {
		t.Helper()
		if got := string(output([]byte(in), unixEOL([]byte(cmd)), '$')); got != want {
			t.Errorf("output(%q, %q) = %q, want %q", in, cmd, got, want)
		}
	}
	f("echo hi\r\nhi\r\n$ ", "echo hi", "hi")
	f("true\r\n$ ", "true", "")
	f("\r\n$ ", "", "")
	f("a\r\nb\r\n$ ", "x", "a\nb")
	f("for i in 1 2; do\r\n> echo $i\r\n> done\r\n1\r\n2\r\n$ ", "for i in 1 2; do\necho $i\ndone", "for i in 1 2; do\n> echo $i\n> done\n1\n2")
	f("x\r\x00y\n\r$ ", "", "xy")
}

// TestFailures: what makes an item not supported, with 6.0's words at
// the start (recorded from 6.0.14: "No login prompt.", "Login failed.",
// "Cannot connect to TELNET server: ...", "Too many parameters.",
// "Unsupported item key for this item type."), each counted once under
// its reason.
func TestFailures(t *testing.T) {
	srv := startFake(t, "zbx", "pw")
	silent := polltest.SilentTCP(t)
	type tc struct {
		key, pw, cmd string
		want, reason string
	}
	list := []tc{
		{key("a", silent), "pw", "echo x", "No login prompt: timed out after 1s.", "timeout"},
		{key("b", srv.Addr), "wrong", "echo x", "Login failed: no shell prompt ('$', '#', '>' or '%'): the server closed the connection.", "login"},
		{key("c", "127.0.0.1:1"), "pw", "echo x", "Cannot connect to TELNET server: cannot connect to 127.0.0.1:1: ", "connect_failed"},
		{key("d", srv.Addr), "pw", "hang", "Cannot find prompt after command execution: timed out after 1s.", "timeout"},
		{key("e", srv.Addr), "pw", "bye", "Cannot find prompt after command execution: the server closed the connection.", "prompt"},
		{key("f", srv.Addr), "pw", "flood", "Cannot find prompt after command execution: the server sent more than 8192 bytes without one.", "too_large"},
		{key("g", srv.Addr, "", "x"), "pw", "echo x", "Too many parameters.", "config"},
		{"telnet.other[h]", "pw", "echo x", "Unsupported item key for this item type.", "config"},
		{key("i", "127.0.0.1:70000"), "pw", "echo x", "Invalid third parameter.", "config"},
	}
	its := items{}
	var checks []poll.Check
	for i, c := range list {
		id := uint64(i + 1)
		its[id] = telnetItem("zbx", c.pw, c.cmd)
		ch := check(id, c.key)
		ch.Timeout = time.Second
		checks = append(checks, ch)
	}
	m := selfmon.NewRegistry()
	got := checkAll(t, New(Options{Item: its.item, MaxOutput: 8192, Metrics: m}), checks...)
	counts := map[string]int{}
	for i, c := range list {
		r := got[uint64(i+1)]
		timeoutOK := c.reason == "timeout" && strings.HasSuffix(r.Error, "timed out after 1s.")
		if r.Status != poll.NotSupported || !strings.HasPrefix(r.Error, c.want) && !timeoutOK {
			t.Errorf("%s %q: %s %q, want not supported %q", c.key, c.cmd, r.Status, r.Error, c.want)
		}
		counts[c.reason]++
	}
	var b strings.Builder
	m.WriteText(&b)
	for reason, n := range counts {
		line := `peregrine_poll_telnet_errors_total{reason="` + reason + `"} ` + strconv.Itoa(n)
		if !strings.Contains(b.String(), line+"\n") {
			t.Errorf("want %s in the metrics", line)
		}
	}
}
