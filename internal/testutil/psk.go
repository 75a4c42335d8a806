package testutil

import (
	"bytes"
	"context"
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

// WritePSK writes a pre-shared key (hexadecimal digits) to an owner-only
// file, as zabbix_sender's --tls-psk-file and the agents' TLSPSKFile
// read it, and returns its path.
func WritePSK(t testing.TB, hexKey string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "psk")
	if err := os.WriteFile(p, []byte(hexKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// PSKArgs are zabbix_sender's and zabbix_get's options for a pre-shared
// key read from file.
func PSKArgs(identity, file string) []string {
	return []string{"--tls-connect", "psk", "--tls-psk-identity", identity, "--tls-psk-file", file}
}

// PSKConfig are an agent's configuration lines for a pre-shared key:
// TLSConnect (active checks) and TLSAccept (passive checks) psk.
func PSKConfig(identity, file string) []string {
	return []string{"TLSConnect=psk", "TLSAccept=psk", "TLSPSKIdentity=" + identity, "TLSPSKFile=" + file}
}

// StartAgent2 starts the real zabbix_agent2 (Debian zabbix-agent2) in
// passive mode on a free port of 127.0.0.1, accepting checks from
// 127.0.0.1 only and with no active checks, and returns its address. It
// is stopped when the test ends. extra lines are appended to its
// configuration file.
func StartAgent2(t testing.TB, extra ...string) string {
	t.Helper()
	bin := Need(t, "zabbix_agent2", "zabbix-agent2")
	dir := t.TempDir()
	port := freePort(t)
	conf := filepath.Join(dir, "zabbix_agent2.conf")
	var b bytes.Buffer
	fmt.Fprintf(&b, "Server=127.0.0.1\nListenIP=127.0.0.1\nListenPort=%d\nHostname=peregrine-test\n", port)
	fmt.Fprintf(&b, "LogType=file\nLogFile=%s\nPidFile=%s\nControlSocket=%s\nTimeout=3\n",
		filepath.Join(dir, "agent2.log"), filepath.Join(dir, "agent2.pid"), filepath.Join(dir, "agent2.sock"))
	for _, l := range extra {
		b.WriteString(l + "\n")
	}
	if err := os.WriteFile(conf, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-c", conf)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting zabbix_agent2: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		pgid := cmd.Process.Pid
		syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-pgid, syscall.SIGKILL)
			<-done
		}
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	end := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return addr
		}
		select {
		case <-done:
			log, _ := os.ReadFile(filepath.Join(dir, "agent2.log"))
			t.Fatalf("zabbix_agent2 exited at start:\n%s%s", out.String(), log)
		default:
		}
		if time.Now().After(end) {
			log, _ := os.ReadFile(filepath.Join(dir, "agent2.log"))
			t.Fatalf("zabbix_agent2 not listening on %s after 15 s:\n%s%s", addr, out.String(), log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// RunGet runs the real zabbix_get against addr
// ("host:port") for key with the extra args (PSKArgs, ...) and returns
// what it printed, trimmed, and its error (an exit status other than 0).
func RunGet(t testing.TB, addr, key string, args ...string) (string, error) {
	t.Helper()
	// Debian 12 ships zabbix_get in the server packages (no zabbix-get).
	bin := Need(t, "zabbix_get", "zabbix-server-pgsql")
	host, port, err := splitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"-s", host, "-p", port, "-k", key}, args...)...)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}
