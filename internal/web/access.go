package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
)

// page is one path of the single-page app and who may open it: the least
// user type (1 user, 2 admin, 3 super admin, as Zabbix 6.0 numbers them)
// and the element of the user role's UI rules it belongs to ("" for none;
// "a|b" for a page either element opens).
// The type check comes first: an element of a higher type's menu is never
// granted by a role rule, as in Zabbix.
type page struct {
	path    string
	minType int
	ui      string
}

// pages are the app's paths. Each serves the same document after the
// session and access checks; the app's router shows the page. They are
// real paths rather than "#" fragments so that the server sees every page
// request, sends a visitor without a session to /login and refuses a
// page the user may not open (403), whatever links the app shows.
var pages = []page{
	{"/", 1, ""}, {"/overview", 1, ""}, {"/hosts", 1, "monitoring.hosts"}, {"/latest", 1, "monitoring.latest_data"},
	{"/graph", 1, "monitoring.latest_data"}, {"/graphs", 1, "monitoring.hosts"}, {"/hostdashboards", 1, "monitoring.hosts"}, {"/problems", 1, "monitoring.problems"},
	{"/config/hosts", 2, "configuration.hosts"}, {"/config/items", 2, "configuration.hosts"},
	{"/config/triggers", 2, "configuration.hosts"}, {"/config/valuemaps", 2, "configuration.hosts"},
	{"/config/actions", 2, "configuration.actions"}, {"/config/maintenance", 2, "configuration.maintenance"},
	{"/admin/users", 3, "administration.users"}, {"/admin/usergroups", 3, "administration.user_groups"},
	{"/admin/roles", 3, "administration.user_roles"}, {"/admin/mediatypes", 3, "administration.media_types"},
	{"/admin/scripts", 3, "administration.scripts"}, {"/admin/settings", 3, "administration.general"},
	{"/admin/housekeeping", 3, "administration.general"}, {"/admin/auditlog", 3, "reports.audit"},
	{"/admin/queue", 3, "administration.queue"},
	{"/dashboards", 1, "monitoring.dashboard"}, {"/services", 1, "services.services"},
	{"/services/sla", 1, "services.sla_report"}, {"/user/tokens", 1, ""},
	{"/admin/authentication", 3, "administration.authentication"}, {"/admin/sysinfo", 1, "reports.system_info"},
	// Templates, host groups, and discovery rules with their prototypes
	// (of a host or of a template: either element opens them).
	{"/config/templates", 2, "configuration.templates"}, {"/config/hostgroups", 2, "configuration.host_groups"},
	{"/config/discovery", 2, "configuration.hosts|configuration.templates"},
	{"/config/prototypes", 2, "configuration.hosts|configuration.templates"},
	// Proxies are under Administration in 6.0; discovery status is an
	// Admin's (6.0's User role has no monitoring.discovery); web
	// monitoring is part of Monitoring → Hosts (no role rule of its own).
	{"/config/proxies", 3, "administration.proxies"}, {"/config/drules", 2, "configuration.discovery"},
	{"/discovery", 2, "monitoring.discovery"}, {"/admin/autoreg", 3, "administration.general"},
	{"/config/webscenarios", 2, "configuration.hosts"}, {"/web", 1, "monitoring.hosts"},
	// A host's or template's graphs; template dashboards (of a template).
	{"/config/graphs", 2, "configuration.hosts|configuration.templates"},
	{"/config/templatedashboards", 2, "configuration.templates"},
	// Event correlation is a Super admin's in 6.0.
	{"/config/correlation", 3, "configuration.event_correlation"},
}

// pagePaths are the paths of pages, in order.
var pagePaths = func() []string {
	out := make([]string, len(pages))
	for i, p := range pages {
		out[i] = p.path
	}
	return out
}()

// uiRules is the part of a user role (role.get selectRules) that says
// which pages its users may open.
type uiRules struct {
	Default string `json:"ui.default_access"`
	UI      []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
	} `json:"ui"`
	// The role's action rules: the pages hide the controls of an
	// action the role does not allow (the API refuses it anyway).
	ActionsDefault string `json:"actions.default_access"`
	Actions        []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
	} `json:"actions"`
}

// pageActions are the action rules whose controls the pages hide.
var pageActions = []string{"manage_api_tokens", "manage_sla"}

// pageAction is the action rule a page needs besides its UI rule: the
// API tokens page is 6.0's only with manage_api_tokens (token.get needs
// it too).
var pageAction = map[string]string{"/user/tokens": "manage_api_tokens"}

func (r *uiRules) allowsAction(name string) bool {
	if r == nil || name == "" {
		return true
	}
	for _, e := range r.Actions {
		if e.Name == name {
			return e.Status == "1"
		}
	}
	return r.ActionsDefault != "0"
}

func (r *uiRules) allows(element string) bool {
	if element == "" || r == nil {
		return true
	}
	// "a|b": either element opens the page.
	if a, b, ok := strings.Cut(element, "|"); ok {
		return r.allows(a) || r.allows(b)
	}
	for _, e := range r.UI {
		if e.Name == element {
			return e.Status == "1"
		}
	}
	return r.Default != "0"
}

// access is what a session may open.
type access struct {
	userType int
	rules    *uiRules // nil: the role could not be read; the type alone decides
}

func (a access) may(p page) bool {
	return a.userType >= p.minType && a.rules.allows(p.ui) && a.rules.allowsAction(pageAction[p.path])
}

// allowed lists the pages a may open, for the app's menu.
func (a access) allowed() string {
	var b strings.Builder
	for _, p := range pages {
		if a.may(p) {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(p.path)
		}
	}
	return b.String()
}

// actions lists the pageActions a's role allows, for the pages.
func (a access) actions() string {
	var out []string
	for _, n := range pageActions {
		if a.rules.allowsAction(n) {
			out = append(out, n)
		}
	}
	return strings.Join(out, " ")
}

// accessOf reads the user's role rules through the API (role.get of the
// user's own role). A role the API does not show (a server without
// roles) leaves the user type to decide alone; the API still checks
// every call the page makes.
func (u *UI) accessOf(ctx context.Context, remote, session string, user sessionUser) access {
	t, _ := user.Type.Int64()
	a := access{userType: int(t)}
	if user.RoleID == "" {
		return a
	}
	res, err := u.rpc(ctx, remote, session, "role.get", map[string]any{"roleids": []string{user.RoleID}, "output": []string{"roleid"}, "selectRules": "extend"})
	if err != nil {
		return a
	}
	var roles []struct {
		Rules uiRules `json:"rules"`
	}
	if json.Unmarshal(res, &roles) == nil && len(roles) == 1 {
		a.rules = &roles[0].Rules
	}
	return a
}

// pageOf finds the page of a request path.
func pageOf(path string) (page, bool) {
	for _, p := range pages {
		if p.path == path {
			return p, true
		}
	}
	return page{}, false
}

// refusePage answers a page the user may not open: 403 with a short
// text (no data, nothing of the request echoed).
func refusePage(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	http.Error(w, "You have no access to this page: it needs another user type or role. Ask a super admin.", http.StatusForbidden)
}
