package testutil

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// StartAgentd starts the real zabbix_agentd (Debian zabbix-agent) in the
// foreground on a free port of 127.0.0.1, accepting passive checks from
// 127.0.0.1 only and with no active checks, and returns its address. It
// is stopped (its whole process group) when the test ends. extra lines
// are appended to its configuration file.
func StartAgentd(t testing.TB, extra ...string) string {
	t.Helper()
	return startAgentd(t, "127.0.0.1", "127.0.0.1", extra)
}

// StartAgentdAt is StartAgentd listening on another loopback address
// ip (127.0.0.2 to 127.0.0.254: what a discovery test sweeps),
// accepting passive checks from any loopback address.
func StartAgentdAt(t testing.TB, ip string, extra ...string) string {
	t.Helper()
	if a := net.ParseIP(ip); a == nil || !a.IsLoopback() || a.To4() == nil {
		t.Fatalf("StartAgentdAt: %q is not an IPv4 loopback address", ip)
	}
	return startAgentd(t, ip, "127.0.0.0/8", extra)
}

func startAgentd(t testing.TB, ip, server string, extra []string) string {
	t.Helper()
	bin := Need(t, "zabbix_agentd", "zabbix-agent")
	dir := t.TempDir()
	port := freePort(t)
	conf := filepath.Join(dir, "zabbix_agentd.conf")
	var b bytes.Buffer
	fmt.Fprintf(&b, "Server=%s\nListenIP=%s\nListenPort=%d\nStartAgents=3\nHostname=peregrine-test\n", server, ip, port)
	fmt.Fprintf(&b, "LogType=console\nPidFile=%s\nTimeout=3\nAllowRoot=1\n", filepath.Join(dir, "agentd.pid"))
	for _, l := range extra {
		b.WriteString(l + "\n")
	}
	if err := os.WriteFile(conf, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-f", "-c", conf)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// AllowRoot: run as root, the agent would otherwise switch to the
	// user zabbix, who cannot write the test's temporary directory.
	// Its own process group: the agent forks listener processes, and
	// the cleanup must end them all.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting zabbix_agentd: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		pgid := cmd.Process.Pid
		syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-pgid, syscall.SIGKILL)
			<-done
		}
	})
	addr := net.JoinHostPort(ip, strconv.Itoa(port))
	end := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return addr
		}
		select {
		case <-done:
			t.Fatalf("zabbix_agentd exited at start:\n%s", out.String())
		default:
		}
		if time.Now().After(end) {
			t.Fatalf("zabbix_agentd not listening on %s after 15 s:\n%s", addr, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago,
// below 32768: zabbix_agentd refuses ListenPort above 32767, and the
// kernel's own ephemeral ports (what ":0" gives) start at 32768.
func freePort(t testing.TB) int {
	t.Helper()
	start := 20000 + os.Getpid()%10000
	for i := 0; i < 2000; i++ {
		port := 20000 + (start+i*7)%12000
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err == nil {
			ln.Close()
			return port
		}
	}
	t.Fatal("no free port in 20000..31999 on 127.0.0.1")
	return 0
}
