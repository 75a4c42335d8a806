package web

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

var pagesMeta = regexp.MustCompile(`<meta name="peregrine-pages" content="([^"]*)">`)

// TestPageAccessByTypeAndRole: the server itself refuses a page the
// user's type or role does not allow (403), whatever links the app
// shows; the document lists the pages the user may open for the menu.
func TestPageAccessByTypeAndRole(t *testing.T) {
	for _, c := range []struct {
		name     string
		userType int
		rules    map[string]any
		allowed  []string
		refused  []string
	}{
		{"super admin", 3, nil,
			[]string{"/overview", "/config/hosts", "/config/maintenance", "/admin/users", "/admin/auditlog", "/admin/queue"}, nil},
		{"admin", 2, nil,
			[]string{"/overview", "/config/hosts", "/config/actions", "/config/maintenance"},
			[]string{"/admin/users", "/admin/usergroups", "/admin/roles", "/admin/mediatypes", "/admin/scripts", "/admin/settings", "/admin/housekeeping", "/admin/auditlog", "/admin/queue"}},
		{"user", 1, nil,
			[]string{"/overview", "/problems", "/latest"},
			[]string{"/config/hosts", "/config/actions", "/config/maintenance", "/admin/users", "/admin/settings"}},
		// A super admin whose role takes users and the audit log away
		// (and gives nothing new by default).
		{"super admin, limited role", 3, map[string]any{"ui.default_access": "0", "ui": []map[string]string{
			{"name": "administration.users", "status": "0"}, {"name": "administration.media_types", "status": "1"},
			{"name": "monitoring.problems", "status": "1"}, {"name": "reports.audit", "status": "0"}}},
			[]string{"/overview", "/problems", "/admin/mediatypes"},
			[]string{"/admin/users", "/admin/auditlog", "/admin/roles", "/latest", "/config/hosts"}},
		// An admin with templates but not hosts nor host groups: the
		// discovery pages (a host's or a template's) open, 6.0's
		// role rule names (recorded from 6.0.14's role.get).
		{"admin, templates only", 2, map[string]any{"ui.default_access": "1", "ui": []map[string]string{
			{"name": "configuration.hosts", "status": "0"}, {"name": "configuration.host_groups", "status": "0"},
			{"name": "configuration.templates", "status": "1"}}},
			[]string{"/config/templates", "/config/discovery", "/config/prototypes"},
			[]string{"/config/hosts", "/config/hostgroups", "/config/items", "/admin/users"}},
		{"admin, neither hosts nor templates", 2, map[string]any{"ui.default_access": "1", "ui": []map[string]string{
			{"name": "configuration.hosts", "status": "0"}, {"name": "configuration.templates", "status": "0"}}},
			[]string{"/config/hostgroups", "/config/maintenance"},
			[]string{"/config/templates", "/config/discovery", "/config/prototypes", "/config/hosts"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			f.api.userType, f.api.rules = c.userType, c.rules
			cl := f.client(t)
			read(t, f.login(t, cl, "right"))
			var menu string
			for _, p := range c.allowed {
				r, err := cl.Get(f.srv.URL + p)
				if err != nil {
					t.Fatal(err)
				}
				body := read(t, r)
				if r.StatusCode != http.StatusOK {
					t.Errorf("GET %s: %d, want 200", p, r.StatusCode)
					continue
				}
				m := pagesMeta.FindStringSubmatch(body)
				if m == nil {
					t.Fatalf("GET %s: no peregrine-pages meta", p)
				}
				menu = m[1]
			}
			listed := strings.Fields(menu)
			for _, p := range c.allowed {
				if !contains(listed, p) {
					t.Errorf("menu %q lacks %s", menu, p)
				}
			}
			for _, p := range c.refused {
				r, err := cl.Get(f.srv.URL + p)
				if err != nil {
					t.Fatal(err)
				}
				body := read(t, r)
				if r.StatusCode != http.StatusForbidden || strings.Contains(body, "peregrine-csrf") {
					t.Errorf("GET %s: %d, want 403 without the app document", p, r.StatusCode)
				}
				if contains(listed, p) {
					t.Errorf("menu %q lists refused %s", menu, p)
				}
			}
		})
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// TestPagesEscapeUserName: the app document carries the user name in an
// attribute; markup in it stays text.
func TestPagesEscapeUserName(t *testing.T) {
	ui, err := New(Options{API: &fakeAPI{sessions: map[string]bool{}}})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	err = ui.pages.app.Execute(&b, appData{Assets: "/assets/", Username: `<script>alert(1)</script>"'&`, CSRF: "x", UserType: "3", Pages: "/admin/users"})
	if err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "<script>alert") || strings.Contains(out, `content="<script`) || !strings.Contains(out, "&lt;script&gt;alert(1)&lt;/script&gt;&#34;&#39;&amp;") {
		t.Errorf("user name not escaped in the document:\n%s", out)
	}
}
