package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// writeFixture is an API over an empty catalog with one session per role.
type writeFixture struct {
	srv *httptest.Server
	cat *catalog.Catalog
}

func newWriteFixture(t testing.TB) *writeFixture {
	t.Helper()
	cat := catalogtest.Open(t, catalog.Spec{})
	api := New(Options{Catalog: cat, History: memstore.New(), MaxBodyBytes: 64 << 20, Auth: &fakeAuth{sessions: map[string]User{
		"super": {ID: 1, Username: "Admin", Role: RoleSuperAdmin},
		"admin": {ID: 2, Username: "admin", Role: RoleAdmin},
		"user":  {ID: 3, Username: "viewer", Role: RoleUser},
	}}})
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	return &writeFixture{srv: srv, cat: cat}
}

type rpcError struct {
	Code int
	Data string
}

// call makes one request as the session token and returns the result or
// the error.
func (f *writeFixture) call(t testing.TB, token, method, params string) (json.RawMessage, *rpcError) {
	t.Helper()
	body := `{"jsonrpc":"2.0","method":"` + method + `","params":` + params + `,"id":1,"auth":"` + token + `"}`
	resp, err := http.Post(f.srv.URL, "application/json-rpc", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Result json.RawMessage
		Error  *rpcError
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("%s: cannot decode the response: %v", method, err)
	}
	return r.Result, r.Error
}

// ok calls and fails the test on an error response.
func (f *writeFixture) ok(t testing.TB, method, params string) json.RawMessage {
	t.Helper()
	res, e := f.call(t, "super", method, params)
	if e != nil {
		t.Fatalf("%s %s: error %d %s", method, params, e.Code, e.Data)
	}
	return res
}

// ids calls a create method and returns the IDs under name.
func (f *writeFixture) ids(t testing.TB, method, params, name string) []string {
	t.Helper()
	var r map[string][]string
	if err := json.Unmarshal(f.ok(t, method, params), &r); err != nil {
		t.Fatal(err)
	}
	return r[name]
}

func (f *writeFixture) get(t testing.TB, method, params string) []map[string]any {
	t.Helper()
	var r []map[string]any
	if err := json.Unmarshal(f.ok(t, method, params), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestConfigWriteRoundTrip(t *testing.T) {
	f := newWriteFixture(t)
	gids := f.ids(t, "hostgroup.create", `[{"name":"Linux servers"},{"name":"Web"}]`, "groupids")
	if len(gids) != 2 {
		t.Fatalf("groupids %v", gids)
	}
	hid := f.ids(t, "host.create", fmt.Sprintf(`{"host":"web-01","name":"Web 1","status":"0",
		"groups":[{"groupid":"%s"},{"groupid":%s}],
		"interfaces":[{"type":1,"main":1,"useip":1,"ip":"127.0.0.1","dns":"","port":"10050"}],
		"tags":[{"tag":"env","value":"prod"}],"inventory_mode":-1,"description":"front end"}`, gids[0], gids[1]), "hostids")[0]
	iids := f.ids(t, "item.create", fmt.Sprintf(`[
		{"name":"Requests","key_":"app.requests","hostid":"%s","type":2,"value_type":3,"units":"req"},
		{"name":"CPU load","key_":"system.cpu.load[all,avg1]","hostid":%s,"type":"0","value_type":"0","delay":"30s","history":"7d","trends":"0","status":1,"interfaceid":"1","description":"load"}
	]`, hid, hid), "itemids")
	if len(iids) != 2 {
		t.Fatalf("itemids %v", iids)
	}

	groups := f.get(t, "hostgroup.get", `{"output":["groupid","name"],"sortfield":"name"}`)
	if diff := cmp.Diff([]map[string]any{{"groupid": gids[0], "name": "Linux servers"}, {"groupid": gids[1], "name": "Web"}}, groups); diff != "" {
		t.Fatalf("hostgroup.get (-want +got):\n%s", diff)
	}
	hosts := f.get(t, "host.get", `{"output":["hostid","host","name","status"],"selectGroups":["groupid"],"selectTags":"extend"}`)
	if len(hosts) != 1 || hosts[0]["host"] != "web-01" || hosts[0]["name"] != "Web 1" || hosts[0]["status"] != "0" || len(hosts[0]["groups"].([]any)) != 2 {
		t.Fatalf("host.get: %v", hosts)
	}
	if diff := cmp.Diff([]any{map[string]any{"tag": "env", "value": "prod"}}, hosts[0]["tags"]); diff != "" {
		t.Fatalf("host tags (-want +got):\n%s", diff)
	}
	items := f.get(t, "item.get", `{"output":["itemid","hostid","name","key_","type","value_type","delay","history","trends","units","status"],"sortfield":"name"}`)
	want := []map[string]any{
		{"itemid": iids[1], "hostid": hid, "name": "CPU load", "key_": "system.cpu.load[all,avg1]", "type": "0", "value_type": "0", "delay": "30s", "history": "7d", "trends": "0", "units": "", "status": "1"},
		{"itemid": iids[0], "hostid": hid, "name": "Requests", "key_": "app.requests", "type": "2", "value_type": "3", "delay": "0", "history": "90d", "trends": "365d", "units": "req", "status": "0"},
	}
	if diff := cmp.Diff(want, items); diff != "" {
		t.Fatalf("item.get (-want +got):\n%s", diff)
	}

	// Updates return the IDs given and change only what is named.
	if got := string(f.ok(t, "hostgroup.update", fmt.Sprintf(`{"groupid":%s,"name":"Web servers"}`, gids[1]))); got != fmt.Sprintf(`{"groupids":["%s"]}`, gids[1]) {
		t.Fatalf("hostgroup.update result %s", got)
	}
	f.ok(t, "host.update", fmt.Sprintf(`{"hostid":"%s","host":"web-02","status":1,"groups":{"groupid":"%s"}}`, hid, gids[0]))
	f.ok(t, "item.update", fmt.Sprintf(`[{"itemid":"%s","units":"rps","status":"1","hostid":"%s"},{"itemid":"%s","value_type":4,"delay":60}]`, iids[0], hid, iids[1]))
	s := f.cat.Snapshot()
	if h := s.Host("web-02"); h == nil || h.Name != "Web 1" || h.Enabled || len(h.GroupIDs) != 1 || id(h.GroupIDs[0]) != gids[0] || len(h.Tags) != 1 {
		t.Fatalf("updated host %+v", h)
	}
	f.ok(t, "host.update", fmt.Sprintf(`{"hostid":"%s","tags":[]}`, hid))
	if h := f.cat.Snapshot().Host("web-02"); h.Tags != nil || h.Enabled {
		t.Fatalf("host.update of tags: %+v", h)
	}
	if g := s.Group("Web servers"); g == nil || id(g.ID) != gids[1] {
		t.Fatal("group not renamed")
	}
	if it := s.Lookup("web-02", "app.requests"); it == nil || it.Units != "rps" || it.Enabled || it.Name != "Requests" {
		t.Fatalf("updated item %+v", it)
	}
	if it := s.Lookup("web-02", "system.cpu.load[all,avg1]"); it == nil || it.ValueType != 4 || it.Trends != "0" || it.Delay != "60" {
		t.Fatalf("updated item %+v", it)
	}

	// Deletes.
	if got := string(f.ok(t, "item.delete", fmt.Sprintf(`["%s"]`, iids[1]))); got != fmt.Sprintf(`{"itemids":["%s"]}`, iids[1]) {
		t.Fatalf("item.delete result %s", got)
	}
	if items := f.get(t, "item.get", `{"output":["itemid"]}`); len(items) != 1 || items[0]["itemid"] != iids[0] {
		t.Fatalf("item.get after item.delete: %v", items)
	}
	f.ok(t, "hostgroup.delete", fmt.Sprintf(`[%s]`, gids[1]))
	f.ok(t, "host.delete", fmt.Sprintf(`[%s]`, hid))
	f.ok(t, "hostgroup.delete", fmt.Sprintf(`["%s"]`, gids[0]))
	if s := f.cat.Snapshot(); s.HostCount() != 0 || s.ItemCount() != 0 || len(s.Groups()) != 0 {
		t.Fatalf("catalog not empty after the deletes: %d hosts, %d items", s.HostCount(), s.ItemCount())
	}
}

// TestHostDeleteRemovesItems checks that host.delete takes the host's
// items out of the snapshot and item.get at once, and leaves other hosts'
// items alone.
func TestHostDeleteRemovesItems(t *testing.T) {
	f := newWriteFixture(t)
	g := f.ids(t, "hostgroup.create", `{"name":"G"}`, "groupids")[0]
	h := f.ids(t, "host.create", fmt.Sprintf(`[{"host":"a","groups":[{"groupid":"%s"}]},{"host":"b","groups":[{"groupid":"%s"}]}]`, g, g), "hostids")
	var batch []string
	for _, hid := range h {
		for i := range 5 {
			batch = append(batch, fmt.Sprintf(`{"name":"k%d","key_":"k[%d]","hostid":"%s","type":2,"value_type":0}`, i, i, hid))
		}
	}
	iids := f.ids(t, "item.create", "["+strings.Join(batch, ",")+"]", "itemids")
	f.ok(t, "host.delete", fmt.Sprintf(`["%s"]`, h[0]))
	if items := f.get(t, "item.get", fmt.Sprintf(`{"hostids":"%s"}`, h[0])); len(items) != 0 {
		t.Fatalf("item.get of the deleted host: %v", items)
	}
	if items := f.get(t, "item.get", fmt.Sprintf(`{"itemids":["%s","%s"]}`, iids[0], iids[5])); len(items) != 1 || items[0]["itemid"] != iids[5] {
		t.Fatalf("item.get by ID after host.delete: %v", items)
	}
	s := f.cat.Snapshot()
	if s.Lookup("a", "k[0]") != nil || s.Host("a") != nil || s.Lookup("b", "k[0]") == nil || s.ItemCount() != 5 {
		t.Fatal("snapshot still has the deleted host's items or lost the other host's")
	}
	// Its items are gone for item.update and item.delete too.
	if _, e := f.call(t, "super", "item.delete", fmt.Sprintf(`["%s"]`, iids[0])); e == nil || e.Data != "No permissions to referred object or it does not exist!" {
		t.Fatalf("item.delete of a deleted host's item: %+v", e)
	}
}

// TestConfigWriteErrors checks the write methods' refusals; where Zabbix
// 6.0 refuses, code and text are those recorded from Zabbix 6.0.14.
func TestConfigWriteErrors(t *testing.T) {
	f := newWriteFixture(t)
	g1 := f.ids(t, "hostgroup.create", `{"name":"G1"}`, "groupids")[0]
	g2 := f.ids(t, "hostgroup.create", `{"name":"G2"}`, "groupids")[0]
	h1 := f.ids(t, "host.create", fmt.Sprintf(`{"host":"h1","name":"Host one","groups":[{"groupid":"%s"}]}`, g1), "hostids")[0]
	f.ids(t, "host.create", fmt.Sprintf(`{"host":"h2","groups":[{"groupid":"%s"},{"groupid":"%s"}]}`, g1, g2), "hostids")
	i1 := f.ids(t, "item.create", fmt.Sprintf(`{"name":"x","key_":"x","hostid":"%s","type":2,"value_type":0}`, h1), "itemids")[0]
	version := f.cat.Snapshot().Version()
	const noPerm = "No permissions to referred object or it does not exist!"
	cases := []struct {
		token, method, params string
		code                  int
		data                  string
	}{
		// Roles: reading users may not write; hostgroup.create needs a super admin.
		// Below the method's user type: Zabbix 6.0's text (recorded).
		{"user", "item.create", `{"name":"y","key_":"y","hostid":"` + h1 + `","type":2,"value_type":0}`, -32602, `No permissions to call "item.create".`},
		{"admin", "hostgroup.create", `{"name":"G3"}`, -32602, `No permissions to call "hostgroup.create".`},
		{"user", "host.delete", `["` + h1 + `"]`, -32602, `No permissions to call "host.delete".`},
		// Shapes.
		{"super", "hostgroup.create", `[]`, -32602, `Invalid parameter "/": cannot be empty.`},
		{"super", "hostgroup.create", `[{"name":"a"},"b"]`, -32602, `Invalid parameter "/2": an object is expected.`},
		{"super", "hostgroup.create", `{"name":"a","color":"red"}`, -32602, `Invalid parameter "/1": unexpected parameter "color".`},
		{"super", "hostgroup.create", `{"name":5}`, -32602, `Invalid parameter "/1/name": a character string is expected.`},
		{"super", "hostgroup.create", `{}`, -32602, `Invalid parameter "/": cannot be empty.`},
		{"super", "hostgroup.create", `{"groupid":"1"}`, -32602, `Invalid parameter "/1": unexpected parameter "groupid".`},
		{"super", "hostgroup.create", `{"name":""}`, -32602, `Invalid parameter "/1/name": cannot be empty.`},
		{"super", "hostgroup.create", `{"name":"a/"}`, -32602, `Invalid parameter "/1/name": invalid host group name.`},
		{"super", "hostgroup.create", `{"name":"a//b"}`, -32602, `Invalid parameter "/1/name": invalid host group name.`},
		{"super", "hostgroup.update", `{"groupid":"` + g1 + `","name":"/a"}`, -32602, `Invalid parameter "/1/name": invalid host group name.`},
		{"super", "hostgroup.delete", `{"groupid":"` + g1 + `"}`, -32602, `Host "h1" cannot be without host group.`},
		{"super", "hostgroup.delete", `{}`, -32602, `Invalid parameter "/": cannot be empty.`},
		{"super", "hostgroup.delete", `["` + g2 + `","` + g2 + `"]`, -32602, `Invalid parameter "/2": value (` + g2 + `) already exists.`},
		{"super", "hostgroup.delete", `["x"]`, -32602, `Invalid parameter "/1": a number is expected.`},
		// Conflicts and the Zabbix texts.
		{"super", "hostgroup.create", `[{"name":"new"},{"name":"G2"}]`, -32602, `Host group "G2" already exists.`},
		{"super", "hostgroup.update", `{"groupid":"` + g1 + `","name":"G2"}`, -32602, `Host group "G2" already exists.`},
		{"super", "hostgroup.update", `{"groupid":"999"}`, -32500, noPerm},
		{"super", "hostgroup.delete", `["` + g1 + `"]`, -32602, `Host "h1" cannot be without host group.`},
		{"super", "hostgroup.delete", `["999"]`, -32500, noPerm},
		{"super", "host.create", `{"host":"h1","groups":[{"groupid":"` + g1 + `"}]}`, -32602, `Host with the same name "h1" already exists.`},
		{"super", "host.create", `{"host":"h3","name":"Host one","groups":[{"groupid":"` + g1 + `"}]}`, -32602, `Host with the same visible name "Host one" already exists.`},
		{"super", "host.create", `{}`, -32602, `Empty input parameter.`},
		{"super", "host.create", `{"name":"h3"}`, -32602, `Wrong fields for host "".`},
		{"super", "host.create", `{"host":"h3"}`, -32602, `Host "h3" cannot be without host group.`},
		{"super", "host.create", `{"host":"h3","groups":[]}`, -32602, `Host "h3" cannot be without host group.`},
		{"super", "host.create", `{"host":"h3","groups":"` + g1 + `"}`, -32602, `Host "h3" cannot be without host group.`},
		{"super", "host.create", `{"host":"h3","groups":[{"name":"G1"}]}`, -32602, `Incorrect value for field "groups": the parameter "groupid" is missing.`},
		{"super", "host.create", `{"host":"h3","groups":[{"groupid":"x"}]}`, -32500, noPerm},
		{"super", "host.create", `{"host":"h3","groups":[{"groupid":"` + g1 + `"},{"groupid":` + g1 + `}]}`, -32602, `Invalid parameter "/1/groups/2": value (groupid)=(` + g1 + `) already exists.`},
		{"super", "host.create", `{"host":"h3","groups":[{"groupid":"999"}]}`, -32500, noPerm},
		{"super", "host.create", `{"host":"h/3","groups":[{"groupid":"` + g1 + `"}]}`, -32602, `Incorrect characters used for host name "h/3".`},
		{"super", "host.create", `{"host":"h/3"}`, -32602, `Incorrect characters used for host name "h/3".`},
		{"super", "host.create", `{"host":"` + strings.Repeat("h", 129) + `","groups":[{"groupid":"` + g1 + `"}]}`, -32500, `Value "hhh`},
		{"super", "host.create", `{"host":"h3","status":2,"groups":[{"groupid":"` + g1 + `"}]}`, -32500, `Incorrect status for host "h3".`},
		{"super", "host.create", `{"host":"h3","status":null,"groups":[{"groupid":"` + g1 + `"}]}`, -32500, `Incorrect status for host "h3".`},
		{"super", "host.create", `{"host":"h3","status":2,"groups":[{"groupid":"999"}]}`, -32500, noPerm},
		{"super", "host.create", `{"host":"h3","groups":[{"groupid":"` + g1 + `"}],"templates":[{"templateid":"10001"}]}`, -32500, noPerm},
		{"super", "host.create", `[{"host":"h3","groups":[{"groupid":"` + g1 + `"}]},{"host":"h3","groups":[{"groupid":"` + g1 + `"}]}]`, -32602, `Host with the same name "h3" already exists.`},
		{"super", "host.create", `{"host":"h3","groups":[{"groupid":"` + g1 + `"}],"tags":[{"tag":"a","value":"1"},{"tag":"a","value":"1"}]}`, -32602, `Invalid parameter "/1/tags/2": value (tag, value)=(a, 1) already exists.`},
		{"super", "host.create", `{"host":"h3","groups":[{"groupid":"` + g1 + `"}],"tags":[{"value":"1"}]}`, -32602, `Invalid parameter "/1/tags/1": the parameter "tag" is missing.`},
		{"super", "host.create", `{"host":"h3","groups":[{"groupid":"` + g1 + `"}],"tags":[{"tag":""}]}`, -32602, `Invalid parameter "/1/tags/1/tag": cannot be empty.`},
		{"super", "host.create", `{"host":"h3","groups":[{"groupid":"` + g1 + `"}],"tags":[{"tag":1}]}`, -32602, `Invalid parameter "/1/tags/1/tag": a character string is expected.`},
		{"super", "host.update", `[]`, -32602, `Empty input parameter.`},
		{"super", "host.update", `{"host":"h9"}`, -32602, `Wrong fields for host "h9".`},
		{"super", "host.update", `{"hostid":"999","status":5}`, -32602, noPerm},
		{"super", "host.update", `{"hostid":"` + h1 + `","groups":[]}`, -32602, `Host "h1" cannot be without host group.`},
		{"super", "host.update", `{"hostid":"` + h1 + `","host":"a b!","groups":[]}`, -32602, `Incorrect characters used for host name "a b!".`},
		{"super", "host.update", `{"hostid":"` + h1 + `","groups":[{"groupid":"999"}],"status":"x"}`, -32500, noPerm},
		{"super", "host.update", `{"hostid":"` + h1 + `","status":"x"}`, -32500, `Incorrect status for host "h1".`},
		{"super", "host.delete", `["999"]`, -32500, noPerm},
		{"super", "item.create", `{"name":"y","key_":"x","hostid":"` + h1 + `","type":2,"value_type":0}`, -32602, `Item with key "x" already exists on "h1".`},
		{"super", "item.create", `{"name":"y","key_":"y","hostid":"999","type":2,"value_type":0}`, -32602, noPerm},
		{"super", "item.create", `{"name":"y","hostid":"` + h1 + `","type":2,"value_type":0}`, -32602, `Incorrect arguments passed to function.`},
		{"super", "item.create", `{"name":"y","key_":"y","hostid":"` + h1 + `","value_type":0}`, -32602, `Invalid parameter "/1": the parameter "type" is missing.`},
		{"super", "item.create", `{"name":"y","key_":"y","hostid":"` + h1 + `","type":5,"value_type":0}`, -32602, `Incorrect arguments passed to function.`},
		{"super", "item.create", `[{"name":"y","key_":"y","hostid":"` + h1 + `","type":2,"value_type":0},{"name":"z","key_":"z[","hostid":"` + h1 + `","type":2,"value_type":0}]`, -32602, `Invalid key "z[" for item "z" on "h1": unexpected end of key.`},
		{"super", "item.create", `{"name":"y","key_":"","hostid":"` + h1 + `","type":2,"value_type":0}`, -32602, `Invalid key "" for item "y" on "h1": key is empty.`},
		{"super", "item.create", `{"name":"y","key_":"y","hostid":"` + h1 + `","type":2,"value_type":9}`, -32602, `Invalid parameter "/1/value_type": value must be one of 0, 1, 2, 3, 4.`},
		{"super", "item.create", `{"name":"y","key_":"y","hostid":"` + h1 + `","type":16,"value_type":0,"delay":"1m"}`, -32602, `No interface found.`},
		{"super", "item.create", `{"name":"y","key_":"y","hostid":"` + h1 + `","type":99,"value_type":0}`, -32602, `Invalid parameter "/1/type": value must be one of 0, 2, 3, 5, 7, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21.`},
		{"super", "item.create", `{"name":"y","key_":"y","hostid":"` + h1 + `","type":"trapper","value_type":0}`, -32602, `Invalid parameter "/1/type": an integer is expected.`},
		{"super", "item.create", `{"name":"y","key_":"y","hostid":"` + h1 + `","type":5,"value_type":0,"delay":"0"}`, -32602, `Item will not be refreshed. Specified update interval requires having at least one either flexible or scheduling interval.`},
		{"super", "item.create", `{"name":"y","key_":"y","hostid":"` + h1 + `","type":0,"value_type":0,"delay":"1m"}`, -32602, `No interface found.`},
		{"super", "item.create", `{"name":"y","key_":"y","hostid":"` + h1 + `","type":2,"value_type":1,"trends":"365d"}`, -32602, `Invalid parameter "/1/trends": must be "0" for value type character`},
		{"super", "item.create", `{"name":"y","key_":"y","hostid":"` + h1 + `","type":2,"value_type":0,"history":"1x"}`, -32602, `Incorrect value for field "history": a time unit is expected.`}, // 6.0.14's words
		{"super", "item.create", `{"name":"y","key_":"y","hostid":"` + h1 + `","type":2,"value_type":0,"preprocessing":[{"type":1,"params":"x"}]}`, -32602, `Invalid parameter "/1/preprocessing/1/params/1": a numeric value is expected, got "x".`},
		{"super", "item.update", `{"itemid":"999","units":"B"}`, -32500, noPerm},
		{"super", "item.update", `{"itemid":"` + i1 + `","hostid":"999"}`, -32602, `Invalid parameter "/1/hostid": cannot be changed.`},
		{"super", "item.update", `{"itemid":"` + i1 + `","value_type":1,"trends":"1d"}`, -32602, `Invalid parameter "/1/trends": must be "0"`},
		{"super", "item.delete", `["` + i1 + `","999"]`, -32500, noPerm},
	}
	for _, tc := range cases {
		_, e := f.call(t, tc.token, tc.method, tc.params)
		if e == nil || e.Code != tc.code || !strings.HasPrefix(e.Data, tc.data) {
			t.Errorf("%s %s as %s: got %+v, want code %d data starting %q", tc.method, tc.params, tc.token, e, tc.code, tc.data)
		}
		if v := f.cat.Snapshot().Version(); v != version {
			t.Fatalf("%s %s: a failed call changed the catalog (version %d -> %d)", tc.method, tc.params, version, v)
		}
	}
	// An admin may do everything but create groups.
	if _, e := f.call(t, "admin", "host.update", `{"hostid":"`+h1+`","name":"Renamed"}`); e != nil {
		t.Fatalf("host.update as admin: %+v", e)
	}
}

// TestItemCreateBatch creates 10,000 trapper items in one item.create
// call: one snapshot version, every item found by key at once.
func TestItemCreateBatch(t *testing.T) {
	f := newWriteFixture(t)
	g := f.ids(t, "hostgroup.create", `{"name":"G"}`, "groupids")[0]
	hid := f.ids(t, "host.create", `{"host":"big","groups":{"groupid":"`+g+`"}}`, "hostids")[0]
	sub := f.cat.Subscribe()
	before := f.cat.Snapshot().Version()
	ids := f.ids(t, "item.create", itemBatch(hid, 10000), "itemids")
	s := f.cat.Snapshot()
	if len(ids) != 10000 || s.Version() != before+1 || s.ItemCount() != 10000 {
		t.Fatalf("%d IDs, version %d -> %d, %d items", len(ids), before, s.Version(), s.ItemCount())
	}
	for i, want := range ids {
		if it := s.Lookup("big", fmt.Sprintf("trap[%d]", i)); it == nil || id(it.ID) != want || it.Type != catalog.Trapper {
			t.Fatalf("item %d: Lookup = %+v, want ID %s", i, it, want)
		}
	}
	<-sub
	select {
	case <-sub:
		t.Fatal("one item.create signalled the subscribers twice")
	default:
	}
	if got := string(f.ok(t, "item.get", `{"hostids":"`+hid+`","countOutput":true}`)); got != `"10000"` {
		t.Fatalf("item.get count %s", got)
	}
}

// itemBatch returns item.create params for n trapper items on host hid.
func itemBatch(hid string, n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"Trap %d","key_":"trap[%d]","hostid":"%s","type":2,"value_type":%d,"units":"B"}`, i, i, hid, []int{0, 3}[i%2])
	}
	b.WriteByte(']')
	return b.String()
}

// TestConfigWriteConcurrent runs creates from several clients while
// readers look items up; run with -race.
func TestConfigWriteConcurrent(t *testing.T) {
	f := newWriteFixture(t)
	g := f.ids(t, "hostgroup.create", `{"name":"G"}`, "groupids")[0]
	hid := f.ids(t, "host.create", `{"host":"h","groups":[{"groupid":"`+g+`"}]}`, "hostids")[0]
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				s := f.cat.Snapshot()
				if h := s.Host("h"); h != nil {
					for _, it := range h.Items() {
						if s.Lookup("h", it.Key) != it || s.Item(it.ID) != it {
							t.Errorf("snapshot %d: item %q not found by key or ID", s.Version(), it.Key)
							return
						}
					}
				}
			}
		}()
	}
	var writers sync.WaitGroup
	for w := range 4 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for r := range 5 {
				params := fmt.Sprintf(`[{"name":"a","key_":"k[%d,%d,a]","hostid":"%s","type":2,"value_type":0},{"name":"b","key_":"k[%d,%d,b]","hostid":"%s","type":2,"value_type":0}]`, w, r, hid, w, r, hid)
				if _, e := f.call(t, "super", "item.create", params); e != nil {
					t.Errorf("item.create: %+v", e)
					return
				}
			}
		}()
	}
	writers.Wait()
	close(stop)
	readers.Wait()
	if n := f.cat.Snapshot().ItemCount(); n != 40 {
		t.Fatalf("%d items after 20 calls of 2", n)
	}
}

// TestItemTimestampPrecision: Peregrine's own item field
// timestamp_precision through item.create, item.update and item.get, and
// its validation error naming the member.
func TestItemTimestampPrecision(t *testing.T) {
	f := newWriteFixture(t)
	g := f.ids(t, "hostgroup.create", `{"name":"G"}`, "groupids")[0]
	h := f.ids(t, "host.create", fmt.Sprintf(`{"host":"a","groups":[{"groupid":"%s"}]}`, g), "hostids")[0]
	id := f.ids(t, "item.create", fmt.Sprintf(`{"name":"k","key_":"k","hostid":"%s","type":2,"value_type":0,"timestamp_precision":"ms"}`, h), "itemids")[0]
	prec := func() any {
		t.Helper()
		items := f.get(t, "item.get", fmt.Sprintf(`{"itemids":"%s","output":["timestamp_precision"]}`, id))
		if len(items) != 1 {
			t.Fatalf("item.get: %v", items)
		}
		return items[0]["timestamp_precision"]
	}
	if p := prec(); p != "ms" {
		t.Fatalf("created with ms, item.get says %v", p)
	}
	f.ok(t, "item.update", fmt.Sprintf(`{"itemid":"%s","timestamp_precision":"s"}`, id))
	if p := prec(); p != "s" {
		t.Fatalf("updated to s, item.get says %v", p)
	}
	f.ok(t, "item.update", fmt.Sprintf(`{"itemid":"%s","units":"B"}`, id))
	if p := prec(); p != "s" {
		t.Fatalf("an update of units changed the precision to %v", p)
	}
	_, e := f.call(t, "super", "item.update", fmt.Sprintf(`{"itemid":"%s","timestamp_precision":"fortnight"}`, id))
	if e == nil || !strings.Contains(e.Data, "timestamp_precision") {
		t.Fatalf("a bad precision: %+v", e)
	}
}

// TestLegacyWritesIgnoreUnknownMembers: host.create/update,
// item.create/update and hostinterface.create/update ignore members
// they do not know (and the ID on create), top-level and in a host's
// interfaces, where the
// other write methods refuse them (recorded from Zabbix 6.0.14:
// host.create {"xyz": 1, ...} creates the host, hostgroup.create refuses
// it).
func TestLegacyWritesIgnoreUnknownMembers(t *testing.T) {
	f := newWriteFixture(t)
	g := f.ids(t, "hostgroup.create", `{"name":"G"}`, "groupids")[0]
	h := f.ids(t, "host.create", `{"host":"h","groups":[{"groupid":"`+g+`","xyz":1}],"xyz":1,
		"interfaces":[{"type":1,"main":1,"useip":1,"ip":"127.0.0.1","dns":"","port":"10050","xyz":1}]}`, "hostids")[0]
	f.ok(t, "host.update", `{"hostid":"`+h+`","xyz":1}`)
	i := f.ids(t, "item.create", `{"hostid":"`+h+`","name":"x","key_":"x","type":2,"value_type":3,"xyz":1}`, "itemids")[0]
	f.ok(t, "item.update", `{"itemid":"`+i+`","xyz":1}`)
	iface := f.ids(t, "hostinterface.create", `{"hostid":"`+h+`","type":1,"main":0,"useip":1,"ip":"127.0.0.2","dns":"","port":"10050","xyz":1}`, "interfaceids")[0]
	f.ok(t, "hostinterface.update", `{"interfaceid":"`+iface+`","xyz":1}`)
	if n := len(f.cat.Snapshot().Host("h").Interfaces); n != 2 {
		t.Fatalf("%d interfaces", n)
	}
	// An ID on create is ignored too: a get method's object given back
	// makes a new object.
	if h2 := f.ids(t, "host.create", `{"host":"h2","hostid":"`+h+`","groups":[{"groupid":"`+g+`"}]}`, "hostids")[0]; h2 == h {
		t.Fatal("host.create with a hostid reused it")
	}
	if i2 := f.ids(t, "item.create", `{"itemid":"`+i+`","hostid":"`+h+`","name":"y","key_":"y","type":2,"value_type":3}`, "itemids")[0]; i2 == i {
		t.Fatal("item.create with an itemid reused it")
	}
	for method, params := range map[string]string{
		"hostgroup.create": `{"name":"G2","xyz":1}`,
		"hostgroup.update": `{"groupid":"` + g + `","xyz":1}`,
	} {
		if _, e := f.call(t, "super", method, params); e == nil || e.Data != `Invalid parameter "/1": unexpected parameter "xyz".` {
			t.Errorf("%s %s: %+v", method, params, e)
		}
	}
}
