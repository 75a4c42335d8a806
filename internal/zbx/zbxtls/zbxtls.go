package zbxtls

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"time"
)

// Connection types as Zabbix numbers them: tls_connect holds one of
// them, tls_accept a bitmask of them.
const (
	Unencrypted = 1
	PSK         = 2
	Cert        = 4
	// AllAccept is every bit tls_accept may hold.
	AllAccept = Unencrypted | PSK | Cert
)

// TypeName names a connection type as Zabbix's agents and messages do.
func TypeName(t int) string {
	switch t {
	case Unencrypted:
		return "unencrypted"
	case PSK:
		return "PSK"
	case Cert:
		return "certificate"
	}
	return fmt.Sprintf("type %d", t)
}

// ErrNotConfigured is the refusal of a certificate connection when the
// server has no tls section.
var ErrNotConfigured = errors.New("the server has no certificate configured (set tls.ca_file, tls.cert_file and tls.key_file)")

// IsTLS reports whether the first byte a client sent opens a TLS
// connection: 0x16 is the content type of a TLS handshake record, while
// a plain Zabbix frame starts with 'Z' of "ZBXD".
func IsTLS(first byte) bool { return first == 0x16 }

// Files names the server's certificate material, as Zabbix's TLSCAFile,
// TLSCertFile, TLSKeyFile and TLSCRLFile.
type Files struct {
	CAFile, CertFile, KeyFile, CRLFile string
}

// Material is the loaded certificate material.
type Material struct {
	cert    tls.Certificate
	roots   *x509.CertPool
	revoked map[string]bool // issuer DN + "/" + serial of revoked certificates
}

// Load reads and checks the files. CRLFile is optional.
func Load(f Files) (*Material, error) {
	cert, err := tls.LoadX509KeyPair(f.CertFile, f.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("cannot load tls.cert_file %s with tls.key_file %s: %w", f.CertFile, f.KeyFile, err)
	}
	ca, err := os.ReadFile(f.CAFile)
	if err != nil {
		return nil, fmt.Errorf("cannot read tls.ca_file: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("tls.ca_file %s holds no PEM certificate", f.CAFile)
	}
	m := &Material{cert: cert, roots: roots, revoked: map[string]bool{}}
	if f.CRLFile != "" {
		if err := m.loadCRL(f.CRLFile); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *Material) loadCRL(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("cannot read tls.crl_file: %w", err)
	}
	n := 0
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			break
		}
		if blk.Type != "X509 CRL" {
			continue
		}
		crl, err := x509.ParseRevocationList(blk.Bytes)
		if err != nil {
			return fmt.Errorf("cannot parse tls.crl_file %s: %w", path, err)
		}
		iss := FormatDN(crl.RawIssuer)
		for _, e := range crl.RevokedCertificateEntries {
			m.revoked[revKey(iss, e.SerialNumber)] = true
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("tls.crl_file %s holds no PEM X509 CRL", path)
	}
	return nil
}

func revKey(issuer string, serial *big.Int) string { return issuer + "/" + serial.String() }

// ServerConfig is the trapper's side: TLS 1.2 or later, the server's
// certificate, and a client certificate required and verified against
// the CA (and the CRL), as Zabbix's server requires of agents and
// senders.
func (m *Material) ServerConfig() *tls.Config {
	return &tls.Config{
		MinVersion:            tls.VersionTLS12,
		Certificates:          []tls.Certificate{m.cert},
		ClientAuth:            tls.RequireAndVerifyClientCert,
		ClientCAs:             m.roots,
		VerifyPeerCertificate: m.checkRevoked,
	}
}

// ClientConfig is the poller's side toward an agent: the server's
// certificate as the client certificate, and the agent's verified
// against the CA (no host name check, as Zabbix) and, when set, its
// issuer and subject.
func (m *Material) ClientConfig(issuer, subject string) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{m.cert},
		// Verification is done below without a host name.
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("the agent sent no certificate")
			}
			leaf := cs.PeerCertificates[0]
			inter := x509.NewCertPool()
			for _, c := range cs.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			chains, err := leaf.Verify(x509.VerifyOptions{Roots: m.roots, Intermediates: inter, CurrentTime: time.Now(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
			if err != nil {
				return fmt.Errorf("cannot verify the agent's certificate: %w", err)
			}
			if err := m.checkRevoked(nil, chains); err != nil {
				return err
			}
			return CheckPeer(leaf, issuer, subject)
		},
	}
}

// checkRevoked refuses a chain holding a revoked certificate.
func (m *Material) checkRevoked(_ [][]byte, chains [][]*x509.Certificate) error {
	if len(m.revoked) == 0 {
		return nil
	}
	for _, ch := range chains {
		for _, c := range ch {
			if m.revoked[revKey(FormatDN(c.RawIssuer), c.SerialNumber)] {
				return fmt.Errorf("certificate %q is revoked (tls.crl_file)", FormatDN(c.RawSubject))
			}
		}
	}
	return nil
}

// CheckPeer compares a verified peer certificate's issuer and subject
// with a host's tls_issuer and tls_subject; an empty one is not checked.
// The message is Zabbix's.
func CheckPeer(c *x509.Certificate, issuer, subject string) error {
	if issuer != "" {
		if got := FormatDN(c.RawIssuer); got != issuer {
			return fmt.Errorf("certificate issuer does not match: %q, expected %q", got, issuer)
		}
	}
	if subject != "" {
		if got := FormatDN(c.RawSubject); got != subject {
			return fmt.Errorf("certificate subject does not match: %q, expected %q", got, subject)
		}
	}
	return nil
}
