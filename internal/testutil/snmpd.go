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
	"sync"
	"syscall"
	"testing"
	"time"
)

// Snmpd is a running net-snmp agent started by StartSnmpd.
type Snmpd struct {
	// Addr is its "127.0.0.1:port" (UDP).
	Addr string
	// Community is its read-only SNMPv1/v2c community.
	Community string
	// Users are its SNMPv3 users: authPriv "peregrine-sha-aes" (SHA1,
	// AES128) and "peregrine-md5-des" (MD5, DES), authNoPriv
	// "peregrine-sha256" (SHA-256), noAuthNoPriv "peregrine-noauth",
	// with the passphrases AuthPass and PrivPass.
	AuthPass, PrivPass string
	// SysName, SysLocation and SysContact are what it answers for the
	// system group.
	SysName, SysLocation, SysContact string
}

// SNMPv3 users StartSnmpd creates.
const (
	SnmpdUserSHAAES = "peregrine-sha-aes"
	SnmpdUserMD5DES = "peregrine-md5-des"
	SnmpdUserSHA256 = "peregrine-sha256"
	SnmpdUserNoAuth = "peregrine-noauth"
)

// lockedBuffer collects a child's output while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// StartSnmpd starts the real snmpd (Debian snmpd) in the foreground on
// a free UDP port of 127.0.0.1 with a private configuration (no system
// files read, persistent state in the test's directory): a read-only
// community, two SNMPv3 authPriv users, and the system group's
// sysName/sysLocation/sysContact set. It is stopped when the test ends.
// extra lines are appended to its configuration.
func StartSnmpd(t testing.TB, extra ...string) *Snmpd {
	t.Helper()
	bin := Need(t, "snmpd", "snmpd")
	dir := t.TempDir()
	s := &Snmpd{Community: "peregrine-ro", AuthPass: "authpass-123", PrivPass: "privpass-456",
		SysName: "peregrine-snmpd", SysLocation: "loopback rack", SysContact: "ops@example.net"}
	port := freeUDPPort(t)
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	var b bytes.Buffer
	fmt.Fprintf(&b, "agentAddress udp:127.0.0.1:%d\n", port)
	fmt.Fprintf(&b, "rocommunity %s 127.0.0.1\n", s.Community)
	fmt.Fprintf(&b, "createUser %s SHA %q AES %q\nrouser %s priv\n", SnmpdUserSHAAES, s.AuthPass, s.PrivPass, SnmpdUserSHAAES)
	fmt.Fprintf(&b, "createUser %s MD5 %q DES %q\nrouser %s priv\n", SnmpdUserMD5DES, s.AuthPass, s.PrivPass, SnmpdUserMD5DES)
	fmt.Fprintf(&b, "createUser %s SHA-256 %q\nrouser %s auth\n", SnmpdUserSHA256, s.AuthPass, SnmpdUserSHA256)
	fmt.Fprintf(&b, "createUser %s\nrouser %s noauth\n", SnmpdUserNoAuth, SnmpdUserNoAuth)
	fmt.Fprintf(&b, "sysName %s\nsysLocation %s\nsysContact %s\n", s.SysName, s.SysLocation, s.SysContact)
	for _, l := range extra {
		b.WriteString(l + "\n")
	}
	conf := filepath.Join(dir, "snmpd.conf")
	if err := os.WriteFile(conf, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	// -f foreground, -Lo log to stdout, -C only the -c file, -I no AgentX
	// master (no socket in /var/agentx); SNMP_PERSISTENT_DIR keeps the
	// engine ID and users out of /var/lib/snmp.
	cmd := exec.Command(bin, "-f", "-Lo", "-C", "-c", conf, "-p", filepath.Join(dir, "snmpd.pid"))
	cmd.Env = append(os.Environ(), "SNMP_PERSISTENT_DIR="+dir, "MIBS=", "MIBDIRS="+dir)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting snmpd: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	// snmpd logs its banner once it listens.
	end := time.Now().Add(15 * time.Second)
	for !strings.Contains(out.String(), "NET-SNMP version") {
		select {
		case <-done:
			t.Fatalf("snmpd exited at start:\n%s", out.String())
		default:
		}
		if time.Now().After(end) {
			t.Fatalf("snmpd did not start within 15 s:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s
}

// freeUDPPort returns a UDP port of 127.0.0.1 that was free a moment ago.
func freeUDPPort(t testing.TB) int {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// SendTrap runs net-snmp's snmptrap (Debian snmp) with args, MIBs off
// (numeric OIDs only), and fails the test if it fails. args are
// snmptrap's: "-v", "2c", "-c", "public", addr, "", trapOID, varbinds...
func SendTrap(t testing.TB, args ...string) {
	t.Helper()
	runNetSNMP(t, "snmptrap", args)
}

// SendInform runs net-snmp's snmpinform (Debian snmp) as SendTrap runs
// snmptrap: it fails the test unless the receiver acknowledges.
func SendInform(t testing.TB, args ...string) {
	t.Helper()
	runNetSNMP(t, "snmpinform", args)
}

func runNetSNMP(t testing.TB, program string, args []string) {
	t.Helper()
	bin := Need(t, program, "snmp")
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "MIBS=", "MIBDIRS="+t.TempDir(), "SNMPCONFPATH="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", program, strings.Join(args, " "), err, out)
	}
}
