package web

import "testing"

// TestNetPagesAccess: the proxies, network discovery, discovery status,
// autoregistration, web scenario and web monitoring pages follow 6.0's
// user types and role rules. The rule names are 6.0.14's (recorded with
// role.get on the peer: the Admin role has configuration.discovery and
// monitoring.discovery, the User role neither; administration.proxies
// and administration.general only the Super admin role; web monitoring
// is part of monitoring.hosts, 6.0 has no rule of its own for it).
func TestNetPagesAccess(t *testing.T) {
	for _, c := range []struct {
		name     string
		userType int
		rules    map[string]any
		want     map[string]int
	}{
		{"super admin", 3, nil, map[string]int{"/config/proxies": 200, "/config/drules": 200, "/discovery": 200,
			"/admin/autoreg": 200, "/config/webscenarios": 200, "/web": 200}},
		{"admin", 2, nil, map[string]int{"/config/proxies": 403, "/admin/autoreg": 403, "/config/drules": 200, "/discovery": 200,
			"/config/webscenarios": 200, "/web": 200}},
		{"user", 1, nil, map[string]int{"/config/proxies": 403, "/admin/autoreg": 403, "/config/drules": 403, "/discovery": 403,
			"/config/webscenarios": 403, "/web": 200}},
		{"super admin without the proxy and discovery rules", 3, map[string]any{"ui.default_access": "1", "ui": []map[string]string{
			{"name": "administration.proxies", "status": "0"}, {"name": "configuration.discovery", "status": "0"},
			{"name": "monitoring.discovery", "status": "0"}, {"name": "monitoring.hosts", "status": "0"}}},
			map[string]int{"/config/proxies": 403, "/config/drules": 403, "/discovery": 403, "/web": 403, "/admin/autoreg": 200,
				"/config/webscenarios": 200}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			f.api.userType, f.api.rules = c.userType, c.rules
			cl := f.client(t)
			read(t, f.login(t, cl, "right"))
			for p, want := range c.want {
				r, err := cl.Get(f.srv.URL + p)
				if err != nil {
					t.Fatal(err)
				}
				read(t, r)
				if r.StatusCode != want {
					t.Errorf("GET %s: %d, want %d", p, r.StatusCode, want)
				}
			}
		})
	}
}
