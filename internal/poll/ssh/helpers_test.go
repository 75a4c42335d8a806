package ssh

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/bench/sim/sshsim"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/poll"
)

// items is an item table for Options.Item.
type items map[uint64]*catalog.Item

func (m items) item(id uint64) *catalog.Item { return m[id] }

// pwItem is an SSH item logging in with a password.
func pwItem(user, pw, command string) *catalog.Item {
	return &catalog.Item{Type: catalog.SSHAgent, Extra: &catalog.ItemExtra{Params: command, Login: &catalog.LoginItem{Username: user, Password: pw}}}
}

// keyItem is an SSH item logging in with a key pair.
func keyItem(user, passphrase, pub, priv, command string) *catalog.Item {
	return &catalog.Item{
		Type: catalog.SSHAgent,
		Extra: &catalog.ItemExtra{Params: command, Login: &catalog.LoginItem{
			AuthType: catalog.SSHAuthPublicKey, Username: user, Password: passphrase, PublicKey: pub, PrivateKey: priv}},
	}
}

// key is ssh.run for a server at addr ("host:port").
func key(desc, addr string, extra ...string) string {
	host, port, _ := net.SplitHostPort(addr)
	return "ssh.run[" + strings.Join(append([]string{desc, host, port}, extra...), ",") + "]"
}

// simRun is the simulated servers' commands for these tests.
func simRun(_ int, _ string, cmd string) sshsim.Reply {
	switch {
	case strings.HasPrefix(cmd, "echo "):
		return sshsim.Reply{Stdout: []byte(cmd[5:] + "\n")}
	case cmd == "stderr":
		return sshsim.Reply{Stdout: []byte("out\n"), Stderr: []byte("err\n"), Exit: 3}
	case cmd == "flood":
		return sshsim.Reply{Flood: true}
	case cmd == "hang":
		return sshsim.Reply{Hang: true}
	case cmd == "latin1":
		return sshsim.Reply{Stdout: []byte("caf\xe9\n")}
	case cmd == "trail":
		return sshsim.Reply{Stdout: []byte("  a b  \n\n\t")}
	case cmd == "lines":
		return sshsim.Reply{Stdout: []byte("l1\r\nl2\n")}
	case cmd == "":
		return sshsim.Reply{Stdout: []byte("EMPTY\n")}
	}
	return sshsim.Reply{Stdout: []byte("CMD[" + cmd + "]\n")}
}

// startSim starts n simulated servers taking user "zbx" with password
// "secret" (opts may add more), closed with the test.
func startSim(t *testing.T, n int, opts sshsim.Options) *sshsim.Fleet {
	t.Helper()
	if opts.Passwords == nil {
		opts.Passwords = map[string]string{"zbx": "secret"}
	}
	if opts.Run == nil {
		opts.Run = simRun
	}
	f, err := sshsim.Start(n, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

func newChecker(t *testing.T, opts Options) *Checker {
	t.Helper()
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
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

func check(id uint64, k string) poll.Check {
	return poll.Check{ItemID: id, HostID: 1, InterfaceID: 1, Key: k, Addr: "127.0.0.1:10050", Timeout: 5 * time.Second, Due: time.Now()}
}
