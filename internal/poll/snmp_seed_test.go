package poll

import (
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// SNMP items with a plain OID are seeded by their interface, as Zabbix
// seeds them: a device's items of one interval fall due at the same
// millisecond (one GET); walks and other types keep their own seed.
func TestSNMPItemsShareTheirInterfaceSeed(t *testing.T) {
	snmpIf := catalog.InterfaceSpec{Type: "snmp", IP: "127.0.0.1", Details: map[string]string{"version": "2", "community": "public"}}
	cat := catalogtest.Open(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "sw", Groups: []string{"G"},
		Interfaces: []catalog.InterfaceSpec{snmpIf, {IP: "127.0.0.1"}},
		Items: []catalog.ItemSpec{
			{Key: "a", Type: "snmp_agent", SNMPOID: "1.3.6.1.2.1.1.3.0"},
			{Key: "b", Type: "snmp_agent", SNMPOID: "IF-MIB::ifInOctets.1"},
			{Key: "disc", Type: "snmp_agent", SNMPOID: "discovery[{#IFDESCR},IF-MIB::ifDescr]"},
			{Key: "agent.ping", Type: "zabbix_agent"},
		}}}})
	types := map[catalog.ItemType]bool{catalog.SNMPAgent: true, catalog.ZabbixAgent: true}
	got := map[string]target{}
	for _, tg := range targetsOf(cat.Snapshot(), types, nil, 3*time.Second) {
		got[tg.key] = tg
	}
	a, b, disc, ping := got["a"], got["b"], got["disc"], got["agent.ping"]
	if a.seed != a.ifaceID || b.seed != b.ifaceID || a.ifaceID == 0 {
		t.Fatalf("plain SNMP items seeded %d and %d, want their interface %d", a.seed, b.seed, a.ifaceID)
	}
	if disc.seed != disc.id || ping.seed != ping.id {
		t.Fatalf("discovery seed %d (id %d), agent seed %d (id %d): want their own ids", disc.seed, disc.id, ping.seed, ping.id)
	}
}
