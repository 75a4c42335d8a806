package testutil

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ProxyOptions configures StartProxy.
type ProxyOptions struct {
	// Name is the proxy's Hostname (what it sends as "host").
	Name string
	// Server is the trapper an active proxy connects to (host:port);
	// for a passive one, the address it accepts connections from.
	Server  string
	Passive bool
	// Extra lines appended to zabbix_proxy.conf; a parameter given
	// there replaces StartProxy's default for it.
	Extra []string
}

// Proxy is a running zabbix_proxy.
type Proxy struct {
	Addr string // where it listens: its trapper (agents, senders) or, passive, the server's connections
	Dir  string
}

// ProxyBinary returns the path of zabbix_proxy 6.0 (Debian's
// zabbix-proxy-sqlite3): ZABBIX_PROXY_BIN, the one installed, or one
// unpacked beside the templates (.ci/run: apt-get download
// zabbix-proxy-sqlite3 && dpkg -x; it conflicts with the peer's
// zabbix-server-pgsql, so it is not installed). The test is skipped
// without one.
func ProxyBinary(t testing.TB) string {
	t.Helper()
	for _, p := range []string{os.Getenv("ZABBIX_PROXY_BIN"), "/usr/sbin/zabbix_proxy"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("zabbix_proxy is not available: apt-get download zabbix-proxy-sqlite3 && dpkg -x it, then set ZABBIX_PROXY_BIN to its usr/sbin/zabbix_proxy")
	return ""
}

// StartProxy starts the real zabbix_proxy 6.0 with SQLite in the
// foreground on a free loopback port with its own configuration and
// database in a temporary directory; it is killed when the test ends.
// Its frequencies are short (configuration every 5 s, data every
// second) so that tests see its exchanges quickly.
func StartProxy(t testing.TB, o ProxyOptions) *Proxy {
	t.Helper()
	bin := ProxyBinary(t)
	dir := t.TempDir()
	port := freePort(t)
	mode := 0
	if o.Passive {
		mode = 1
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "ProxyMode=%d\nServer=%s\nHostname=%s\nListenIP=127.0.0.1\nListenPort=%d\n", mode, o.Server, o.Name, port)
	fmt.Fprintf(&b, "LogType=console\nPidFile=%s\nSocketDir=%s\nDBName=%s\nAllowRoot=1\n", filepath.Join(dir, "proxy.pid"), dir, filepath.Join(dir, "proxy.db"))
	// The defaults below, unless Extra sets the same parameter (the
	// proxy refuses a parameter given twice).
	set := map[string]bool{}
	for _, l := range o.Extra {
		k, _, _ := strings.Cut(l, "=")
		set[strings.TrimSpace(k)] = true
	}
	for _, l := range []string{"ConfigFrequency=5", "DataSenderFrequency=1", "HeartbeatFrequency=5", "StartPollers=1", "StartPreprocessors=1",
		"StartTrappers=2", "StartPingers=0", "StartDiscoverers=0", "StartHTTPPollers=0", "StartPollersUnreachable=1", "StartIPMIPollers=0",
		"StartDBSyncers=1", "Timeout=4"} {
		if k, _, _ := strings.Cut(l, "="); !set[k] {
			b.WriteString(l + "\n")
		}
	}
	for _, l := range o.Extra {
		b.WriteString(l + "\n")
	}
	conf := filepath.Join(dir, "zabbix_proxy.conf")
	if err := os.WriteFile(conf, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-f", "-c", conf)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting zabbix_proxy: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		if t.Failed() {
			t.Logf("zabbix_proxy output:\n%s", out.String())
		}
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	end := time.Now().Add(60 * time.Second) // it creates its database first
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return &Proxy{Addr: addr, Dir: dir}
		}
		select {
		case <-done:
			t.Fatalf("zabbix_proxy exited at start:\n%s", out.String())
		default:
		}
		if time.Now().After(end) {
			t.Fatalf("zabbix_proxy not listening on %s after 60 s:\n%s", addr, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
