package server

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// activeAgentSpec is one host with active items: a ping, a log file and
// a key the agents do not know.
func activeAgentSpec(host, logFile string) catalog.Spec {
	return catalog.Spec{Hosts: []catalog.HostSpec{{
		Host: host, Groups: []string{"Agents"},
		Items: []catalog.ItemSpec{
			{Key: "agent.ping", Type: "zabbix_agent_active", ValueType: "unsigned", Delay: "1s"},
			{Key: "log[" + logFile + "]", Type: "zabbix_agent_active", ValueType: "log", Delay: "1s"},
			{Key: "no.such.key[a]", Type: "zabbix_agent_active", ValueType: "float", Delay: "1s"},
		},
	}}}
}

type historyRow struct {
	ItemID string `json:"itemid"`
	Clock  string `json:"clock"`
	NS     string `json:"ns"`
	Value  string `json:"value"`
}

// historyGet reads an item's values through the API, oldest first.
func historyGet(c *apiClient, itemID uint64, valueType int) []historyRow {
	c.t.Helper()
	var rows []historyRow
	c.ok("history.get", map[string]any{
		"history": valueType, "itemids": []string{strconv.FormatUint(itemID, 10)},
		"output": "extend", "sortfield": "clock", "sortorder": "ASC",
	}, &rows)
	return rows
}

// waitFor polls cond every 200 ms for up to 45 s; what() describes the
// state for the failure message.
func waitFor(t *testing.T, what func() string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out: %s", what())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func appendLines(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		if _, err := f.WriteString(l + "\n"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestIntegrationActiveAgents runs the real 6.0 zabbix_agentd and
// zabbix_agent2 in active mode against Peregrine: the values arrive
// (read back with history.get), the unknown key becomes not supported
// with the agent's message (item.get state 1 and error), host_metadata is
// kept, and the log item
// resumes without duplicates or gaps after an agent restart and after a
// server restart (lines appended while the agent was down are sent
// once).
func TestIntegrationActiveAgents(t *testing.T) {
	// Waits on agents' schedules, not the CPU: runs beside the other
	// waiting tests (CI time).
	t.Parallel()
	if testing.Short() {
		t.Skip("starts the real Zabbix agents")
	}
	for _, kind := range []testutil.AgentKind{testutil.Agentd, testutil.Agent2} {
		t.Run(string(kind), func(t *testing.T) { activeAgentFlow(t, kind) })
	}
}

func activeAgentFlow(t *testing.T, kind testutil.AgentKind) {
	host := strings.ReplaceAll(string(kind), "_", "-") + "-host"
	logFile := filepath.Join(t.TempDir(), "app.log")
	logKey := "log[" + logFile + "]"
	cfg := testConfig(t, activeAgentSpec(host, logFile))
	s, stopServer := runServer(t, cfg)
	snap := s.Catalog.Snapshot()
	pingID := snap.Lookup(host, "agent.ping").ID
	logID := snap.Lookup(host, logKey).ID
	nosuchID := snap.Lookup(host, "no.such.key[a]").ID
	c := adminLogin(t, s)

	appendLines(t, logFile, "line 1", "line 2", "line 3")
	agent := testutil.StartActiveAgent(t, kind, testutil.ActiveAgentOptions{
		ServerActive: s.TrapperAddr().String(), Hostname: host, HostMetadata: "Linux peregrine-it",
	})
	var logs []historyRow
	pings := 0
	state := func() string {
		return fmt.Sprintf("%d pings, log values %+v; agent log:\n%s", pings, logs, agent.Log())
	}
	poll := func() {
		logs = historyGet(c, logID, 2)
		pings = len(historyGet(c, pingID, 3))
	}
	// settle waits until the log has n values and the agent has sent two
	// more pings after that, so that a duplicate it was going to send has
	// been sent; then the log must hold exactly lines 1..n.
	settle := func(n int) {
		t.Helper()
		waitFor(t, state, func() bool { poll(); return len(logs) >= n })
		base := pings
		waitFor(t, state, func() bool { poll(); return pings >= base+2 })
		if len(logs) != n {
			t.Fatalf("log has %d values, want %d: %s", len(logs), n, state())
		}
		for i, r := range logs {
			if want := "line " + strconv.Itoa(i+1); r.Value != want {
				t.Fatalf("log value %d is %q, want %q: %s", i, r.Value, want, state())
			}
		}
	}
	settle(3)
	if info, ok := s.Trapper.ActiveAgent(host); !ok || info.HostMetadata != "Linux peregrine-it" || !info.Known {
		t.Errorf("agent info %+v, %v", info, ok)
	}
	waitFor(t, state, func() bool { st, _ := s.ItemStates.ItemState(nosuchID); return st.NotSupported && st.Error != "" })
	// item.get shows it as Zabbix does: state 1 and the agent's message.
	var items []struct{ State, Error string }
	c.ok("item.get", map[string]any{"itemids": []string{strconv.FormatUint(nosuchID, 10)}, "output": []string{"state", "error"}}, &items)
	if len(items) != 1 || items[0].State != "1" || !strings.Contains(strings.ToLower(items[0].Error), "no.such.key") && !strings.Contains(items[0].Error, "Unsupported item key") {
		t.Errorf("item.get of the unknown key: %+v", items)
	}

	// Agent restart: lines written while it is down are sent once.
	agent.Stop()
	appendLines(t, logFile, "line 4", "line 5")
	agent.Start()
	settle(5)

	// Server restart (and the agent with it): the position survives.
	agent.Stop()
	stopServer()
	appendLines(t, logFile, "line 6")
	s, _ = runServer(t, cfg)
	c = adminLogin(t, s)
	agent.SetServerActive(s.TrapperAddr().String())
	agent.Start()
	settle(6)
}

// TestActiveAgentDataReplayStoredOnce sends one captured-style "agent
// data" frame twice, as an agent that got no reply does: both are
// acknowledged, the values are stored once (read back with history.get).
func TestActiveAgentDataReplayStoredOnce(t *testing.T) {
	cfg := testConfig(t, activeAgentSpec("replay-host", "/tmp/replay.log"))
	s, _ := runServer(t, cfg)
	snap := s.Catalog.Snapshot()
	ping := snap.Lookup("replay-host", "agent.ping").ID
	logItem := snap.Lookup("replay-host", "log[/tmp/replay.log]").ID
	payload := fmt.Sprintf(`{"request":"agent data","data":[`+
		`{"id":1,"itemid":%d,"value":"1","clock":1700000000,"ns":1},`+
		`{"id":2,"itemid":%d,"lastlogsize":9,"mtime":0,"value":"line one","clock":1700000000,"ns":2}],`+
		`"session":"7ba6be5466f29422b9abea17e6ed54e4","host":"replay-host","version":"6.0"}`, ping, logItem)
	send := func() string {
		conn, err := net.Dial("tcp", s.TrapperAddr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// Compressed, as agent 2 sends it.
		frame := zbx.AppendFrame(nil, []byte(payload), zbx.FlagProtocol|zbx.FlagCompressed)
		if _, err := conn.Write(frame); err != nil {
			t.Fatal(err)
		}
		_, reply, err := zbx.NewReader(conn, zbx.ReaderOptions{Timeout: 5 * time.Second}).ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		return string(reply)
	}
	if r := send(); !strings.Contains(r, `"processed: 2; failed: 0; total: 2;`) {
		t.Fatalf("first copy: %s", r)
	}
	if r := send(); !strings.Contains(r, `"processed: 0; failed: 2; total: 2;`) {
		t.Fatalf("retransmission: %s", r)
	}
	c := adminLogin(t, s)
	if rows := historyGet(c, ping, 3); len(rows) != 1 {
		t.Fatalf("agent.ping stored %d times: %+v", len(rows), rows)
	}
	if rows := historyGet(c, logItem, 2); len(rows) != 1 || rows[0].Value != "line one" {
		t.Fatalf("log stored as %+v", rows)
	}
}
