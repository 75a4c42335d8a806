package zbxtls

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var (
	oidCN    = asn1.ObjectIdentifier{2, 5, 4, 3}
	oidOU    = asn1.ObjectIdentifier{2, 5, 4, 11}
	oidO     = asn1.ObjectIdentifier{2, 5, 4, 10}
	oidC     = asn1.ObjectIdentifier{2, 5, 4, 6}
	oidDC    = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 25}
	oidEmail = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}
)

func rdn(oid asn1.ObjectIdentifier, v string) []pkix.AttributeTypeAndValue {
	return []pkix.AttributeTypeAndValue{{Type: oid, Value: v}}
}

func TestFormatDN(t *testing.T) {
	f := func(name string, seq pkix.RDNSequence, want string) {
		t.Helper()
		der, err := asn1.Marshal(seq)
		if err != nil {
			t.Fatal(err)
		}
		if got := FormatDN(der); got != want {
			t.Errorf("%s: FormatDN = %q, want %q", name, got, want)
		}
	}
	// The example of Zabbix's documentation: openssl prints the issuer
	// "DC=com, DC=zabbix, O=Zabbix SIA, OU=Development group, CN=Root1 CA";
	// Zabbix compares it in RFC 4514 order.
	f("zabbix docs", pkix.RDNSequence{
		rdn(oidDC, "com"), rdn(oidDC, "zabbix"), rdn(oidO, "Zabbix SIA"), rdn(oidOU, "Development group"), rdn(oidCN, "Root1 CA"),
	}, "CN=Root1 CA,OU=Development group,O=Zabbix SIA,DC=zabbix,DC=com")
	f("escapes", pkix.RDNSequence{
		rdn(oidC, "LV"), rdn(oidO, `a,b+c"d\e<f>g;h`), rdn(oidCN, "#lead and trail "),
	}, `CN=\#lead and trail\ ,O=a\,b\+c\"d\\e\<f\>g\;h,C=LV`)
	f("leading space and control", pkix.RDNSequence{rdn(oidCN, " x\ny")}, `CN=\ x\0Ay`)
	f("utf-8 kept", pkix.RDNSequence{rdn(oidO, "Rīga")}, "O=Rīga")
	f("multi-valued RDN and email", pkix.RDNSequence{
		rdn(oidO, "Org"),
		{{Type: oidCN, Value: "agent"}, {Type: oidEmail, Value: "a@example.com"}},
	}, "CN=agent+emailAddress=a@example.com,O=Org")
	f("unknown type", pkix.RDNSequence{rdn(asn1.ObjectIdentifier{1, 2, 3, 4}, "v")}, "1.2.3.4=v")
	if got := FormatDN([]byte{0x30, 0x03, 0x01}); got != "" {
		t.Errorf("bad DER: FormatDN = %q, want empty", got)
	}
}

func TestIsTLS(t *testing.T) {
	for _, c := range []struct {
		b    byte
		want bool
	}{{0x16, true}, {'Z', false}, {'{', false}, {0x15, false}, {0, false}} {
		if got := IsTLS(c.b); got != c.want {
			t.Errorf("IsTLS(%#x) = %v, want %v", c.b, got, c.want)
		}
	}
}

func TestPolicyAllow(t *testing.T) {
	cert := &x509.Certificate{RawIssuer: mustDN(t, "CA"), RawSubject: mustDN(t, "agent1")}
	f := func(p Policy, peer Peer, wantErr string) {
		t.Helper()
		err := p.Allow("H", peer)
		switch {
		case wantErr == "" && err != nil:
			t.Errorf("%+v with %+v: unexpected error %v", p, peer.Type, err)
		case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
			t.Errorf("%+v with %+v: error %v, want one containing %q", p, peer.Type, err, wantErr)
		}
	}
	plain, tlsPeer := Peer{Type: Unencrypted}, Peer{Type: Cert, Cert: cert}
	f(Policy{}, plain, "") // Zabbix's default: unencrypted only
	f(Policy{}, tlsPeer, `connection of type "certificate" is not allowed for host "H"`)
	f(Policy{Accept: Cert}, plain, `connection of type "unencrypted" is not allowed for host "H"`)
	f(Policy{Accept: Cert}, tlsPeer, "")
	f(Policy{Accept: Unencrypted | Cert}, plain, "")
	f(Policy{Accept: Unencrypted | Cert}, tlsPeer, "")
	f(Policy{Accept: PSK}, tlsPeer, "not allowed")
	f(Policy{Accept: Cert, Issuer: "CN=CA", Subject: "CN=agent1"}, tlsPeer, "")
	f(Policy{Accept: Cert, Issuer: "CN=other"}, tlsPeer, `certificate issuer does not match: "CN=CA", expected "CN=other"`)
	f(Policy{Accept: Cert, Subject: "CN=agent2"}, tlsPeer, `certificate subject does not match: "CN=agent1", expected "CN=agent2" for host "H"`)
	f(Policy{Accept: Cert}, Peer{Type: Cert}, "without a client certificate")
	// Pre-shared keys: the identity and the key must be the host's; a
	// PSK client is refused by a host that accepts only certificates or
	// plain, and PSK hosts refuse plain and certificate clients.
	key, other := []byte("0123456789abcdef"), []byte("fedcba9876543210")
	pskPeer := Peer{Type: PSK, PSKIdentity: "PSK 001", PSKKey: key}
	hostPSK := Policy{Accept: PSK, PSKIdentity: "PSK 001", PSK: key}
	f(hostPSK, pskPeer, "")
	f(hostPSK, plain, `connection of type "unencrypted" is not allowed for host "H"`)
	f(hostPSK, tlsPeer, `connection of type "certificate" is not allowed for host "H"`)
	f(Policy{Accept: Unencrypted | Cert}, pskPeer, `connection of type "PSK" is not allowed for host "H"`)
	f(Policy{Accept: PSK, PSKIdentity: "PSK 002", PSK: key}, pskPeer, `PSK identity "PSK 001" is not the one of host "H"`)
	f(Policy{Accept: PSK, PSKIdentity: "PSK 001", PSK: other}, pskPeer, `the key of PSK identity "PSK 001" is not the one of host "H"`)
	f(Policy{Accept: PSK, PSKIdentity: "PSK 001"}, pskPeer, "is not the one of host")
}

func mustDN(t *testing.T, cn string) []byte {
	der, err := asn1.Marshal(pkix.RDNSequence{rdn(oidCN, cn)})
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// pki is a CA and certificates it signed, written as PEM files.
type pki struct {
	dir    string
	caCert *x509.Certificate
	caKey  *ecdsa.PrivateKey
	serial int64
}

func newPKI(t *testing.T, cn string) *pki {
	t.Helper()
	p := &pki{dir: t.TempDir()}
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	p.caCert, _ = x509.ParseCertificate(der)
	p.caKey, p.serial = key, 1
	writePEM(t, filepath.Join(p.dir, "ca.crt"), "CERTIFICATE", der)
	return p
}

// issue makes name.crt and name.key signed by the CA; it returns the
// files.
func (p *pki) issue(t *testing.T, name, cn string) Files {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(p.serial), Subject: pkix.Name{CommonName: cn, Organization: []string{"Peregrine"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	f := Files{CAFile: filepath.Join(p.dir, "ca.crt"), CertFile: filepath.Join(p.dir, name+".crt"), KeyFile: filepath.Join(p.dir, name+".key")}
	writePEM(t, f.CertFile, "CERTIFICATE", der)
	writePEM(t, f.KeyFile, "EC PRIVATE KEY", kder)
	return f
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// handshakeResult is what each side of a test handshake saw.
type handshakeResult struct {
	client, server error
	peer           *x509.Certificate // the server's view of the client certificate
}

// handshake runs the server and client sides over loopback TCP.
func handshake(t *testing.T, srv, cli *tls.Config) handshakeResult {
	t.Helper()
	// Loopback TCP, not net.Pipe: a side that fails writes its alert
	// into the socket buffer instead of waiting for a reader.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type res struct {
		err  error
		peer *x509.Certificate
	}
	done := make(chan res, 1)
	go func() {
		a, err := ln.Accept()
		if err != nil {
			done <- res{err: err}
			return
		}
		defer a.Close()
		a.SetDeadline(time.Now().Add(10 * time.Second))
		s := tls.Server(a, srv)
		err = s.Handshake()
		if err == nil {
			// TLS 1.3 clients finish before the server has checked
			// their certificate: read once so that a refusal shows.
			var buf [1]byte
			_, err = s.Read(buf[:])
		}
		var peer *x509.Certificate
		if st := s.ConnectionState(); len(st.PeerCertificates) > 0 {
			peer = st.PeerCertificates[0]
		}
		done <- res{err, peer}
	}()
	b, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b.SetDeadline(time.Now().Add(10 * time.Second))
	c := tls.Client(b, cli)
	cerr := c.Handshake()
	if cerr == nil {
		c.Write([]byte{'x'})
	}
	r := <-done
	b.Close()
	if r.err != nil && r.err.Error() == "EOF" {
		r.err = nil
	}
	return handshakeResult{client: cerr, server: r.err, peer: r.peer}
}

func TestConfigsHandshake(t *testing.T) {
	ca := newPKI(t, "Test CA")
	srvFiles := ca.issue(t, "server", "peregrine")
	agentFiles := ca.issue(t, "agent", "agent1")
	srv, err := Load(srvFiles)
	if err != nil {
		t.Fatal(err)
	}
	agent, err := Load(agentFiles)
	if err != nil {
		t.Fatal(err)
	}
	// The poller (client, server's certificate) to an agent (server
	// side, here the agent's material), with matching and wrong subject.
	h := handshake(t, agent.ServerConfig(), srv.ClientConfig("CN=Test CA", "CN=agent1,O=Peregrine"))
	cerr, serr, peer := h.client, h.server, h.peer
	if cerr != nil || serr != nil {
		t.Fatalf("handshake: client %v, server %v", cerr, serr)
	}
	if got := FormatDN(peer.RawSubject); got != "CN=peregrine,O=Peregrine" {
		t.Errorf("agent saw client subject %q", got)
	}
	if cerr := handshake(t, agent.ServerConfig(), srv.ClientConfig("", "CN=agent2")).client; cerr == nil || !strings.Contains(cerr.Error(), "subject does not match") {
		t.Errorf("wrong subject: client error %v", cerr)
	}
	// A certificate from another CA is refused by both sides.
	other := newPKI(t, "Other CA")
	rogue, err := Load(other.issue(t, "rogue", "rogue"))
	if err != nil {
		t.Fatal(err)
	}
	if serr := handshake(t, srv.ServerConfig(), rogue.ClientConfig("", "")).server; serr == nil {
		t.Error("server accepted a client certificate of another CA")
	}
	if cerr := handshake(t, rogue.ServerConfig(), srv.ClientConfig("", "")).client; cerr == nil || !strings.Contains(cerr.Error(), "cannot verify the agent's certificate") {
		t.Errorf("client accepted an agent certificate of another CA: %v", cerr)
	}
	// A client without a certificate is refused by the server.
	if serr := handshake(t, srv.ServerConfig(), &tls.Config{InsecureSkipVerify: true}).server; serr == nil {
		t.Error("server accepted a client without a certificate")
	}
}

func TestLoadErrors(t *testing.T) {
	ca := newPKI(t, "CA")
	good := ca.issue(t, "s", "s")
	f := func(name string, fs Files, want string) {
		t.Helper()
		_, err := Load(fs)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, want)
		}
	}
	bad := good
	bad.CAFile = good.KeyFile
	f("ca without certificate", bad, "holds no PEM certificate")
	bad = good
	bad.KeyFile = filepath.Join(ca.dir, "missing.key")
	f("missing key", bad, "cannot load tls.cert_file")
	bad = good
	bad.CRLFile = good.CertFile
	f("crl file without a CRL", bad, "holds no PEM X509 CRL")
}

func TestCRLRevokes(t *testing.T) {
	ca := newPKI(t, "CA")
	srvFiles := ca.issue(t, "server", "server")
	cliFiles := ca.issue(t, "client", "client") // serial 3
	crl, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{
		Number: big.NewInt(1), ThisUpdate: time.Now().Add(-time.Minute), NextUpdate: time.Now().Add(time.Hour),
		RevokedCertificateEntries: []x509.RevocationListEntry{{SerialNumber: big.NewInt(3), RevocationTime: time.Now()}},
	}, ca.caCert, ca.caKey)
	if err != nil {
		t.Fatal(err)
	}
	srvFiles.CRLFile = filepath.Join(ca.dir, "ca.crl")
	writePEM(t, srvFiles.CRLFile, "X509 CRL", crl)
	srv, err := Load(srvFiles)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := Load(cliFiles)
	if err != nil {
		t.Fatal(err)
	}
	serr := handshake(t, srv.ServerConfig(), cli.ClientConfig("", "")).server
	if serr == nil || !strings.Contains(serr.Error(), "revoked") {
		t.Errorf("revoked client certificate: server error %v", serr)
	}
}
