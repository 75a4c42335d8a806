package migrate_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/migrate"
)

// ownHost is the host whose own items, triggers, graphs, discovery rule
// and web scenario the test makes on the peer (fillHostParts).
const ownHost = prefix + "-host-000"

// fillHostParts makes on the peer, on ownHost itself (not from a
// template): items of several types with preprocessing, a dependent
// item, a value map's item, triggers (one depending on another, one over
// two items), a graph, a discovery rule with item and trigger
// prototypes, a web scenario, and an action with a condition on one of
// the triggers.
func fillHostParts(t *testing.T, c *migrate.Client, hostID, mediaType, userGroup string) {
	var ifs []map[string]any
	if err := c.Call(t.Context(), "hostinterface.get", map[string]any{"hostids": hostID, "output": "extend", "filter": map[string]any{"type": 1}}, &ifs); err != nil || len(ifs) == 0 {
		t.Fatalf("the host's agent interface: %v", err)
	}
	iface := ifs[0]["interfaceid"]
	var vms []map[string]any
	if err := c.Call(t.Context(), "valuemap.get", map[string]any{"hostids": hostID, "output": []string{"valuemapid"}}, &vms); err != nil || len(vms) == 0 {
		t.Fatalf("the host's value map: %v", err)
	}
	items := ids(call(t, c, "item.create", []any{
		map[string]any{"hostid": hostID, "name": "own trap", "key_": "migrate.own.trap", "type": 2, "value_type": 0, "units": "B",
			"description": "a trapper item of the host's own", "history": "7d", "trends": "30d",
			"tags":          []any{map[string]any{"tag": "own", "value": "yes"}},
			"preprocessing": []any{map[string]any{"type": 1, "params": "8", "error_handler": 0, "error_handler_params": ""}}},
		map[string]any{"hostid": hostID, "name": "own json", "key_": "migrate.own.json", "type": 2, "value_type": 4, "trends": "0"},
		map[string]any{"hostid": hostID, "name": "own agent", "key_": "agent.ping", "type": 0, "value_type": 3, "interfaceid": iface,
			"delay": "5m", "valuemapid": vms[0]["valuemapid"]},
		map[string]any{"hostid": hostID, "name": "own service", "key_": "net.tcp.service[ssh,,22]", "type": 3, "value_type": 3, "delay": "10m", "interfaceid": iface},
		map[string]any{"hostid": hostID, "name": "own calculated", "key_": "migrate.own.calc", "type": 15, "value_type": 0, "delay": "1m",
			"params": "last(//migrate.own.trap)*2"},
	}), "itemids")
	call(t, c, "item.create", map[string]any{"hostid": hostID, "name": "own dependent", "key_": "migrate.own.dep", "type": 18, "value_type": 3,
		"master_itemid": items[1], "preprocessing": []any{
			map[string]any{"type": 12, "params": "$.count", "error_handler": 2, "error_handler_params": "0"},
			map[string]any{"type": 20, "params": "1h", "error_handler": 0, "error_handler_params": ""}}})
	trig := ids(call(t, c, "trigger.create", []any{
		map[string]any{"description": "migrate own trap high", "expression": "last(/" + ownHost + "/migrate.own.trap)>100", "priority": 3,
			"tags": []any{map[string]any{"tag": "scope", "value": "capacity"}}, "comments": "too high"},
		map[string]any{"description": "migrate own dep low", "expression": "last(/" + ownHost + "/migrate.own.dep)<1", "priority": 2,
			"recovery_mode": 1, "recovery_expression": "last(/" + ownHost + "/migrate.own.dep)>5"},
		map[string]any{"description": "migrate own pair", "expression": "last(/" + ownHost + "/migrate.own.trap)>1 and last(/" + ownHost + "/migrate.own.calc)>1",
			"manual_close": 1},
	}), "triggerids")
	call(t, c, "trigger.adddependencies", map[string]any{"triggerid": trig[1], "dependsOnTriggerid": trig[0]})
	call(t, c, "graph.create", map[string]any{"name": "migrate own graph", "width": 900, "height": 200, "gitems": []any{
		map[string]any{"itemid": items[0], "color": "1A7C11", "sortorder": 0},
		map[string]any{"itemid": items[4], "color": "F63100", "sortorder": 1, "drawtype": 2}}})
	rule := ids(call(t, c, "discoveryrule.create", map[string]any{"hostid": hostID, "name": "own discovery", "key_": "migrate.own.lld",
		"type": 2, "lifetime": "7d", "filter": map[string]any{"evaltype": 0, "conditions": []any{
			map[string]any{"macro": "{#NAME}", "value": "^sd", "operator": 8}}}}), "itemids")[0]
	call(t, c, "itemprototype.create", map[string]any{"hostid": hostID, "ruleid": rule, "name": "own disk {#NAME}",
		"key_": "migrate.own.disk[{#NAME}]", "type": 2, "value_type": 0, "units": "%"})
	call(t, c, "triggerprototype.create", map[string]any{"description": "migrate disk {#NAME} full", "priority": 4,
		"expression": "last(/" + ownHost + "/migrate.own.disk[{#NAME}])>95"})
	call(t, c, "httptest.create", map[string]any{"hostid": hostID, "name": "migrate own web", "delay": "1h", "retries": 2,
		"agent": "Zabbix", "steps": []any{map[string]any{"name": "front", "no": 1, "url": "http://127.0.0.1:1/", "status_codes": "200",
			"timeout": "5s", "required": "ok"}}})
	call(t, c, "action.create", map[string]any{"name": prefix + "-trigger-action", "eventsource": 0, "esc_period": "1h",
		"filter": map[string]any{"evaltype": 0, "conditions": []any{
			map[string]any{"conditiontype": 2, "operator": 0, "value": trig[0]}}},
		"operations": []any{map[string]any{"operationtype": 0, "esc_step_from": 1, "esc_step_to": 1,
			"opmessage":     map[string]any{"default_msg": 1, "mediatypeid": mediaType},
			"opmessage_grp": []any{map[string]any{"usrgrpid": userGroup}}}}})
}

// compareHostParts compares what ownHost holds of its own through both
// APIs, member by member after normalise, as compareObjects compares the
// other kinds: each object is named by its name or key (a trigger by
// its description), and references are named too (a trigger's
// dependencies and items, a graph's items by key).
func compareHostParts(t *testing.T, src, tgt *migrate.Client) {
	kinds := []struct {
		api, name string
		get       map[string]any
	}{
		{"item", "key_", map[string]any{"selectPreprocessing": "extend", "selectTags": "extend", "selectValueMap": []string{"name"}}},
		{"trigger", "description", map[string]any{"selectDependencies": []string{"description"}, "selectTags": "extend", "selectItems": []string{"key_"},
			"expandExpression": true}},
		{"graph", "name", map[string]any{"selectGraphItems": "extend"}},
		{"discoveryrule", "key_", map[string]any{"selectFilter": "extend"}},
		{"itemprototype", "key_", nil},
		{"triggerprototype", "description", map[string]any{"expandExpression": true}},
		{"httptest", "name", map[string]any{"selectSteps": "extend"}},
	}
	hostID := func(c *migrate.Client) string {
		var rows []map[string]any
		if err := c.Call(t.Context(), "host.get", map[string]any{"output": []string{"hostid"}, "filter": map[string]any{"host": ownHost}}, &rows); err != nil || len(rows) != 1 {
			t.Fatalf("host %s: %v", ownHost, err)
		}
		return rows[0]["hostid"].(string)
	}
	hids := map[*migrate.Client]string{src: hostID(src), tgt: hostID(tgt)}
	if f := os.Getenv("MIGRATE_RECORD_EXPORT"); f != "" {
		// The peer's export of the host, for the catalog's tests
		// (internal/catalog/testdata/export_host/).
		var doc string
		if err := src.Call(t.Context(), "configuration.export", map[string]any{"format": "yaml", "options": map[string]any{"hosts": []string{hids[src]}}}, &doc); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range kinds {
		get := func(c *migrate.Client) map[string]map[string]any {
			p := map[string]any{"output": "extend", "hostids": hids[c], "inherited": false}
			for a, b := range k.get {
				p[a] = b
			}
			var rows []map[string]any
			if err := c.Call(t.Context(), k.api+".get", p, &rows); err != nil {
				t.Errorf("%s.get: %v", k.api, err)
			}
			keys := map[string]string{} // item ID -> key, for graph items
			if k.api == "graph" {
				var items []map[string]any
				_ = c.Call(t.Context(), "item.get", map[string]any{"output": []string{"itemid", "key_"}, "hostids": hids[c]}, &items)
				for _, it := range items {
					keys[it["itemid"].(string)] = it["key_"].(string)
				}
			}
			out := map[string]map[string]any{}
			for _, r := range rows {
				if k.api == "graph" {
					for _, gi := range r["gitems"].([]any) {
						m := gi.(map[string]any)
						m["key"] = keys[m["itemid"].(string)]
					}
				}
				out[r[k.name].(string)] = normalise(r).(map[string]any)
			}
			return out
		}
		a, b := get(src), get(tgt)
		if len(a) == 0 {
			t.Errorf("%s: the peer's host has none of its own", k.api)
		}
		total, same := 0, 0
		for name, x := range a {
			total++
			y, ok := b[name]
			if !ok {
				t.Errorf("%s %q: on the peer's host, not on Peregrine's", k.api, name)
				continue
			}
			eq := true
			for f, v := range x {
				w, ok := y[f]
				if _, known := knownHostPartDifferences[k.api+"."+f]; known {
					continue
				}
				if !ok {
					t.Logf("%s %q: only the peer returns %s", k.api, name, f)
					continue
				}
				if fmt.Sprint(v) != fmt.Sprint(w) {
					t.Errorf("%s %q: %s differs: peer %s | Peregrine %s", k.api, name, f, clip(fmt.Sprint(v)), clip(fmt.Sprint(w)))
					eq = false
				}
			}
			if eq {
				same++
			}
		}
		for name := range b {
			if _, ok := a[name]; !ok {
				t.Errorf("%s %q: on Peregrine's host, not on the peer's", k.api, name)
			}
		}
		t.Logf("host contents: %s: %d compared, %d equal in every member both return", k.api, total, same)
	}
}

// knownHostPartDifferences are members of a host's contents that are
// each server's own state, not configuration.
var knownHostPartDifferences = map[string]string{
	"item.lastclock": "state", "item.lastvalue": "state", "item.prevvalue": "state", "item.lastns": "state", "item.state": "state",
	"item.error": "state", "discoveryrule.state": "state", "discoveryrule.error": "state", "trigger.value": "state",
	"trigger.lastchange": "state", "trigger.state": "state", "trigger.error": "state", "httptest.nextcheck": "state",
	// Peregrine keeps an item's timeout empty when none was given (the
	// server's default applies), where 6.0 stores and returns its
	// default "3s": the same meaning, and neither export writes it.
	"item.timeout": "the default timeout: empty on Peregrine, 3s on 6.0",
}

// checkTriggerAction: the action's trigger condition names, on both
// sides, the trigger of the same host and description.
func checkTriggerAction(t *testing.T, src, tgt *migrate.Client) {
	for _, c := range []*migrate.Client{src, tgt} {
		var acts []map[string]any
		if err := c.Call(t.Context(), "action.get", map[string]any{"output": []string{"name"}, "selectFilter": "extend",
			"filter": map[string]any{"name": prefix + "-trigger-action"}}, &acts); err != nil || len(acts) != 1 {
			t.Errorf("action %s-trigger-action: %v (%d)", prefix, err, len(acts))
			continue
		}
		conds := acts[0]["filter"].(map[string]any)["conditions"].([]any)
		id := conds[0].(map[string]any)["value"]
		var trs []map[string]any
		_ = c.Call(t.Context(), "trigger.get", map[string]any{"triggerids": id, "output": []string{"description"}, "selectHosts": []string{"host"}}, &trs)
		if len(trs) != 1 || trs[0]["description"] != "migrate own trap high" || len(trs[0]["hosts"].([]any)) != 1 ||
			trs[0]["hosts"].([]any)[0].(map[string]any)["host"] != ownHost {
			t.Errorf("the action's trigger condition names %v", trs)
		}
	}
}
