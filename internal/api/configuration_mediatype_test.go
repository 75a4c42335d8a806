package api

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// newMediaFixture is newWriteFixture with the catalog's notification
// configuration behind mediatype.*.
func newMediaFixture(t testing.TB) *writeFixture {
	t.Helper()
	cat := catalogtest.Open(t, catalog.Spec{})
	api := New(Options{Catalog: cat, Alerting: goldenAlerting{cat}, History: memstore.New(), MaxBodyBytes: 64 << 20,
		Auth: &fakeAuth{sessions: map[string]User{
			"super": {ID: 1, Username: "Admin", Role: RoleSuperAdmin},
			"user":  {ID: 3, Username: "viewer", Role: RoleUser},
		}}})
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	return &writeFixture{srv: srv, cat: cat}
}

func mtImportParams(format, src, rules string) string {
	q, _ := json.Marshal(src)
	return `{"format":"` + format + `","source":` + string(q) + `,"rules":` + rules + `}`
}

const mtRules = `{"mediaTypes":{"createMissing":true,"updateExisting":true}}`

var exportDate = regexp.MustCompile(`date: '[^']*'|<date>[^<]*</date>|"date":"[^"]*"`)

func withoutDate(s string) string {
	return exportDate.ReplaceAllStringFunc(s, func(d string) string { return d[:4] })
}

// exportMedia exports the media types named by prefix in format.
func exportMedia(t *testing.T, f *writeFixture, format, prefix string) string {
	t.Helper()
	var ids []string
	for _, m := range f.cat.AlertConfig().SortedMediaTypes() {
		if strings.HasPrefix(m.Name, prefix) {
			ids = append(ids, u64(m.ID))
		}
	}
	q, _ := json.Marshal(ids)
	var s string
	if err := json.Unmarshal(f.ok(t, "configuration.export", `{"format":"`+format+`","options":{"mediaTypes":`+string(q)+`}}`), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestConfigurationImportMediaTypes imports media types of every kind
// (../catalog/testdata/mediatypes_kinds.yaml, whose 6.0.14 export the
// catalog's TestMediaTypePeerExport compares), exports them in YAML,
// XML and JSON, and imports each export into an empty catalog: the same
// media types, and importing again changes nothing.
func TestConfigurationImportMediaTypes(t *testing.T) {
	src, err := os.ReadFile("../catalog/testdata/mediatypes_kinds.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f := newMediaFixture(t)
	before := len(f.cat.AlertConfig().MediaTypes)
	if res := f.ok(t, "configuration.import", mtImportParams("yaml", string(src), mtRules)); string(res) != "true" {
		t.Fatal(string(res))
	}
	if n := len(f.cat.AlertConfig().MediaTypes) - before; n != 5 {
		t.Fatalf("%d media types created, want 5", n)
	}
	rev := f.cat.AlertConfig().Revision
	f.ok(t, "configuration.import", mtImportParams("yaml", string(src), mtRules))
	if f.cat.AlertConfig().Revision != rev {
		t.Error("importing again changed the media types")
	}
	// Stored as mediatype.create stores them (recorded from 6.0.14's
	// mediatype.get after the same import).
	var got []map[string]any
	if err := json.Unmarshal(f.ok(t, "mediatype.get", `{"output":["name","exec_params","maxsessions","smtp_port","content_type","timeout"],
		"filter":{"name":["Pager script","Mail plain"]}}`), &got); err != nil {
		t.Fatal(err)
	}
	for _, m := range got {
		switch m["name"] {
		case "Pager script":
			if m["exec_params"] != "{ALERT.SENDTO}\n{ALERT.SUBJECT}\n\n{ALERT.MESSAGE}\n" || m["maxsessions"] != "0" {
				t.Errorf("script: %v", m)
			}
		case "Mail plain":
			if m["smtp_port"] != "25" || m["content_type"] != "1" || m["timeout"] != "30s" || m["maxsessions"] != "1" {
				t.Errorf("email: %v", m)
			}
		}
	}
	yml := withoutDate(exportMedia(t, f, "yaml", ""))
	for _, format := range []string{"yaml", "xml", "json"} {
		doc := exportMedia(t, f, format, "")
		g := newMediaFixture(t)
		g.ok(t, "configuration.import", mtImportParams(format, doc, mtRules))
		if again := withoutDate(exportMedia(t, g, "yaml", "")); again != yml {
			t.Errorf("%s: the export imported into an empty catalog exports otherwise:\n%s\nwant\n%s", format, again, yml)
		}
	}
	// Media types need an admin: a user's export has none.
	if res, _ := f.call(t, "user", "configuration.export", `{"format":"yaml","options":{"mediaTypes":["1"]}}`); strings.Contains(string(res), "media_types") {
		t.Errorf("a user exported media types: %s", res)
	}
}

// TestConfigurationImportMediaTypeErrors: bad media types get 6.0's
// errors (recorded from 6.0.14's configuration.import) and the whole
// document is refused.
func TestConfigurationImportMediaTypeErrors(t *testing.T) {
	f := newMediaFixture(t)
	doc := func(extra string) string {
		return "zabbix_export:\n  version: '6.0'\n  media_types:\n    - name: 'New hook'\n      type: WEBHOOK\n      script: 'return 1;'\n" +
			"    - name: 'mtimport bad'\n      type: WEBHOOK\n      script: 'return 1;'\n" + extra
	}
	for _, c := range []struct {
		extra string
		code  int
		want  string
	}{
		{"      foo: bar\n", codeApplication, `Invalid tag "/zabbix_export/media_types/media_type(2)": unexpected tag "foo".`},
		{"      status: MAYBE\n", codeApplication, `Invalid tag "/zabbix_export/media_types/media_type(2)/status": unexpected constant "MAYBE".`},
		{"    - name: x\n      type: FOO\n", codeApplication, `Invalid tag "/zabbix_export/media_types/media_type(3)/type": unexpected constant "FOO".`},
		{"    - type: EMAIL\n", codeApplication, `Invalid tag "/zabbix_export/media_types/media_type(3)": the tag "name" is missing.`},
		{"    - name: x\n", codeApplication, `Invalid tag "/zabbix_export/media_types/media_type(3)": the tag "type" is missing.`},
		{"      max_sessions: '500'\n", codeParams, `Invalid parameter "/2/maxsessions": value must be one of 0-100.`},
		{"      attempts: 'x'\n", codeParams, `Invalid parameter "/2/maxattempts": an integer is expected.`},
		{"      timeout: 90s\n", codeParams, `Invalid parameter "/2/timeout": value must be one of 1-60.`},
		// Another kind's member.
		{"      smtp_server: foo\n", codeParams, `Invalid parameter "/2/smtp_server": value must be empty.`},
		{"    - name: sms\n      type: SMS\n      gsm_modem: /dev/x\n      username: u\n", codeParams, `Invalid parameter "/3/username": value must be empty.`},
		// Two of a name: the last one is imported (an email lacking
		// its server here).
		{"    - name: 'mtimport bad'\n      type: EMAIL\n", codeParams, `Invalid parameter "/2/smtp_server": cannot be empty.`},
		{"    - name: mail\n      type: EMAIL\n      smtp_server: localhost\n      smtp_email: a@b\n", codeParams, `Invalid parameter "/3/smtp_helo": cannot be empty.`},
		{"      message_templates:\n        - event_source: TRIGGERS\n          operation_mode: PROBLEM\n          subject: a\n" +
			"        - event_source: TRIGGERS\n          operation_mode: PROBLEM\n", codeParams,
			`Invalid parameter "/2/message_templates/2": value (eventsource, recovery)=(0, 0) already exists.`},
	} {
		rev := f.cat.AlertConfig().Revision
		_, e := f.call(t, "super", "configuration.import", mtImportParams("yaml", doc(c.extra), mtRules))
		if e == nil || e.Code != c.code || e.Data != c.want {
			t.Errorf("%q: %+v, want %d %q", c.extra, e, c.code, c.want)
		}
		if f.cat.AlertConfig().Revision != rev {
			t.Errorf("%q: a refused document changed the media types", c.extra)
		}
	}
	// Recorded from 6.0.14: mediaTypes has no deleteMissing.
	_, e := f.call(t, "super", "configuration.import", mtImportParams("yaml", doc(""), `{"mediaTypes":{"deleteMissing":true}}`))
	if e == nil || e.Data != `Invalid parameter "/rules/mediaTypes": unexpected parameter "deleteMissing".` {
		t.Errorf("deleteMissing: %+v", e)
	}
	// Two of a name: the last is imported (recorded from 6.0.14).
	dup := doc("") + "    - name: 'mtimport bad'\n      type: WEBHOOK\n      script: 'return 2;'\n"
	f.ok(t, "configuration.import", mtImportParams("yaml", dup, `{"mediaTypes":{"createMissing":true}}`))
	var got []map[string]string
	_ = json.Unmarshal(f.ok(t, "mediatype.get", `{"output":["script"],"filter":{"name":"mtimport bad"}}`), &got)
	if len(got) != 1 || got[0]["script"] != "return 2;" {
		t.Errorf("duplicate names: %v", got)
	}
	// createMissing alone leaves an existing media type as it is.
	f.ok(t, "configuration.import", mtImportParams("yaml", doc(""), `{"mediaTypes":{"createMissing":true}}`))
	_ = json.Unmarshal(f.ok(t, "mediatype.get", `{"output":["script"],"filter":{"name":"mtimport bad"}}`), &got)
	if got[0]["script"] != "return 2;" {
		t.Errorf("createMissing updated: %v", got)
	}
	// importcompare compares no media types (recorded from 6.0.14: []).
	if res := f.ok(t, "configuration.importcompare", mtImportParams("yaml", doc("      description: changed\n"), mtRules)); string(res) != "[]" {
		t.Errorf("importcompare: %s", res)
	}
}
