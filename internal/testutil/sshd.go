package testutil

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// Sshd is a running OpenSSH server started by StartSshd.
type Sshd struct {
	// Addr is its "127.0.0.1:port".
	Addr string
	// User is the user it lets in: the test's own (the only one a
	// server started by the test can log in).
	User string
	// KeyDir holds the client key pairs it accepts: "id_ed25519" with
	// "id_ed25519.pub", and "id_enc" with "id_enc.pub", encrypted with
	// Passphrase. It is the directory an SSH checker's key location
	// points at.
	KeyDir     string
	Passphrase string
	// HostKey is its host key; KnownHosts a known_hosts file listing it
	// for Addr.
	HostKey    ssh.PublicKey
	KnownHosts string
}

// StartSshd starts Debian's OpenSSH server (openssh-server) in the
// foreground on a free port of 127.0.0.1 with a private configuration:
// a fresh host key, public-key logins only, for the test's user, from
// an authorized_keys file in the test's directory (no PAM, no system
// file read but the binary's). Password logins are not possible: they
// would need a system user with a known password; tests of them use an
// in-process server (internal/bench/sim/sshsim). It is stopped when the
// test ends.
//
// sshd run as root needs its privilege separation directory, which its
// init script creates at boot: StartSshd creates /run/sshd when it is
// root and the directory is missing; run as another user, it skips the
// test when the directory is missing.
func StartSshd(t testing.TB) *Sshd {
	t.Helper()
	bin := Need(t, "/usr/sbin/sshd", "openssh-server")
	if _, err := os.Stat("/run/sshd"); err != nil {
		if os.Geteuid() != 0 {
			t.Skip("sshd needs /run/sshd, which only root can create")
		}
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			t.Fatalf("creating sshd's privilege separation directory: %v", err)
		}
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	keyDir := filepath.Join(dir, "keys")
	if err := os.Mkdir(keyDir, 0o700); err != nil {
		t.Fatal(err)
	}
	s := &Sshd{User: u.Username, KeyDir: keyDir, Passphrase: "peregrine passphrase"}
	hostPub, hostPEM := newEd25519(t, "")
	s.HostKey = hostPub
	hostKeyFile := filepath.Join(dir, "host_ed25519")
	writeMode(t, hostKeyFile, hostPEM, 0o600)
	var authorized []byte
	for _, k := range []struct{ name, pass string }{{"id_ed25519", ""}, {"id_enc", s.Passphrase}} {
		pub, priv := newEd25519(t, k.pass)
		line := ssh.MarshalAuthorizedKey(pub)
		writeMode(t, filepath.Join(keyDir, k.name), priv, 0o600)
		writeMode(t, filepath.Join(keyDir, k.name+".pub"), line, 0o644)
		authorized = append(authorized, line...)
	}
	authFile := filepath.Join(dir, "authorized_keys")
	writeMode(t, authFile, authorized, 0o600)
	port := freePort(t)
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s.KnownHosts = filepath.Join(dir, "known_hosts")
	writeMode(t, s.KnownHosts, []byte(fmt.Sprintf("[127.0.0.1]:%d %s", port, ssh.MarshalAuthorizedKey(hostPub))), 0o644)
	conf := filepath.Join(dir, "sshd_config")
	writeMode(t, conf, []byte(fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s
AuthorizedKeysFile %s
PidFile none
UsePAM no
StrictModes no
PermitRootLogin prohibit-password
AllowUsers %s
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
MaxStartups 200
MaxSessions 50
LogLevel INFO
`, port, hostKeyFile, authFile, s.User)), 0o600)
	// -D foreground, -e log to stderr, -f our configuration only.
	cmd := exec.Command(bin, "-D", "-e", "-f", conf)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting sshd: %v", err)
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
	end := time.Now().Add(15 * time.Second)
	for !strings.Contains(out.String(), "Server listening on") {
		select {
		case <-done:
			t.Fatalf("sshd exited at start:\n%s", out.String())
		default:
		}
		if time.Now().After(end) {
			t.Fatalf("sshd did not start within 15 s:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s
}

// newEd25519 makes a key pair: the public key and the private key in
// OpenSSH's PEM form, encrypted with passphrase if it is not "".
func newEd25519(t testing.TB, passphrase string) (ssh.PublicKey, []byte) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var block *pem.Block
	if passphrase == "" {
		block, err = ssh.MarshalPrivateKey(priv, "peregrine test")
	} else {
		block, err = ssh.MarshalPrivateKeyWithPassphrase(priv, "peregrine test", []byte(passphrase))
	}
	if err != nil {
		t.Fatal(err)
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return sp, pem.EncodeToMemory(block)
}

func writeMode(t testing.TB, path string, b []byte, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, b, mode); err != nil {
		t.Fatal(err)
	}
}
