package server

import (
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestIntegrationTrapperHosts sends with the real zabbix_sender from
// 127.0.0.1 and from 127.0.0.2 (-I) to items with allowed hosts. As
// 6.0.14 answered the same sends (recorded: an item allowing 127.0.0.2
// gave "processed: 0; failed: 1" from 127.0.0.1 and "processed: 1;
// failed: 0" from 127.0.0.2), a value from an address not in the list is
// not stored and counts as failed.
func TestIntegrationTrapperHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs the real zabbix_sender")
	}
	testutil.Need(t, "zabbix_sender", "zabbix-agent")
	spec := catalog.Spec{Hosts: []catalog.HostSpec{{
		Host: "traps", Groups: []string{"Integration"},
		Interfaces: []catalog.InterfaceSpec{{IP: "127.0.0.2"}},
		Macros:     []catalog.MacroSpec{{Macro: "{$TRAPPERS}", Value: "127.0.0.2"}},
		Items: []catalog.ItemSpec{
			{Key: "t.ip", ValueType: "unsigned", TrapperHosts: "127.0.0.2"},
			{Key: "t.cidr", ValueType: "unsigned", TrapperHosts: "10.0.0.0/8, 127.0.0.2/31"},
			{Key: "t.conn", ValueType: "unsigned", TrapperHosts: "{HOST.CONN}"},
			{Key: "t.macro", ValueType: "unsigned", TrapperHosts: "{$TRAPPERS}"},
			{Key: "t.dns", ValueType: "unsigned", TrapperHosts: "localhost"},
			{Key: "t.any", ValueType: "unsigned"},
		},
	}}}
	s := startServer(t, spec)
	addr := s.TrapperAddr().String()
	for _, tc := range []struct {
		key          string
		from1, from2 bool // stored when sent from 127.0.0.1, from 127.0.0.2
	}{
		{"t.ip", false, true},
		{"t.cidr", false, true},
		{"t.conn", false, true},
		{"t.macro", false, true},
		{"t.dns", true, false},
		{"t.any", true, true},
	} {
		want := 0
		for _, src := range []struct {
			ip string
			ok bool
		}{{"127.0.0.1", tc.from1}, {"127.0.0.2", tc.from2}} {
			r := testutil.RunSender(t, addr, "-I", src.ip, "-s", "traps", "-k", tc.key, "-o", "1")
			processed, failed := 0, 1
			if src.ok {
				processed, failed = 1, 0
				want++
			}
			if r.Processed != processed || r.Failed != failed || r.Total != 1 {
				t.Errorf("%s from %s: %+v, want processed %d failed %d", tc.key, src.ip, r, processed, failed)
			}
		}
		if got := len(s.readItem(t, "traps", tc.key)); got != want {
			t.Errorf("%s: %d values stored, want %d", tc.key, got, want)
		}
	}
}
