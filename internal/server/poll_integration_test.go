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
		// Hourly: its first check is up to an hour away; task.create
		// "check now" brings it at once.
		{Key: "agent.version", Type: "zabbix_agent", ValueType: "character", Delay: "1h"},
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
	var rows []map[string]any
	c.ok("item.get", map[string]any{"itemids": []string{id("no.such.key"), id("agent.ping")}, "output": []string{"itemid", "state", "error"}, "sortfield": "itemid"}, &rows)
	for _, r := range rows {
		switch r["itemid"] {
		case id("no.such.key"):
			if r["state"] != "1" || !strings.Contains(r["error"].(string), "Unsupported item key") {
				t.Fatalf("item.get of the unsupported item: %v", r)
			}
		case id("agent.ping"):
			if r["state"] != "0" || r["error"] != "" {
				t.Fatalf("item.get of agent.ping: %v", r)
			}
		}
	}
	// Check now (task.create type 6): the hourly item is checked at once
	// (unless its spread put its first check in these seconds anyway).
	c.ok("task.create", []map[string]any{{"type": 6, "request": map[string]any{"itemid": id("agent.version")}}}, nil)
	end = time.Now().Add(10 * time.Second)
	for len(read("agent.version", 1)) == 0 {
		if time.Now().After(end) {
			t.Fatal("no value of agent.version 10 s after task.create check now")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if v := read("agent.version", 1)[0]["value"]; !strings.HasPrefix(v, "6.") {
		t.Fatalf("agent.version = %q", v)
	}
	if a, _ := s.Runtime.Availability(ifaceID); a.Available != 1 || a.Error != "" {
		t.Fatalf("agent interface %+v; want available", a)
	}
}
