package testutil

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// smtpdScript runs Debian's aiosmtpd (python3-aiosmtpd) through its
// Controller, which its command line does not expose with
// authentication: STARTTLS with the given certificate, AUTH PLAIN and
// LOGIN for one user (also without TLS), recipients starting with
// "refuse" refused with 550, or SMTPS, each message written whole to a file of
// the spool directory.
const smtpdScript = `
import os, ssl, sys, time, uuid
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
port, spool, cert, key, user, pw, smtps = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7] == "1"
class Handler:
    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.startswith("refuse"):
            return "550 5.1.1 <%s>: mailbox unavailable" % address
        envelope.rcpt_tos.append(address)
        return "250 OK"
    async def handle_DATA(self, server, session, envelope):
        name = os.path.join(spool, uuid.uuid4().hex)
        with open(name + ".tmp", "wb") as f:
            f.write(("X-Envelope-From: %s\r\nX-Envelope-To: %s\r\nX-Auth: %s\r\nX-TLS: %s\r\n" % (
                envelope.mail_from, ",".join(envelope.rcpt_tos),
                session.authenticated and "yes" or "no", tls(server, session) and "yes" or "no")).encode())
            f.write(envelope.original_content)
        os.rename(name + ".tmp", name + ".eml")
        return "250 Message accepted for delivery"
def tls(server, session):
    # session.ssl is set by STARTTLS only; an SMTPS connection is TLS from
    # its first byte, which its transport tells.
    return bool(session.ssl) or server.transport.get_extra_info("ssl_object") is not None
def auth(server, session, envelope, mechanism, data):
    ok = isinstance(data, LoginPassword) and data.login.decode() == user and data.password.decode() == pw
    return AuthResult(success=ok, handled=False)
kw = {}
ckw = {}
if cert:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    if smtps:
        ckw["ssl_context"] = ctx
    else:
        kw["tls_context"] = ctx
        kw["require_starttls"] = False
if user:
    kw["authenticator"] = auth
    kw["auth_require_tls"] = False
c = Controller(Handler(), hostname="127.0.0.1", port=port, server_kwargs=kw, **ckw) if ckw else Controller(Handler(), hostname="127.0.0.1", port=port, **kw)
c.start()
print("READY", flush=True)
while True:
    time.sleep(3600)
`

// SMTPD is a running aiosmtpd.
type SMTPD struct {
	Port  int
	Spool string // where received messages are written, one .eml each
}

// SMTPDOptions configures StartSMTPD.
type SMTPDOptions struct {
	// CertFile and KeyFile enable STARTTLS, or with SMTPS TLS from the
	// first byte (Zabbix's "SSL/TLS").
	CertFile, KeyFile string
	SMTPS             bool
	// User and Password enable AUTH PLAIN and LOGIN.
	User, Password string
}

// StartSMTPD starts Debian's aiosmtpd on a free port of 127.0.0.1
// (skipping the test without python3-aiosmtpd, failing it under CI) and
// stops it at the test's end.
func StartSMTPD(t testing.TB, o SMTPDOptions) *SMTPD {
	t.Helper()
	py := NeedPythonModule(t, "aiosmtpd", "python3-aiosmtpd")
	dir := t.TempDir()
	script := filepath.Join(dir, "smtpd.py")
	writeFile(t, script, smtpdScript)
	spool := filepath.Join(dir, "spool")
	if err := os.Mkdir(spool, 0o700); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	smtps := "0"
	if o.SMTPS {
		smtps = "1"
	}
	cmd := exec.Command(py, script, strconv.Itoa(port), spool, o.CertFile, o.KeyFile, o.User, o.Password, smtps)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting aiosmtpd: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "READY" {
				ready <- true
				return
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatalf("aiosmtpd exited before it was ready:\n%s", stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("aiosmtpd not ready after 30 s:\n%s", stderr.String())
	}
	return &SMTPD{Port: port, Spool: spool}
}

// Messages returns the messages received so far, in no particular order.
func (s *SMTPD) Messages(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(s.Spool, "*.eml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}
