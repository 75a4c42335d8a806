package server

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/config"
	"github.com/peregrine-mon/peregrine/internal/poll/agent"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxpsk"
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
// agent, from the host's tls_connect in the current snapshot: plain,
// certificates, its pre-shared key, or an error for what cannot be done.
func agentTLS(cat *catalog.Catalog, m *zbxtls.Material) func(uint64) (agent.Security, error) {
	return func(hostID uint64) (agent.Security, error) {
		h := cat.Snapshot().HostByID(hostID)
		if h == nil {
			return agent.Security{}, nil
		}
		switch h.Ext().TLS.Connect {
		case zbxtls.Cert:
			if m == nil {
				return agent.Security{}, fmt.Errorf("host %q has tls_connect 4 (certificate): %w", h.Host, zbxtls.ErrNotConfigured)
			}
			return agent.Security{Cert: m.ClientConfig(h.Ext().TLS.Issuer, h.Ext().TLS.Subject)}, nil
		case zbxtls.PSK:
			if !zbxpsk.Available {
				return agent.Security{}, fmt.Errorf("host %q has tls_connect 2: %w", h.Host, zbxpsk.ErrUnavailable)
			}
			k, ok := h.Ext().TLS.PSKKey()
			if !ok {
				return agent.Security{}, fmt.Errorf("host %q has tls_connect 2 (PSK) without a valid tls_psk_identity and tls_psk", h.Host)
			}
			return agent.Security{PSK: &k}, nil
		}
		return agent.Security{}, nil
	}
}

// logPSK says at start whether this build has pre-shared keys, and
// warns when it has none and hosts use them.
func logPSK(log *slog.Logger, snap *catalog.Snapshot) {
	if zbxpsk.Available {
		log.Info("TLS with pre-shared keys available", "library", zbxpsk.Library())
		return
	}
	n := 0
	for _, h := range snap.Hosts() {
		if h.Ext().TLS.UsesPSK() {
			n++
		}
	}
	if n > 0 {
		log.Warn("hosts use pre-shared keys, and this build has none: their PSK connections are refused", "hosts", n, "err", zbxpsk.ErrUnavailable)
		return
	}
	log.Info("TLS with pre-shared keys not available in this build", "err", zbxpsk.ErrUnavailable)
}

// trapperPSK finds the pre-shared key of an identity a trapper client
// presents: the hosts' (catalog.Snapshot.PSKKey), then the
// autoregistration key (an agent not yet a host registers with it).
// Proxies' keys join here.
func trapperPSK(cat *catalog.Catalog) func(identity string) ([]byte, bool) {
	return func(identity string) ([]byte, bool) {
		snap := cat.Snapshot()
		if k, ok := snap.PSKKey(identity); ok {
			return k, true
		}
		if k, ok := snap.ProxyPSKKey(identity); ok { // an active proxy's
			return k, true
		}
		if k, ok := cat.AutoregSettings().PSKKey(); ok && k.Identity == identity {
			return k.Secret, true
		}
		return nil, false
	}
}

// loadHTTPS loads the HTTP port's certificate (http.tls_cert_file and
// tls_key_file); nil without one. Loaded in New so that a bad file stops
// the start with its name, before any port is bound.
func loadHTTPS(c config.HTTPConfig) (*tls.Config, error) {
	if c.TLSCertFile == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(c.TLSCertFile, c.TLSKeyFile)
	if err != nil {
		return nil, fmt.Errorf("http.tls_cert_file %s / http.tls_key_file %s: %w", c.TLSCertFile, c.TLSKeyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// hsts adds Strict-Transport-Security to every HTTPS response (API and
// metrics too, not only the UI's): a browser that once reached this host
// over HTTPS then refuses plain HTTP to it for maxAge.
func hsts(h http.Handler, maxAge time.Duration) http.Handler {
	v := "max-age=" + strconv.FormatInt(int64(maxAge/time.Second), 10)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Strict-Transport-Security", v)
		h.ServeHTTP(w, r)
	})
}
