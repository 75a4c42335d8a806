package server

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestIntegrationPassiveAgent polls the real zabbix_agentd 6.0 through a
// whole server: the host's agent interface points at the agent on a
// loopback port, values of agent.ping, system.cpu.load[all,avg1] and
// vfs.fs.size[/,pfree] are read back with history.get, and the unknown
// key's item is not supported with the agent's message.
func TestIntegrationPassiveAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs the real zabbix_agentd")
	}
	addr := testutil.StartAgentd(t)
	ip, port, _ := net.SplitHostPort(addr)
	items := []catalog.ItemSpec{
		{Key: "agent.ping", Type: "zabbix_agent", ValueType: "unsigned", Delay: "1s"},
		{Key: "system.cpu.load[all,avg1]", Type: "zabbix_agent", ValueType: "float", Delay: "1s"},
		{Key: "vfs.fs.size[/,pfree]", Type: "zabbix_agent", ValueType: "float", Delay: "1s"},
		{Key: "no.such.key", Type: "zabbix_agent", ValueType: "unsigned", Delay: "1s"},
	}
	s := startServer(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "agent-host", Groups: []string{"Agents"},
		Interfaces: []catalog.InterfaceSpec{{Type: "agent", IP: ip, Port: port}}, Items: items}}})
	c := adminLogin(t, s)
	snap := s.Catalog.Snapshot()
	id := func(key string) string { return strconv.FormatUint(snap.Lookup("agent-host", key).ID, 10) }

	read := func(key string, history int) []map[string]string {
		var rows []map[string]string
		c.ok("history.get", map[string]any{"history": history, "itemids": []string{id(key)}, "sortfield": "clock"}, &rows)
		return rows
	}
	unknown := snap.Lookup("agent-host", "no.such.key").ID
	ifaceID := snap.Host("agent-host").MainInterface(catalog.InterfaceAgent).ID
	end := time.Now().Add(20 * time.Second)
	for {
		// Values are readable before the poller's loop hears of their
		// checks (availability), and the unknown key may come later.
		st, _ := s.Runtime.ItemState(unknown)
		a, _ := s.Runtime.Availability(ifaceID)
		if len(read("agent.ping", 3)) > 0 && len(read("system.cpu.load[all,avg1]", 0)) > 0 && len(read("vfs.fs.size[/,pfree]", 0)) > 0 &&
			st.NotSupported && a.Available == 1 {
			break
		}
		if time.Now().After(end) {
			t.Fatal("after 20 s: not every supported item has a value, or the unknown key is not unsupported, or the interface is not available")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if v := read("agent.ping", 3)[0]["value"]; v != "1" {
		t.Fatalf("agent.ping = %q", v)
	}
	if f, err := strconv.ParseFloat(read("vfs.fs.size[/,pfree]", 0)[0]["value"], 64); err != nil || f <= 0 || f > 100 {
		t.Fatalf("vfs.fs.size[/,pfree] = %v %v; want a percentage", f, err)
	}
	if len(read("no.such.key", 3)) != 0 {
		t.Fatal("values stored for the unsupported key")
	}
	st, _ := s.Runtime.ItemState(unknown)
	if !st.NotSupported || !strings.Contains(st.Error, "Unsupported item key") {
		t.Fatalf("no.such.key state %+v", st)
	}
	// item.get's "state"/"error" read this Runtime (api.Options.States);
	// showing them is the API's part of issue 11.
	if a, _ := s.Runtime.Availability(ifaceID); a.Available != 1 || a.Error != "" {
		t.Fatalf("agent interface %+v; want available", a)
	}
}
