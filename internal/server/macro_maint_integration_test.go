package server

import (
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestIntegrationMacrosAndMaintenance drives a whole server through the
// API and the real zabbix_sender: a trigger whose threshold and name
// use a host macro raises a problem that a maintenance in effect
// suppresses (problem.get's suppressed filter); deleting the maintenance
// unsuppresses it; raising the macro through usermacro.update makes the
// next value resolve it, without a restart.
func TestIntegrationMacrosAndMaintenance(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs the real zabbix_sender")
	}
	testutil.Need(t, "zabbix_sender", "zabbix-agent")
	s, _ := runServer(t, testConfig(t, catalog.Spec{}))
	admin := adminLogin(t, s)
	var g struct{ GroupIDs []string }
	admin.ok("hostgroup.create", map[string]any{"name": "MM"}, &g)
	var h struct{ HostIDs []string }
	admin.ok("host.create", map[string]any{"host": "mm-host", "groups": []map[string]string{{"groupid": g.GroupIDs[0]}},
		"macros": []map[string]any{{"macro": "{$LIMIT}", "value": "10"}, {"macro": "{$TOKEN}", "value": "s3cret", "type": 1}}}, &h)
	admin.ok("item.create", map[string]any{"name": "load", "key_": "load", "hostid": h.HostIDs[0], "type": 2, "value_type": 0}, nil)
	admin.ok("trigger.create", map[string]any{"description": "Load over {$LIMIT} ({$TOKEN})", "expression": "last(/mm-host/load)>{$LIMIT}", "priority": 3}, nil)
	now := time.Now().Unix()
	var m struct{ MaintenanceIDs []string }
	admin.ok("maintenance.create", map[string]any{"name": "upgrade", "active_since": now - 3600, "active_till": now + 3600,
		"hosts":       []map[string]string{{"hostid": h.HostIDs[0]}},
		"timeperiods": []map[string]any{{"timeperiod_type": 0, "start_date": now - 600, "period": 3600}}}, &m)

	type problem struct{ EventID, Name, Suppressed string }
	problems := func(params map[string]any, want int) []problem {
		t.Helper()
		var ps []problem
		for i := 0; ; i++ {
			admin.ok("problem.get", params, &ps)
			if len(ps) == want {
				return ps
			}
			if i == 500 {
				t.Fatalf("problem.get %v: %d problems after 10 s, want %d: %+v", params, len(ps), want, ps)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	send := func(v string) {
		t.Helper()
		if r := testutil.RunSender(t, s.TrapperAddr().String(), "-s", "mm-host", "-k", "load", "-o", v); r.Processed != 1 {
			t.Fatalf("zabbix_sender: %+v", r)
		}
	}
	send("42")
	ps := problems(map[string]any{"output": "extend", "suppressed": true}, 1)
	if ps[0].Name != "Load over 10 (******)" || ps[0].Suppressed != "1" {
		t.Fatalf("problem %+v: want the host's threshold in the name, the secret masked, suppressed", ps[0])
	}
	problems(map[string]any{"output": "extend", "suppressed": false}, 0)

	admin.ok("maintenance.delete", m.MaintenanceIDs, nil)
	ps = problems(map[string]any{"output": "extend", "suppressed": false}, 1)
	if ps[0].Suppressed != "0" {
		t.Fatalf("after the maintenance was deleted: %+v", ps[0])
	}

	var macros []struct{ HostMacroID, Macro string }
	admin.ok("usermacro.get", map[string]any{"hostids": h.HostIDs, "filter": map[string]any{"macro": "{$LIMIT}"}}, &macros)
	if len(macros) != 1 {
		t.Fatalf("usermacro.get: %+v", macros)
	}
	admin.ok("usermacro.update", map[string]any{"hostmacroid": macros[0].HostMacroID, "value": "100"}, nil)
	send("50")
	problems(map[string]any{"output": "extend"}, 0)
}
