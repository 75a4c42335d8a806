package ingest

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// sendFrom is roundTrip from the local address ip.
func sendFrom(t *testing.T, ip, addr string, raw []byte) []byte {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(raw); err != nil {
		t.Fatal(err)
	}
	_, p, err := zbx.NewReader(c, zbx.ReaderOptions{Timeout: 5 * time.Second}).ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), p...)
}

// TestTrapperHosts: values for items with allowed hosts are taken only
// from the addresses in the list (an address, a CIDR range, a macro
// expanded for the item's host) and count as failed from any other, as
// 6.0.14 answered zabbix_sender -I (recorded: "processed: 0; failed: 1"
// from 127.0.0.1 for an item allowing 127.0.0.2); items without a list
// take values from anyone.
func TestTrapperHosts(t *testing.T) {
	spec := catalog.Spec{Hosts: []catalog.HostSpec{{
		Host: "traps", Groups: []string{"G"},
		Interfaces: []catalog.InterfaceSpec{{IP: "127.0.0.2"}},
		Macros:     []catalog.MacroSpec{{Macro: "{$T}", Value: "127.0.0.0/31"}},
		Items: []catalog.ItemSpec{
			{Key: "ip", ValueType: "unsigned", TrapperHosts: "127.0.0.2"},
			{Key: "ip6", ValueType: "unsigned", TrapperHosts: "::1, 127.0.0.2/32"},
			{Key: "conn", ValueType: "unsigned", TrapperHosts: "{HOST.IP}"},
			{Key: "macro", ValueType: "unsigned", TrapperHosts: "{$T}"},
			{Key: "any", ValueType: "unsigned"},
		},
	}}}
	ts := startTrapper(t, spec, nil)
	row := func(key string) string { return `{"host":"traps","key":"` + key + `","value":"1"}` }
	frame := senderFrame(t, zbx.FlagProtocol, row("ip"), row("ip6"), row("conn"), row("macro"), row("any"))
	p, f, tot := infoCounts(t, sendFrom(t, "127.0.0.1", ts.addr, frame))
	if p != 2 || f != 3 || tot != 5 { // macro ({$T} holds 127.0.0.1) and any
		t.Fatalf("from 127.0.0.1: processed %d failed %d total %d, want 2/3/5", p, f, tot)
	}
	p, f, tot = infoCounts(t, sendFrom(t, "127.0.0.2", ts.addr, frame))
	if p != 4 || f != 1 || tot != 5 { // all but macro
		t.Fatalf("from 127.0.0.2: processed %d failed %d total %d, want 4/1/5", p, f, tot)
	}
	for key, want := range map[string]int{"ip": 1, "ip6": 1, "conn": 1, "macro": 1, "any": 2} {
		if got := len(ts.read(t, "traps", key)); got != want {
			t.Errorf("%s: %d values stored, want %d", key, got, want)
		}
	}
	if got := ts.metric(t, `peregrine_trapper_values_failed_total{reason="host_not_allowed"}`); got != 4 {
		t.Errorf(`failed{reason="host_not_allowed"} = %v, want 4`, got)
	}
}

// TestPeerMatches: addresses, ranges and a DNS name's addresses.
func TestPeerMatches(t *testing.T) {
	peers, err := catalog.ParseTrapPeers("10.1.0.0/16, localhost, ::1", false)
	if err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[string]bool{"10.1.2.3": true, "10.2.0.1": false, "127.0.0.1": true, "127.0.0.200": false, "127.0.1.1": false, "::1": true} {
		got := false
		for _, p := range peers {
			got = got || peerMatches(p, netip.MustParseAddr(addr))
		}
		if got != want {
			t.Errorf("%s: %v, want %v", addr, got, want)
		}
	}
}
