package api

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
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
// (pkg/zabbix/methods.go: groups, hosts, items, history) and checks
// what it reads from each answer, each step's IDs feeding the next.
func TestGrafanaSequence(t *testing.T) {
	f := newFixture(t, 1000)
	// Zabbix returns the object's ID with any output list (recorded from
	// Zabbix 6.0.14: hostgroup.get {"output":["name"]} gives groupid and
	// name): the datasource takes the groups' IDs from this answer.
	var groups []map[string]string
	json.Unmarshal(f.result(t, "hostgroup.get", `{"output":["name"],"sortfield":"name","real_hosts":true}`), &groups)
	if len(groups) != 1 || groups[0]["name"] != "G" || groups[0]["groupid"] == "" || len(groups[0]) != 2 {
		t.Fatalf("hostgroup.get: %+v", groups)
	}
	gid := groups[0]["groupid"]
	var hosts []map[string]any
	json.Unmarshal(f.result(t, "host.get", fmt.Sprintf(`{"output":["name","host"],"groupids":["%s"],"sortfield":"name"}`, gid)), &hosts)
	if len(hosts) != 1 || hosts[0]["host"] != "h1" || hosts[0]["hostid"] == nil {
		t.Fatalf("host.get: %+v", hosts)
	}
	hid := hosts[0]["hostid"].(string)
	// The backend's item.get, "applicationids" null (sent to every
	// version) and selectTags included.
	var items []map[string]any
	json.Unmarshal(f.result(t, "item.get", fmt.Sprintf(`{"output":["itemid","name","key_","value_type","hostid","status","state","units","valuemapid","delay"],"sortfield":"name","webitems":true,"filter":{"value_type":[0,3]},"selectHosts":["hostid","name"],"hostids":["%s"],"applicationids":null,"selectTags":"extend"}`, hid)), &items)
	if len(items) != 3 {
		t.Fatalf("item.get numeric items: %+v", items)
	}
	for _, it := range items {
		if it["value_type"] != "0" && it["value_type"] != "3" || len(it["hosts"].([]any)) != 1 || it["tags"] == nil {
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
	// trend.get with sortfield and sortorder, which 6.0 ignores.
	f.result(t, "trend.get", fmt.Sprintf(`{"output":"extend","itemids":["%d"],"time_from":0,"time_till":2000,"sortfield":"clock","sortorder":"ASC"}`, f.id("f1")))
	// A sortfield the method does not sort by: Zabbix 6.0's -32500.
	got := f.post(t, `{"jsonrpc":"2.0","method":"host.get","params":{"sortfield":"color"},"id":1,"auth":"ro"}`)
	if !strings.Contains(got, `"code":-32500`) || !strings.Contains(got, `Sorting by field \"color\" not allowed.`) {
		t.Fatalf("bad sortfield: %s", got)
	}
}

// TestGetUnknownParameters: the get methods Zabbix 6.0 kept from before
// its API input validator ignore a parameter they do not know; those it
// checks with the validator refuse it, naming it (recorded from Zabbix
// 6.0.14).
func TestGetUnknownParameters(t *testing.T) {
	f := newWriteFixture(t)
	for _, m := range []string{"hostgroup.get", "host.get", "item.get", "hostinterface.get", "usermacro.get", "template.get", "maintenance.get"} {
		for _, params := range []string{`{"xyz":1}`, `{"output":"extend","hostid":"1"}`, `{"OUTPUT":"extend"}`, `{"zz":1,"aa":2}`, `{"applicationids":null}`} {
			if _, e := f.call(t, "super", m, params); e != nil {
				t.Errorf("%s %s: %+v, want it ignored", m, params, e)
			}
		}
	}
	for _, m := range []string{"valuemap.get", "history.get"} {
		for _, c := range []struct{ params, name string }{
			{`{"xyz":1}`, "xyz"},
			{`{"output":"extend","hostid":"1"}`, "hostid"},
			{`{"OUTPUT":"extend"}`, "OUTPUT"},
			// The first unknown one in the request is named.
			{`{"zz":1,"aa":2}`, "zz"},
		} {
			_, e := f.call(t, "super", m, c.params)
			want := `Invalid parameter "/": unexpected parameter "` + c.name + `".`
			if e == nil || e.Code != -32602 || e.Data != want {
				t.Errorf("%s %s: got %+v, want -32602 %s", m, c.params, e, want)
			}
		}
		// "nopermissions" is removed from every call, as Zabbix's API does.
		if _, e := f.call(t, "super", m, `{"nopermissions":true}`); e != nil {
			t.Errorf("%s with nopermissions: %+v", m, e)
		}
	}
	// The parameters every get method shares are accepted.
	for _, m := range []string{"hostgroup.get", "host.get", "item.get"} {
		params := `{"output":"extend","filter":{},"search":{},"searchByAny":false,"startSearch":false,"excludeSearch":false,` +
			`"searchWildcardsEnabled":false,"sortfield":[],"sortorder":"ASC","limit":10,"countOutput":false,"preservekeys":false,"editable":false,"limitSelects":1}`
		if _, e := f.call(t, "super", m, params); e != nil {
			t.Errorf("%s with the common parameters: %+v", m, e)
		}
		if _, e := f.call(t, "super", m, `[]`); e != nil {
			t.Errorf("%s with [] (PHP's empty object): %+v", m, e)
		}
	}
}

// TestItemGetHostFilters checks item.get's "host" parameter and
// filter.host, both the technical host name, alone, together and with
// the other host selections.
func TestItemGetHostFilters(t *testing.T) {
	f := newWriteFixture(t)
	_, err := f.cat.Apply(context.Background(), catalog.Spec{Hosts: []catalog.HostSpec{
		{Host: "web-1", Name: "Web one", Groups: []string{"Web"}, Items: []catalog.ItemSpec{{Key: "a"}, {Key: "b"}}},
		{Host: "db-1", Groups: []string{"DB"}, Items: []catalog.ItemSpec{{Key: "a"}, {Key: "c"}, {Key: "d"}}},
		{Host: "db-2", Groups: []string{"DB", "Web"}, Items: []catalog.ItemSpec{{Key: "e"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	snap := f.cat.Snapshot()
	hid := func(h string) uint64 { return snap.Host(h).ID }
	keysOf := func(params string) string {
		t.Helper()
		var items []struct {
			Key    string `json:"key_"`
			HostID string `json:"hostid"`
		}
		if err := json.Unmarshal(f.ok(t, "item.get", params), &items); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, it := range items {
			out = append(out, it.Key)
		}
		sort.Strings(out)
		return strings.Join(out, ",")
	}
	for _, c := range []struct{ params, want string }{
		{`{"output":["key_"]}`, "a,a,b,c,d,e"},
		{`{"output":["key_"],"host":"db-1"}`, "a,c,d"},
		{`{"output":["key_"],"filter":{"host":"db-1"}}`, "a,c,d"},
		{`{"output":["key_"],"filter":{"host":["web-1","db-2"]}}`, "a,b,e"},
		// The visible name is not the host parameter.
		{`{"output":["key_"],"host":"Web one"}`, ""},
		{`{"output":["key_"],"host":"nope"}`, ""},
		{`{"output":["key_"],"filter":{"host":[]}}`, ""},
		{`{"output":["key_"],"filter":{"host":null}}`, "a,a,b,c,d,e"},
		// Both given: both apply.
		{`{"output":["key_"],"host":"db-1","filter":{"host":"db-2"}}`, ""},
		{`{"output":["key_"],"host":"db-1","filter":{"host":["db-1"],"key_":"a"}}`, "a"},
		// With hostids, groupids, itemids and search.
		{fmt.Sprintf(`{"output":["key_"],"host":"db-1","hostids":[%d,%d]}`, hid("db-1"), hid("web-1")), "a,c,d"},
		{fmt.Sprintf(`{"output":["key_"],"host":"db-1","hostids":%d}`, hid("web-1")), ""},
		{fmt.Sprintf(`{"output":["key_"],"filter":{"host":"db-2"},"groupids":"%d"}`, snap.Group("Web").ID), "e"},
		{fmt.Sprintf(`{"output":["key_"],"host":"web-1","itemids":[%d,%d]}`, snap.Lookup("web-1", "b").ID, snap.Lookup("db-1", "c").ID), "b"},
		{`{"output":["key_"],"filter":{"host":"db-1"},"search":{"key_":"c"}}`, "c"},
		{`{"output":["key_"],"group":"Web"}`, "a,b,e"},
		{`{"output":["key_"],"group":"Web","host":"db-2"}`, "e"},
		{`{"output":["key_"],"group":"nope"}`, ""},
		{`{"output":["key_"],"templated":true}`, ""},
		// Wildcard search over the whole key.
		{`{"output":["key_"],"search":{"key_":"*"},"searchWildcardsEnabled":true,"host":"db-1"}`, "a,c,d"},
		{`{"output":["key_"],"search":{"key_":"c*"},"searchWildcardsEnabled":true}`, "c"},
	} {
		if got := keysOf(c.params); got != c.want {
			t.Errorf("item.get %s: keys %q, want %q", c.params, got, c.want)
		}
	}
	if got := string(f.ok(t, "item.get", `{"countOutput":true,"filter":{"host":"db-1"}}`)); got != `"3"` {
		t.Errorf("countOutput with filter.host: %s", got)
	}
	// A host given as a number is the host of that name (none here), as
	// PHP reads it.
	if res, e := f.call(t, "super", "item.get", `{"host":5}`); e != nil || string(res) != "[]" {
		t.Errorf("host as a number: %s %+v", res, e)
	}
}

func TestGlobMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, s string
		want       bool
	}{
		{"", "", true}, {"", "a", false}, {"*", "", true}, {"*", "abc", true},
		{"a*", "abc", true}, {"a*", "bac", false}, {"*c", "abc", true}, {"*c", "abcd", false},
		{"a*c", "abc", true}, {"a*c", "ac", true}, {"a*a", "a", false}, {"a*b*c", "aXbYc", true},
		{"a*b*c", "aXcYb", false}, {"abc", "abc", true}, {"abc", "abcd", false}, {"**", "x", true},
	} {
		if got := globMatch(c.pattern, c.s); got != c.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", c.pattern, c.s, got, c.want)
		}
	}
}
