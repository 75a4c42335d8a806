package api

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestTemplatedItemUpdate: what item.update changes on a copy of a
// template's item, as 6.0.14 does it (recorded on copies of SSH, JMX,
// HTTP agent and calculated items): params and the login (username,
// password, authtype, publickey, privatekey) and jmx_endpoint change;
// name, key_, units, value_type, timeout, url, posts and status_codes
// are taken from the template and silently ignored.
func TestTemplatedItemUpdate(t *testing.T) {
	f := newWriteFixture(t)
	must := func(method, params string) json.RawMessage {
		t.Helper()
		res, e := f.call(t, "super", method, params)
		if e != nil {
			t.Fatalf("%s %s: %+v", method, params, e)
		}
		return res
	}
	must("hostgroup.create", `{"name":"g"}`)
	g := f.cat.Snapshot().Group("g").ID
	var tc struct{ TemplateIDs []string }
	json.Unmarshal(must("template.create", fmt.Sprintf(`{"host":"t","groups":[{"groupid":"%d"}]}`, g)), &tc)
	tid := tc.TemplateIDs[0]
	must("item.create", `[{"hostid":"`+tid+`","name":"s","key_":"ssh.run[a]","type":13,"value_type":4,"delay":"1m","params":"echo","username":"u","password":"p","authtype":0},
		{"hostid":"`+tid+`","name":"j","key_":"jmx[a,b]","type":16,"value_type":3,"delay":"1m","username":"u","password":"p"},
		{"hostid":"`+tid+`","name":"h","key_":"web.x","type":19,"value_type":4,"delay":"1m","url":"http://a/","username":"u","password":"p","authtype":1},
		{"hostid":"`+tid+`","name":"c","key_":"calc.x","type":15,"value_type":0,"delay":"1m","params":"1+1"}]`)
	must("host.create", fmt.Sprintf(`{"host":"h","groups":[{"groupid":"%d"}],"interfaces":[
		{"type":1,"main":1,"useip":1,"ip":"127.0.0.1","dns":"","port":"10050"},
		{"type":4,"main":1,"useip":1,"ip":"127.0.0.1","dns":"","port":"12345"}],"templates":[{"templateid":"%s"}]}`, g, tid))
	copyID := func(key string) uint64 {
		it := f.cat.Snapshot().Lookup("h", key)
		if it == nil || it.TemplateID == 0 {
			t.Fatalf("no copy of %s on h: %+v", key, it)
		}
		return it.ID
	}
	for _, key := range []string{"ssh.run[a]", "calc.x"} {
		must("item.update", fmt.Sprintf(`{"itemid":"%d","params":"ls","username":"x","password":"y","name":"n2","units":"B","key_":"other","timeout":"7s"}`, copyID(key)))
	}
	must("item.update", fmt.Sprintf(`{"itemid":"%d","jmx_endpoint":"service:jmx:x","username":"x","password":"y"}`, copyID("jmx[a,b]")))
	must("item.update", fmt.Sprintf(`{"itemid":"%d","url":"http://b/","posts":"zz","status_codes":"201","username":"x"}`, copyID("web.x")))
	s := f.cat.Snapshot()
	ssh, calc, jmx, web := s.Lookup("h", "ssh.run[a]"), s.Lookup("h", "calc.x"), s.Lookup("h", "jmx[a,b]"), s.Lookup("h", "web.x")
	if ssh == nil || ssh.Ext().Params != "ls" || ssh.Ext().Login == nil || ssh.Ext().Login.Username != "x" || ssh.Ext().Login.Password != "y" || ssh.Name != "s" || ssh.Units != "" || ssh.Ext().Timeout != "" {
		t.Errorf("SSH copy after the update: %+v login %+v", ssh, ssh.Ext().Login)
	}
	if calc == nil || calc.Ext().Params != "ls" || calc.Name != "c" {
		t.Errorf("calculated copy after the update: %+v", calc)
	}
	if jmx.Ext().JMX == nil || jmx.Ext().JMX.Endpoint != "service:jmx:x" || jmx.Ext().JMX.Username != "x" || jmx.Ext().JMX.Password != "y" {
		t.Errorf("JMX copy after the update: %+v", jmx.Ext().JMX)
	}
	if web.Ext().HTTP == nil || web.Ext().HTTP.URL != "http://a/" || web.Ext().HTTP.Posts != "" || web.Ext().HTTP.Username != "x" {
		t.Errorf("HTTP agent copy after the update: %+v", web.Ext().HTTP)
	}
}

// TestTemplatedScriptItemUpdate: a copy of a template's script item
// keeps its template's script, parameters and timeout; 6.0.14 ignores
// all three on item.update, unchecked (an invalid timeout too), and
// answers success.
func TestTemplatedScriptItemUpdate(t *testing.T) {
	f := newWriteFixture(t)
	must := func(method, params string) json.RawMessage {
		t.Helper()
		res, e := f.call(t, "super", method, params)
		if e != nil {
			t.Fatalf("%s %s: %+v", method, params, e)
		}
		return res
	}
	must("hostgroup.create", `{"name":"g"}`)
	g := f.cat.Snapshot().Group("g").ID
	var tc struct{ TemplateIDs []string }
	json.Unmarshal(must("template.create", fmt.Sprintf(`{"host":"t","groups":[{"groupid":"%d"}]}`, g)), &tc)
	must("item.create", `{"hostid":"`+tc.TemplateIDs[0]+`","name":"sc","key_":"sc.x","type":21,"value_type":4,"delay":"1m","params":"return 1","timeout":"3s","parameters":[{"name":"a","value":"1"}]}`)
	must("host.create", fmt.Sprintf(`{"host":"h","groups":[{"groupid":"%d"}],"templates":[{"templateid":"%s"}]}`, g, tc.TemplateIDs[0]))
	id := f.cat.Snapshot().Lookup("h", "sc.x").ID
	must("item.update", fmt.Sprintf(`{"itemid":"%d","params":"return 2","timeout":"9s","parameters":[{"name":"b","value":"2"}]}`, id))
	must("item.update", fmt.Sprintf(`{"itemid":"%d","timeout":"99s"}`, id))
	it := f.cat.Snapshot().Lookup("h", "sc.x")
	if it.Ext().Params != "return 1" || it.Ext().Timeout != "3s" || len(it.Ext().Parameters) != 1 || it.Ext().Parameters[0].Name != "a" {
		t.Fatalf("script copy after the updates: params %q timeout %q parameters %+v", it.Ext().Params, it.Ext().Timeout, it.Ext().Parameters)
	}
}
