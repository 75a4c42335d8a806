package testutil

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/zbx/zbxtls"
)

// TestMakeCerts: the openssl PKI parses, chains to its CA (the rogue one
// does not), and the subjects and issuer given for the tls_* fields are
// what zbxtls.FormatDN makes of openssl's certificates.
func TestMakeCerts(t *testing.T) {
	c := MakeCerts(t)
	roots := x509.NewCertPool()
	caPEM, err := os.ReadFile(c.CAFile)
	if err != nil || !roots.AppendCertsFromPEM(caPEM) {
		t.Fatalf("CA file: %v", err)
	}
	for _, f := range []struct {
		name   string
		cf     CertFiles
		chains bool
	}{{"server", c.Server, true}, {"agent", c.Agent, true}, {"sender", c.Sender, true}, {"rogue", c.Rogue, false}} {
		b, err := os.ReadFile(f.cf.Cert)
		if err != nil {
			t.Fatal(err)
		}
		blk, _ := pem.Decode(b)
		cert, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		if got := zbxtls.FormatDN(cert.RawSubject); got != f.cf.Subject {
			t.Errorf("%s subject %q, want %q", f.name, got, f.cf.Subject)
		}
		_, err = cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
		if (err == nil) != f.chains {
			t.Errorf("%s: verify error %v, want chained %v", f.name, err, f.chains)
		}
		if f.chains {
			if got := zbxtls.FormatDN(cert.RawIssuer); got != c.Issuer {
				t.Errorf("%s issuer %q, want %q", f.name, got, c.Issuer)
			}
		}
	}
}
