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

// JMX items are seeded by their interface too, as Zabbix seeds them: a
// JVM's items of one interval reach the JMX checker in one batch, which
// sends them to the Java gateway in one request.
func TestJMXItemsShareTheirInterfaceSeed(t *testing.T) {
	cat := catalogtest.Open(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "app", Groups: []string{"G"},
		Interfaces: []catalog.InterfaceSpec{{Type: "jmx", IP: "127.0.0.1", Port: "12345"}, {IP: "127.0.0.1"}},
		Items: []catalog.ItemSpec{
			{Key: `jmx["java.lang:type=Memory","HeapMemoryUsage.used"]`, Type: "jmx", ValueType: "unsigned"},
			{Key: "jmx.discovery", Type: "jmx", ValueType: "text"},
			{Key: "agent.ping", Type: "zabbix_agent"},
		}}}})
	types := map[catalog.ItemType]bool{catalog.JMX: true, catalog.ZabbixAgent: true}
	got := map[string]target{}
	for _, tg := range targetsOf(cat.Snapshot(), types, nil, 3*time.Second) {
		got[tg.key] = tg
	}
	heap, disc, ping := got[`jmx["java.lang:type=Memory","HeapMemoryUsage.used"]`], got["jmx.discovery"], got["agent.ping"]
	if heap.seed != heap.ifaceID || disc.seed != disc.ifaceID || heap.ifaceID == 0 || heap.ifaceID == ping.ifaceID {
		t.Fatalf("JMX items seeded %d and %d, want their JMX interface %d (agent interface %d)", heap.seed, disc.seed, heap.ifaceID, ping.ifaceID)
	}
	if heap.addr != "127.0.0.1:12345" || heap.bad != "" {
		t.Fatalf("JMX item polled through %q (%s), want the JMX interface 127.0.0.1:12345", heap.addr, heap.bad)
	}
	if ping.seed != ping.id {
		t.Fatalf("agent seed %d (id %d): want its own id", ping.seed, ping.id)
	}
}
