package server

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/peregrine-mon/peregrine/internal/bench/sim/snmpsim"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/config"
	"github.com/peregrine-mon/peregrine/internal/testutil"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// startServerTraps is startServer with the SNMP trap receiver on a free
// loopback port; tune, if set, changes the configuration first.
func startServerTraps(t *testing.T, spec catalog.Spec, tune func(*config.Config)) *Server {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Trapper.Listen = "127.0.0.1:0"
	cfg.HTTP.Listen = "127.0.0.1:0"
	cfg.SNMP.TrapListen = "127.0.0.1:0"
	if tune != nil {
		tune(&cfg)
	}
	catalogtest.Write(t, CatalogPath(cfg.DataDir), spec)
	s, err := New(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server stopped with %v", err)
		}
	})
	return s
}

// TestIntegrationSNMP polls the real snmpd through a whole server (an
// SNMPv3 authPriv interface: sysName, the uptime, an interface table
// discovery, an OID the agent lacks), sees the interface available, and
// receives a trap sent with snmptrap into the host's snmptrap[] item.
func TestIntegrationSNMP(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs the real snmpd and snmptrap")
	}
	d := testutil.StartSnmpd(t)
	ip, port, _ := net.SplitHostPort(d.Addr)
	s := startServerTraps(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "router", Groups: []string{"Network"},
		Interfaces: []catalog.InterfaceSpec{{Type: "snmp", IP: ip, Port: port, Details: map[string]string{
			"version": "3", "securityname": testutil.SnmpdUserSHAAES, "securitylevel": "2",
			"authprotocol": "1", "authpassphrase": d.AuthPass, "privprotocol": "1", "privpassphrase": d.PrivPass}}},
		Items: []catalog.ItemSpec{
			{Key: "sysname", Type: "snmp_agent", ValueType: "character", Delay: "1s", SNMPOID: "SNMPv2-MIB::sysName.0"},
			{Key: "uptime", Type: "snmp_agent", ValueType: "unsigned", Delay: "1s", SNMPOID: "1.3.6.1.2.1.1.3.0"},
			{Key: "net.if.discovery", Type: "snmp_agent", ValueType: "text", Delay: "1s", SNMPOID: "discovery[{#IFNAME},IF-MIB::ifDescr]"},
			{Key: "missing", Type: "snmp_agent", ValueType: "unsigned", Delay: "1s", SNMPOID: "1.3.6.1.2.1.1.99.0"},
			{Key: `snmptrap["linkDown|\.1\.3\.6\.1\.6\.3\.1\.1\.5\.3"]`, Type: "snmp_trap", ValueType: "text"},
			{Key: "snmptrap.fallback", Type: "snmp_trap", ValueType: "log"},
		}}}}, nil)
	snap := s.Catalog.Snapshot()
	ifaceID := snap.Host("router").MainInterface(catalog.InterfaceSNMP).ID
	missing := snap.Lookup("router", "missing").ID
	end := time.Now().Add(20 * time.Second)
	for {
		st, _ := s.ItemStates.ItemState(missing)
		a, _ := s.ItemStates.Availability(ifaceID)
		if len(s.readItem(t, "router", "sysname")) > 0 && len(s.readItem(t, "router", "uptime")) > 0 &&
			len(s.readItem(t, "router", "net.if.discovery")) > 0 && st.NotSupported && a.Available == 1 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("after 20 s: values sysname %d uptime %d discovery %d, missing %+v, interface %+v",
				len(s.readItem(t, "router", "sysname")), len(s.readItem(t, "router", "uptime")), len(s.readItem(t, "router", "net.if.discovery")), st, a)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if v := s.readItem(t, "router", "sysname")[0].S; v != d.SysName {
		t.Fatalf("sysName %q, want %q", v, d.SysName)
	}
	if v := s.readItem(t, "router", "net.if.discovery")[0].S; !strings.Contains(v, `"{#IFNAME}":"lo"`) {
		t.Fatalf("discovery %s", v)
	}
	if st, _ := s.ItemStates.ItemState(missing); !strings.Contains(st.Error, "No Such Object") {
		t.Fatalf("missing OID's state %+v", st)
	}

	testutil.SendTrap(t, "-v", "2c", "-c", "public", s.SNMPTraps.Addr().String(), "", "1.3.6.1.6.3.1.1.5.3", "1.3.6.1.2.1.2.2.1.1.1", "i", "1")
	end = time.Now().Add(10 * time.Second)
	for len(s.readItem(t, "router", `snmptrap["linkDown|\.1\.3\.6\.1\.6\.3\.1\.1\.5\.3"]`)) == 0 {
		if time.Now().After(end) {
			t.Fatal("no trap value 10 s after snmptrap")
		}
		time.Sleep(50 * time.Millisecond)
	}
	v := s.readItem(t, "router", `snmptrap["linkDown|\.1\.3\.6\.1\.6\.3\.1\.1\.5\.3"]`)[0].S
	if !strings.Contains(v, "value=OID: .1.3.6.1.6.3.1.1.5.3") || !strings.Contains(v, "value=INTEGER: 1") {
		t.Fatalf("trap value %q", v)
	}
	if n := len(s.readItem(t, "router", "snmptrap.fallback")); n != 0 {
		t.Fatalf("fallback got %d values for a matched trap", n)
	}
}

// TestSNMPAvailability: an SNMP interface that stops answering turns
// unreachable, then unavailable, with Zabbix's timeout message, exactly
// as an agent interface does (the scheduler's availability), while
// another device is polled on; once it answers again it is available.
func TestSNMPAvailability(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the unreachable period")
	}
	var silent atomic.Bool
	silent.Store(true)
	f, err := snmpsim.Start(snmpsim.Options{Agents: 2, Table: []gosnmp.SnmpPDU{
		{Name: ".1.3.6.1.2.1.1.5.0", Type: gosnmp.OctetString, Value: []byte("sim")}},
		Hook: func(agent int, _ *gosnmp.SnmpPacket) ([]byte, bool) { return nil, agent == 0 && silent.Load() }})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var hosts []catalog.HostSpec
	for i, name := range []string{"dead", "alive"} {
		ip, port, _ := net.SplitHostPort(f.Addr(i))
		hosts = append(hosts, catalog.HostSpec{Host: name, Groups: []string{"Network"},
			Interfaces: []catalog.InterfaceSpec{{Type: "snmp", IP: ip, Port: port, Details: map[string]string{"version": "2", "community": "public"}}},
			Items:      []catalog.ItemSpec{{Key: "sysname", Type: "snmp_agent", ValueType: "character", Delay: "1s", SNMPOID: "1.3.6.1.2.1.1.5.0"}}})
	}
	s := startServerTraps(t, catalog.Spec{Hosts: hosts}, func(c *config.Config) {
		c.SNMP.TrapListen = ""
		c.Poll.DefaultTimeout = config.Duration(time.Second)
		c.Poll.UnreachablePeriod = config.Duration(2 * time.Second)
		c.Poll.UnreachableDelay = config.Duration(time.Second)
		c.Poll.UnavailableDelay = config.Duration(time.Second)
	})
	snap := s.Catalog.Snapshot()
	dead := snap.Host("dead").MainInterface(catalog.InterfaceSNMP).ID
	alive := snap.Host("alive").MainInterface(catalog.InterfaceSNMP).ID
	wait := func(what string, ok func() bool) {
		t.Helper()
		end := time.Now().Add(20 * time.Second)
		for !ok() {
			if time.Now().After(end) {
				a, _ := s.ItemStates.Availability(dead)
				t.Fatalf("after 20 s: not %s (dead interface %+v)", what, a)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	wait("the dead interface unavailable, the other available", func() bool {
		a, _ := s.ItemStates.Availability(dead)
		b, _ := s.ItemStates.Availability(alive)
		return a.Available == 2 && b.Available == 1
	})
	a, _ := s.ItemStates.Availability(dead)
	if want := `Timeout while connecting to "` + f.Addr(0) + `".`; a.Error != want || a.ErrorsFrom == 0 {
		t.Fatalf("dead interface %+v, want error %q", a, want)
	}
	if n := len(s.readItem(t, "alive", "sysname")); n == 0 {
		t.Fatal("the answering device got no values meanwhile")
	}
	silent.Store(false)
	wait("the recovered interface available", func() bool {
		a, _ := s.ItemStates.Availability(dead)
		return a.Available == 1 && a.Error == ""
	})
}

// TestIntegrationSNMPTrapPreprocessing sends a trap with the real
// snmptrap to an SNMP trap item with a regular expression step and a
// dependent item: traps take the one way into the pipeline that every
// value takes, so the step runs on the trap text (the item stores what
// it extracted, not the text) and the dependent item gets a value from
// the master's. A second trap whose text the step cannot match makes
// the item not supported with the step's error, and its dependent too,
// as a failed step does for a trapper item. (Traps used to be converted
// in the receiver and handed to the store directly: the item stored the
// whole text and the dependent never got a value.)
func TestIntegrationSNMPTrapPreprocessing(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs the real snmptrap")
	}
	trapKey := `snmptrap["\.1\.3\.6\.1\.6\.3\.1\.1\.5\.3"]`
	s := startServerTraps(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "sw", Groups: []string{"Network"},
		Interfaces: []catalog.InterfaceSpec{{Type: "snmp", IP: "127.0.0.1", Details: map[string]string{"version": "2", "community": "public"}}},
		Items: []catalog.ItemSpec{
			// ifDescr of the interface that went down: .1.3.6.1.2.1.2.2.1.2.N type=4 value=STRING: "eth0"
			{Key: trapKey, Type: "snmp_trap", ValueType: "character", Preprocessing: []catalog.PreprocSpec{
				{Type: "REGEX", Parameters: []string{`\.1\.3\.6\.1\.2\.1\.2\.2\.1\.2\.(\d+) +type=4 +value=STRING: "([^"]*)"`, `\1:\2`}}}},
			{Key: "link.index", Type: "dependent", ValueType: "unsigned", MasterItem: &catalog.MasterItemSpec{Key: trapKey},
				Preprocessing: []catalog.PreprocSpec{{Type: "REGEX", Parameters: []string{`^(\d+):`, `\1`}}}},
		}}}}, nil)
	send := func(varbinds ...string) {
		args := append([]string{"-v", "2c", "-c", "public", s.SNMPTraps.Addr().String(), "", "1.3.6.1.6.3.1.1.5.3"}, varbinds...)
		testutil.SendTrap(t, args...)
	}
	wait := func(what string, ok func() bool) {
		t.Helper()
		end := time.Now().Add(10 * time.Second)
		for !ok() {
			if time.Now().After(end) {
				t.Fatalf("10 s after snmptrap: %s", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	send("1.3.6.1.2.1.2.2.1.1.7", "i", "7", "1.3.6.1.2.1.2.2.1.2.7", "s", "eth7")
	wait("a value in both items", func() bool {
		return len(s.readItem(t, "sw", trapKey)) > 0 && len(s.readItem(t, "sw", "link.index")) > 0
	})
	if v := s.readItem(t, "sw", trapKey)[0]; v.S != "7:eth7" {
		t.Fatalf("trap item stored %q; want the regex step's output 7:eth7", v.S)
	}
	if v := s.readItem(t, "sw", "link.index")[0]; v.U != 7 {
		t.Fatalf("dependent item stored %+v; want 7", v)
	}

	// No ifDescr varbind: the step does not match, so both items become
	// not supported, and nothing more is stored.
	send("1.3.6.1.2.1.2.2.1.1.8", "i", "8")
	snap := s.Catalog.Snapshot()
	master, dep := snap.Lookup("sw", trapKey).ID, snap.Lookup("sw", "link.index").ID
	wait("both items not supported", func() bool {
		m, _ := s.ItemStates.ItemState(master)
		d, _ := s.ItemStates.ItemState(dep)
		return m.NotSupported && d.NotSupported
	})
	if m, _ := s.ItemStates.ItemState(master); !strings.Contains(m.Error, "cannot perform regular expression") {
		t.Errorf("trap item's error %q; want the regex step's", m.Error)
	}
	if n, d := len(s.readItem(t, "sw", trapKey)), len(s.readItem(t, "sw", "link.index")); n != 1 || d != 1 {
		t.Fatalf("after the failing trap: %d and %d values; want 1 and 1", n, d)
	}
}
