package api

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/auth"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
)

// TestHTTPTestPermissions: a caller sees and changes only the scenarios
// of hosts it has rights on (an admin without rights gets none and is
// refused with 6.0's text), a user may not write, and the password and
// key password never come back.
func TestHTTPTestPermissions(t *testing.T) {
	f := newWriteFixture(t)
	api := New(Options{Catalog: f.cat, History: memstore.New(), Auth: &fakeAuth{sessions: map[string]User{
		"super": {ID: 1, Username: "Admin", Role: RoleSuperAdmin},
		"admin": {ID: 2, Username: "admin", Role: RoleAdmin},
		"user":  {ID: 3, Username: "viewer", Role: RoleUser},
	}, rights: map[uint64]auth.Rights{2: auth.NewRights(nil), 3: auth.NewRights(nil)}}})
	f.srv = httptest.NewServer(api.Handler())
	t.Cleanup(f.srv.Close)
	g := f.ids(t, "hostgroup.create", `{"name":"G"}`, "groupids")[0]
	h := f.ids(t, "host.create", fmt.Sprintf(`{"host":"a","groups":[{"groupid":"%s"}]}`, g), "hostids")[0]
	ht := f.ids(t, "httptest.create", fmt.Sprintf(`{"hostid":"%s","name":"site","authentication":1,"http_user":"u","http_password":"secret",
		"ssl_key_password":"k","steps":[{"name":"home","url":"http://127.0.0.1/","no":1}]}`, h), "httptestids")[0]
	got := f.get(t, "httptest.get", `{"output":"extend"}`)
	if len(got) != 1 || got[0]["http_user"] != "u" || got[0]["http_password"] != "" || got[0]["ssl_key_password"] != "" {
		t.Fatalf("super's httptest.get: %v", got)
	}
	raw, e := f.call(t, "admin", "httptest.get", `{"output":"extend"}`)
	if e != nil || strings.TrimSpace(string(raw)) != "[]" {
		t.Fatalf("admin without rights sees %s %+v", raw, e)
	}
	bad := func(token, method, params, want string) {
		t.Helper()
		_, e := f.call(t, token, method, params)
		if e == nil || !strings.Contains(e.Data, want) {
			t.Errorf("%s as %s %s: %+v, want %q", method, token, params, e, want)
		}
	}
	noPerm := "No permissions to referred object or it does not exist!"
	bad("admin", "httptest.create", fmt.Sprintf(`{"hostid":"%s","name":"x","steps":[{"name":"a","url":"http://x","no":1}]}`, h), noPerm)
	bad("admin", "httptest.update", fmt.Sprintf(`{"httptestid":"%s","delay":"5m"}`, ht), noPerm)
	bad("admin", "httptest.delete", fmt.Sprintf(`["%s"]`, ht), noPerm)
	bad("user", "httptest.create", fmt.Sprintf(`{"hostid":"%s","name":"x","steps":[{"name":"a","url":"http://x","no":1}]}`, h), "No permissions")
	bad("super", "httptest.update", `{"httptestid":"999999","delay":"5m"}`, noPerm)
	if got := f.get(t, "httptest.get", `{"output":["delay"]}`); len(got) != 1 || got[0]["delay"] != "1m" {
		t.Fatalf("a refused update changed the scenario: %v", got)
	}
}
