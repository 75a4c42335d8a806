package ssh

import (
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestIntegrationSshd runs SSH checks against the real OpenSSH server
// (Debian openssh-server) started on a loopback port: public-key logins
// with a plain and a passphrase-protected key from the key directory,
// the host key checked against a known_hosts file, real commands through
// the user's shell (stderr and the exit status ignored, the encoding
// parameter honoured, key options offered), and what sshd refuses.
// Password logins cannot be tested here (they need a system user with a
// known password); TestValues and TestFailures test them against the
// in-process server of package sshsim.
func TestIntegrationSshd(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: real sshd")
	}
	d := testutil.StartSshd(t)
	u := d.User
	type tc struct {
		k, cmd  string
		pass    string
		pub     string
		priv    string
		pw      bool // password authentication
		timeout time.Duration
		want    string // value, or the start of the error with fail
		fail    bool
	}
	list := []tc{
		{k: key("plain", d.Addr), cmd: "echo hello; echo oops >&2; exit 3", pub: "id_ed25519.pub", priv: "id_ed25519", want: "hello"},
		{k: key("enc", d.Addr), cmd: "uname -s", pass: d.Passphrase, pub: "id_enc.pub", priv: "id_enc", want: "Linux"},
		{k: key("latin1", d.Addr, "ISO-8859-1"), cmd: `printf 'caf\351\n\n'`, pub: "id_ed25519.pub", priv: "id_ed25519", want: "café"},
		{k: key("multi", d.Addr), cmd: "echo a\r\necho b", pub: "id_ed25519.pub", priv: "id_ed25519", want: "a\nb"},
		{k: key("opts", d.Addr, "", "KexAlgorithms=curve25519-sha256;Ciphers=aes256-gcm@openssh.com;HostkeyAlgorithms=ssh-ed25519"), cmd: "echo opts", pub: "id_ed25519.pub", priv: "id_ed25519", want: "opts"},
		{k: key("badpass", d.Addr), cmd: "echo x", pass: "wrong", pub: "id_enc.pub", priv: "id_enc", fail: true, want: "Cannot decrypt private key file"},
		{k: key("pw", d.Addr), cmd: "echo x", pw: true, pass: "anything", fail: true, want: "Unsupported authentication method: the server takes neither password nor keyboard-interactive"},
		// Under -race on a loaded machine the handshake alone may take
		// the 3 s: then the session times out, with the same count.
		{k: key("slow", d.Addr), cmd: "sleep 30", pub: "id_ed25519.pub", priv: "id_ed25519", timeout: 3 * time.Second, fail: true, want: "timed out after 3s"},
	}
	its := items{}
	var checks []poll.Check
	for i, c := range list {
		id := uint64(i + 1)
		if c.pw {
			its[id] = pwItem(u, c.pass, c.cmd)
		} else {
			its[id] = keyItem(u, c.pass, c.pub, c.priv, c.cmd)
		}
		ch := check(id, c.k)
		if c.timeout > 0 {
			ch.Timeout = c.timeout
		}
		checks = append(checks, ch)
	}
	// A user sshd does not let in, with a key it knows.
	its[100] = keyItem("nobody", "", "id_ed25519.pub", "id_ed25519", "id")
	checks = append(checks, check(100, key("nobody", d.Addr)))

	for _, knownHosts := range []string{"", d.KnownHosts} {
		c := newChecker(t, Options{Item: its.item, KeyDir: d.KeyDir, KnownHosts: knownHosts})
		got := checkAll(t, c, checks...)
		for i, tc := range list {
			r := got[uint64(i+1)]
			switch {
			case !tc.fail && (r.Status != poll.OK || string(r.Value) != tc.want):
				t.Errorf("known_hosts %q, %s %q: %s %q %q, want %q", knownHosts, tc.k, tc.cmd, r.Status, r.Value, r.Error, tc.want)
			case tc.fail && (r.Status != poll.NotSupported || !strings.HasPrefix(r.Error, tc.want) && !(tc.timeout > 0 && strings.HasSuffix(r.Error, tc.want))):
				t.Errorf("known_hosts %q, %s %q: %s %q, want not supported %q", knownHosts, tc.k, tc.cmd, r.Status, r.Error, tc.want)
			}
		}
		if r := got[100]; r.Status != poll.NotSupported || !strings.HasPrefix(r.Error, "Public key authentication failed") {
			t.Errorf("a user sshd refuses: %s %q", r.Status, r.Error)
		}
	}
	// The host key the file lists for another address is refused.
	other := newChecker(t, Options{Item: its.item, KeyDir: d.KeyDir, KnownHosts: d.KnownHosts})
	host := strings.Replace(d.Addr, "127.0.0.1", "localhost", 1)
	got := checkAll(t, other, check(1, key("unlisted", host)))
	if r := got[1]; r.Status != poll.NotSupported || !strings.Contains(r.Error, "knownhosts: key is unknown") {
		t.Errorf("a server known_hosts does not list: %s %q", r.Status, r.Error)
	}
}
