package api

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func (f *fixture) result(t *testing.T, method, params string) json.RawMessage {
	t.Helper()
	got := f.post(t, `{"jsonrpc":"2.0","method":"`+method+`","params":`+params+`,"id":1,"auth":"ro"}`)
	var resp struct {
		Result json.RawMessage
		Error  *struct{ Data string }
	}
	if err := json.Unmarshal([]byte(got), &resp); err != nil || resp.Error != nil {
		t.Fatalf("%s %s: %s", method, params, got)
	}
	return resp.Result
}

// TestGrafanaSequence replays the calls Grafana's Zabbix datasource makes
// and checks what it reads from each answer.
func TestGrafanaSequence(t *testing.T) {
	f := newFixture(t, 1000)
	var groups []map[string]string
	json.Unmarshal(f.result(t, "hostgroup.get", `{"output":["name"],"sortfield":"name","real_hosts":true}`), &groups)
	if len(groups) != 1 || groups[0]["name"] != "G" || groups[0]["groupid"] != "" {
		// output ["name"] returns name only (groupid is not in output).
		if len(groups) != 1 || groups[0]["name"] != "G" {
			t.Fatalf("hostgroup.get: %+v", groups)
		}
	}
	var full []map[string]any
	json.Unmarshal(f.result(t, "hostgroup.get", `{"output":"extend","with_hosts":true}`), &full)
	gid := full[0]["groupid"].(string)
	var hosts []map[string]any
	json.Unmarshal(f.result(t, "host.get", fmt.Sprintf(`{"output":["name","host"],"groupids":["%s"],"sortfield":"name","selectGroups":["name"]}`, gid)), &hosts)
	if len(hosts) != 1 || hosts[0]["host"] != "h1" || len(hosts[0]["groups"].([]any)) != 1 {
		t.Fatalf("host.get: %+v", hosts)
	}
	hid := f.cat.Snapshot().Host("h1").ID
	var items []map[string]any
	json.Unmarshal(f.result(t, "item.get", fmt.Sprintf(`{"output":["name","key_","value_type","hostid","status","state","units","valuemapid","delay"],"hostids":["%d"],"webitems":true,"filter":{"value_type":[0,3]},"selectHosts":["hostid","name"],"sortfield":"name"}`, hid)), &items)
	if len(items) != 3 {
		t.Fatalf("item.get numeric items: %+v", items)
	}
	for _, it := range items {
		if it["value_type"] != "0" && it["value_type"] != "3" || len(it["hosts"].([]any)) != 1 {
			t.Fatalf("item %+v", it)
		}
	}
	// search by key substring, countOutput, preservekeys.
	if got := string(f.result(t, "item.get", `{"search":{"key_":"F"},"countOutput":true}`)); got != `"2"` {
		t.Fatalf("search key_ count: %s", got)
	}
	var byID map[string]map[string]any
	json.Unmarshal(f.result(t, "item.get", fmt.Sprintf(`{"itemids":"%d","preservekeys":true,"output":["key_"]}`, f.id("u1"))), &byID)
	if byID[fmt.Sprint(f.id("u1"))]["key_"] != "u1" {
		t.Fatalf("preservekeys: %+v", byID)
	}
	// history.get ascending by clock for one float item, as the datasource asks.
	r := f.history(t, fmt.Sprintf(`{"output":"extend","history":0,"itemids":["%d"],"time_from":1000,"time_till":1010,"sortfield":"clock","sortorder":"ASC"}`, f.id("f1")))
	if len(r) != 6 || r[0].Clock != "1000" || r[0].Value != "0.5" {
		t.Fatalf("history.get: %+v", r)
	}
	// A bad sortfield names the parameter.
	got := f.post(t, `{"jsonrpc":"2.0","method":"host.get","params":{"sortfield":"color"},"id":1,"auth":"ro"}`)
	if !strings.Contains(got, `Invalid parameter \"/sortfield/1\"`) {
		t.Fatalf("bad sortfield: %s", got)
	}
}
