package api

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// TestUserMacroAPI drives usermacro.* and the macros of host.create,
// host.update, host.get and template.get: Zabbix's fields, errors
// (duplicate macro, bad syntax, vault refused), secret values never
// returned, and resolution seeing the change at once.
func TestUserMacroAPI(t *testing.T) {
	f := newWriteFixture(t)
	spec, err := catalog.ParseSpec([]byte("templates:\n  - template: T\n    macros:\n      - {macro: '{$FROM.T}', value: t}\n      - {macro: '{$T.SECRET}', value: tsecret, type: SECRET_TEXT}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.cat.Apply(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	tid := id(f.cat.Snapshot().TemplateByName("T").ID)
	g := f.ids(t, "hostgroup.create", `{"name":"G"}`, "groupids")[0]
	h := f.ids(t, "host.create", `{"host":"h1","groups":[{"groupid":"`+g+`"}],"templates":[{"templateid":"`+tid+`"}],
		"macros":[{"macro":"{$A}","value":"1"},{"macro":"{$PW}","value":"hunter2","type":1,"description":"db password"}]}`, "hostids")[0]

	// host.get selectMacros: the secret's value is omitted.
	hosts := f.get(t, "host.get", `{"hostids":["`+h+`"],"selectMacros":"extend","selectParentTemplates":["templateid","name"]}`)
	raw, _ := json.Marshal(hosts)
	if strings.Contains(string(raw), "hunter2") || !strings.Contains(string(raw), `"macro":"{$PW}"`) || !strings.Contains(string(raw), `"value":"1"`) {
		t.Fatalf("host.get macros: %s", raw)
	}
	// A list of fields gives those and the template's ID (Zabbix 6.0).
	if !strings.Contains(string(raw), `"parentTemplates":[{"name":"T","templateid":"`+tid+`"}]`) {
		t.Fatalf("host.get parentTemplates: %s", raw)
	}

	// usermacro.create / get / update / delete.
	mid := f.ids(t, "usermacro.create", `{"hostid":"`+h+`","macro":"{$B:\"ctx\"}","value":"2"}`, "hostmacroids")[0]
	ms := f.get(t, "usermacro.get", `{"hostids":["`+h+`"],"output":"extend","sortfield":"macro"}`)
	raw, _ = json.Marshal(ms)
	if len(ms) != 3 || strings.Contains(string(raw), "hunter2") {
		t.Fatalf("usermacro.get: %s", raw)
	}
	for _, m := range ms {
		if m["macro"] == "{$PW}" {
			if _, has := m["value"]; has || m["type"] != "1" || m["description"] != "db password" {
				t.Fatalf("secret macro object %v", m)
			}
		}
		if m["hostid"] != h || m["hostmacroid"] == nil {
			t.Fatalf("macro object %v", m)
		}
	}
	f.ok(t, "usermacro.update", `{"hostmacroid":"`+mid+`","value":"3"}`)
	if v, _ := f.cat.Snapshot().UserMacros(f.cat.Snapshot().Host("h1").ID).UserMacro("B", "ctx"); v != "3" {
		t.Fatalf("after update {$B:ctx} = %q", v)
	}
	// Template macros: readable, the secret omitted; the host sees them.
	tm := f.get(t, "template.get", `{"templateids":["`+tid+`"],"selectMacros":"extend","selectHosts":["host"]}`)
	raw, _ = json.Marshal(tm)
	if strings.Contains(string(raw), "tsecret") || !strings.Contains(string(raw), `"{$FROM.T}"`) || !strings.Contains(string(raw), `"host":"h1"`) {
		t.Fatalf("template.get: %s", raw)
	}
	if v, _ := f.cat.Snapshot().UserMacros(f.cat.Snapshot().Host("h1").ID).UserMacro("FROM.T", ""); v != "t" {
		t.Fatalf("template macro on the host = %q", v)
	}

	// Global macros.
	gid := f.ids(t, "usermacro.createglobal", `{"macro":"{$G}","value":"g"}`, "globalmacroids")[0]
	gs := f.get(t, "usermacro.get", `{"globalmacro":true}`)
	if len(gs) != 1 || gs[0]["globalmacroid"] != gid || gs[0]["value"] != "g" {
		t.Fatalf("global macros %v", gs)
	}
	f.ok(t, "usermacro.updateglobal", `{"globalmacroid":"`+gid+`","value":"g2","type":"1"}`)
	gs = f.get(t, "usermacro.get", `{"globalmacro":true}`)
	if _, has := gs[0]["value"]; has {
		t.Fatalf("secret global macro returned its value: %v", gs)
	}

	for _, c := range []struct{ token, method, params, want string }{
		{"super", "usermacro.create", `{"hostid":"` + h + `","macro":"{$A}","value":""}`, `Macro "{$A}" already exists on "h1".`},
		{"super", "usermacro.create", `{"hostid":"` + h + `","macro":"{$B:ctx}","value":""}`, `Macro "{$B:ctx}" already exists on "h1".`},
		{"super", "usermacro.createglobal", `{"macro":"{$G}","value":""}`, `Macro "{$G}" already exists.`},
		{"super", "usermacro.create", `{"hostid":"` + h + `","macro":"{$a}"}`, `Invalid parameter "/1/macro": incorrect syntax near "a}".`},
		{"super", "usermacro.create", `{"hostid":"` + h + `","macro":"{$V}","type":2}`, `Invalid parameter "/1/type": vault secret macros are not supported`},
		{"super", "usermacro.create", `{"hostid":"` + h + `"}`, `Invalid parameter "/1": the parameter "macro" is missing.`},
		{"super", "usermacro.create", `{"hostid":"999","macro":"{$X}","value":""}`, "No permissions to referred object or it does not exist!"},
		// Recorded from Zabbix 6.0.14.
		{"super", "usermacro.create", `{"hostid":"999","macro":"{$X}"}`, `Invalid parameter "/1": the parameter "value" is missing.`},
		{"super", "usermacro.create", `[{"hostid":"` + h + `","macro":"{$X}","value":""},{"hostid":"` + h + `","macro":"{$X}","value":""}]`, `Invalid parameter "/2": value (hostid, macro)=(` + h + `, {$X}) already exists.`},
		{"super", "usermacro.createglobal", `[{"macro":"{$X}","value":""},{"macro":"{$X}","value":""}]`, `Invalid parameter "/2": value (macro)=({$X}) already exists.`},
		{"super", "host.update", `{"hostid":"` + h + `","macros":[{"macro":"{$C}","value":"","xyz":1}]}`, `Invalid parameter "/1/macros/1": unexpected parameter "xyz".`},
		{"super", "host.update", `{"hostid":"` + h + `","macros":[{"macro":"{$C}"}]}`, `Invalid parameter "/1/macros/1": the parameter "value" is missing.`},
		{"super", "usermacro.update", `{"hostmacroid":"` + gid + `","value":"x"}`, "No permissions to referred object or it does not exist!"},
		{"super", "usermacro.deleteglobal", `["` + mid + `"]`, "No permissions to referred object or it does not exist!"},
		{"admin", "usermacro.createglobal", `{"macro":"{$Z}","value":""}`, "No permissions"},
		{"super", "host.update", `{"hostid":"` + h + `","macros":[{"macro":"{$C}","value":""},{"macro":"{$C}","value":""}]}`, `Invalid parameter "/1/macros/2": value (macro)=({$C}) already exists.`},
		{"super", "host.update", `{"hostid":"` + h + `","macros":[{"macro":"{$C:x}","value":""},{"macro":"{$C:\"x\"}","value":""}]}`, `already exists on "h1".`},
	} {
		_, e := f.call(t, c.token, c.method, c.params)
		if e == nil || !strings.Contains(e.Data, c.want) {
			t.Errorf("%s %s: error %+v, want %q", c.method, c.params, e, c.want)
		}
	}

	// host.update macros replaces the host's macros; templates_clear unlinks.
	f.ok(t, "host.update", `{"hostid":"`+h+`","macros":[{"macro":"{$A}","value":"9"}],"templates_clear":[{"templateid":"`+tid+`"}]}`)
	s := f.cat.Snapshot()
	hid := s.Host("h1").ID
	if len(s.Macros(hid)) != 1 || len(s.LinkedTemplates(hid)) != 0 {
		t.Fatalf("after host.update: macros %v, templates %v", s.Macros(hid), s.LinkedTemplates(hid))
	}
	if v, _ := s.UserMacros(hid).UserMacro("A", ""); v != "9" {
		t.Fatalf("{$A} = %q", v)
	}
	f.ok(t, "usermacro.deleteglobal", `["`+gid+`"]`)
	if len(f.cat.Snapshot().Macros(0)) != 0 {
		t.Fatal("global macro not deleted")
	}
}
