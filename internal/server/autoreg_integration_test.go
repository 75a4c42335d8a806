package server

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxpsk"
)

// autoregSetup makes, through the API, a template with an active
// agent.ping item, a host group and an auto-registration action
// matching host metadata containing "linux-ar": add host, add to the
// group, link the template. It returns the group's and template's IDs.
func autoregSetup(t *testing.T, c *apiClient) (group, tmpl uint64) {
	t.Helper()
	var g struct {
		IDs []string `json:"groupids"`
	}
	c.ok("hostgroup.create", map[string]any{"name": "AR group"}, &g)
	var tm struct {
		IDs []string `json:"templateids"`
	}
	c.ok("template.create", map[string]any{"host": "AR template", "groups": []any{map[string]any{"groupid": g.IDs[0]}}}, &tm)
	c.ok("item.create", map[string]any{"hostid": tm.IDs[0], "name": "ping", "key_": "agent.ping", "type": 7, "value_type": 3, "delay": "1s"}, nil)
	c.ok("action.create", map[string]any{
		"name": "AR", "eventsource": 2,
		"filter": map[string]any{"evaltype": 0, "conditions": []any{map[string]any{"conditiontype": 24, "operator": 2, "value": "linux-ar"}}},
		"operations": []any{
			map[string]any{"operationtype": 2},
			map[string]any{"operationtype": 4, "opgroup": []any{map[string]any{"groupid": g.IDs[0]}}},
			map[string]any{"operationtype": 6, "optemplate": []any{map[string]any{"templateid": tm.IDs[0]}}},
		},
	}, nil)
	group, _ = strconv.ParseUint(g.IDs[0], 10, 64)
	tmpl, _ = strconv.ParseUint(tm.IDs[0], 10, 64)
	return group, tmpl
}

// waitCollecting waits (up to a refresh period and a half) until host
// exists in group, linked to tmpl, with agent.ping values stored.
func waitCollecting(t *testing.T, s *Server, host string, group, tmpl uint64) *catalog.Host {
	t.Helper()
	deadline := time.Now().Add(100 * time.Second)
	for {
		snap := s.Catalog.Snapshot()
		if h := snap.Host(host); h != nil {
			if it := h.Item("agent.ping"); it != nil && len(s.readItem(t, host, "agent.ping")) > 0 {
				linked := snap.LinkedTemplates(h.ID)
				if len(linked) != 1 || linked[0] != tmpl {
					t.Fatalf("%s: templates %v, want [%d]", host, linked, tmpl)
				}
				inGroup := false
				for _, gid := range h.GroupIDs {
					inGroup = inGroup || gid == group
				}
				if !inGroup {
					t.Fatalf("%s: groups %v, want %d among them", host, h.GroupIDs, group)
				}
				return h
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not registered and collecting within 100 s (host %v)", host, snap.Host(host) != nil)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestIntegrationAutoregistration: the real zabbix_agentd and
// zabbix_agent2 with HostMetadata register with Peregrine: an
// auto-registration action creates each host, puts it in a group and
// links a template whose active item the agent then collects, within one
// RefreshActiveChecks period (60 s) of its first refused request. The
// registrations are events of source 2 in event.get. An agent whose
// metadata no action matches registers (an event) but gets no host.
func TestIntegrationAutoregistration(t *testing.T) {
	// Waits on agents' schedules, not the CPU: runs beside the other
	// waiting tests (CI time).
	t.Parallel()
	testutil.Need(t, "zabbix_agentd", "zabbix-agent")
	testutil.Need(t, "zabbix_agent2", "zabbix-agent2")
	s := startServer(t, catalog.Spec{})
	c := adminLogin(t, s)
	group, tmpl := autoregSetup(t, c)
	addr := s.Trapper.Addr().String()
	start := time.Now()
	for _, a := range []struct {
		kind testutil.AgentKind
		host string
		meta string
	}{{testutil.Agentd, "ar-agentd", "linux-ar agentd"}, {testutil.Agent2, "ar-agent2", "linux-ar agent2"}, {testutil.Agentd, "ar-other", "windows"}} {
		testutil.StartActiveAgent(t, a.kind, testutil.ActiveAgentOptions{ServerActive: addr, Hostname: a.host, HostMetadata: a.meta})
	}
	var wg sync.WaitGroup
	for _, h := range []string{"ar-agentd", "ar-agent2"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			host := waitCollecting(t, s, h, group, tmpl)
			if len(host.Interfaces) != 1 || host.Interfaces[0].Type != catalog.InterfaceAgent || host.Interfaces[0].Port != "10050" || !host.Interfaces[0].UseIP {
				t.Errorf("%s: interfaces %+v", h, host.Interfaces)
			}
		}()
	}
	wg.Wait()
	t.Logf("both agents registered and collecting %v after they started", time.Since(start).Round(time.Second))
	if s.Catalog.Snapshot().Host("ar-other") != nil {
		t.Error("ar-other: created, but no action matches its metadata")
	}
	var evs []map[string]any
	c.ok("event.get", map[string]any{"source": 2, "object": 3, "output": "extend"}, &evs)
	if len(evs) < 3 {
		t.Fatalf("event.get source 2: %d events, want one per agent at least: %v", len(evs), evs)
	}
	for _, e := range evs {
		if e["source"] != "2" || e["object"] != "3" || e["value"] != "1" {
			t.Fatalf("event %v", e)
		}
	}
}

// TestIntegrationAutoregistrationPSK: with tls_accept 2 (PSK only), an
// agent registering under the autoregistration identity and key gets a
// host with that key (PSK both ways) and collects over PSK; an agent
// with the identity and a wrong key fails the handshake
// (tls_psk_wrong_key), an unencrypted one is refused by the policy
// (peregrine_trapper_autoreg_refused_total): neither gets a host.
func TestIntegrationAutoregistrationPSK(t *testing.T) {
	// Waits on agents' schedules, not the CPU: runs beside the other
	// waiting tests (CI time).
	t.Parallel()
	if !zbxpsk.Available {
		t.Skip("TLS with pre-shared keys is not in this build (cgo and OpenSSL)")
	}
	testutil.Need(t, "zabbix_agentd", "zabbix-agent")
	testutil.Need(t, "zabbix_agent2", "zabbix-agent2")
	s := startServer(t, catalog.Spec{})
	c := adminLogin(t, s)
	group, tmpl := autoregSetup(t, c)
	const key = "8f2a6e0c4b1d3f5a7c9e0b2d4f6a8c1e"
	c.ok("autoregistration.update", map[string]any{"tls_accept": 2, "tls_psk_identity": "ar-psk", "tls_psk": key}, nil)
	var got map[string]any
	c.ok("autoregistration.get", map[string]any{"output": "extend"}, &got)
	if fmt.Sprint(got) != "map[tls_accept:2]" {
		t.Fatalf("autoregistration.get: %v (the identity and key are never returned)", got)
	}
	addr := s.Trapper.Addr().String()
	good := testutil.WritePSK(t, key)
	bad := testutil.WritePSK(t, "00112233445566778899aabbccddeeff")
	testutil.StartActiveAgent(t, testutil.Agent2, testutil.ActiveAgentOptions{ServerActive: addr, Hostname: "ar-psk-good",
		HostMetadata: "linux-ar", Extra: []string{"TLSConnect=psk", "TLSPSKIdentity=ar-psk", "TLSPSKFile=" + good}})
	testutil.StartActiveAgent(t, testutil.Agentd, testutil.ActiveAgentOptions{ServerActive: addr, Hostname: "ar-psk-bad",
		HostMetadata: "linux-ar", Extra: []string{"TLSConnect=psk", "TLSPSKIdentity=ar-psk", "TLSPSKFile=" + bad}})
	testutil.StartActiveAgent(t, testutil.Agentd, testutil.ActiveAgentOptions{ServerActive: addr, Hostname: "ar-plain", HostMetadata: "linux-ar"})
	h := waitCollecting(t, s, "ar-psk-good", group, tmpl)
	if h.Ext().TLS.Connect != 2 || h.Ext().TLS.Accept != 2 || h.Ext().TLS.PSKIdentity != "ar-psk" || string(h.Ext().TLS.PSK) != key {
		t.Fatalf("ar-psk-good TLS: connect %d accept %d identity %q", h.Ext().TLS.Connect, h.Ext().TLS.Accept, h.Ext().TLS.PSKIdentity)
	}
	waitFor(t, func() string { return "refusals not counted" }, func() bool {
		return s.metricValue(t, `peregrine_trapper_bad_requests_total{reason="tls_psk_wrong_key"}`) >= "1" &&
			s.metricValue(t, `peregrine_trapper_autoreg_refused_total`) >= "1"
	})
	for _, h := range []string{"ar-psk-bad", "ar-plain"} {
		if s.Catalog.Snapshot().Host(h) != nil {
			t.Errorf("%s: created, but its connection is not the autoregistration key's", h)
		}
	}
}
