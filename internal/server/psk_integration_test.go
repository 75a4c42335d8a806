package server

import (
	"bytes"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/testutil"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxpsk"
)

// Keys of the PSK integration test, one per program (Zabbix's own form:
// hexadecimal digits in a file).
const (
	pskSender  = "1f87b595725ac58dd977beef14b97461a7c1045b9a1c923453302c5473193478"
	pskAgentd  = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"
	pskAgent2  = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"
	pskActiveD = "3c4b5a69788796a5b4c3d2e1f00f1e2d"
	pskActive2 = "5a69788796a5b4c3d2e1f00f1e2d3c4b"
	pskWrong   = "ffffffffffffffffffffffffffffffff"
)

// pskCiphers reads a counter family by cipher suite (the trapper's or
// the poller's PSK handshakes).
func (s *Server) pskCiphers(t *testing.T, family string) map[string]float64 {
	t.Helper()
	var b bytes.Buffer
	s.Metrics.WriteText(&b)
	out := map[string]float64{}
	for _, l := range strings.Split(b.String(), "\n") {
		rest, ok := strings.CutPrefix(l, family+`{cipher="`)
		if !ok {
			continue
		}
		name, val, _ := strings.Cut(rest, `"} `)
		v, _ := strconv.ParseFloat(val, 64)
		out[name] = v
	}
	return out
}

// negotiated is the suite whose count grew between two readings.
func negotiated(before, after map[string]float64) string {
	var grew []string
	for k, v := range after {
		if v > before[k] {
			grew = append(grew, k)
		}
	}
	return strings.Join(grew, ",")
}

// TestIntegrationPSK: the real zabbix_sender, zabbix_agentd,
// zabbix_agent2 and zabbix_get with pre-shared keys.
//   - zabbix_sender --tls-connect psk to a PSK-only host: processed;
//     plain and certificate: failed (tls_refused); an identity no host
//     has and a wrong key: refused at the handshake and counted.
//   - zabbix_agentd and zabbix_agent2 with TLSAccept=psk polled by
//     Peregrine with tls_connect 2: values arrive; the same agents answer
//     zabbix_get with the key; a host with the wrong key fails (reason
//     tls, counted).
//   - zabbix_agentd and zabbix_agent2 active with TLSConnect=psk: their
//     active checks are served and their values stored over PSK.
//
// The suite each program agreed with Peregrine is logged.
func TestIntegrationPSK(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs openssl, zabbix_sender, zabbix_get, zabbix_agentd and zabbix_agent2")
	}
	if !zbxpsk.Available {
		t.Skip("this build has no PSK (built without cgo or with the nopsk tag)")
	}
	certs := testutil.MakeCerts(t)
	keyD, key2 := testutil.WritePSK(t, pskAgentd), testutil.WritePSK(t, pskAgent2)
	passiveD := testutil.StartAgentd(t, testutil.PSKConfig("PSK agentd", keyD)...)
	passive2 := testutil.StartAgent2(t, testutil.PSKConfig("PSK agent2", key2)...)
	s := startTLSServer(t, certs)
	c := adminLogin(t, s)
	trapper := s.Trapper.Addr().String()

	var g struct {
		GroupIDs []string `json:"groupids"`
	}
	c.ok("hostgroup.create", map[string]any{"name": "PSK"}, &g)
	groups := []map[string]any{{"groupid": g.GroupIDs[0]}}
	var h struct {
		HostIDs []string `json:"hostids"`
	}
	hostID := func(name string, fields map[string]any) string {
		t.Helper()
		fields["host"], fields["groups"] = name, groups
		c.ok("host.create", fields, &h)
		return h.HostIDs[0]
	}
	psk := func(connect, accept int, identity, key string) map[string]any {
		return map[string]any{"tls_connect": connect, "tls_accept": accept, "tls_psk_identity": identity, "tls_psk": key}
	}
	// A PSK-only trapper host.
	trapID := hostID("psk-trap", psk(1, 2, "PSK sender", pskSender))
	c.ok("item.create", map[string]any{"name": "t", "key_": "trap.a", "hostid": trapID, "type": 2, "value_type": 3}, nil)

	// zabbix_sender.
	senderKey, wrongKey := testutil.WritePSK(t, pskSender), testutil.WritePSK(t, pskWrong)
	send := func(what string, args []string, wantProcessed, wantFailed int) testutil.SenderResult {
		t.Helper()
		r := testutil.RunSender(t, trapper, append(args, "-s", "psk-trap", "-k", "trap.a", "-o", "7")...)
		if r.Processed != wantProcessed || r.Failed != wantFailed {
			t.Errorf("%s: processed %d failed %d, want %d and %d\n%s", what, r.Processed, r.Failed, wantProcessed, wantFailed, r.Output)
		}
		return r
	}
	before := s.pskCiphers(t, "peregrine_trapper_tls_psk_connections_total")
	send("sender with the host's key", testutil.PSKArgs("PSK sender", senderKey), 1, 0)
	t.Logf("zabbix_sender (GnuTLS) over PSK: %s", negotiated(before, s.pskCiphers(t, "peregrine_trapper_tls_psk_connections_total")))
	send("plain", nil, 0, 1)
	send("certificate", []string{"--tls-connect", "cert", "--tls-ca-file", certs.CAFile, "--tls-cert-file", certs.Sender.Cert, "--tls-key-file", certs.Sender.Key}, 0, 1)
	if r := send("unknown identity", testutil.PSKArgs("PSK nobody", senderKey), 0, 0); r.ExitCode == 0 || r.Responses != 0 {
		t.Errorf("unknown identity: exit %d, %d responses", r.ExitCode, r.Responses)
	}
	if r := send("wrong key", testutil.PSKArgs("PSK sender", wrongKey), 0, 0); r.ExitCode == 0 || r.Responses != 0 {
		t.Errorf("wrong key: exit %d, %d responses", r.ExitCode, r.Responses)
	}
	for series, want := range map[string]string{
		`peregrine_trapper_bad_requests_total{reason="tls_psk_unknown_identity"}`: "1",
		`peregrine_trapper_bad_requests_total{reason="tls_psk_wrong_key"}`:        "1",
		`peregrine_trapper_values_failed_total{reason="tls_refused"}`:             "2",
	} {
		if v := s.metricValue(t, series); v != want {
			t.Errorf("%s = %s, want %s", series, v, want)
		}
	}
	if vals := s.readItem(t, "psk-trap", "trap.a"); len(vals) != 1 {
		t.Errorf("psk-trap stored %d values, want 1", len(vals))
	}

	// Passive agents, one at a time so that each one's suite shows.
	passive := func(name, addr, identity, key string) {
		t.Helper()
		ip, port, _ := net.SplitHostPort(addr)
		f := psk(2, 1, identity, key)
		f["interfaces"] = []map[string]any{{"type": 1, "main": 1, "useip": 1, "ip": ip, "dns": "", "port": port}}
		id := hostID(name, f)
		var ifaces []map[string]any
		c.ok("hostinterface.get", map[string]any{"hostids": id}, &ifaces)
		c.ok("item.create", map[string]any{"name": "ping", "key_": "agent.ping", "hostid": id, "type": 0, "value_type": 3,
			"delay": "1s", "interfaceid": ifaces[0]["interfaceid"]}, nil)
	}
	disable := func(name string) {
		t.Helper()
		var hs []map[string]any
		c.ok("host.get", map[string]any{"filter": map[string]any{"host": name}, "output": []string{"hostid"}}, &hs)
		c.ok("host.update", map[string]any{"hostid": hs[0]["hostid"], "status": 1}, nil)
	}
	before = s.pskCiphers(t, "peregrine_poll_agent_tls_psk_total")
	passive("psk-passive-d", passiveD, "PSK agentd", pskAgentd)
	waitValues(t, s, "psk-passive-d", "agent.ping", "passive zabbix_agentd over PSK")
	disable("psk-passive-d")
	time.Sleep(1500 * time.Millisecond) // a check in flight ends
	mid := s.pskCiphers(t, "peregrine_poll_agent_tls_psk_total")
	t.Logf("zabbix_agentd (GnuTLS) polled over PSK: %s", negotiated(before, mid))
	passive("psk-passive-2", passive2, "PSK agent2", pskAgent2)
	waitValues(t, s, "psk-passive-2", "agent.ping", "passive zabbix_agent2 over PSK")
	disable("psk-passive-2")
	time.Sleep(1500 * time.Millisecond)
	t.Logf("zabbix_agent2 (OpenSSL) polled over PSK: %s", negotiated(mid, s.pskCiphers(t, "peregrine_poll_agent_tls_psk_total")))
	if v := s.metricValue(t, `peregrine_poll_agent_errors_total{reason="tls"}`); v != "0" {
		t.Errorf("poller TLS errors %s before the wrong key, want 0", v)
	}
	// The wrong key: the agent refuses, the check fails, reason tls.
	passive("psk-passive-wrong", passiveD, "PSK agentd", pskWrong)
	end := time.Now().Add(30 * time.Second)
	for s.metricValue(t, `peregrine_poll_agent_errors_total{reason="tls"}`) == "0" {
		if time.Now().After(end) {
			t.Fatal("a passive check with the wrong key did not fail with reason tls in 30 s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if vals := s.readItem(t, "psk-passive-wrong", "agent.ping"); len(vals) != 0 {
		t.Errorf("psk-passive-wrong stored %d values", len(vals))
	}
	disable("psk-passive-wrong")

	// zabbix_get with the keys, against the agents Peregrine polls; and
	// without, refused.
	for _, a := range []struct{ name, addr, identity, file string }{
		{"zabbix_agentd", passiveD, "PSK agentd", keyD}, {"zabbix_agent2", passive2, "PSK agent2", key2},
	} {
		if out, err := testutil.RunGet(t, a.addr, "agent.ping", testutil.PSKArgs(a.identity, a.file)...); err != nil || out != "1" {
			t.Errorf("zabbix_get over PSK from %s: %q (%v)", a.name, out, err)
		}
		if out, err := testutil.RunGet(t, a.addr, "agent.ping"); err == nil && out == "1" {
			t.Errorf("zabbix_get without the key from %s answered %q", a.name, out)
		}
	}

	// Active agents with TLSConnect=psk.
	for _, a := range []struct {
		kind           testutil.AgentKind
		host, identity string
		key            string
	}{
		{testutil.Agentd, "psk-active-d", "PSK active d", pskActiveD},
		{testutil.Agent2, "psk-active-2", "PSK active 2", pskActive2},
	} {
		id := hostID(a.host, psk(1, 2, a.identity, a.key))
		c.ok("item.create", map[string]any{"name": "p", "key_": "agent.ping", "hostid": id, "type": 7, "value_type": 3, "delay": "1s"}, nil)
		before := s.pskCiphers(t, "peregrine_trapper_tls_psk_connections_total")
		ag := testutil.StartActiveAgent(t, a.kind, testutil.ActiveAgentOptions{ServerActive: trapper, Hostname: a.host,
			Extra: []string{"TLSConnect=psk", "TLSPSKIdentity=" + a.identity, "TLSPSKFile=" + testutil.WritePSK(t, a.key)}})
		waitValues(t, s, a.host, "agent.ping", fmt.Sprintf("active %s over PSK", a.kind))
		ag.Stop()
		t.Logf("%s active over PSK: %s", a.kind, negotiated(before, s.pskCiphers(t, "peregrine_trapper_tls_psk_connections_total")))
	}
	// An active agent with the wrong key is refused and counted.
	ag := testutil.StartActiveAgent(t, testutil.Agent2, testutil.ActiveAgentOptions{ServerActive: trapper, Hostname: "psk-active-2",
		Extra: []string{"TLSConnect=psk", "TLSPSKIdentity=PSK active 2", "TLSPSKFile=" + wrongKey}})
	end = time.Now().Add(30 * time.Second)
	for s.metricValue(t, `peregrine_trapper_bad_requests_total{reason="tls_psk_wrong_key"}`) == "1" {
		if time.Now().After(end) {
			t.Fatalf("an active agent with the wrong key was not refused in 30 s:\n%s", ag.Log())
		}
		time.Sleep(200 * time.Millisecond)
	}
}
