package server

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

type commandAlert struct {
	AlertID, AlertType, Status, Error, Message, Output, HostID string
	EscStep                                                    string `json:"esc_step"`
}

// waitCommandAlerts polls alert.get until n command alerts of the
// action are final (executed or failed).
func waitCommandAlerts(t *testing.T, c *apiClient, actionID string, n int) []commandAlert {
	t.Helper()
	var alerts []commandAlert
	for i := 0; ; i++ {
		c.ok("alert.get", map[string]any{"output": "extend", "actionids": actionID, "sortfield": "alertid"}, &alerts)
		final := 0
		for _, a := range alerts {
			if a.Status == "1" || a.Status == "2" {
				final++
			}
		}
		if final >= n {
			return alerts
		}
		if i == 1000 {
			t.Fatalf("alert.get after 20 s: %+v, want %d final command alerts", alerts, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestScriptsAndServerCommands: script.create/get/update/delete with
// Zabbix's fields and refusals; an action's remote command runs on the
// server through /bin/sh with the target host's and the event's macros
// and is recorded in alert.get (alerttype 1, output); script.execute
// runs a manual host script for a user with the needed permission and
// refuses the others.
func TestScriptsAndServerCommands(t *testing.T) {
	s, _ := runServer(t, testConfig(t, catalog.Spec{}))
	admin := adminLogin(t, s)
	var g struct{ GroupIDs []string }
	admin.ok("hostgroup.create", map[string]any{"name": "Web"}, &g)
	var h struct{ HostIDs []string }
	admin.ok("host.create", map[string]any{"host": "web-1", "groups": []map[string]string{{"groupid": g.GroupIDs[0]}}}, &h)
	admin.ok("item.create", map[string]any{"name": "Load", "key_": "load", "hostid": h.HostIDs[0], "type": 2, "value_type": 3}, nil)
	admin.ok("trigger.create", map[string]any{"description": "Load high", "expression": "last(/web-1/load)>10", "priority": 4}, nil)
	var g2 struct{ GroupIDs []string }
	admin.ok("hostgroup.create", map[string]any{"name": "Web 2"}, &g2)
	var h2 struct{ HostIDs []string }
	admin.ok("host.create", map[string]any{"host": "web-2", "groups": []map[string]string{{"groupid": g2.GroupIDs[0]}}}, &h2)

	mark := filepath.Join(t.TempDir(), "ran")
	var sc struct{ ScriptIDs []string }
	admin.ok("script.create", []map[string]any{
		{"name": "Restart", "type": "0", "scope": "1", "execute_on": "1", "command": "echo ran on {HOST.HOST} for {EVENT.NAME} | tee -a " + mark},
		{"name": "Uptime", "type": 0, "scope": 2, "execute_on": 1, "command": "echo up {HOST.NAME}", "host_access": 2},
		{"name": "Reboot", "type": 0, "scope": 2, "execute_on": 1, "command": "echo rebooting", "host_access": 3},
		{"name": "Event echo", "type": 0, "scope": 4, "execute_on": 2, "command": "echo event on {HOST.HOST}"},
	}, &sc)
	if len(sc.ScriptIDs) != 4 {
		t.Fatalf("script.create: %+v", sc)
	}
	for _, c := range []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{"name": "Restart", "type": 0, "command": "x"}, `Script "Restart" already exists.`},
		{map[string]any{"name": "SSH", "type": 2, "command": "x"}, "only scripts of type 0 (script) and 5 (webhook) are supported"},
		{map[string]any{"name": "Empty", "type": 0, "command": " "}, `Invalid parameter "/1/command": cannot be empty.`},
		{map[string]any{"name": "Scope", "type": 0, "command": "x", "scope": 3}, `Invalid parameter "/1/scope": value must be one of 1, 2, 4.`},
		{map[string]any{"name": "On", "type": 0, "command": "x", "execute_on": 5}, `Invalid parameter "/1/execute_on": value must be one of 0, 1, 2.`},
		{map[string]any{"name": "Grp", "type": 0, "command": "x", "groupid": 999}, `Invalid parameter "/1/groupid": No permissions`},
		{map[string]any{"name": "X", "type": 0}, `Invalid parameter "/1": the parameter "command" is missing.`},
	} {
		admin.fails("script.create", c.params, -32602, c.want)
	}
	admin.ok("script.update", map[string]any{"scriptid": sc.ScriptIDs[1], "description": "how long"}, nil)
	var got []map[string]any
	admin.ok("script.get", map[string]any{"output": "extend", "scriptids": sc.ScriptIDs[1]}, &got)
	if len(got) != 1 || got[0]["description"] != "how long" || got[0]["command"] != "echo up {HOST.NAME}" || got[0]["scope"] != "2" || got[0]["execute_on"] != "1" {
		t.Fatalf("script.get: %v", got)
	}

	var act struct{ ActionIDs []string }
	cmdOp := map[string]any{"operationtype": 1, "opcommand": map[string]any{"scriptid": sc.ScriptIDs[0]}, "opcommand_hst": []map[string]any{{"hostid": 0}},
		"opcommand_grp": []map[string]any{{"groupid": g2.GroupIDs[0]}}}
	admin.fails("action.create", map[string]any{"name": "Manual", "eventsource": 0, "operations": []any{map[string]any{"operationtype": 1,
		"opcommand": map[string]any{"scriptid": sc.ScriptIDs[1]}, "opcommand_hst": []map[string]any{{"hostid": 0}}}}}, -32602, "is not for action operations")
	admin.fails("action.create", map[string]any{"name": "Nowhere", "eventsource": 0, "operations": []any{map[string]any{"operationtype": 1,
		"opcommand": map[string]any{"scriptid": sc.ScriptIDs[0]}}}}, -32602, "No targets specified for action operation global script.")
	admin.ok("action.create", map[string]any{"name": "Fix", "eventsource": 0, "operations": []any{cmdOp}}, &act)
	var acts []struct{ Operations []map[string]any }
	admin.ok("action.get", map[string]any{"actionids": act.ActionIDs, "selectOperations": "extend"}, &acts)
	if len(acts) != 1 || acts[0].Operations[0]["operationtype"] != "1" || acts[0].Operations[0]["opcommand"].(map[string]any)["scriptid"] != sc.ScriptIDs[0] {
		t.Fatalf("action.get: %+v", acts)
	}
	admin.fails("script.delete", []string{sc.ScriptIDs[0]}, -32500, `Script "Restart" is used in action operation "Fix".`)

	admin.ok("history.push", map[string]any{"host": "web-1", "key": "load", "value": 42}, nil)
	// One command per target host: the event's (hostid 0) and the host
	// of the group, each with its own host macros.
	alerts := waitCommandAlerts(t, admin, act.ActionIDs[0], 2)
	if len(alerts) != 2 {
		t.Fatalf("command alerts: %+v", alerts)
	}
	for i, want := range []struct{ host, name string }{{h.HostIDs[0], "web-1"}, {h2.HostIDs[0], "web-2"}} {
		a := alerts[i]
		if a.AlertType != "1" || a.Status != "1" || a.HostID != want.host || a.Output != "ran on "+want.name+" for Load high" ||
			a.Message != "echo ran on "+want.name+" for Load high | tee -a "+mark || a.EscStep != "1" {
			t.Fatalf("command alert for %s: %+v", want.name, a)
		}
	}
	b, err := os.ReadFile(mark)
	if lines := strings.Split(strings.TrimSpace(string(b)), "\n"); err != nil || len(lines) != 2 {
		t.Fatalf("the commands' file: %q, %v", b, err)
	}

	// script.execute: a user who reads the host runs the read script and
	// not the write one; a user who cannot read the host runs nothing.
	var readers, nobody struct{ UsrgrpIDs []string }
	admin.ok("usergroup.create", map[string]any{"name": "Readers", "rights": []map[string]any{{"id": g.GroupIDs[0], "permission": 2}}}, &readers)
	admin.ok("usergroup.create", map[string]any{"name": "Nobody"}, &nobody)
	admin.ok("user.create", []map[string]any{
		{"username": "reader", "passwd": "R3ader-secret", "roleid": 1, "usrgrps": []map[string]string{{"usrgrpid": readers.UsrgrpIDs[0]}}},
		{"username": "outsider", "passwd": "0utsider-secret", "roleid": 1, "usrgrps": []map[string]string{{"usrgrpid": nobody.UsrgrpIDs[0]}}},
	}, nil)
	login := func(user, pw string) *apiClient {
		c := newAPIClient(t, s)
		c.auth = c.login(user, pw)
		return c
	}
	reader, outsider := login("reader", "R3ader-secret"), login("outsider", "0utsider-secret")
	var res struct{ Response, Value string }
	reader.ok("script.execute", map[string]any{"scriptid": sc.ScriptIDs[1], "hostid": h.HostIDs[0]}, &res)
	if res.Response != "success" || res.Value != "up web-1" {
		t.Fatalf("script.execute: %+v", res)
	}
	reader.fails("script.execute", map[string]any{"scriptid": sc.ScriptIDs[2], "hostid": h.HostIDs[0]}, -32500, "write permission on the host is required")
	reader.fails("script.execute", map[string]any{"scriptid": sc.ScriptIDs[0], "hostid": h.HostIDs[0]}, -32500, "not a manual host action script")
	outsider.fails("script.execute", map[string]any{"scriptid": sc.ScriptIDs[1], "hostid": h.HostIDs[0]}, -32500, "No permissions to referred object")
	outsider.fails("script.create", map[string]any{"name": "Mine", "type": 0, "command": "id"}, -32602, `No permissions to call "script.create".`)
	admin.ok("script.execute", map[string]any{"scriptid": sc.ScriptIDs[2], "hostid": h.HostIDs[0]}, &res)
	if res.Value != "rebooting" {
		t.Fatalf("script.execute as super admin: %+v", res)
	}
	// A manual event script runs for the event's host.
	var probs []struct{ EventID string }
	admin.ok("problem.get", map[string]any{"output": "extend"}, &probs)
	if len(probs) != 1 {
		t.Fatalf("problem.get: %+v", probs)
	}
	reader.ok("script.execute", map[string]any{"scriptid": sc.ScriptIDs[3], "eventid": probs[0].EventID}, &res)
	if res.Value != "event on web-1" {
		t.Fatalf("script.execute with an event: %+v", res)
	}
	reader.fails("script.execute", map[string]any{"scriptid": sc.ScriptIDs[3], "hostid": h.HostIDs[0]}, -32500, "not a manual host action script")
	outsider.fails("script.execute", map[string]any{"scriptid": sc.ScriptIDs[3], "eventid": probs[0].EventID}, -32500, "No permissions to referred object")

	admin.ok("action.delete", act.ActionIDs, nil)
	admin.ok("script.delete", sc.ScriptIDs, nil)
	admin.ok("script.get", map[string]any{"scriptids": sc.ScriptIDs}, &got)
	if len(got) != 0 {
		t.Fatalf("scripts left: %v", got)
	}
}

// TestIntegrationRemoteCommandOnAgent: an action's remote command runs
// through the real zabbix_agentd as system.run (AllowKey=system.run[*])
// and its output is recorded; on an agent that does not allow
// system.run (the default) the command fails with the agent's refusal;
// script.execute runs a manual host script on the agent.
func TestIntegrationRemoteCommandOnAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs the real zabbix_agentd")
	}
	allowed := testutil.StartAgentd(t, "AllowKey=system.run[*]")
	denied := testutil.StartAgentd(t)
	s, _ := runServer(t, testConfig(t, catalog.Spec{}))
	admin := adminLogin(t, s)
	var g struct{ GroupIDs []string }
	admin.ok("hostgroup.create", map[string]any{"name": "Agents"}, &g)
	hostWith := func(name, addr string) string {
		ip, port, _ := net.SplitHostPort(addr)
		var h struct{ HostIDs []string }
		admin.ok("host.create", map[string]any{"host": name, "groups": []map[string]string{{"groupid": g.GroupIDs[0]}},
			"interfaces": []map[string]any{{"type": 1, "main": 1, "useip": 1, "ip": ip, "dns": "", "port": port}}}, &h)
		admin.ok("item.create", map[string]any{"name": "Load", "key_": "load", "hostid": h.HostIDs[0], "type": 2, "value_type": 3}, nil)
		return h.HostIDs[0]
	}
	okHost, deniedHost := hostWith("open-1", allowed), hostWith("closed-1", denied)
	admin.ok("trigger.create", map[string]any{"description": "Load high on {HOST.HOST}", "expression": "last(/open-1/load)>10", "priority": 4}, nil)
	var sc struct{ ScriptIDs []string }
	admin.ok("script.create", []map[string]any{
		{"name": "Agent echo", "type": 0, "scope": 1, "execute_on": 0, "command": `echo "agent says {HOST.HOST}: {EVENT.NAME}"`},
		{"name": "Agent uname", "type": 0, "scope": 2, "execute_on": 0, "command": "echo manual on {HOST.HOST}"},
	}, &sc)
	var act struct{ ActionIDs []string }
	admin.ok("action.create", map[string]any{"name": "Agent fix", "eventsource": 0, "operations": []any{map[string]any{"operationtype": 1,
		"opcommand": map[string]any{"scriptid": sc.ScriptIDs[0]}, "opcommand_hst": []map[string]any{{"hostid": 0}, {"hostid": deniedHost}}}}}, &act)

	admin.ok("history.push", map[string]any{"host": "open-1", "key": "load", "value": 42}, nil)
	alerts := waitCommandAlerts(t, admin, act.ActionIDs[0], 2)
	byHost := map[string]commandAlert{}
	for _, a := range alerts {
		byHost[a.HostID] = a
	}
	if a := byHost[okHost]; a.Status != "1" || a.Output != "agent says open-1: Load high on open-1" || a.AlertType != "1" {
		t.Fatalf("command on the allowing agent: %+v", a)
	}
	// zabbix_agentd 6.0 answers "Unsupported item key." for a denied
	// system.run; the alert fails with it and says what to allow.
	if a := byHost[deniedHost]; a.Status != "2" || !strings.Contains(a.Error, "Unsupported item key") ||
		!strings.Contains(a.Error, "AllowKey=system.run[*]") || a.Output != "" {
		t.Fatalf("command on the denying agent: %+v", a)
	}
	var res struct{ Response, Value string }
	admin.ok("script.execute", map[string]any{"scriptid": sc.ScriptIDs[1], "hostid": okHost}, &res)
	if res.Value != "manual on open-1" {
		t.Fatalf("script.execute on the agent: %+v", res)
	}
	admin.fails("script.execute", map[string]any{"scriptid": sc.ScriptIDs[1], "hostid": deniedHost}, -32500, "Unsupported item key")
}

// TestGlobalScriptsDisabled: with alerts.enable_global_scripts false a
// server script is refused, with Zabbix's message, and does not run.
func TestGlobalScriptsDisabled(t *testing.T) {
	cfg := testConfig(t, catalog.Spec{})
	cfg.Alerts.EnableGlobalScripts = false
	s, _ := runServer(t, cfg)
	admin := adminLogin(t, s)
	var g struct{ GroupIDs []string }
	admin.ok("hostgroup.create", map[string]any{"name": "Web"}, &g)
	var h struct{ HostIDs []string }
	admin.ok("host.create", map[string]any{"host": "web-1", "groups": []map[string]string{{"groupid": g.GroupIDs[0]}}}, &h)
	mark := filepath.Join(t.TempDir(), "ran")
	var sc struct{ ScriptIDs []string }
	admin.ok("script.create", map[string]any{"name": "Touch", "type": 0, "scope": 2, "execute_on": 1, "command": "touch " + mark}, &sc)
	admin.fails("script.execute", map[string]any{"scriptid": sc.ScriptIDs[0], "hostid": h.HostIDs[0]}, -32500,
		"Global script execution on Zabbix server is disabled by server configuration.")
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("the refused script ran")
	}
}
