package telnet

import (
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestIntegrationTelnetd runs Telnet checks against the real telnetd
// (Debian inetutils-telnetd) on a loopback port, with a shell on a
// pseudo-terminal behind it. The expected values and errors are Zabbix
// 6.0.14's for the same commands against the same daemon and login
// program (recorded from 6.0.14): the terminal's echo and the prompt
// removed, output not trimmed, a command of two lines answered with its
// second prompt, continuation prompts of a loop kept.
func TestIntegrationTelnetd(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: real telnetd")
	}
	d := testutil.StartTelnetd(t)
	type tc struct {
		k, pw, cmd string
		timeout    time.Duration
		want       string
		fail       bool
	}
	list := []tc{
		{k: key("t1", d.Addr), cmd: "echo hello; uname", want: "hello\nLinux"},
		{k: key("t6", d.Addr), cmd: `printf 'a  \n\n'`, want: "a  \n"},
		{k: key("t7", d.Addr), cmd: "echo one\r\necho two", want: "one\n$ two"},
		{k: key("t8", d.Addr, "iso-8859-1"), cmd: `printf 'caf\351\n'`, want: "café"},
		{k: key("t9", d.Addr), cmd: "", want: ""},
		{k: key("t12", d.Addr), cmd: "for i in 1 2 3; do\necho $i\ndone", want: "> > 1\n2\n3"},
		{k: key("t13", d.Addr), cmd: "true", want: ""},
		{k: key("t2", d.Addr), pw: "wrong", cmd: "echo x", fail: true, want: "Login failed"},
		{k: key("t5", d.Addr), cmd: "sleep 30", timeout: 2 * time.Second, fail: true, want: "Cannot find prompt after command execution: timed out after 2s."},
	}
	its := items{}
	var checks []poll.Check
	for i, c := range list {
		id := uint64(i + 1)
		pw := d.Password
		if c.pw != "" {
			pw = c.pw
		}
		its[id] = telnetItem(d.User, pw, c.cmd)
		ch := check(id, c.k)
		ch.Timeout = 10 * time.Second // a shell on a pty under -race is slow to start
		if c.timeout > 0 {
			ch.Timeout = c.timeout
		}
		checks = append(checks, ch)
	}
	got := checkAll(t, New(Options{Item: its.item}), checks...)
	for i, c := range list {
		r := got[uint64(i+1)]
		switch {
		case !c.fail && (r.Status != poll.OK || string(r.Value) != c.want):
			t.Errorf("%s %q: %s %q %q, want %q", c.k, c.cmd, r.Status, r.Value, r.Error, c.want)
		case c.fail && (r.Status != poll.NotSupported || !strings.HasPrefix(r.Error, c.want)):
			t.Errorf("%s %q: %s %q, want not supported %q", c.k, c.cmd, r.Status, r.Error, c.want)
		}
	}
}
