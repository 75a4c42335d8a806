package server

import (
	"crypto/tls"
	"fmt"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/config"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxtls"
)

// loadTLS loads the tls section's certificate material; nil without one.
func loadTLS(c config.TLSConfig) (*zbxtls.Material, error) {
	if !c.Enabled() {
		return nil, nil
	}
	m, err := zbxtls.Load(zbxtls.Files{CAFile: c.CAFile, CertFile: c.CertFile, KeyFile: c.KeyFile, CRLFile: c.CRLFile})
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	return m, nil
}

// trapperTLS is the trapper's server configuration; nil without
// certificates.
func trapperTLS(m *zbxtls.Material) *tls.Config {
	if m == nil {
		return nil
	}
	return m.ServerConfig()
}

// agentTLS tells the passive agent checker how to connect to a host's
// agent, from the host's tls_connect in the current snapshot: plain (nil),
// certificates, or an error for what cannot be done.
func agentTLS(cat *catalog.Catalog, m *zbxtls.Material) func(uint64) (*tls.Config, error) {
	return func(hostID uint64) (*tls.Config, error) {
		h := cat.Snapshot().HostByID(hostID)
		if h == nil {
			return nil, nil
		}
		switch h.TLS.Connect {
		case zbxtls.Cert:
			if m == nil {
				return nil, fmt.Errorf("host %q has tls_connect 4 (certificate): %w", h.Host, zbxtls.ErrNotConfigured)
			}
			return m.ClientConfig(h.TLS.Issuer, h.TLS.Subject), nil
		case zbxtls.PSK:
			return nil, fmt.Errorf("host %q has tls_connect 2: %w", h.Host, zbxtls.ErrPSK)
		}
		return nil, nil
	}
}
