package testutil

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Certs are the files of a test PKI made with openssl: a CA and three
// certificates it signed (the server's, an agent's, a sender's), plus a
// certificate of another CA that Peregrine must refuse. Subjects and
// issuers in Zabbix's (RFC 4514) form are given for the tls_* fields.
type Certs struct {
	Dir    string
	CAFile string
	// Server, Agent, Sender and Rogue are certificate and key files.
	Server, Agent, Sender, Rogue CertFiles
	// Issuer is the CA's name as Zabbix formats it ("CN=...,O=...").
	Issuer string
}

// CertFiles is one certificate, its key, and its subject in RFC 4514 form.
type CertFiles struct {
	Cert, Key, Subject string
}

// MakeCerts creates the PKI in a fresh temporary directory with the real
// openssl (skipping the test without it). Keys are RSA 2048: Zabbix
// supports RSA certificates only (Debian's 6.0 agents, built with
// GnuTLS, offer only TLS_ECDHE_RSA and TLS_RSA cipher suites and refuse
// an EC certificate's handshake).
func MakeCerts(t testing.TB) *Certs {
	t.Helper()
	bin := Need(t, "openssl", "openssl")
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("openssl %v: %v\n%s", args, err, out.String())
		}
	}
	ca := func(name, subj string) {
		run("req", "-x509", "-new", "-newkey", "rsa:2048", "-nodes",
			"-keyout", name+".key", "-out", name+".crt", "-days", "2", "-subj", subj,
			"-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
	}
	issue := func(caName, name, subj string) CertFiles {
		run("req", "-new", "-newkey", "rsa:2048", "-nodes",
			"-keyout", name+".key", "-out", name+".csr", "-subj", subj)
		ext := name + ".ext"
		writeFile(t, filepath.Join(dir, ext), "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\n")
		run("x509", "-req", "-in", name+".csr", "-CA", caName+".crt", "-CAkey", caName+".key", "-CAcreateserial",
			"-out", name+".crt", "-days", "2", "-sha256", "-extfile", ext)
		return CertFiles{Cert: filepath.Join(dir, name+".crt"), Key: filepath.Join(dir, name+".key")}
	}
	// openssl -subj lists RDNs first to last; Zabbix prints them last
	// first.
	ca("ca", "/DC=com/DC=example/O=Peregrine Test/CN=Peregrine Test CA")
	ca("rogue-ca", "/O=Elsewhere/CN=Rogue CA")
	c := &Certs{Dir: dir, CAFile: filepath.Join(dir, "ca.crt"), Issuer: "CN=Peregrine Test CA,O=Peregrine Test,DC=example,DC=com"}
	c.Server = issue("ca", "server", "/O=Peregrine Test/CN=peregrine-server")
	c.Server.Subject = "CN=peregrine-server,O=Peregrine Test"
	c.Agent = issue("ca", "agent", "/O=Peregrine Test/OU=Agents/CN=tls-agent")
	c.Agent.Subject = "CN=tls-agent,OU=Agents,O=Peregrine Test"
	c.Sender = issue("ca", "sender", "/O=Peregrine Test/CN=tls-sender")
	c.Sender.Subject = "CN=tls-sender,O=Peregrine Test"
	c.Rogue = issue("rogue-ca", "rogue", "/O=Peregrine Test/CN=tls-sender")
	c.Rogue.Subject = "CN=tls-sender,O=Peregrine Test"
	return c
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
