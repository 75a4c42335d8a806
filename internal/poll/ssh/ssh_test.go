package ssh

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/peregrine-mon/peregrine/internal/bench/sim/sshsim"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/poll/polltest"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// TestValues: what a command prints becomes the value as Zabbix 6.0
// makes it (recorded from 6.0.14 against the same simulated server:
// stdout only, exit status ignored, trailing white space trimmed, CR LF
// in the output kept, CR LF in the command sent as LF, an empty command
// run as such, invalid UTF-8 as '?', the encoding parameter honoured),
// with a password or through keyboard-interactive.
func TestValues(t *testing.T) {
	sim := startSim(t, 1, sshsim.Options{})
	kbd := startSim(t, 1, sshsim.Options{KeyboardInteractiveOnly: true})
	a, k := sim.Addr(0), kbd.Addr(0)
	cases := []struct {
		key, command, want string
	}{
		{key("r1", a), "echo hello", "hello"},
		{key("r2", a), "stderr", "out"},
		{key("r4", k), "echo kbd", "kbd"},
		{key("r11", a, "iso-8859-1"), "latin1", "café"},
		{key("r12", a), "latin1", "caf?"},
		{key("r13", a), "trail", "  a b"},
		{key("r14", a), "lines", "l1\r\nl2"},
		{key("r15", a), "", "EMPTY"},
		{key("r24", a), "line1\r\nline2", "CMD[line1\nline2]"},
		{key("opts", a, "", "KexAlgorithms=curve25519-sha256;Ciphers=aes128-ctr;MACs=hmac-sha2-256;HostkeyAlgorithms=ssh-ed25519"), "echo opt", "opt"},
	}
	its := items{}
	var checks []poll.Check
	for i, c := range cases {
		its[uint64(i+1)] = pwItem("zbx", "secret", c.command)
		checks = append(checks, check(uint64(i+1), c.key))
	}
	got := checkAll(t, newChecker(t, Options{Item: its.item}), checks...)
	for i, c := range cases {
		r := got[uint64(i+1)]
		if r.Status != poll.OK || string(r.Value) != c.want {
			t.Errorf("%s %q: %s %q %q, want %q", c.key, c.command, r.Status, r.Value, r.Error, c.want)
		}
	}
}

// TestFailures: what makes an item not supported, with 6.0's words where
// 6.0 says it (recorded from 6.0.14), each counted under its reason.
func TestFailures(t *testing.T) {
	sim := startSim(t, 1, sshsim.Options{})
	kbd := startSim(t, 1, sshsim.Options{KeyboardInteractiveOnly: true})
	a, k := sim.Addr(0), kbd.Addr(0)
	silent := polltest.SilentTCP(t)
	type tc struct {
		key    string
		item   itemSpec
		want   string
		reason string
	}
	list := []tc{
		{key("r3", a), itemSpec{pw: "wrong", cmd: "echo x"}, "Password authentication failed: ", "auth"},
		{key("r5", k), itemSpec{pw: "wrong", cmd: "echo x"}, "Keyboard-interactive authentication failed: ", "auth"},
		{key("r7", "127.0.0.1:1"), itemSpec{pw: "secret", cmd: "echo x"}, "Cannot connect to SSH server: cannot connect to 127.0.0.1:1: ", "connect_failed"},
		{key("r6", silent), itemSpec{pw: "secret", cmd: "echo x"}, "Cannot establish SSH session: timed out after 1s", "timeout"},
		{key("r8", a), itemSpec{pw: "secret", cmd: "hang"}, "Cannot read data from SSH server: timed out after 1s", "timeout"},
		{key("r9", a), itemSpec{pw: "secret", cmd: "flood"}, "Command output exceeded limit of 16 KB", "too_large"},
		{key("r20", "127.0.0.1:99999"), itemSpec{pw: "secret"}, "Invalid third parameter.", "config"},
		{"ssh.other[r21]", itemSpec{pw: "secret"}, "Unsupported item key for this item type.", "config"},
		{"ssh.run[r21", itemSpec{pw: "secret"}, "Invalid item key format.", "config"},
		{"ssh.run[a,b,1,,,x]", itemSpec{pw: "secret"}, "Too many parameters.", "config"},
		{key("r22", a), itemSpec{key: true}, "Public key authentication needs poll.ssh_key_location", "config"},
		{key("r17", a, "", "Foo=bar"), itemSpec{pw: "secret"}, `SSH option "Foo" is not supported.`, "config"},
		{key("r18", a, "", "Ciphers=nonesuch"), itemSpec{pw: "secret"}, `Cannot set SSH option "Ciphers": unknown algorithm "nonesuch". Supported values are: `, "config"},
		{"ssh.run[nointerface]", itemSpec{pw: "secret", noAddr: true}, "SSH checks need the IP parameter", "config"},
	}
	its := items{}
	var checks []poll.Check
	for i, c := range list {
		id := uint64(i + 1)
		if c.item.key {
			its[id] = keyItem("zbx", "", "id.pub", "id", c.item.cmd)
		} else {
			its[id] = pwItem("zbx", c.item.pw, c.item.cmd)
		}
		ch := check(id, c.key)
		ch.Timeout = time.Second
		if c.item.noAddr {
			ch.Addr = ""
		}
		checks = append(checks, ch)
	}
	m := selfmon.NewRegistry()
	got := checkAll(t, newChecker(t, Options{Item: its.item, MaxOutput: 16 << 10, Metrics: m}), checks...)
	counts := map[string]int{}
	for i, c := range list {
		r := got[uint64(i+1)]
		// A timeout may fall in an earlier stage than the one meant
		// when the machine is loaded (-race): the count is the same.
		timeoutOK := c.reason == "timeout" && strings.HasSuffix(r.Error, "timed out after 1s")
		if r.Status != poll.NotSupported || !strings.HasPrefix(r.Error, c.want) && !timeoutOK || r.Value != nil {
			t.Errorf("%s: %s %q, want not supported %q...", c.key, r.Status, r.Error, c.want)
		}
		counts[c.reason]++
	}
	for reason, n := range counts {
		if got := metric(t, m, `peregrine_poll_ssh_errors_total{reason="`+reason+`"}`); got != float64(n) {
			t.Errorf("errors counted under %s: %g, want %d", reason, got, n)
		}
	}
	if got := metric(t, m, `peregrine_poll_ssh_checks_total{result="not_supported"}`); got != float64(len(list)) {
		t.Errorf("not supported checks counted: %g, want %d", got, len(list))
	}
}

type itemSpec struct {
	pw, cmd     string
	key, noAddr bool
}

// metric reads one sample of m's text exposition.
func metric(t *testing.T, m *selfmon.Registry, line string) float64 {
	t.Helper()
	var b strings.Builder
	m.WriteText(&b)
	for _, l := range strings.Split(b.String(), "\n") {
		if v, ok := strings.CutPrefix(l, line+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	return 0
}

// TestPublicKeys: key pairs from the key directory, a passphrase from
// the item's password, a certificate presented as such; what is refused
// says which file and why, never the passphrase.
func TestPublicKeys(t *testing.T) {
	dir := t.TempDir()
	plainPub := writePair(t, dir, "id", "")
	encPub := writePair(t, dir, "enc", "open sesame")
	writePair(t, dir, "other", "")
	// A certificate for "id", signed by a CA the server trusts.
	ca := newSigner(t)
	plainKey, err := gossh.ParsePublicKey(plainPub.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	cert := &gossh.Certificate{Key: plainKey, CertType: gossh.UserCert, ValidPrincipals: []string{"keyed"},
		ValidBefore: gossh.CertTimeInfinity, KeyId: "test"}
	if err := cert.SignCert(rand.Reader, ca); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "id-cert.pub"), gossh.MarshalAuthorizedKey(cert), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "junk"), []byte("not a key"), 0o600)
	sim := startSim(t, 1, sshsim.Options{Keys: map[string][]gossh.PublicKey{"keyed": {plainPub, encPub}}, CA: ca.PublicKey()})
	a := sim.Addr(0)
	type tc struct {
		it         itemKeys
		want, fail string
	}
	list := []tc{
		{itemKeys{"", "id.pub", "id"}, "k", ""},
		{itemKeys{"open sesame", "enc.pub", "enc"}, "k", ""},
		{itemKeys{"", "id-cert.pub", "id"}, "k", ""},
		{itemKeys{"", "enc.pub", "enc"}, "", "Private key file " + filepath.Join(dir, "enc") + " is encrypted: set the item's password"},
		{itemKeys{"wrong", "enc.pub", "enc"}, "", "Cannot decrypt private key file " + filepath.Join(dir, "enc")},
		{itemKeys{"", "other.pub", "other"}, "", "Public key authentication failed: "},
		{itemKeys{"", "id.pub", "other"}, "", "The public key in " + filepath.Join(dir, "id.pub") + " is not the private key's"},
		{itemKeys{"", "nope.pub", "id"}, "", "Cannot access public key file " + filepath.Join(dir, "nope.pub")},
		{itemKeys{"", "id.pub", "nope"}, "", "Cannot access private key file " + filepath.Join(dir, "nope")},
		{itemKeys{"", "id.pub", "junk"}, "", "Cannot parse private key file " + filepath.Join(dir, "junk")},
		{itemKeys{"", "../id.pub", "id"}, "", `The item's publickey "../id.pub" must name a file inside`},
	}
	its := items{}
	var checks []poll.Check
	for i, c := range list {
		id := uint64(i + 1)
		its[id] = keyItem("keyed", c.it.pass, c.it.pub, c.it.priv, "echo k")
		checks = append(checks, check(id, key("k", a)))
	}
	c := newChecker(t, Options{Item: its.item, KeyDir: dir})
	for round := range 2 { // the second from the cache
		got := checkAll(t, c, checks...)
		for i, tc := range list {
			r := got[uint64(i+1)]
			switch {
			case tc.fail == "" && (r.Status != poll.OK || string(r.Value) != tc.want):
				t.Errorf("round %d, %+v: %s %q %q, want %q", round, tc.it, r.Status, r.Value, r.Error, tc.want)
			case tc.fail != "" && (r.Status != poll.NotSupported || !strings.HasPrefix(r.Error, tc.fail)):
				t.Errorf("round %d, %+v: %s %q, want not supported %q...", round, tc.it, r.Status, r.Error, tc.fail)
			}
			if strings.Contains(r.Error, "sesame") {
				t.Errorf("an error tells the passphrase: %q", r.Error)
			}
		}
	}
	if n := len(c.keys.m); n != 4 {
		t.Errorf("%d keys cached, want 4 (the pairs that parse)", n)
	}
	// A key file replaced is read again.
	writePair(t, dir, "id", "")
	later := time.Now().Add(time.Second)
	os.Chtimes(filepath.Join(dir, "id"), later, later)
	os.Chtimes(filepath.Join(dir, "id.pub"), later, later)
	got := checkAll(t, c, checks[0])
	if r := got[1]; r.Status != poll.NotSupported || !strings.HasPrefix(r.Error, "Public key authentication failed") {
		t.Errorf("after the key pair changed: %s %q %q, want the new key refused", r.Status, r.Value, r.Error)
	}
}

type itemKeys struct{ pass, pub, priv string }

func newSigner(t *testing.T) gossh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// writePair writes name and name.pub in dir, the private key encrypted
// with passphrase unless it is "", and returns the public key.
func writePair(t *testing.T, dir, name, passphrase string) gossh.PublicKey {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var block *pem.Block
	if passphrase == "" {
		block, err = gossh.MarshalPrivateKey(priv, "")
	} else {
		block, err = gossh.MarshalPrivateKeyWithPassphrase(priv, "", []byte(passphrase))
	}
	if err != nil {
		t.Fatal(err)
	}
	sp, _ := gossh.NewPublicKey(pub)
	if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".pub"), gossh.MarshalAuthorizedKey(sp), 0o644); err != nil {
		t.Fatal(err)
	}
	return sp
}

// TestKnownHosts: with a known_hosts file, a listed server is checked
// and one with another key is refused, saying so.
func TestKnownHosts(t *testing.T) {
	sim := startSim(t, 2, sshsim.Options{})
	a, b := sim.Addr(0), sim.Addr(1)
	kh := filepath.Join(t.TempDir(), "known_hosts")
	line := func(addr string, k gossh.PublicKey) string {
		host, port, _ := strings.Cut(addr, ":")
		return "[" + host + "]:" + port + " " + string(gossh.MarshalAuthorizedKey(k))
	}
	// b is listed with a's key: a changed host key.
	if err := os.WriteFile(kh, []byte(line(a, sim.HostKey(0))+line(b, sim.HostKey(0))), 0o644); err != nil {
		t.Fatal(err)
	}
	its := items{1: pwItem("zbx", "secret", "echo ok"), 2: pwItem("zbx", "secret", "echo ok"), 3: pwItem("zbx", "secret", "echo ok")}
	c := newChecker(t, Options{Item: its.item, KnownHosts: kh})
	got := checkAll(t, c, check(1, key("a", a)), check(2, key("b", b)), check(3, key("c", "127.0.0.2:"+strings.Split(a, ":")[1])))
	if r := got[1]; r.Status != poll.OK || string(r.Value) != "ok" {
		t.Errorf("listed server: %s %q %q", r.Status, r.Value, r.Error)
	}
	if r := got[2]; r.Status != poll.NotSupported || !strings.HasPrefix(r.Error, "Cannot establish SSH session: ") || !strings.Contains(r.Error, "key mismatch") {
		t.Errorf("server with another key: %s %q", r.Status, r.Error)
	}
	// A server with an ECDSA and an ed25519 host key, listed by its
	// ed25519 key only: the checker asks for that type again.
	two := startSim(t, 1, sshsim.Options{ECDSAHostKey: true})
	kh2 := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(kh2, []byte(line(two.Addr(0), two.HostKey(0))), 0o644); err != nil {
		t.Fatal(err)
	}
	c2 := newChecker(t, Options{Item: its.item, KnownHosts: kh2})
	if r := checkAll(t, c2, check(1, key("a", two.Addr(0))))[1]; r.Status != poll.OK || string(r.Value) != "ok" {
		t.Errorf("server listed by its second key type: %s %q %q", r.Status, r.Value, r.Error)
	}
	if r := checkAll(t, newChecker(t, Options{Item: its.item}), check(1, key("a", two.Addr(0))))[1]; r.Status != poll.OK {
		t.Errorf("without known_hosts: %s %q", r.Status, r.Error)
	}
	if _, err := New(Options{KnownHosts: filepath.Join(t.TempDir(), "missing")}); err == nil || !strings.Contains(err.Error(), "poll.ssh_known_hosts") {
		t.Errorf("a missing known_hosts file: %v", err)
	}
}

// TestAbandoned: checks in flight when ctx ends are reported abandoned
// at once, before their timeout.
func TestAbandoned(t *testing.T) {
	sim := startSim(t, 1, sshsim.Options{})
	silent := polltest.SilentTCP(t)
	its := items{1: pwItem("zbx", "secret", "hang"), 2: pwItem("zbx", "secret", "echo x")}
	c := newChecker(t, Options{Item: its.item})
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan *poll.Result, 2)
	a, b := check(1, key("a", sim.Addr(0))), check(2, key("b", silent))
	a.Timeout, b.Timeout = time.Hour, time.Hour
	c.Check(ctx, []poll.Check{a, b}, func(r *poll.Result) { res <- r })
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	cancel()
	for range 2 {
		select {
		case r := <-res:
			if r.Status != poll.NetworkError || !strings.Contains(r.Error, "abandoned") {
				t.Errorf("item %d: %s %q, want abandoned", r.ItemID, r.Status, r.Error)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("checks not reported within 10 s of ctx ending")
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("abandoned checks reported after %s", d)
	}
}
