package api

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/google/go-cmp/cmp"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/auth"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// permFixture is an API over the real auth store, a catalog and history:
//
//	web-1    in Linux          items a (float), b (unsigned)
//	both-1   in Linux and DB   item a
//	db-1     in DB             item a
//	secret-1 in Linux and Secret  item a
//
// Users log in through user.login; user groups are made with
// usergroup.create, so the whole path is the one clients take.
type permFixture struct {
	t     *testing.T
	srv   *httptest.Server
	cat   *catalog.Catalog
	store *auth.Store
	snap  *catalog.Snapshot
	root  string // the super admin's session
	push  *recordingPusher
	queue *fakeQueue // queue.get's overdue checks (none until set)
	flush *fakeFlush // history.flush's housekeeper
}

// recordingPusher stands in for the trapper behind history.push: it
// records what reaches it and accepts every value it knows the item of.
type recordingPusher struct {
	cat *catalog.Catalog
	got []PushValue
}

func (p *recordingPusher) Push(_ context.Context, vs []PushValue) ([]PushResult, error) {
	p.got = append(p.got, vs...)
	snap := p.cat.Snapshot()
	res := make([]PushResult, len(vs))
	for i, v := range vs {
		it := snap.Item(v.ItemID)
		if v.ItemID == 0 {
			it = snap.Lookup(v.Host, v.Key)
		}
		if it == nil {
			res[i].Err = "No such item."
			continue
		}
		res[i].ItemID = it.ID
	}
	return res, nil
}

func newPermFixture(t *testing.T) *permFixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	cat := catalogtest.Open(t, catalog.Spec{Hosts: []catalog.HostSpec{
		{Host: "web-1", Groups: []string{"Linux"}, Items: []catalog.ItemSpec{{Key: "a", ValueType: "float"}, {Key: "b", ValueType: "unsigned"}}},
		{Host: "both-1", Groups: []string{"Linux", "DB"}, Items: []catalog.ItemSpec{{Key: "a", ValueType: "float"}}},
		{Host: "db-1", Groups: []string{"DB"}, Items: []catalog.ItemSpec{{Key: "a", ValueType: "float"}}},
		{Host: "secret-1", Groups: []string{"Linux", "Secret"}, Items: []catalog.ItemSpec{{Key: "a", ValueType: "float"}}},
	}})
	snap := cat.Snapshot()
	st := memstore.New()
	var vs []history.Sample
	for _, h := range snap.Hosts() {
		for _, it := range h.Items() {
			for i := range 3 {
				s := history.Sample{ItemID: it.ID, Clock: 1000 + int64(i), Type: history.Float, F: float64(i)}
				if it.ValueType == history.Uint {
					s.Type, s.F, s.U = history.Uint, 0, uint64(i)
				}
				vs = append(vs, s)
			}
		}
	}
	if err := st.Write(ctx, vs); err != nil {
		t.Fatal(err)
	}
	store, err := auth.Open(ctx, auth.Options{Path: filepath.Join(dir, "auth.db"), FailDelay: -1, HashParams: auth.HashParams{Memory: 64, Time: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	for _, u := range []struct {
		name string
		role auth.Role
	}{{"Admin", auth.RoleSuperAdmin}, {"reader", auth.RoleUser}, {"writer", auth.RoleAdmin}, {"lonely", auth.RoleUser}, {"mixed", auth.RoleUser}} {
		if _, err := store.CreateUser(ctx, u.name, testPassword, u.role); err != nil {
			t.Fatal(err)
		}
	}
	push := &recordingPusher{cat: cat}
	queue := &fakeQueue{}
	flush := &fakeFlush{}
	api := New(Options{Catalog: cat, History: st, Trends: fakeTrends{}, Auth: store, Accounts: store, Ingest: push, Queue: queue, HistoryFlush: flush})
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	f := &permFixture{t: t, srv: srv, cat: cat, store: store, snap: snap, push: push, queue: queue, flush: flush}
	f.root = f.login("Admin")
	return f
}

func (f *permFixture) login(user string) string {
	f.t.Helper()
	var sid string
	f.mustDo("", "user.login", fmt.Sprintf(`{"username":%q,"password":%q}`, user, testPassword), &sid)
	return sid
}

// do calls method as session sid and returns the result or the error.
func (f *permFixture) do(sid, method, params string) (json.RawMessage, *rpcError) {
	f.t.Helper()
	authm := ""
	if sid != "" {
		authm = `,"auth":"` + sid + `"`
	}
	resp, err := http.Post(f.srv.URL, "application/json-rpc", strings.NewReader(`{"jsonrpc":"2.0","method":"`+method+`","params":`+params+`,"id":1`+authm+`}`))
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Result json.RawMessage
		Error  *rpcError
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		f.t.Fatalf("%s: %v", method, err)
	}
	return r.Result, r.Error
}

func (f *permFixture) mustDo(sid, method, params string, out any) {
	f.t.Helper()
	res, e := f.do(sid, method, params)
	if e != nil {
		f.t.Fatalf("%s %s: error %d %s", method, params, e.Code, e.Data)
	}
	if out != nil {
		if err := json.Unmarshal(res, out); err != nil {
			f.t.Fatalf("%s: %s: %v", method, res, err)
		}
	}
}

func (f *permFixture) userID(name string) uint64 {
	f.t.Helper()
	us, err := f.store.Users(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	for _, u := range us {
		if u.Username == name {
			return u.ID
		}
	}
	f.t.Fatalf("no user %s", name)
	return 0
}

func (f *permFixture) group(name string) uint64 { return f.snap.Group(name).ID }
func (f *permFixture) host(name string) uint64  { return f.snap.Host(name).ID }
func (f *permFixture) item(host string) uint64  { return f.snap.Lookup(host, "a").ID }

// names returns field of each object of a get answer, sorted and joined.
func (f *permFixture) names(sid, method, params, field string) string {
	f.t.Helper()
	var objs []map[string]any
	f.mustDo(sid, method, params, &objs)
	var out []string
	for _, o := range objs {
		out = append(out, fmt.Sprint(o[field]))
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// usergroup creates a user group as the super admin.
func (f *permFixture) usergroup(name string, rights map[string]int, users ...string) string {
	f.t.Helper()
	var rs []string
	for g, p := range rights {
		rs = append(rs, fmt.Sprintf(`{"id":"%d","permission":%d}`, f.group(g), p))
	}
	var us []string
	for _, u := range users {
		us = append(us, fmt.Sprintf(`"%d"`, f.userID(u)))
	}
	var res struct{ UsrgrpIDs []string }
	f.mustDo(f.root, "usergroup.create", fmt.Sprintf(`{"name":%q,"rights":[%s],"userids":[%s]}`, name, strings.Join(rs, ","), strings.Join(us, ",")), &res)
	return res.UsrgrpIDs[0]
}

// TestPermissionsReadOnlyUser: a user with read on Linux (and a deny on
// Secret) sees the Linux hosts but not secret-1, nor db-1 (no rights),
// in every get method and in history.get and trend.get.
func TestPermissionsReadOnlyUser(t *testing.T) {
	f := newPermFixture(t)
	f.usergroup("Readers", map[string]int{"Linux": 2}, "reader")
	f.usergroup("No secrets", map[string]int{"Secret": 0}, "reader")
	ro := f.login("reader")

	if got := f.names(ro, "hostgroup.get", `{"output":["name"]}`, "name"); got != "Linux" {
		t.Errorf("hostgroup.get: %s", got)
	}
	var groups []struct{ Hosts []struct{ Host string } }
	f.mustDo(ro, "hostgroup.get", `{"output":["name"],"selectHosts":["host"]}`, &groups)
	if len(groups) != 1 || len(groups[0].Hosts) != 2 {
		t.Errorf("hostgroup.get selectHosts shows hosts the user cannot read: %+v", groups)
	}
	if got := f.names(ro, "hostgroup.get", fmt.Sprintf(`{"groupids":["%d","%d"]}`, f.group("DB"), f.group("Secret")), "name"); got != "" {
		t.Errorf("hostgroup.get of unreadable groups by ID: %s", got)
	}
	if got := f.names(ro, "host.get", `{"output":["host"]}`, "host"); got != "both-1,web-1" {
		t.Errorf("host.get: %s", got)
	}
	if got := f.names(ro, "host.get", fmt.Sprintf(`{"hostids":["%d","%d"]}`, f.host("db-1"), f.host("secret-1")), "host"); got != "" {
		t.Errorf("host.get of unreadable hosts by ID: %s", got)
	}
	if got := f.names(ro, "host.get", `{"filter":{"host":"secret-1"}}`, "host"); got != "" {
		t.Errorf("host.get of a denied host by name: %s", got)
	}
	var hosts []struct{ Groups []struct{ Name string } }
	f.mustDo(ro, "host.get", fmt.Sprintf(`{"hostids":"%d","selectGroups":["name"]}`, f.host("both-1")), &hosts)
	if len(hosts) != 1 || len(hosts[0].Groups) != 1 || hosts[0].Groups[0].Name != "Linux" {
		t.Errorf("host.get selectGroups shows groups the user cannot read: %+v", hosts)
	}
	if got := f.names(ro, "host.get", `{"editable":true}`, "host"); got != "" {
		t.Errorf("host.get editable for a read-only user: %s", got)
	}
	if got := f.names(ro, "item.get", `{"output":["itemid"]}`, "itemid"); got != sortedIDs(f.item("web-1"), f.snap.Lookup("web-1", "b").ID, f.item("both-1")) {
		t.Errorf("item.get: %s", got)
	}
	for _, params := range []string{
		fmt.Sprintf(`{"itemids":["%d","%d"]}`, f.item("db-1"), f.item("secret-1")),
		fmt.Sprintf(`{"hostids":"%d"}`, f.host("db-1")),
		`{"host":"secret-1"}`,
		`{"filter":{"host":"db-1"}}`,
		fmt.Sprintf(`{"groupids":"%d"}`, f.group("Secret")),
		`{"editable":true}`,
	} {
		if got := f.names(ro, "item.get", params, "itemid"); got != "" {
			t.Errorf("item.get %s: %s", params, got)
		}
	}
	if got := string(mustResult(t, f, ro, "item.get", `{"countOutput":true}`)); got != `"3"` {
		t.Errorf("item.get countOutput: %s", got)
	}

	// history.get: values of readable items only; the others give no
	// rows, whether named by item, by host, or both.
	hist := func(params string) int {
		t.Helper()
		var rows []map[string]string
		f.mustDo(ro, "history.get", params, &rows)
		return len(rows)
	}
	for _, c := range []struct {
		params string
		want   int
	}{
		{fmt.Sprintf(`{"history":0,"itemids":"%d"}`, f.item("web-1")), 3},
		{fmt.Sprintf(`{"history":0,"itemids":"%d"}`, f.item("db-1")), 0},
		{fmt.Sprintf(`{"history":0,"itemids":"%d"}`, f.item("secret-1")), 0},
		{fmt.Sprintf(`{"history":0,"itemids":["%d","%d"]}`, f.item("web-1"), f.item("db-1")), 3},
		{fmt.Sprintf(`{"history":0,"hostids":["%d","%d"]}`, f.host("both-1"), f.host("db-1")), 3},
		{fmt.Sprintf(`{"history":0,"hostids":"%d"}`, f.host("db-1")), 0},
		// A denied item with a readable host must not widen to the host.
		{fmt.Sprintf(`{"history":0,"itemids":"%d","hostids":"%d"}`, f.item("db-1"), f.host("web-1")), 0},
		{fmt.Sprintf(`{"history":0,"itemids":"%d","downsample":2}`, f.item("db-1")), 0},
		{fmt.Sprintf(`{"history":0,"itemids":"%d","sortfield":"clock","sortorder":"DESC","limit":2}`, f.item("secret-1")), 0},
	} {
		if got := hist(c.params); got != c.want {
			t.Errorf("history.get %s: %d rows, want %d", c.params, got, c.want)
		}
	}
	if got := string(mustResult(t, f, ro, "history.get", fmt.Sprintf(`{"history":0,"itemids":"%d","countOutput":true}`, f.item("db-1")))); got != `"0"` {
		t.Errorf("history.get countOutput of a denied item: %s", got)
	}
	trends := func(item uint64) int {
		t.Helper()
		var rows []map[string]string
		f.mustDo(ro, "trend.get", fmt.Sprintf(`{"itemids":["%d"]}`, item), &rows)
		return len(rows)
	}
	if n := trends(f.item("web-1")); n != 2 {
		t.Errorf("trend.get of a readable item: %d rows", n)
	}
	if n, m := trends(f.item("db-1")), trends(f.item("secret-1")); n != 0 || m != 0 {
		t.Errorf("trend.get of unreadable items: %d, %d rows", n, m)
	}

	// The super admin sees everything, whatever the rights say.
	if got := f.names(f.root, "host.get", `{}`, "host"); got != "both-1,db-1,secret-1,web-1" {
		t.Errorf("host.get as super admin: %s", got)
	}
	var rows []map[string]string
	f.mustDo(f.root, "history.get", fmt.Sprintf(`{"history":0,"itemids":"%d"}`, f.item("secret-1")), &rows)
	if len(rows) != 3 {
		t.Errorf("history.get of secret-1 as super admin: %d rows", len(rows))
	}
}

func sortedIDs(ids ...uint64) string {
	var s []string
	for _, id := range ids {
		s = append(s, fmt.Sprint(id))
	}
	sort.Strings(s)
	return strings.Join(s, ",")
}

func mustResult(t *testing.T, f *permFixture, sid, method, params string) json.RawMessage {
	t.Helper()
	res, e := f.do(sid, method, params)
	if e != nil {
		t.Fatalf("%s %s: %+v", method, params, e)
	}
	return res
}

// TestPermissionsNoGroupsNoDeny: a user in no user group sees nothing; a
// deny in one of a user's groups beats a read in another; changes to the
// groups apply to the next request.
func TestPermissionsNoGroupsNoDeny(t *testing.T) {
	f := newPermFixture(t)
	lonely := f.login("lonely")
	for _, m := range []string{"hostgroup.get", "host.get", "item.get"} {
		if res := mustResult(t, f, lonely, m, `{}`); string(res) != "[]" {
			t.Errorf("%s for a user in no group: %s", m, res)
		}
	}
	var rows []map[string]string
	f.mustDo(lonely, "history.get", fmt.Sprintf(`{"history":0,"itemids":"%d"}`, f.item("web-1")), &rows)
	if len(rows) != 0 {
		t.Errorf("history.get for a user in no group: %v", rows)
	}

	readers := f.usergroup("Readers", map[string]int{"Linux": 2, "DB": 3}, "mixed")
	mixed := f.login("mixed")
	if got := f.names(mixed, "host.get", `{}`, "host"); got != "both-1,db-1,secret-1,web-1" {
		t.Errorf("before the deny: %s", got)
	}
	f.usergroup("Linux denied", map[string]int{"Linux": 0}, "mixed")
	if got := f.names(mixed, "host.get", `{}`, "host"); got != "db-1" {
		t.Errorf("a deny in one group must beat read in another: %s", got)
	}
	if got := f.names(mixed, "hostgroup.get", `{}`, "name"); got != "DB" {
		t.Errorf("hostgroup.get with Linux denied: %s", got)
	}
	if got := f.names(mixed, "host.get", `{"editable":true}`, "host"); got != "db-1" {
		t.Errorf("editable: %s", got)
	}
	// Taking DB away through usergroup.update applies at once.
	f.mustDo(f.root, "usergroup.update", fmt.Sprintf(`{"usrgrpid":%q,"rights":[{"id":"%d","permission":2}]}`, readers, f.group("Linux")), nil)
	if got := f.names(mixed, "host.get", `{}`, "host"); got != "" {
		t.Errorf("after the update: %s", got)
	}
}

// TestPermissionsWrite: an admin needs read-write on a host's groups to
// change the host or its items, and on every group of a new host.
func TestPermissionsWrite(t *testing.T) {
	f := newPermFixture(t)
	f.usergroup("Writers", map[string]int{"Linux": 3, "DB": 2}, "writer")
	w := f.login("writer")
	refusedCode := func(code int, method, params string) {
		t.Helper()
		_, e := f.do(w, method, params)
		if e == nil || e.Code != code || e.Data != "No permissions to referred object or it does not exist!" {
			t.Errorf("%s %s: %+v, want No permissions (%d)", method, params, e, code)
		}
	}
	refused := func(method, params string) { t.Helper(); refusedCode(-32500, method, params) }
	// host.update and item.create check their hosts with their
	// parameters: -32602 (recorded from Zabbix 6.0.14 for a host that
	// does not exist).
	refusedParams := func(method, params string) { t.Helper(); refusedCode(-32602, method, params) }
	ok := func(method, params string) {
		t.Helper()
		f.mustDo(w, method, params, nil)
	}
	web, db, both := f.host("web-1"), f.host("db-1"), f.host("both-1")
	// history.get with editable: the items of hosts the admin may change
	// (web-1 a and b, both-1 a), not those it may only read (db-1).
	var rows []map[string]string
	f.mustDo(w, "history.get", fmt.Sprintf(`{"history":0,"editable":true,"hostids":["%d","%d","%d"]}`, web, db, both), &rows)
	if len(rows) != 6 {
		t.Errorf("history.get editable for an admin with RW on Linux: %d rows, want 6 (web-1 a, both-1 a)", len(rows))
	}
	rows = nil
	f.mustDo(w, "history.get", fmt.Sprintf(`{"history":0,"editable":true,"itemids":"%d"}`, f.item("db-1")), &rows)
	if len(rows) != 0 {
		t.Errorf("history.get editable on a read-only host: %v", rows)
	}
	rows = nil
	f.mustDo(w, "history.get", fmt.Sprintf(`{"history":0,"itemids":"%d"}`, f.item("db-1")), &rows)
	if len(rows) != 3 {
		t.Errorf("history.get on a readable host: %d rows, want 3", len(rows))
	}
	ok("host.update", fmt.Sprintf(`{"hostid":"%d","name":"Web one"}`, web))
	ok("host.update", fmt.Sprintf(`{"hostid":"%d","name":"Both"}`, both)) // RW on Linux is enough
	refusedParams("host.update", fmt.Sprintf(`{"hostid":"%d","name":"DB one"}`, db))
	refused("host.update", fmt.Sprintf(`{"hostid":"%d","groups":[{"groupid":"%d"}]}`, web, f.group("DB")))
	refusedParams("host.update", fmt.Sprintf(`{"hostid":"%d","name":"x"}`, f.host("secret-1")+1000)) // unknown: same answer
	ok("host.create", fmt.Sprintf(`{"host":"web-2","groups":[{"groupid":"%d"}]}`, f.group("Linux")))
	refused("host.create", fmt.Sprintf(`{"host":"db-2","groups":[{"groupid":"%d"}]}`, f.group("DB")))
	refused("host.create", fmt.Sprintf(`{"host":"mixed-2","groups":[{"groupid":"%d"},{"groupid":"%d"}]}`, f.group("Linux"), f.group("DB")))
	ok("item.create", fmt.Sprintf(`{"hostid":"%d","name":"c","key_":"c","type":2,"value_type":3}`, web))
	refusedParams("item.create", fmt.Sprintf(`{"hostid":"%d","name":"c","key_":"c","type":2,"value_type":3}`, db))
	ok("item.update", fmt.Sprintf(`{"itemid":"%d","units":"B"}`, f.item("web-1")))
	refused("item.update", fmt.Sprintf(`{"itemid":"%d","units":"B"}`, f.item("db-1")))
	refused("item.delete", fmt.Sprintf(`["%d","%d"]`, f.item("web-1"), f.item("db-1")))
	if f.cat.Snapshot().Item(f.item("web-1")) == nil {
		t.Fatal("a refused item.delete deleted the item it was allowed to")
	}
	ok("item.delete", fmt.Sprintf(`["%d"]`, f.item("web-1")))
	refused("host.delete", fmt.Sprintf(`["%d"]`, db))
	ok("host.delete", fmt.Sprintf(`["%d"]`, web))
	refused("hostgroup.update", fmt.Sprintf(`{"groupid":"%d","name":"Databases"}`, f.group("DB")))
	ok("hostgroup.update", fmt.Sprintf(`{"groupid":"%d","name":"Linux servers"}`, f.group("Linux")))
	if _, e := f.do(w, "hostgroup.create", `{"name":"Mine"}`); e == nil || e.Data != `No permissions to call "hostgroup.create".` {
		t.Errorf("hostgroup.create by an admin: %+v", e)
	}
	// A read-only user (type 1) may not write at all.
	f.usergroup("Linux RW", map[string]int{"Linux": 3}, "reader")
	if _, e := f.do(f.login("reader"), "item.update", fmt.Sprintf(`{"itemid":"%d","units":"B"}`, f.item("both-1"))); e == nil || e.Data != `No permissions to call "item.update".` {
		t.Errorf("item.update by a user: %+v", e)
	}
}

// TestUserGroupMethods covers usergroup.* and the user methods' group
// members: create with 6.0's and 6.2's names, get with its selections
// and filters, update, delete, user.create/update usrgrps and user.get
// selectUsrgrps/usrgrpids, and the errors.
func TestUserGroupMethods(t *testing.T) {
	f := newPermFixture(t)
	reader, writer := f.userID("reader"), f.userID("writer")
	var created struct{ UsrgrpIDs []string }
	f.mustDo(f.root, "usergroup.create", fmt.Sprintf(`[{"name":"Ops","gui_access":"1","users_status":0,"rights":{"id":"%d","permission":"3"},"userids":["%d"]},`+
		`{"name":"Viewers","hostgroup_rights":[{"id":%d,"permission":2}],"users":[{"userid":"%d"},{"userid":%d}],"tag_filters":[],"debug_mode":1}]`,
		f.group("Linux"), writer, f.group("DB"), reader, writer), &created)
	if len(created.UsrgrpIDs) != 2 {
		t.Fatalf("usergroup.create: %+v", created)
	}
	ops, viewers := created.UsrgrpIDs[0], created.UsrgrpIDs[1]
	var gs []map[string]any
	f.mustDo(f.root, "usergroup.get", `{"output":"extend","selectRights":"extend","selectUsers":["username"],"sortfield":"name"}`, &gs)
	want := fmt.Sprintf(`[{"debug_mode":"0","gui_access":"1","name":"Ops","rights":[{"id":"%d","permission":"3"}],"users":[{"userid":"%d","username":"writer"}],"users_status":"0","usrgrpid":%q},`+
		`{"debug_mode":"1","gui_access":"0","name":"Viewers","rights":[{"id":"%d","permission":"2"}],"users":[{"userid":"%d","username":"reader"},{"userid":"%d","username":"writer"}],"users_status":"0","usrgrpid":%q}]`,
		f.group("Linux"), writer, ops, f.group("DB"), reader, writer, viewers)
	if got, _ := json.Marshal(gs); string(got) != want {
		t.Errorf("usergroup.get:\n got %s\nwant %s", got, want)
	}
	for _, c := range []struct{ params, want string }{
		{fmt.Sprintf(`{"userids":"%d"}`, reader), "Viewers"},
		{fmt.Sprintf(`{"usrgrpids":[%s]}`, ops), "Ops"},
		{`{"status":0}`, "Ops,Viewers"},
		{`{"with_gui_access":1}`, "Ops"},
		{`{"filter":{"name":"Ops"}}`, "Ops"},
		{`{"search":{"name":"view"}}`, "Viewers"},
	} {
		if got := f.names(f.root, "usergroup.get", c.params, "name"); got != c.want {
			t.Errorf("usergroup.get %s: %s, want %s", c.params, got, c.want)
		}
	}
	var hgr []struct {
		HostGroupRights []map[string]string `json:"hostgroup_rights"`
	}
	f.mustDo(f.root, "usergroup.get", fmt.Sprintf(`{"usrgrpids":%s,"selectHostGroupRights":"extend"}`, viewers), &hgr)
	if len(hgr) != 1 || len(hgr[0].HostGroupRights) != 1 || hgr[0].HostGroupRights[0]["permission"] != "2" {
		t.Errorf("selectHostGroupRights: %+v", hgr)
	}
	// A user sees only their own groups, and none as editable.
	ro := f.login("reader")
	if got := f.names(ro, "usergroup.get", `{}`, "name"); got != "Viewers" {
		t.Errorf("usergroup.get as a member: %s", got)
	}
	if got := f.names(ro, "usergroup.get", `{"editable":true}`, "name"); got != "" {
		t.Errorf("usergroup.get editable as a user: %s", got)
	}

	// user.create and user.update with usrgrps; user.get selections.
	var nu struct{ UserIDs []string }
	f.mustDo(f.root, "user.create", fmt.Sprintf(`{"username":"newbie","passwd":"Newb1e-secret","roleid":1,"usrgrps":[{"usrgrpid":%q}]}`, ops), &nu)
	var users []struct {
		Username string
		Usrgrps  []struct{ Name string }
	}
	f.mustDo(f.root, "user.get", fmt.Sprintf(`{"userids":%q,"selectUsrgrps":["name"]}`, nu.UserIDs[0]), &users)
	if len(users) != 1 || len(users[0].Usrgrps) != 1 || users[0].Usrgrps[0].Name != "Ops" {
		t.Errorf("user.get selectUsrgrps: %+v", users)
	}
	f.mustDo(f.root, "user.update", fmt.Sprintf(`{"userid":%q,"usrgrps":[{"usrgrpid":%q},{"usrgrpid":%q}]}`, nu.UserIDs[0], ops, viewers), nil)
	if got := f.names(f.root, "user.get", fmt.Sprintf(`{"usrgrpids":%q}`, viewers), "username"); got != "newbie,reader,writer" {
		t.Errorf("user.get usrgrpids: %s", got)
	}
	if _, e := f.do(ro, "user.update", fmt.Sprintf(`{"userid":"%d","usrgrps":[{"usrgrpid":%q}]}`, reader, ops)); e == nil || e.Code != -32500 {
		t.Errorf("a user joining a group: %+v", e)
	}
	// Renaming, as 6.0.14 does it: an unchanged name is taken, a new
	// one renames (also as "alias", the pre-5.4 member), another user's
	// name and an empty one are refused, nothing written.
	id := nu.UserIDs[0]
	f.mustDo(f.root, "user.update", fmt.Sprintf(`{"userid":%q,"username":"newbie"}`, id), nil)
	f.mustDo(f.root, "user.update", fmt.Sprintf(`{"userid":%q,"username":"novice"}`, id), nil)
	f.mustDo(f.root, "user.update", fmt.Sprintf(`{"userid":%q,"alias":"rookie"}`, id), nil)
	if got := f.names(f.root, "user.get", fmt.Sprintf(`{"userids":%q}`, id), "username"); got != "rookie" {
		t.Errorf("after renaming: %s", got)
	}
	for params, want := range map[string]string{
		`"username":"reader","name":"x"`: `User with username "reader" already exists.`,
		`"username":""`:                  `Invalid parameter "/1/username": cannot be empty.`,
	} {
		if _, e := f.do(f.root, "user.update", fmt.Sprintf(`{"userid":%q,%s}`, id, params)); e == nil || e.Data != want {
			t.Errorf("user.update %s: %+v, want %q", params, e, want)
		}
	}
	if got := f.names(f.root, "user.get", fmt.Sprintf(`{"userids":%q}`, id), "username"); got != "rookie" {
		t.Errorf("after refused renames: %s", got)
	}
	f.mustDo(f.root, "user.update", fmt.Sprintf(`{"userid":%q,"username":"newbie"}`, id), nil)
	// A user sees themselves and the members of their groups (only
	// themselves with editable); a super admin everybody.
	if got := f.names(ro, "user.get", `{}`, "username"); got != "newbie,reader,writer" {
		t.Errorf("user.get as a member of Viewers: %s", got)
	}
	if got := f.names(ro, "user.get", `{"editable":true}`, "username"); got != "reader" {
		t.Errorf("user.get editable as a user: %s", got)
	}
	if got := f.names(f.login("lonely"), "user.get", `{}`, "username"); got != "lonely" {
		t.Errorf("user.get as a user in no group: %s", got)
	}
	if got := f.names(f.root, "user.get", `{}`, "username"); got != "Admin,lonely,mixed,newbie,reader,writer" {
		t.Errorf("user.get as super admin: %s", got)
	}

	// Errors.
	for _, c := range []struct{ method, params, want string }{
		{"usergroup.create", `{"name":"Ops"}`, `already exists`},
		{"usergroup.create", `{}`, `Invalid parameter "/": cannot be empty.`}, // as 6.0 (recorded)
		{"usergroup.create", `{"gui_access":1}`, `Invalid parameter "/1": the parameter "name" is missing.`},
		{"usergroup.create", `{"name":""}`, `Invalid parameter "/1/name": cannot be empty.`},
		{"usergroup.create", `{"name":"x","rights":[{"id":"1","permission":1}]}`, `Invalid parameter "/1/rights/1/permission": value must be one of 0, 2, 3.`},
		{"usergroup.create", `{"name":"x","rights":[{"id":"1"}]}`, `Invalid parameter "/1/rights/1": the parameter "permission" is missing.`},
		{"usergroup.create", `{"name":"x","rights":[{"id":"1","permission":2,"extra":1}]}`, `Invalid parameter "/1/rights/1": unexpected parameter "extra".`},
		{"usergroup.create", `{"name":"x","rights":[{"id":"999999","permission":2}]}`, `Host group with ID "999999" is not available.`},
		{"usergroup.create", `{"name":"x","userids":["999999"]}`, `User with ID "999999" is not available.`},
		{"usergroup.create", `{"name":"x","users_status":2}`, `Invalid parameter "/1/users_status": value must be one of 0, 1.`},
		{"usergroup.create", `{"name":"x","gui_access":9}`, `Invalid parameter "/1/gui_access": value must be one of 0, 1, 2, 3.`},
		{"usergroup.create", `{"name":"x","tag_filters":[{"groupid":"1","tag":"a"}]}`, `tag-based permissions are not supported`},
		{"usergroup.create", `{"name":"x","rights":[],"hostgroup_rights":[]}`, `unexpected parameter "hostgroup_rights"`},
		{"usergroup.create", `{"name":"x","color":"red"}`, `Invalid parameter "/1": unexpected parameter "color".`},
		{"usergroup.update", `{"name":"x"}`, `the parameter "usrgrpid" is missing`},
		{"usergroup.update", `{"usrgrpid":"999999","name":"x"}`, `No permissions`},
		{"usergroup.delete", `["999999"]`, `No permissions`},
		{"user.create", `{"username":"y","passwd":"Zx-9876-qwer","roleid":1,"usrgrps":[{"usrgrpid":"999999"}]}`, `User group with ID "999999" is not available.`},
	} {
		_, e := f.do(f.root, c.method, c.params)
		if e == nil || !strings.Contains(e.Data, c.want) {
			t.Errorf("%s %s: %+v, want %q", c.method, c.params, e, c.want)
		}
	}
	if _, e := f.do(ro, "usergroup.create", `{"name":"mine"}`); e == nil || e.Data != `No permissions to call "usergroup.create".` {
		t.Errorf("usergroup.create by a user: %+v", e)
	}

	// Nobody disables themselves.
	rootID := f.userID("Admin")
	for _, c := range []struct{ method, params string }{
		{"usergroup.create", fmt.Sprintf(`{"name":"Off","users_status":1,"userids":["%d"]}`, rootID)},
		{"usergroup.update", fmt.Sprintf(`{"usrgrpid":%q,"users_status":1,"userids":["%d","%d"]}`, ops, rootID, writer)},
	} {
		if _, e := f.do(f.root, c.method, c.params); e == nil || e.Code != -32500 || !strings.Contains(e.Data, "disabled group") {
			t.Errorf("%s %s: %+v", c.method, c.params, e)
		}
	}
	f.mustDo(f.root, "usergroup.update", fmt.Sprintf(`{"usrgrpid":%q,"userids":["%d","%d"]}`, ops, rootID, writer), nil)
	if _, e := f.do(f.root, "usergroup.update", fmt.Sprintf(`{"usrgrpid":%q,"users_status":1}`, ops)); e == nil || e.Code != -32500 {
		t.Errorf("disabling one's own group: %+v", e)
	}

	// A disabled group keeps its members out.
	f.mustDo(f.root, "usergroup.update", fmt.Sprintf(`{"usrgrpid":%q,"users_status":1}`, viewers), nil)
	if _, e := f.do("", "user.login", `{"username":"reader","password":"`+testPassword+`"}`); e == nil || e.Data != "No permissions for system access." {
		t.Errorf("login of a disabled user: %+v", e)
	}
	// Zabbix 6.0 answers a disabled user's session so (recorded).
	if _, e := f.do(ro, "host.get", `{}`); e == nil || e.Data != "Session terminated, re-login, please." {
		t.Errorf("session of a disabled user: %+v", e)
	}
	f.mustDo(f.root, "usergroup.delete", fmt.Sprintf(`[%q]`, viewers), nil)
	if got := f.names(f.root, "usergroup.get", `{}`, "name"); got != "Ops" {
		t.Errorf("after delete: %s", got)
	}
	f.login("reader")
}

// TestPermissionsHistoryPush: an admin may push values only to items of
// hosts it may change; each other value gets "No permissions" in its
// place and never reaches the trapper, while the allowed ones are stored.
func TestPermissionsHistoryPush(t *testing.T) {
	f := newPermFixture(t)
	f.usergroup("Writers", map[string]int{"Linux": 3, "DB": 2}, "writer")
	w := f.login("writer")
	var res struct {
		Data []map[string]string `json:"data"`
	}
	f.mustDo(w, "history.push", fmt.Sprintf(`[
		{"itemid":"%d","value":1},
		{"itemid":"%d","value":2},
		{"host":"both-1","key":"a","value":3},
		{"host":"db-1","key":"a","value":4},
		{"host":"secret-1","key":"a","value":5},
		{"itemid":"999999","value":6}]`, f.item("web-1"), f.item("db-1")), &res)
	const noPerm = "No permissions to referred object or it does not exist!"
	want := []map[string]string{
		{"itemid": fmt.Sprint(f.item("web-1"))},
		{"error": noPerm},
		{"itemid": fmt.Sprint(f.item("both-1"))}, // RW on Linux, read on DB: RW
		{"error": noPerm},
		{"itemid": fmt.Sprint(f.item("secret-1"))}, // Secret is in no user group: does not count
		{"error": "No such item."},                 // unknown: the trapper's own answer
	}
	if d := cmp.Diff(want, res.Data); d != "" {
		t.Errorf("history.push results (-want +got):\n%s", d)
	}
	for _, v := range f.push.got {
		if v.ItemID == f.item("db-1") || v.Host == "db-1" {
			t.Errorf("a denied value reached the trapper: %+v", v)
		}
	}
	if len(f.push.got) != 4 {
		t.Errorf("%d values reached the trapper, want 4", len(f.push.got))
	}
	// A super admin pushes anywhere.
	f.push.got = nil
	f.mustDo(f.root, "history.push", fmt.Sprintf(`{"itemid":"%d","value":7}`, f.item("db-1")), &res)
	if len(res.Data) != 1 || res.Data[0]["itemid"] == "" || len(f.push.got) != 1 {
		t.Errorf("super admin push: %v (reached: %d)", res.Data, len(f.push.got))
	}
}

// testPassword is the password of the test users: it passes Zabbix
// 6.0's default password policy for any of their names.
const testPassword = "9876-5432-1098"
