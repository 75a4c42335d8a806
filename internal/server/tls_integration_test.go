package server

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/config"
	"github.com/peregrine-mon/peregrine/internal/testutil"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxpsk"
)

// startTLSServer is startServer with the tls section set to the test
// PKI's server certificate.
func startTLSServer(t *testing.T, certs *testutil.Certs) *Server {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Trapper.Listen = "127.0.0.1:0"
	cfg.HTTP.Listen = "127.0.0.1:0"
	cfg.TLS = config.TLSConfig{CAFile: certs.CAFile, CertFile: certs.Server.Cert, KeyFile: certs.Server.Key}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	catalogtest.Write(t, CatalogPath(cfg.DataDir), catalog.Spec{})
	ctx := context.Background()
	s, err := New(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(rctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server stopped with %v", err)
		}
	})
	return s
}

func (s *Server) metricValue(t *testing.T, series string) string {
	t.Helper()
	var b bytes.Buffer
	s.Metrics.WriteText(&b)
	for _, l := range strings.Split(b.String(), "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			return v
		}
	}
	t.Fatalf("no series %s", series)
	return ""
}

func waitValues(t *testing.T, s *Server, host, key string, what string) {
	t.Helper()
	end := time.Now().Add(30 * time.Second)
	for len(s.readItem(t, host, key)) == 0 {
		if time.Now().After(end) {
			t.Fatalf("%s: no value of %s:%s after 30 s", what, host, key)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestIntegrationTLS: the real zabbix_sender and zabbix_agentd with
// certificates made by openssl talk to Peregrine; hosts that require
// certificates refuse plain connections and wrong certificates.
//   - sender --tls-connect cert to a host with tls_accept 4 (and its
//     subject): processed; plain: failed; another certificate of the same
//     CA (subject differs) or a required issuer it lacks: failed; a
//     certificate of another CA: the
//     handshake is refused; a pre-shared key no host has: refused.
//     Each refusal is counted.
//   - zabbix_agentd with TLSAccept=cert polled by Peregrine with
//     tls_connect 4 and the agent's issuer and subject: values arrive.
//   - zabbix_agentd active with TLSConnect=cert (checking the server's
//     subject) to a host with tls_accept 4: values arrive.
func TestIntegrationTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs openssl, zabbix_sender and zabbix_agentd")
	}
	certs := testutil.MakeCerts(t)
	agentTLS := []string{"TLSCAFile=" + certs.CAFile, "TLSCertFile=" + certs.Agent.Cert, "TLSKeyFile=" + certs.Agent.Key,
		"TLSServerCertIssuer=" + certs.Issuer, "TLSServerCertSubject=" + certs.Server.Subject}
	passive := testutil.StartAgentd(t, append([]string{"TLSAccept=cert"}, agentTLS...)...)
	ip, port, _ := net.SplitHostPort(passive)
	s := startTLSServer(t, certs)
	c := adminLogin(t, s)
	trapper := s.Trapper.Addr().String()

	var g struct {
		GroupIDs []string `json:"groupids"`
	}
	c.ok("hostgroup.create", map[string]any{"name": "TLS"}, &g)
	groups := []map[string]any{{"groupid": g.GroupIDs[0]}}
	var h struct {
		HostIDs []string `json:"hostids"`
	}
	c.ok("host.create", map[string]any{"host": "tls-passive", "groups": groups, "tls_connect": 4, "tls_accept": 1,
		"tls_issuer": certs.Issuer, "tls_subject": certs.Agent.Subject,
		"interfaces": []map[string]any{{"type": 1, "main": 1, "useip": 1, "ip": ip, "dns": "", "port": port}}}, &h)
	passiveID := h.HostIDs[0]
	var ifaces []map[string]any
	c.ok("hostinterface.get", map[string]any{"hostids": passiveID}, &ifaces)
	c.ok("item.create", map[string]any{"name": "ping", "key_": "agent.ping", "hostid": passiveID, "type": 0, "value_type": 3,
		"delay": "1s", "interfaceid": ifaces[0]["interfaceid"]}, nil)
	c.ok("host.create", map[string]any{"host": "tls-trap", "groups": groups, "tls_accept": 4, "tls_subject": certs.Sender.Subject}, &h)
	c.ok("item.create", map[string]any{"name": "t", "key_": "trap.a", "hostid": h.HostIDs[0], "type": 2, "value_type": 3}, nil)
	c.ok("host.create", map[string]any{"host": "tls-active", "groups": groups, "tls_accept": 4, "tls_issuer": certs.Issuer}, &h)
	c.ok("item.create", map[string]any{"name": "p", "key_": "agent.ping", "hostid": h.HostIDs[0], "type": 7, "value_type": 3, "delay": "1s"}, nil)

	// zabbix_sender.
	tlsArgs := func(cf testutil.CertFiles) []string {
		return []string{"--tls-connect", "cert", "--tls-ca-file", certs.CAFile, "--tls-cert-file", cf.Cert, "--tls-key-file", cf.Key}
	}
	send := func(what string, args []string, wantProcessed, wantFailed int) testutil.SenderResult {
		t.Helper()
		r := testutil.RunSender(t, trapper, append(args, "-s", "tls-trap", "-k", "trap.a", "-o", "7")...)
		if r.Processed != wantProcessed || r.Failed != wantFailed {
			t.Errorf("%s: processed %d failed %d, want %d and %d\n%s", what, r.Processed, r.Failed, wantProcessed, wantFailed, r.Output)
		}
		return r
	}
	send("sender certificate", tlsArgs(certs.Sender), 1, 0)
	send("plain", nil, 0, 1)
	send("agent certificate (subject differs)", tlsArgs(certs.Agent), 0, 1)
	if r := send("another CA's certificate", tlsArgs(certs.Rogue), 0, 0); r.ExitCode == 0 || r.Responses != 0 {
		t.Errorf("another CA's certificate: exit %d, %d responses\n%s", r.ExitCode, r.Responses, r.Output)
	}
	// A required issuer the sender's certificate does not have.
	var hosts []map[string]any
	c.ok("host.get", map[string]any{"filter": map[string]any{"host": "tls-trap"}, "output": []string{"hostid", "tls_accept", "tls_subject"}}, &hosts)
	if len(hosts) != 1 || hosts[0]["tls_accept"] != "4" || hosts[0]["tls_subject"] != certs.Sender.Subject {
		t.Fatalf("host.get tls-trap: %v", hosts)
	}
	c.ok("host.update", map[string]any{"hostid": hosts[0]["hostid"], "tls_issuer": "CN=Some Other CA"}, nil)
	send("sender certificate, issuer differs", tlsArgs(certs.Sender), 0, 1)
	c.ok("host.update", map[string]any{"hostid": hosts[0]["hostid"], "tls_issuer": certs.Issuer}, nil)
	send("sender certificate, issuer as required", tlsArgs(certs.Sender), 1, 0)

	// A pre-shared key no host has: refused at the handshake, counted as
	// such (as unsupported in a build without OpenSSL).
	pskFile := filepath.Join(t.TempDir(), "psk")
	if err := os.WriteFile(pskFile, []byte("1f87b595725ac58dd977beef14b97461a7c1045b9a1c923453302c5473193478\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := send("pre-shared key", []string{"--tls-connect", "psk", "--tls-psk-identity", "PSK 001", "--tls-psk-file", pskFile}, 0, 0); r.ExitCode == 0 {
		t.Errorf("pre-shared key: exit 0\n%s", r.Output)
	}
	pskReason := "tls_psk_unknown_identity"
	if !zbxpsk.Available {
		pskReason = "tls_psk_unsupported"
	}
	if v := s.metricValue(t, `peregrine_trapper_bad_requests_total{reason="`+pskReason+`"}`); v != "1" {
		t.Errorf("%s %s, want 1", pskReason, v)
	}
	if vals := s.readItem(t, "tls-trap", "trap.a"); len(vals) != 2 {
		t.Errorf("tls-trap stored %d values, want 2", len(vals))
	}
	if v := s.metricValue(t, `peregrine_trapper_values_failed_total{reason="tls_refused"}`); v != "3" {
		t.Errorf("tls_refused %s, want 3", v)
	}
	if v := s.metricValue(t, `peregrine_trapper_bad_requests_total{reason="tls_handshake"}`); v != "1" {
		t.Errorf("tls_handshake %s, want 1", v)
	}

	// Passive zabbix_agentd with TLSAccept=cert.
	waitValues(t, s, "tls-passive", "agent.ping", "passive agent over TLS")

	// Active zabbix_agentd with TLSConnect=cert.
	testutil.StartActiveAgent(t, testutil.Agentd, testutil.ActiveAgentOptions{ServerActive: trapper, Hostname: "tls-active",
		Extra: append([]string{"TLSConnect=cert"}, agentTLS...)})
	waitValues(t, s, "tls-active", "agent.ping", "active agent over TLS")
	if v := s.metricValue(t, `peregrine_poll_agent_errors_total{reason="tls"}`); v != "0" {
		t.Errorf("poller TLS errors %s, want 0", v)
	}
}
