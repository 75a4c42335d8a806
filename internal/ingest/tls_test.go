package ingest

import (
	"context"
	"crypto/tls"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
	"github.com/peregrine-mon/peregrine/internal/zbx"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxtls"
)

// tlsSpec has a host per policy, each with one trapper item trap.a.
func tlsSpec() catalog.Spec {
	var s catalog.Spec
	for _, h := range []string{"plain-host", "cert-host", "both-host", "subject-host"} {
		s.Hosts = append(s.Hosts, catalog.HostSpec{Host: h, Groups: []string{"G"}, Items: []catalog.ItemSpec{
			{Key: "trap.a", ValueType: "unsigned"},
			{Key: "agent.x", Type: "zabbix_agent_active", ValueType: "unsigned"},
		}})
	}
	return s
}

// startTLSTrapper serves tlsSpec with the server's certificate and sets
// the hosts' policies: cert-host certificates only, both-host either,
// subject-host certificates of the sender's subject and the CA's issuer.
func startTLSTrapper(t testing.TB) (*testServer, *testutil.Certs) {
	t.Helper()
	certs := testutil.MakeCerts(t)
	m, err := zbxtls.Load(zbxtls.Files{CAFile: certs.CAFile, CertFile: certs.Server.Cert, KeyFile: certs.Server.Key})
	if err != nil {
		t.Fatal(err)
	}
	ts := startTrapper(t, tlsSpec(), func(o *Options) { o.TLS = m.ServerConfig() })
	s := ts.cat.Snapshot()
	ups := []catalog.HostUpdate{
		{ID: s.Host("cert-host").ID, TLS: catalog.SetTLS(catalog.HostTLS{Connect: 4, Accept: 4})},
		{ID: s.Host("both-host").ID, TLS: catalog.SetTLS(catalog.HostTLS{Connect: 1, Accept: 5})},
		{ID: s.Host("subject-host").ID, TLS: catalog.SetTLS(catalog.HostTLS{Connect: 1, Accept: 4, Issuer: certs.Issuer, Subject: certs.Sender.Subject})},
	}
	if _, err := ts.cat.Edit(context.Background(), func(e *catalog.Edit) error { return e.UpdateHosts(ups) }); err != nil {
		t.Fatal(err)
	}
	return ts, certs
}

// tlsRoundTrip sends one frame over TLS with the given client
// certificate (nil: none) and returns the reply payload, or the error.
func tlsRoundTrip(t testing.TB, addr string, cert *testutil.CertFiles, raw []byte) ([]byte, error) {
	t.Helper()
	cfg := &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}
	if cert != nil {
		kp, err := tls.LoadX509KeyPair(cert.Cert, cert.Key)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{kp}
	}
	d := &net.Dialer{Timeout: 5 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", addr, cfg)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(raw); err != nil {
		return nil, err
	}
	_, p, err := zbx.NewReader(c, zbx.ReaderOptions{}).ReadFrame()
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), p...), nil
}

func rowsFor(hosts ...string) [][]string {
	var rows []string
	for _, h := range hosts {
		rows = append(rows, `{"host":"`+h+`","key":"trap.a","value":"1"}`)
	}
	return [][]string{rows}
}

// TestTLSSenderPolicy: per row, the host's tls_accept, tls_issuer and
// tls_subject decide; refused rows are failed and counted as
// tls_refused, the others stored.
func TestTLSSenderPolicy(t *testing.T) {
	ts, certs := startTLSTrapper(t)
	all := rowsFor("plain-host", "cert-host", "both-host", "subject-host")[0]
	f := func(name string, cert *testutil.CertFiles, wantProcessed, wantFailed int) {
		t.Helper()
		raw := senderFrame(t, zbx.FlagProtocol, all...)
		var reply []byte
		if cert == nil {
			_, reply = roundTrip(t, ts.addr, raw)
		} else {
			var err error
			if reply, err = tlsRoundTrip(t, ts.addr, cert, raw); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		p, fl, _ := infoCounts(t, reply)
		if p != wantProcessed || fl != wantFailed {
			t.Errorf("%s: processed %d failed %d, want %d and %d (%s)", name, p, fl, wantProcessed, wantFailed, reply)
		}
	}
	// Plain: plain-host and both-host.
	f("plain", nil, 2, 2)
	// The sender's certificate: cert-host, both-host, subject-host.
	f("sender certificate", &certs.Sender, 3, 1)
	// The agent's certificate: not subject-host's subject.
	f("agent certificate", &certs.Agent, 2, 2)
	if got := ts.metric(t, `peregrine_trapper_values_failed_total{reason="tls_refused"}`); got != 5 {
		t.Errorf("tls_refused %v, want 5", got)
	}
	if got := ts.metric(t, `peregrine_trapper_tls_connections_total`); got != 2 {
		t.Errorf("tls connections %v, want 2", got)
	}
	if n := len(ts.read(t, "cert-host", "trap.a")); n != 2 {
		t.Errorf("cert-host stored %d values, want 2", n)
	}
	if n := len(ts.read(t, "plain-host", "trap.a")); n != 1 {
		t.Errorf("plain-host stored %d values, want 1", n)
	}
	if !strings.Contains(ts.logs.String(), `connection of type \"unencrypted\" is not allowed for host \"cert-host\"`) {
		t.Errorf("no log of the refusal:\n%s", ts.logs.String())
	}
}

// TestTLSRefusedHandshakes: no client certificate, another CA's, and a
// TLS client of a server without certificates are refused and counted.
func TestTLSRefusedHandshakes(t *testing.T) {
	ts, certs := startTLSTrapper(t)
	raw := senderFrame(t, zbx.FlagProtocol, rowsFor("cert-host")[0]...)
	if reply, err := tlsRoundTrip(t, ts.addr, nil, raw); err == nil {
		t.Errorf("no client certificate: reply %s", reply)
	}
	if reply, err := tlsRoundTrip(t, ts.addr, &certs.Rogue, raw); err == nil {
		t.Errorf("another CA's certificate: reply %s", reply)
	}
	waitMetric(t, ts, `peregrine_trapper_bad_requests_total{reason="tls_handshake"}`, 2)

	plain := startTrapper(t, tlsSpec(), nil)
	if reply, err := tlsRoundTrip(t, plain.addr, &certs.Sender, raw); err == nil {
		t.Errorf("server without certificates: reply %s", reply)
	}
	waitMetric(t, plain, `peregrine_trapper_bad_requests_total{reason="tls_not_configured"}`, 1)
}

// TestTLSActiveChecks: "active checks" and "agent data" follow the
// host's policy too.
func TestTLSActiveChecks(t *testing.T) {
	ts, certs := startTLSTrapper(t)
	ac := zbx.AppendFrame(nil, []byte(`{"request":"active checks","host":"cert-host"}`), zbx.FlagProtocol)
	_, reply := roundTrip(t, ts.addr, ac)
	if !strings.Contains(string(reply), `"response":"failed"`) || !strings.Contains(string(reply), `connection of type \"unencrypted\" is not allowed for host \"cert-host\"`) {
		t.Errorf("plain active checks: %s", reply)
	}
	reply, err := tlsRoundTrip(t, ts.addr, &certs.Agent, ac)
	if err != nil || !strings.Contains(string(reply), `"key":"agent.x"`) {
		t.Errorf("active checks over TLS: %s (%v)", reply, err)
	}
	if got := ts.metric(t, `peregrine_trapper_active_checks_total{result="tls_refused"}`); got != 1 {
		t.Errorf("active tls_refused %v, want 1", got)
	}
	ad := zbx.AppendFrame(nil, []byte(`{"request":"agent data","session":"0123456789abcdef0123456789abcdef","data":[
		{"host":"cert-host","key":"agent.x","value":"1","id":1,"clock":1700000000,"ns":0},
		{"host":"plain-host","key":"agent.x","value":"1","id":2,"clock":1700000000,"ns":0}]}`), zbx.FlagProtocol)
	reply, err = tlsRoundTrip(t, ts.addr, &certs.Agent, ad)
	if err != nil {
		t.Fatal(err)
	}
	if p, fl, _ := infoCounts(t, reply); p != 1 || fl != 1 {
		t.Errorf("agent data over TLS: %s", reply)
	}
}
