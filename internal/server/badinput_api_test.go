package server

import (
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// TestBadInputAnswers: names over their column's length and texts where
// a time unit belongs are refused in 6.0.14's words, naming the member
// (the web UI shows the error beside that field), and nothing is made
// or changed. Every expected text was recorded from a 6.0.14 peer with
// the same request.
func TestBadInputAnswers(t *testing.T) {
	s, stop := runServer(t, testConfig(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "bi-host", Groups: []string{"BI"}}}}))
	defer stop()
	admin := adminLogin(t, s)
	var hosts []struct{ HostID string }
	admin.ok("host.get", map[string]any{"filter": map[string]string{"host": "bi-host"}}, &hosts)
	hostid := hosts[0].HostID
	long := func(n int) string { return strings.Repeat("x", n) }
	op := []map[string]any{{"operationtype": 0, "opmessage_grp": []map[string]string{{"usrgrpid": "7"}}, "opmessage": map[string]any{"default_msg": 1}}}
	for _, c := range []struct {
		method string
		params map[string]any
		want   string
		get    string // the get that must find nothing after the refusal
		filter map[string]any
	}{
		{"action.create", map[string]any{"name": long(256), "eventsource": 0, "operations": op},
			`Invalid parameter "/1/name": value is too long.`, "action", map[string]any{"name": long(256)}},
		{"action.create", map[string]any{"name": "bi esc", "eventsource": 0, "esc_period": "abc", "operations": op},
			`Invalid parameter "/1/esc_period": a time unit is expected.`, "action", map[string]any{"name": "bi esc"}},
		{"correlation.create", map[string]any{"name": long(256), "filter": map[string]any{"evaltype": 0, "conditions": []map[string]any{{"type": 0, "tag": "t"}}},
			"operations": []map[string]any{{"type": 0}}}, `Invalid parameter "/1/name": value is too long.`, "correlation", map[string]any{"name": long(256)}},
		{"mediatype.create", map[string]any{"name": long(101), "type": 0, "smtp_server": "l", "smtp_helo": "l", "smtp_email": "a@b.c"},
			`Invalid parameter "/1/name": value is too long.`, "mediatype", map[string]any{"name": long(101)}},
		{"script.create", map[string]any{"name": long(256), "type": 0, "scope": 2, "command": "true"},
			`Invalid parameter "/1/name": value is too long.`, "script", map[string]any{"name": long(256)}},
		{"script.create", map[string]any{"name": "bi hook", "type": 5, "scope": 2, "command": "return 1", "timeout": "abc"},
			`Invalid parameter "/1/timeout": a time unit is expected.`, "script", map[string]any{"name": "bi hook"}},
		{"drule.create", map[string]any{"name": long(256), "iprange": "127.0.0.1", "dchecks": []map[string]any{{"type": 12}}},
			`Value "` + long(256) + `" is too long for field "name" - 256 characters. Allowed length is 255 characters.`, "drule", map[string]any{"name": long(256)}},
		{"httptest.create", map[string]any{"name": "bi web", "hostid": hostid, "delay": "abc", "steps": []map[string]any{{"name": "s", "url": "http://127.0.0.1/", "no": 1}}},
			`Invalid parameter "/1/delay": a time unit is expected.`, "httptest", map[string]any{"name": "bi web"}},
		{"usergroup.create", map[string]any{"name": long(65)}, `Invalid parameter "/1/name": value is too long.`, "usergroup", map[string]any{"name": long(65)}},
		{"user.create", map[string]any{"username": long(101), "passwd": "Zx9!long-passw0rd", "roleid": "1", "usrgrps": []map[string]string{{"usrgrpid": "8"}}},
			`Invalid parameter "/1/username": value is too long.`, "user", map[string]any{"username": long(101)}},
		{"role.create", map[string]any{"name": long(256), "type": 1}, `Invalid parameter "/1/name": value is too long.`, "role", map[string]any{"name": long(256)}},
		{"token.create", map[string]any{"name": long(65)}, `Invalid parameter "/1/name": value is too long.`, "token", map[string]any{"name": long(65)}},
	} {
		admin.fails(c.method, c.params, -32602, c.want)
		var found []map[string]any
		admin.ok(c.get+".get", map[string]any{"filter": c.filter}, &found)
		if len(found) != 0 {
			t.Errorf("%s refused, yet %s.get finds %d", c.method, c.get, len(found))
		}
	}

	// A rename to a name over the limit is refused before anything is
	// written: the user keeps their name and groups (6.0.14 answers the
	// same for user.update).
	var users []struct {
		UserID  string
		Usrgrps []struct{ UsrgrpID string }
	}
	admin.ok("user.get", map[string]any{"filter": map[string]string{"username": "Admin"}, "selectUsrgrps": []string{"usrgrpid"}}, &users)
	admin.fails("user.update", map[string]any{"userid": users[0].UserID, "username": long(101), "usrgrps": []map[string]string{{"usrgrpid": "8"}}},
		-32602, `Invalid parameter "/1/username": value is too long.`)
	var after []struct {
		Username string
		Usrgrps  []struct{ UsrgrpID string }
	}
	admin.ok("user.get", map[string]any{"userids": []string{users[0].UserID}, "output": []string{"username"}, "selectUsrgrps": []string{"usrgrpid"}}, &after)
	if len(after) != 1 || after[0].Username != "Admin" || len(after[0].Usrgrps) != len(users[0].Usrgrps) || after[0].Usrgrps[0].UsrgrpID != users[0].Usrgrps[0].UsrgrpID {
		t.Errorf("after a refused rename: %+v, want Admin in groups %+v", after, users[0].Usrgrps)
	}
	var roles, groups []map[string]any
	admin.fails("role.update", map[string]any{"roleid": "1", "name": long(256)}, -32602, `Invalid parameter "/1/name": value is too long.`)
	admin.ok("role.get", map[string]any{"roleids": []string{"1"}, "output": []string{"name"}}, &roles)
	admin.fails("usergroup.update", map[string]any{"usrgrpid": "8", "name": long(65)}, -32602, `Invalid parameter "/1/name": value is too long.`)
	admin.ok("usergroup.get", map[string]any{"usrgrpids": []string{"8"}, "output": []string{"name"}}, &groups)
	if len(roles) != 1 || roles[0]["name"] == long(256) || len(groups) != 1 || groups[0]["name"] == long(65) {
		t.Errorf("a refused rename changed the role %v or the user group %v", roles, groups)
	}
}

// TestBadInputUserGroupRename: renaming a user group to another's name
// is refused in 6.0.14's words, the group unchanged.
func TestBadInputUserGroupRename(t *testing.T) {
	s, stop := runServer(t, testConfig(t, catalog.Spec{}))
	defer stop()
	admin := adminLogin(t, s)
	var a, b struct{ UsrgrpIDs []string }
	admin.ok("usergroup.create", map[string]any{"name": "bi a"}, &a)
	admin.ok("usergroup.create", map[string]any{"name": "bi b"}, &b)
	admin.fails("usergroup.update", map[string]any{"usrgrpid": a.UsrgrpIDs[0], "name": "bi b"}, -32602, `User group "bi b" already exists.`)
	admin.ok("usergroup.update", map[string]any{"usrgrpid": a.UsrgrpIDs[0], "name": "bi a"}, nil) // its own name is no duplicate
	var got []map[string]any
	admin.ok("usergroup.get", map[string]any{"usrgrpids": a.UsrgrpIDs, "output": []string{"name"}}, &got)
	if len(got) != 1 || got[0]["name"] != "bi a" {
		t.Errorf("after a refused rename: %v", got)
	}
}

// TestBadInputTimeUnitSpaces: 6.0.14 reads an action's esc_period with
// spaces around as a number (" 1": out of range) but refuses a web
// scenario's delay " 1" as no time unit.
func TestBadInputTimeUnitSpaces(t *testing.T) {
	s, stop := runServer(t, testConfig(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "bi-host", Groups: []string{"BI"}}}}))
	defer stop()
	admin := adminLogin(t, s)
	var hosts []struct{ HostID string }
	admin.ok("host.get", map[string]any{"filter": map[string]string{"host": "bi-host"}}, &hosts)
	op := []map[string]any{{"operationtype": 0, "opmessage_grp": []map[string]string{{"usrgrpid": "7"}}, "opmessage": map[string]any{"default_msg": 1}}}
	admin.fails("action.create", map[string]any{"name": "bi", "eventsource": 0, "esc_period": " 1", "operations": op}, -32602,
		`Invalid parameter "/1/esc_period": value must be one of 60-604800.`)
	admin.fails("httptest.create", map[string]any{"name": "bi", "hostid": hosts[0].HostID, "delay": " 1", "steps": []map[string]any{{"name": "s", "url": "http://127.0.0.1/", "no": 1}}},
		-32602, `Invalid parameter "/1/delay": a time unit is expected.`)
}
