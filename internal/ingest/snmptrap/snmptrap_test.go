package snmptrap

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/testutil"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

type fixture struct {
	r   *Receiver
	cat *catalog.Catalog
	m   *selfmon.Registry
	rt  *itemstate.Registry

	mu  sync.Mutex
	got map[uint64][]history.Sample
}

func newFixture(t *testing.T, hosts ...catalog.HostSpec) *fixture {
	t.Helper()
	return newFixtureUsers(t, nil, hosts...)
}

func newFixtureUsers(t *testing.T, users []User, hosts ...catalog.HostSpec) *fixture {
	t.Helper()
	for i := range hosts {
		hosts[i].Groups = []string{"Network"}
	}
	f := &fixture{cat: catalogtest.Open(t, catalog.Spec{Hosts: hosts}), m: selfmon.NewRegistry(), rt: itemstate.New(), got: map[uint64][]history.Sample{}}
	var err error
	f.r, err = New(Options{Listen: "127.0.0.1:0", Users: users, Snapshot: f.cat.Snapshot, ItemStates: f.rt, Metrics: f.m, Submit: func(s []history.Sample) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, v := range s {
			f.got[v.ItemID] = append(f.got[v.ItemID], v)
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.r.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return f
}

// values waits until item has n values and returns them.
func (f *fixture) values(t *testing.T, host, key string, n int) []history.Sample {
	t.Helper()
	it := f.cat.Snapshot().Host(host).Item(key)
	end := time.Now().Add(20 * time.Second)
	for {
		f.mu.Lock()
		got := append([]history.Sample(nil), f.got[it.ID]...)
		f.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(end) {
			t.Fatalf("%s %s: %d values, want %d", host, key, len(got), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// counter waits until a counter reaches want.
func (f *fixture) counter(t *testing.T, line, want string) {
	t.Helper()
	end := time.Now().Add(20 * time.Second)
	for {
		var b strings.Builder
		f.m.WriteText(&b)
		for _, l := range strings.Split(b.String(), "\n") {
			if l == line+" "+want {
				return
			}
		}
		if time.Now().After(end) {
			t.Fatalf("%s never reached %s:\n%s", line, want, b.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func trapHost(name, ip string, items ...catalog.ItemSpec) catalog.HostSpec {
	return catalog.HostSpec{Host: name, Interfaces: []catalog.InterfaceSpec{{Type: "snmp", IP: ip,
		Details: map[string]string{"version": "2", "community": "public"}}}, Items: items}
}

func trapItem(key, vt string) catalog.ItemSpec {
	return catalog.ItemSpec{Key: key, Type: "snmp_trap", ValueType: vt}
}

// TestIntegrationSnmptrap sends traps with net-snmp's snmptrap: a v2c
// linkDown reaches the snmptrap[] item whose regexp matches it, a v1
// enterprise trap no regexp matches reaches snmptrap.fallback, both in
// Zabbix's trap text; an SNMPv3 trap, garbage and a trap from an address
// no host has are dropped and counted.
func TestIntegrationSnmptrap(t *testing.T) {
	if testing.Short() {
		t.Skip("runs snmptrap")
	}
	f := newFixture(t,
		trapHost("sw", "127.0.0.1",
			trapItem(`snmptrap["\.1\.3\.6\.1\.6\.3\.1\.1\.5\.3"]`, "text"),
			trapItem(`snmptrap[linkUp]`, "text"),
			trapItem("snmptrap.fallback", "log"),
			trapItem(`snmptrap["(unclosed"]`, "text")),
		trapHost("other", "127.0.0.2", trapItem("snmptrap.fallback", "log")),
	)
	addr := f.r.Addr().String()
	testutil.SendTrap(t, "-v", "2c", "-c", "public", addr, "", "1.3.6.1.6.3.1.1.5.3",
		"1.3.6.1.2.1.2.2.1.1.2", "i", "2", "1.3.6.1.2.1.2.2.1.2.2", "s", "eth0")
	got := f.values(t, "sw", `snmptrap["\.1\.3\.6\.1\.6\.3\.1\.1\.5\.3"]`, 1)[0]
	for _, want := range []string{
		"\nPDU INFO:\n", "  notificationtype               TRAP\n", "  version                        1\n",
		"  community                      public\n", "  receivedfrom                   UDP: [127.0.0.1]:",
		"VARBINDS:\n", "  .1.3.6.1.2.1.1.3.0             type=67 value=Timeticks: (",
		"  .1.3.6.1.6.3.1.1.4.1.0         type=6  value=OID: .1.3.6.1.6.3.1.1.5.3\n",
		"  .1.3.6.1.2.1.2.2.1.1.2         type=2  value=INTEGER: 2\n",
		"  .1.3.6.1.2.1.2.2.1.2.2         type=4  value=STRING: \"eth0\"\n",
	} {
		if !strings.Contains(got.S, want) {
			t.Errorf("linkDown trap text lacks %q:\n%s", want, got.S)
		}
	}
	if got.Type != history.Text || got.Clock == 0 {
		t.Errorf("sample %+v", got)
	}

	testutil.SendTrap(t, "-v", "1", "-c", "public", addr, "1.3.6.1.4.1.8072.2.3", "127.0.0.1", "6", "17", "",
		"1.3.6.1.4.1.8072.2.3.2.1", "i", "42")
	fb := f.values(t, "sw", "snmptrap.fallback", 1)[0]
	for _, want := range []string{"  version                        0\n", "  enterprise                     .1.3.6.1.4.1.8072.2.3\n",
		"  specifictrap                   17\n", "  .1.3.6.1.4.1.8072.2.3.2.1      type=2  value=INTEGER: 42\n"} {
		if !strings.Contains(fb.S, want) {
			t.Errorf("v1 trap text lacks %q:\n%s", want, fb.S)
		}
	}
	if fb.Type != history.Log {
		t.Errorf("fallback sample type %v", fb.Type)
	}
	f.mu.Lock()
	for _, k := range []string{`snmptrap[linkUp]`} {
		if n := len(f.got[f.cat.Snapshot().Host("sw").Item(k).ID]); n != 0 {
			t.Errorf("%s got %d values", k, n)
		}
	}
	f.mu.Unlock()
	bad := f.cat.Snapshot().Host("sw").Item(`snmptrap["(unclosed"]`)
	if st, _ := f.rt.ItemState(bad.ID); !st.NotSupported || !strings.Contains(st.Error, "invalid regular expression") {
		t.Errorf("item with a bad regexp: %+v", st)
	}

	// An inform: snmpinform exits 0 only once it has our Response.
	testutil.SendInform(t, "-v", "2c", "-c", "public", "-t", "2", "-r", "0", addr, "", "1.3.6.1.6.3.1.1.5.3", "1.3.6.1.2.1.2.2.1.1.3", "i", "3")
	if got := f.values(t, "sw", `snmptrap["\.1\.3\.6\.1\.6\.3\.1\.1\.5\.3"]`, 2)[1]; !strings.Contains(got.S, "notificationtype               INFORM\n") {
		t.Errorf("inform text:\n%s", got.S)
	}
	f.counter(t, `peregrine_snmptrap_informs_acknowledged_total`, "1")

	testutil.SendTrap(t, "-v", "3", "-u", "someone", "-l", "noAuthNoPriv", "-e", "0x8000000001020304", addr, "", "1.3.6.1.6.3.1.1.5.3")
	f.counter(t, `peregrine_snmptrap_dropped_total{reason="v3"}`, "1")

	c, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("definitely not BER"))
	c.Write([]byte{0x30, 0x82, 0xff, 0xff, 0x02})
	f.counter(t, `peregrine_snmptrap_dropped_total{reason="malformed"}`, "2")

	// From 127.0.0.3, which no host has.
	from, err := net.DialUDP("udp", &net.UDPAddr{IP: net.ParseIP("127.0.0.3")}, f.r.Addr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer from.Close()
	from.Write(v2Trap(t, "1.3.6.1.6.3.1.1.5.4"))
	f.counter(t, `peregrine_snmptrap_dropped_total{reason="unmatched"}`, "1")
	f.counter(t, `peregrine_snmptrap_values_total`, "3")
	f.mu.Lock()
	if n := len(f.got[f.cat.Snapshot().Host("other").Item("snmptrap.fallback").ID]); n != 0 {
		t.Errorf("host other got %d traps it did not send", n)
	}
	f.mu.Unlock()
}

func v2Trap(t *testing.T, trapOID string) []byte {
	t.Helper()
	p := &gosnmp.SnmpPacket{Version: gosnmp.Version2c, Community: "public", PDUType: gosnmp.SNMPv2Trap, RequestID: 1, Variables: []gosnmp.SnmpPDU{
		{Name: ".1.3.6.1.2.1.1.3.0", Type: gosnmp.TimeTicks, Value: uint32(100)},
		{Name: ".1.3.6.1.6.3.1.1.4.1.0", Type: gosnmp.ObjectIdentifier, Value: "." + trapOID},
	}}
	b, err := p.MarshalMsg()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Without snmptrap: a trap built here reaches the fallback item of the
// host with the sender's address, and a hex string and TimeTicks of days
// are written as net-snmp writes them.
func TestReceiverFormats(t *testing.T) {
	f := newFixture(t, trapHost("sw", "127.0.0.1", trapItem("snmptrap.fallback", "text")))
	c, err := net.Dial("udp", f.r.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := &gosnmp.SnmpPacket{Version: gosnmp.Version2c, Community: "c", PDUType: gosnmp.SNMPv2Trap, RequestID: 9, Variables: []gosnmp.SnmpPDU{
		{Name: ".1.3.6.1.2.1.1.3.0", Type: gosnmp.TimeTicks, Value: uint32(2*8640000 + 3*360000 + 4*6000 + 5*100 + 6)},
		{Name: ".1.3.6.1.6.3.1.1.4.1.0", Type: gosnmp.ObjectIdentifier, Value: ".1.3.6.1.4.1.1.2"},
		{Name: ".1.3.6.1.4.1.1.3", Type: gosnmp.OctetString, Value: []byte{0, 0xab, 0x10}},
		{Name: ".1.3.6.1.4.1.1.4", Type: gosnmp.IPAddress, Value: "10.1.2.3"},
		{Name: ".1.3.6.1.4.1.1.5", Type: gosnmp.Counter64, Value: uint64(1 << 33)},
	}}
	b, err := p.MarshalMsg()
	if err != nil {
		t.Fatal(err)
	}
	c.Write(b)
	s := f.values(t, "sw", "snmptrap.fallback", 1)[0].S
	for _, want := range []string{"value=Timeticks: (" + strconv.Itoa(2*8640000+3*360000+4*6000+5*100+6) + ") 2 days, 3:04:05.06\n",
		"value=Hex-STRING: 00 AB 10\n", "value=IpAddress: 10.1.2.3\n", "value=Counter64: 8589934592\n", "  requestid                      9\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("trap text lacks %q:\n%s", want, s)
		}
	}
}

// TestIntegrationSnmptrapV3: SNMPv3 traps of a configured user (authPriv
// SHA/AES, and authNoPriv MD5) are stored; one with a wrong passphrase,
// an unknown user or another engine ID is dropped and counted.
func TestIntegrationSnmptrapV3(t *testing.T) {
	if testing.Short() {
		t.Skip("runs snmptrap")
	}
	engine := []byte{0x80, 0, 0x1f, 0x88, 0x04, 'p', 'e', 'r'}
	f := newFixtureUsers(t, []User{
		{SecurityName: "trapper-sha", EngineID: engine, SecurityLevel: 2, AuthProtocol: 1, AuthPassphrase: "auth-pass-1", PrivProtocol: 1, PrivPassphrase: "priv-pass-1"},
		{SecurityName: "trapper-md5", EngineID: engine, SecurityLevel: 1, AuthProtocol: 0, AuthPassphrase: "auth-pass-2"},
	}, trapHost("sw", "127.0.0.1", trapItem("snmptrap.fallback", "log")))
	addr := f.r.Addr().String()
	hexEngine := "0x80001f8804706572"
	testutil.SendTrap(t, "-v", "3", "-e", hexEngine, "-u", "trapper-sha", "-l", "authPriv", "-a", "SHA", "-A", "auth-pass-1", "-x", "AES", "-X", "priv-pass-1",
		addr, "", "1.3.6.1.6.3.1.1.5.3", "1.3.6.1.2.1.2.2.1.1.7", "i", "7")
	testutil.SendTrap(t, "-v", "3", "-e", hexEngine, "-u", "trapper-md5", "-l", "authNoPriv", "-a", "MD5", "-A", "auth-pass-2",
		addr, "", "1.3.6.1.6.3.1.1.5.4", "1.3.6.1.2.1.2.2.1.1.8", "i", "8")
	got := f.values(t, "sw", "snmptrap.fallback", 2)
	text := got[0].S + got[1].S
	for _, want := range []string{"  version                        3\n", "value=INTEGER: 7\n", "value=INTEGER: 8\n", "value=OID: .1.3.6.1.6.3.1.1.5.4\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("v3 traps lack %q:\n%s", want, text)
		}
	}
	testutil.SendTrap(t, "-v", "3", "-e", hexEngine, "-u", "trapper-sha", "-l", "authPriv", "-a", "SHA", "-A", "wrong-pass-1", "-x", "AES", "-X", "priv-pass-1",
		addr, "", "1.3.6.1.6.3.1.1.5.3")
	testutil.SendTrap(t, "-v", "3", "-e", hexEngine, "-u", "stranger", "-l", "noAuthNoPriv", addr, "", "1.3.6.1.6.3.1.1.5.3")
	testutil.SendTrap(t, "-v", "3", "-e", "0x8000000001020304", "-u", "trapper-md5", "-l", "authNoPriv", "-a", "MD5", "-A", "auth-pass-2",
		addr, "", "1.3.6.1.6.3.1.1.5.3")
	f.counter(t, `peregrine_snmptrap_dropped_total{reason="v3"}`, "3")
	if n := len(f.values(t, "sw", "snmptrap.fallback", 2)); n != 2 {
		t.Fatalf("%d values; the refused traps were stored", n)
	}
}
