package server

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/ingest"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestIntegrationProxyDiscovery: the real zabbix_proxy 6.0, active and
// passive, takes a discovery rule from Peregrine's configuration and
// sweeps a real zabbix_agentd on a loopback address of its own; what it
// found reaches Peregrine: dhost.get and dservice.get show the host and
// its agent service (up, the agent's system.uname value), discovery
// events are made, and a discovery action with the proxy condition
// creates the host, monitored by the proxy. Peregrine does not sweep
// the rule itself.
func TestIntegrationProxyDiscovery(t *testing.T) {
	testutil.ProxyBinary(t)
	for _, mode := range []string{"active", "passive"} {
		t.Run(mode, func(t *testing.T) { proxyDiscovery(t, mode == "passive") })
	}
}

func proxyDiscovery(t *testing.T, passive bool) {
	s := startServer(t, catalog.Spec{})
	c := adminLogin(t, s)
	ip := fmt.Sprintf("127.0.0.%d", 100+rand.IntN(150))
	_, port, _ := net.SplitHostPort(testutil.StartAgentdAt(t, ip))
	name := "pd-proxy"
	var created struct {
		IDs []string `json:"proxyids"`
	}
	if passive {
		px := testutil.StartProxy(t, testutil.ProxyOptions{Name: name, Server: "127.0.0.1", Passive: true, Extra: []string{"StartDiscoverers=1"}})
		_, pport, _ := net.SplitHostPort(px.Addr)
		c.ok("proxy.create", map[string]any{"host": name, "status": 6,
			"interface": map[string]any{"ip": "127.0.0.1", "dns": "", "useip": 1, "port": pport}}, &created)
	} else {
		c.ok("proxy.create", map[string]any{"host": name, "status": 5}, &created)
	}
	pid := created.IDs[0]
	var rule struct {
		IDs []string `json:"druleids"`
	}
	c.ok("drule.create", map[string]any{"name": "pd-rule", "iprange": ip, "delay": "5s", "proxy_hostid": pid,
		"dchecks": []any{map[string]any{"type": 9, "key_": "system.uname", "ports": port, "uniq": 0, "host_source": 1, "name_source": 0}}}, &rule)
	c.ok("action.create", map[string]any{"name": "pd-action", "eventsource": 1, "status": 0,
		"filter": map[string]any{"evaltype": 0, "conditions": []any{
			map[string]any{"conditiontype": 20, "operator": 0, "value": pid},
			map[string]any{"conditiontype": 10, "operator": 0, "value": "0"}}},
		"operations": []any{map[string]any{"operationtype": 2}}}, nil)
	if !passive {
		testutil.StartProxy(t, testutil.ProxyOptions{Name: name, Server: s.TrapperAddr().String(), Extra: []string{"StartDiscoverers=1"}})
	}

	type dservice struct {
		DCheckID, IP, Port, Value, Status string
	}
	var dhosts []struct {
		DHostID, DRuleID, Status string
		DServices                []dservice `json:"dservices"`
	}
	// A passive proxy's discoverer looks for rules before the first
	// configuration arrives and then sleeps a minute (the proxy's own
	// pace: its first sweep comes about 60 s after it starts).
	waitUntil(t, 120*time.Second, "the proxy's discovery of "+ip+" in dhost.get", func() bool {
		c.ok("dhost.get", map[string]any{"druleids": rule.IDs, "selectDServices": "extend"}, &dhosts)
		return len(dhosts) == 1 && dhosts[0].Status == "0" && len(dhosts[0].DServices) == 1
	})
	sv := dhosts[0].DServices[0]
	if sv.IP != ip || sv.Port != port || sv.Status != "0" || sv.Value == "" {
		t.Fatalf("dservice %+v, want %s:%s up with the agent's system.uname", sv, ip, port)
	}
	var svcs []dservice
	c.ok("dservice.get", map[string]any{"dhostids": []string{dhosts[0].DHostID}, "output": "extend"}, &svcs)
	if len(svcs) != 1 || svcs[0].IP != ip {
		t.Fatalf("dservice.get: %+v", svcs)
	}
	var hosts []struct {
		HostID      string
		ProxyHostID string `json:"proxy_hostid"`
		Interfaces  []struct{ IP, Port string }
	}
	waitUntil(t, 30*time.Second, "the discovery action's host", func() bool {
		c.ok("host.get", map[string]any{"filter": map[string]any{"host": []string{ip}}, "output": []string{"hostid", "proxy_hostid"},
			"selectInterfaces": []string{"ip", "port"}}, &hosts)
		return len(hosts) == 1
	})
	if hosts[0].ProxyHostID != pid || len(hosts[0].Interfaces) != 1 || hosts[0].Interfaces[0].IP != ip || hosts[0].Interfaces[0].Port != port {
		t.Fatalf("host %+v, want monitored by proxy %s with an agent interface %s:%s", hosts[0], pid, ip, port)
	}
	var events []struct{ Clock, Value string }
	c.ok("event.get", map[string]any{"source": 1, "object": 1, "objectids": []string{dhosts[0].DHostID}, "output": []string{"clock", "value"}}, &events)
	if len(events) < 2 {
		t.Fatalf("discovery host events %+v, want discovered and up", events)
	}
	if n := s.metricValue(t, `peregrine_netdisc_sweeps_total`); n != "0" {
		t.Fatalf("Peregrine swept %s times a rule its proxy runs", n)
	}
	if n, _ := strconv.Atoi(s.metricValue(t, `peregrine_netdisc_proxy_rows_total{result="taken"}`)); n < 2 {
		t.Fatalf("%d discovery rows counted taken", n)
	}
}

// TestProxyDiscoveryBadInput: a discovery part that is not rows refuses
// the proxy's data (bad_part: the proxy keeps it); rows of an unknown
// rule, of the server's rule or of an unknown check are refused one by
// one and counted, the request taken.
func TestProxyDiscoveryBadInput(t *testing.T) {
	s := startServer(t, catalog.Spec{})
	c := adminLogin(t, s)
	var created struct {
		IDs []string `json:"proxyids"`
	}
	c.ok("proxy.create", map[string]any{"host": "pd-bad", "status": 5}, &created)
	var rule struct {
		IDs []string `json:"druleids"`
	}
	c.ok("drule.create", map[string]any{"name": "pd-server-rule", "iprange": "127.0.0.9", "delay": "1h", "status": 1,
		"dchecks": []any{map[string]any{"type": 8, "ports": "1"}}}, &rule)
	id, _ := strconv.ParseUint(created.IDs[0], 10, 64)
	p := s.Catalog.Snapshot().Proxy(id)
	for _, bad := range []string{`{"not":"rows"}`, `[{"clock":"soon"}]`} {
		if err := s.proxyExtras(p, nil, []byte(bad)); err == nil || errors.Is(err, ingest.ErrProxyStore) {
			t.Fatalf("%s: %v, want a refusal of the part", bad, err)
		}
	}
	rows := `[{"clock":1,"drule":999999,"dcheck":1,"ip":"127.0.0.9","dns":"","port":1},` +
		`{"clock":1,"drule":` + rule.IDs[0] + `,"dcheck":null,"ip":"127.0.0.9","dns":""},` +
		`{"clock":1,"drule":` + rule.IDs[0] + `,"dcheck":null,"ip":"bogus","dns":""}]`
	if err := s.proxyExtras(p, nil, []byte(rows)); err != nil {
		t.Fatal(err)
	}
	for res, want := range map[string]string{"unknown_rule": "1", "not_its_rule": "1", "malformed": "1", "taken": "0"} {
		if got := s.metricValue(t, `peregrine_netdisc_proxy_rows_total{result="`+res+`"}`); got != want {
			t.Errorf("%s: %s, want %s", res, got, want)
		}
	}
}

// TestProxyDeleteInUse: a proxy that runs a discovery rule, monitors a
// host or is named by an action's condition is not deleted, in 6.0's
// words and order: the rule first, then the host, then the action
// (recorded from 6.0.14).
func TestProxyDeleteInUse(t *testing.T) {
	s := startServer(t, catalog.Spec{})
	c := adminLogin(t, s)
	var px struct {
		IDs []string `json:"proxyids"`
	}
	c.ok("proxy.create", map[string]any{"host": "pd-del", "status": 5}, &px)
	var g struct {
		IDs []string `json:"groupids"`
	}
	c.ok("hostgroup.create", map[string]any{"name": "pd-g"}, &g)
	var h struct {
		IDs []string `json:"hostids"`
	}
	c.ok("host.create", map[string]any{"host": "pd-h", "groups": []any{map[string]any{"groupid": g.IDs[0]}}, "proxy_hostid": px.IDs[0]}, &h)
	var a struct {
		IDs []string `json:"actionids"`
	}
	c.ok("action.create", map[string]any{"name": "pd-act", "eventsource": 1,
		"filter":     map[string]any{"evaltype": 0, "conditions": []any{map[string]any{"conditiontype": 20, "operator": 0, "value": px.IDs[0]}}},
		"operations": []any{map[string]any{"operationtype": 2}}}, &a)
	var r struct {
		IDs []string `json:"druleids"`
	}
	c.ok("drule.create", map[string]any{"name": "pd-del-rule", "iprange": "127.0.0.90", "proxy_hostid": px.IDs[0],
		"dchecks": []any{map[string]any{"type": 8, "ports": "1"}}}, &r)
	c.fails("proxy.delete", px.IDs, -32602, `Proxy "pd-del" is used by discovery rule "pd-del-rule".`)
	c.ok("drule.delete", r.IDs, nil)
	c.fails("proxy.delete", px.IDs, -32602, `Host "pd-h" is monitored by proxy "pd-del".`)
	c.ok("host.delete", h.IDs, nil)
	c.fails("proxy.delete", px.IDs, -32602, `Proxy "pd-del" is used by action "pd-act".`)
	c.ok("action.delete", a.IDs, nil)
	c.ok("proxy.delete", px.IDs, nil)
}
