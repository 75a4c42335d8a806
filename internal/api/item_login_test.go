package api

import (
	"fmt"
	"strings"
	"testing"
)

// TestItemLoginFields: SSH (type 13) and Telnet (type 14) items through
// item.create, item.update and item.get: the command in params, the
// login in authtype, username, password, publickey and privatekey; the
// password kept and never returned; an interface of any type required,
// as 6.0 requires it (recorded from 6.0.14: "No interface found."
// without one; agent, SNMP and IPMI interfaces all taken; no username
// or params required).
func TestItemLoginFields(t *testing.T) {
	f := newWriteFixture(t)
	g := f.ids(t, "hostgroup.create", `{"name":"G"}`, "groupids")[0]
	bare := f.ids(t, "host.create", fmt.Sprintf(`{"host":"bare","groups":[{"groupid":"%s"}]}`, g), "hostids")[0]
	h := f.ids(t, "host.create", fmt.Sprintf(`{"host":"srv","groups":[{"groupid":"%s"}],"interfaces":[
		{"type":1,"main":1,"useip":1,"ip":"127.0.0.1","dns":"","port":"10050"},
		{"type":2,"main":1,"useip":1,"ip":"127.0.0.2","dns":"","port":"161","details":{"version":2,"community":"public"}}]}`, g), "hostids")[0]
	ifaces := f.get(t, "hostinterface.get", fmt.Sprintf(`{"hostids":"%s","output":["interfaceid","type"]}`, h))
	var agentIf, snmpIf string
	for _, i := range ifaces {
		if i["type"] == "1" {
			agentIf = i["interfaceid"].(string)
		} else {
			snmpIf = i["interfaceid"].(string)
		}
	}
	for _, typ := range []int{13, 14} {
		_, e := f.call(t, "super", "item.create", fmt.Sprintf(`{"name":"x","key_":"ssh.run[x]","hostid":"%s","type":%d,"value_type":4,"delay":"1m"}`, bare, typ))
		if e == nil || e.Data != "No interface found." {
			t.Errorf("type %d on a host without interfaces: %+v, want 6.0's \"No interface found.\"", typ, e)
		}
	}
	ssh := f.ids(t, "item.create", fmt.Sprintf(`{"name":"up","key_":"ssh.run[up]","hostid":"%s","interfaceid":"%s","type":13,"value_type":4,"delay":"1m",
		"params":"uptime","username":"mon","password":"s3cret"}`, h, agentIf), "itemids")[0]
	key := f.ids(t, "item.create", fmt.Sprintf(`{"name":"df","key_":"ssh.run[df]","hostid":"%s","interfaceid":"%s","type":13,"value_type":4,"delay":"1m",
		"params":"df -h","authtype":1,"username":"mon","password":"phrase","publickey":"id.pub","privatekey":"id"}`, h, snmpIf), "itemids")[0]
	tel := f.ids(t, "item.create", fmt.Sprintf(`{"name":"ls","key_":"telnet.run[ls]","hostid":"%s","interfaceid":"%s","type":14,"value_type":4,"delay":"1m",
		"params":"ls","username":"admin","password":"pw"}`, h, agentIf), "itemids")[0]
	empty := f.ids(t, "item.create", fmt.Sprintf(`{"name":"e","key_":"ssh.run[e]","hostid":"%s","interfaceid":"%s","type":13,"value_type":4,"delay":"1m"}`, h, agentIf), "itemids")[0]
	check := func(id string, want map[string]string) {
		t.Helper()
		got := f.get(t, "item.get", fmt.Sprintf(`{"itemids":"%s","output":"extend"}`, id))[0]
		for k, v := range want {
			if got[k] != v {
				t.Errorf("item %s: item.get %s = %v, want %q", id, k, got[k], v)
			}
		}
	}
	check(ssh, map[string]string{"type": "13", "params": "uptime", "authtype": "0", "username": "mon", "password": "", "publickey": "", "privatekey": "", "interfaceid": agentIf})
	check(key, map[string]string{"params": "df -h", "authtype": "1", "username": "mon", "password": "", "publickey": "id.pub", "privatekey": "id", "interfaceid": snmpIf})
	check(tel, map[string]string{"type": "14", "params": "ls", "authtype": "0", "username": "admin", "password": ""})
	check(empty, map[string]string{"params": "", "username": "", "password": ""})
	if l := f.cat.Snapshot().Item(itemIDOf(t, ssh)).Ext().Login; l == nil || l.Password != "s3cret" {
		t.Fatalf("stored login %+v", l)
	}
	// Only the password asked for: still empty.
	if got := f.get(t, "item.get", fmt.Sprintf(`{"itemids":"%s","output":["password"]}`, ssh))[0]; got["password"] != "" {
		t.Errorf("item.get output password = %v", got["password"])
	}

	f.ok(t, "item.update", fmt.Sprintf(`{"itemid":"%s","username":"other","params":"uptime -p"}`, ssh))
	check(ssh, map[string]string{"params": "uptime -p", "username": "other", "authtype": "0"})
	if l := f.cat.Snapshot().Item(itemIDOf(t, ssh)).Ext().Login; l.Password != "s3cret" {
		t.Errorf("password after an update without it: %q", l.Password)
	}
	f.ok(t, "item.update", fmt.Sprintf(`{"itemid":"%s","privatekey":"id2","publickey":"id2.pub"}`, key))
	check(key, map[string]string{"publickey": "id2.pub", "privatekey": "id2", "authtype": "1"})

	for params, wantErr := range map[string]string{
		`"authtype":2`:                                     "authtype",
		`"authtype":1,"publickey":"a.pub"`:                 "privatekey",
		`"authtype":1,"publickey":"../x","privatekey":"k"`: "publickey",
		`"username":"` + strings.Repeat("u", 65) + `"`:     "username",
	} {
		_, e := f.call(t, "super", "item.create", fmt.Sprintf(`{"name":"b","key_":"ssh.run[b]","hostid":"%s","interfaceid":"%s","type":13,"value_type":4,"delay":"1m",%s}`, h, agentIf, params))
		if e == nil || !strings.Contains(e.Data, wantErr) {
			t.Errorf("item.create with %s: %+v, want an error naming %s", params, e, wantErr)
		}
	}
}
