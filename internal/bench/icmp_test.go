package bench

import (
	"strings"
	"testing"
)

// The sweep's addresses and expected values: every live address once
// (loss 0), every dead one twice (loss 100, 0 s), no address reused, and
// the namespace's routes cover exactly the live ones.
func TestICMPChecksAndRoutes(t *testing.T) {
	cs := icmpChecks(600, 300)
	if len(cs) != 600+2*300 {
		t.Fatalf("%d checks", len(cs))
	}
	seen := map[string]bool{}
	for i, c := range cs {
		k := c.key + " " + c.addr
		if seen[k] {
			t.Fatalf("check %d repeats %s", i, k)
		}
		seen[k] = true
		live := strings.HasPrefix(c.addr, "10.1.")
		switch {
		case live && (c.key != "icmppingloss" || c.want != "0"),
			!live && (!strings.HasPrefix(c.addr, "10.3.") || c.key == "icmppingloss" && c.want != "100" || c.key == "icmppingsec" && c.want != "0"):
			t.Errorf("check %d: %+v", i, c)
		}
		if strings.HasSuffix(c.addr, ".0") || strings.HasSuffix(c.addr, ".255") {
			t.Errorf("check %d on a network or broadcast address %s", i, c.addr)
		}
	}
	routes := icmpRoutes(600)
	if routes[0] != "link set lo up" || routes[len(routes)-1] != "route add 10.3.0.0/16 dev lo" || len(routes) != 602 {
		t.Errorf("routes: %q … %q (%d)", routes[0], routes[len(routes)-1], len(routes))
	}
	if routes[1] != "route add local 10.1.1.1/32 dev lo" || routes[600] != "route add local 10.1.3.100/32 dev lo" {
		t.Errorf("routes %q %q", routes[1], routes[600])
	}
	if k := cs[0].zabbixKey(""); k != "icmppingloss[10.1.1.1]" {
		t.Errorf("key %q", k)
	}
	if k := cs[0].zabbixKey("3,1000,,500"); k != "icmppingloss[10.1.1.1,3,1000,,500]" {
		t.Errorf("key %q", k)
	}
}

// Zabbix prints stored floats with four decimals.
func TestZabbixNumber(t *testing.T) {
	for in, want := range map[string]string{"100.0000": "100", "0.0000": "0", "0": "0", "12.5000": "12.5", "-0.0000": "0", "100": "100"} {
		if got := zabbixNumber(in); got != want {
			t.Errorf("zabbixNumber(%q) = %q, want %q", in, got, want)
		}
	}
}
