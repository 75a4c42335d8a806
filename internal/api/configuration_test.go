package api

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// TestConfigurationImport imports the peer's export of "Nginx by Zabbix
// agent" (testdata/export, recorded from 6.0.14's configuration.export in
// each format) through configuration.import: each format gives the same
// catalog, and importing again changes nothing. Bad documents and rules
// get 6.0's errors (recorded from 6.0.14) and change nothing.
func TestConfigurationImport(t *testing.T) {
	var snaps []*catalog.Snapshot
	for _, format := range []string{"yaml", "xml", "json"} {
		f := newWriteFixture(t)
		src, err := os.ReadFile("testdata/export/nginx_agent." + format)
		if err != nil {
			t.Fatal(err)
		}
		q, _ := json.Marshal(string(src))
		params := `{"format":"` + format + `","source":` + string(q) + `,"rules":{"groups":{"createMissing":true},
			"templates":{"createMissing":true,"updateExisting":true},"items":{"createMissing":true,"updateExisting":true},
			"triggers":{"createMissing":true,"updateExisting":true},"graphs":{"createMissing":true,"updateExisting":true},
			"valueMaps":{"createMissing":true,"updateExisting":true},"templateDashboards":{"createMissing":true,"updateExisting":true},
			"templateLinkage":{"createMissing":true}}}`
		if res := f.ok(t, "configuration.import", params); string(res) != "true" {
			t.Fatalf("%s: %s", format, res)
		}
		s := f.cat.Snapshot()
		tm := s.TemplateByName("Nginx by Zabbix agent")
		if tm == nil || tm.ItemCount() != 17 || len(s.Graphs()) != 4 || len(s.Dashboards()) != 1 || len(s.TemplateTriggers()) != 6 {
			t.Fatalf("%s: template %v, %d graphs, %d dashboards, %d triggers", format, tm != nil, len(s.Graphs()), len(s.Dashboards()), len(s.TemplateTriggers()))
		}
		f.ok(t, "configuration.import", params)
		if f.cat.Snapshot().Version() != s.Version() {
			t.Errorf("%s: importing again changed the catalog", format)
		}
		snaps = append(snaps, s)
	}
	for i, s := range snaps[1:] {
		a, b := snaps[0].Graphs(), s.Graphs()
		for j := range a {
			if a[j].Name != b[j].Name || len(a[j].Items) != len(b[j].Items) || a[j].GraphFields != b[j].GraphFields {
				t.Errorf("format %d: graph %d differs: %+v %+v", i+1, j, a[j], b[j])
			}
		}
	}

	f := newWriteFixture(t)
	bad := func(params, want string) {
		t.Helper()
		v := f.cat.Snapshot().Version()
		_, e := f.call(t, "super", "configuration.import", params)
		if e == nil || e.Data != want {
			t.Errorf("%s: %+v, want %q", params, e, want)
		}
		if f.cat.Snapshot().Version() != v {
			t.Errorf("%s: the catalog changed", params)
		}
	}
	// Recorded from 6.0.14.
	bad(`{"format":"toml","source":"x","rules":{}}`, `Invalid parameter "/format": value must be one of "yaml", "xml", "json".`)
	bad(`{"format":"yaml","source":"x"}`, `Invalid parameter "/": the parameter "rules" is missing.`)
	bad(`{"format":"yaml","source":"x","rules":{"bogus":{}}}`, `Invalid parameter "/rules": unexpected parameter "bogus".`)
	bad(`{"format":"yaml","source":"x","rules":{"items":{"foo":true}}}`, `Invalid parameter "/rules/items": unexpected parameter "foo".`)
	bad(`{"format":"yaml","source":"x","rules":{"items":{"createMissing":"x"}}}`, `Invalid parameter "/rules/items/createMissing": a boolean is expected.`)
	bad(`{"format":"json","source":"{\"zabbix_export\":","rules":{}}`, `Cannot read JSON: Syntax error.`)
	bad(`{"format":"yaml","source":"","rules":{}}`, `Cannot read YAML: File is empty.`)
	// Peregrine's words: the path is 6.0's, the reason its own.
	_, e := f.call(t, "super", "configuration.import", `{"format":"xml","source":"<zabbix_export><version>","rules":{}}`)
	if e == nil || !strings.HasPrefix(e.Data, "Cannot read XML: ") {
		t.Errorf("malformed XML: %+v", e)
	}
	web := `zabbix_export:\n  version: \"6.0\"\n  templates:\n    - uuid: 7f4f1d5e8a1f4c2b9d3e6a7b8c9d0e1f\n      template: t\n      groups: [{name: G}]\n      httptests:\n        - {uuid: 1a2b3c4d5e6f47a8b9c0d1e2f3a4b5c6, name: Site}\n`
	_, e = f.call(t, "super", "configuration.import", `{"format":"yaml","source":"`+web+`","rules":{"templates":{"createMissing":true},"groups":{"createMissing":true},"httptests":{"createMissing":true}}}`)
	if e == nil || !strings.HasPrefix(e.Data, `Invalid tag "/zabbix_export/templates/template(1)/httptests`) || !strings.Contains(e.Data, "cannot be empty") {
		t.Errorf("web scenario without steps: %+v", e)
	}
	if f.cat.Snapshot().TemplateByName("t") != nil {
		t.Error("a refused document was half-imported")
	}
	web = strings.Replace(web, "name: Site}", "name: Site, steps: [{name: home, url: http://a/}]}", 1)
	if _, e = f.call(t, "super", "configuration.import", `{"format":"yaml","source":"`+web+`","rules":{"templates":{"createMissing":true},"groups":{"createMissing":true},"httptests":{"createMissing":true}}}`); e != nil {
		t.Errorf("web scenario: %+v", e)
	}
	if ts := f.cat.Snapshot().HTTPTests(); len(ts) != 1 || ts[0].Name != "Site" || ts[0].Steps[0].URL != "http://a/" {
		t.Errorf("imported web scenarios: %+v", ts)
	}
	_, e = f.call(t, "user", "configuration.import", `{"format":"yaml","source":"x","rules":{}}`)
	if e == nil {
		t.Error("a user imported")
	}
}

// TestConfigurationExport exports the peer's template through the API
// in each format: byte for byte 6.0.14's export but for the date; bad
// params get 6.0's errors (recorded from 6.0.14).
func TestConfigurationExport(t *testing.T) {
	f := newWriteFixture(t)
	src, _ := os.ReadFile("testdata/export/nginx_agent.yaml")
	q, _ := json.Marshal(string(src))
	f.ok(t, "configuration.import", `{"format":"yaml","source":`+string(q)+`,"rules":{"groups":{"createMissing":true},
		"templates":{"createMissing":true},"items":{"createMissing":true},"triggers":{"createMissing":true},
		"graphs":{"createMissing":true},"valueMaps":{"createMissing":true},"templateDashboards":{"createMissing":true}}}`)
	id := f.cat.Snapshot().TemplateByName("Nginx by Zabbix agent").ID
	dateRe := regexp.MustCompile(`20[0-9-]{8}T[0-9:]{8}Z`)
	for _, format := range []string{"yaml", "xml", "json"} {
		want, _ := os.ReadFile("testdata/export/nginx_agent." + format)
		res := f.ok(t, "configuration.export", `{"format":"`+format+`","options":{"templates":["`+strconv.FormatUint(id, 10)+`"]}}`)
		var got string
		if err := json.Unmarshal(res, &got); err != nil {
			t.Fatal(err)
		}
		if dateRe.ReplaceAllString(got, "D") != dateRe.ReplaceAllString(string(want), "D") {
			t.Errorf("%s: the export differs from 6.0.14's", format)
		}
	}
	res := f.ok(t, "configuration.export", `{"format":"raw","options":{"templates":[`+strconv.FormatUint(id, 10)+`]}}`)
	if !strings.HasPrefix(string(res), `{"zabbix_export":{"version":"6.0"`) {
		t.Errorf("raw: %.80s", res)
	}
	bad := func(params, want string) {
		t.Helper()
		_, e := f.call(t, "super", "configuration.export", params)
		if e == nil || e.Data != want {
			t.Errorf("%s: %+v, want %q", params, e, want)
		}
	}
	// Recorded from 6.0.14.
	bad(`{"options":{}}`, `Invalid parameter "/": the parameter "format" is missing.`)
	bad(`[]`, `Invalid parameter "/": the parameter "format" is missing.`)
	bad(`{"format":"yaml"}`, `Invalid parameter "/": the parameter "options" is missing.`)
	bad(`{"format":"yamlx","options":{}}`, `Invalid parameter "/format": value must be one of "yaml", "xml", "json", "raw".`)
	bad(`{"format":"yaml","options":{"valueMaps":["1"]}}`, `Invalid parameter "/options": unexpected parameter "valueMaps".`)
	bad(`{"format":"yaml","options":{"hosts":"1"}}`, `Invalid parameter "/options/hosts": an array is expected.`)
	bad(`{"format":"yaml","options":{"templates":null}}`, `Invalid parameter "/options/templates": an array is expected.`)
	bad(`{"format":"yaml","options":{"hosts":["a"]}}`, `Invalid parameter "/options/hosts/1": a number is expected.`)
	bad(`{"format":"yaml","options":{},"prettyprint":"x"}`, `Invalid parameter "/prettyprint": a boolean is expected.`)
	bad(`{"format":"yaml","options":{},"x":1}`, `Invalid parameter "/": unexpected parameter "x".`)
	// Peregrine's: what it does not keep is refused, not left out.
	bad(`{"format":"yaml","options":{"maps":["1"]}}`, `Invalid parameter "/options/maps": Peregrine has no network maps.`)
	// Recorded from 6.0.14: nothing selected, or IDs of nothing, export
	// the header alone.
	for _, p := range []string{`{"format":"yaml","options":[]}`, `{"format":"yaml","options":{"hosts":[999999],"templates":[]}}`} {
		var got string
		_ = json.Unmarshal(f.ok(t, "configuration.export", p), &got)
		if dateRe.ReplaceAllString(got, "D") != "zabbix_export:\n  version: '6.0'\n  date: 'D'\n" {
			t.Errorf("%s: %q", p, got)
		}
	}
}
