package api

import (
	"fmt"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// TestItemJMX: a JMX agent item (type 16) through item.create,
// item.update and item.get, with Zabbix 6.0's members and refusals
// (recorded from 6.0.14); its password is stored, never returned.
func TestItemJMX(t *testing.T) {
	f := newWriteFixture(t)
	g := f.ids(t, "hostgroup.create", `{"name":"G"}`, "groupids")[0]
	h := f.ids(t, "host.create", fmt.Sprintf(`{"host":"app","groups":[{"groupid":"%s"}],"interfaces":[
		{"type":4,"main":1,"useip":1,"ip":"127.0.0.1","dns":"","port":"12345"},
		{"type":1,"main":1,"useip":1,"ip":"127.0.0.1","dns":"","port":"10050"}]}`, g), "hostids")[0]
	ifaces := f.get(t, "hostinterface.get", fmt.Sprintf(`{"hostids":"%s","output":["interfaceid","type"]}`, h))
	var jmxIf, agentIf string
	for _, i := range ifaces {
		if i["type"] == "4" {
			jmxIf = i["interfaceid"].(string)
		} else {
			agentIf = i["interfaceid"].(string)
		}
	}
	item := func(extra string) string {
		return fmt.Sprintf(`{"name":"heap","key_":"jmx[\"java.lang:type=Memory\",\"HeapMemoryUsage.used\"]","hostid":"%s","type":16,"value_type":3,"delay":"30s"%s}`, h, extra)
	}
	id := f.ids(t, "item.create", item(fmt.Sprintf(`,"interfaceid":"%s","username":"monitorRole","password":"s3cret"`, jmxIf)), "itemids")[0]
	get := func(id string) map[string]any {
		t.Helper()
		items := f.get(t, "item.get", fmt.Sprintf(`{"itemids":"%s","output":["type","interfaceid","jmx_endpoint","username","password"]}`, id))
		if len(items) != 1 {
			t.Fatalf("item.get: %v", items)
		}
		return items[0]
	}
	// 6.0's default endpoint; the password kept but not returned.
	want := map[string]any{"type": "16", "interfaceid": jmxIf, "jmx_endpoint": catalog.DefaultJMXEndpoint, "username": "monitorRole", "password": ""}
	check := func(id string, want map[string]any) {
		t.Helper()
		got := get(id)
		for k, v := range want {
			if got[k] != v {
				t.Errorf("item.get %s = %v, want %v", k, got[k], v)
			}
		}
	}
	check(id, want)
	if it := f.cat.Snapshot().Item(itemIDOf(t, id)); it.Ext().JMX == nil || it.Ext().JMX.Password != "s3cret" {
		t.Fatalf("stored: %+v", it.Ext().JMX)
	}
	f.ok(t, "item.update", fmt.Sprintf(`{"itemid":"%s","jmx_endpoint":"service:jmx:jmxmp://{HOST.CONN}:{HOST.PORT}","username":"{$JMX.USER}"}`, id))
	want["jmx_endpoint"], want["username"] = "service:jmx:jmxmp://{HOST.CONN}:{HOST.PORT}", "{$JMX.USER}"
	check(id, want)
	if it := f.cat.Snapshot().Item(itemIDOf(t, id)); it.Ext().JMX.Password != "s3cret" {
		t.Errorf("password after an update without it: %q", it.Ext().JMX.Password)
	}
	// Other types show an empty endpoint.
	tid := f.ids(t, "item.create", fmt.Sprintf(`{"name":"t","key_":"t","hostid":"%s","type":2,"value_type":3}`, h), "itemids")[0]
	check(tid, map[string]any{"jmx_endpoint": "", "username": "", "password": ""})

	// 6.0's refusals (recorded from 6.0.14).
	long := strings.Repeat("x", 256)
	for _, c := range []struct {
		method, params string
		code           int
		want           string
	}{
		{"item.create", item(``), -32602, "No interface found."},
		{"item.create", item(`,"interfaceid":"` + agentIf + `"`), -32602, "Item uses incorrect interface type."},
		{"item.create", item(`,"interfaceid":"` + jmxIf + `","key_":"jmx[x,1]","jmx_endpoint":""`), -32602, `Incorrect value for field "jmx_endpoint": cannot be empty.`},
		{"item.create", item(`,"interfaceid":"` + jmxIf + `","key_":"jmx[x,2]","jmx_endpoint":"` + long + `"`), -32500,
			`Value "` + long + `" is too long for field "jmx_endpoint" - 256 characters. Allowed length is 255 characters.`},
		{"item.create", item(`,"interfaceid":"` + jmxIf + `","key_":"jmx[x,3]","username":"` + long[:65] + `"`), -32500,
			`Value "` + long[:65] + `" is too long for field "username" - 65 characters. Allowed length is 64 characters.`},
		{"item.create", item(`,"interfaceid":"` + jmxIf + `","key_":"jmx[x,4]","password":"` + long[:65] + `"`), -32500,
			`is too long for field "password" - 65 characters. Allowed length is 64 characters.`},
		{"item.create", fmt.Sprintf(`{"name":"a","key_":"agent.ping","hostid":"%s","type":0,"value_type":3,"delay":"1m","interfaceid":"%s","jmx_endpoint":"x"}`, h, agentIf), -32602,
			`Incorrect value for field "jmx_endpoint": should be empty.`},
		{"item.update", fmt.Sprintf(`{"itemid":"%s","jmx_endpoint":""}`, id), -32602, `Incorrect value for field "jmx_endpoint": cannot be empty.`},
		// A type change to JMX needs an endpoint: 6.0 applies its
		// default on create only.
		{"item.update", fmt.Sprintf(`{"itemid":"%s","type":16,"interfaceid":"%s","delay":"1m"}`, tid, jmxIf), -32602, `Incorrect value for field "jmx_endpoint": cannot be empty.`},
	} {
		_, e := f.call(t, "super", c.method, c.params)
		if e == nil || e.Code != c.code || !strings.Contains(e.Data, c.want) {
			t.Errorf("%s %s: %+v, want %d %q", c.method, c.params, e, c.code, c.want)
		}
	}
	// With an endpoint, the type change is taken.
	f.ok(t, "item.update", fmt.Sprintf(`{"itemid":"%s","type":16,"interfaceid":"%s","delay":"1m","jmx_endpoint":"%s"}`, tid, jmxIf, catalog.DefaultJMXEndpoint))
	check(tid, map[string]any{"type": "16", "jmx_endpoint": catalog.DefaultJMXEndpoint})
	// "Check now" takes JMX items (they are polled).
	if !checkNowType(catalog.JMX) {
		t.Error("task.create refuses JMX items")
	}
}
