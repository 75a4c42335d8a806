package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func ptr[T any](v T) *T { return &v }

// mustEdit runs fn in an Edit and fails the test on error.
func mustEdit(t testing.TB, c *Catalog, fn func(e *Edit) error) EditResult {
	t.Helper()
	res, err := c.Edit(context.Background(), fn)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// reloadMatches reopens the catalog at path and compares the loaded
// snapshot with c's, then leaves c closed and returns the reopened one.
func reloadMatches(t *testing.T, c *Catalog, path string) *Catalog {
	t.Helper()
	want := c.Snapshot()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c2, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c2.Close() })
	if d := diffViews(want, c2.Snapshot()); d != "" {
		t.Fatalf("reloaded snapshot differs from the edited one (-edited +loaded):\n%s", d)
	}
	return c2
}

func TestEditRoundTrip(t *testing.T) {
	c, path := openTemp(t)
	var gLinux, gWeb, hWeb, hDB uint64
	var items []uint64
	res := mustEdit(t, c, func(e *Edit) error {
		g, err := e.CreateGroups([]string{"Linux", "Web"})
		if err != nil {
			return err
		}
		gLinux, gWeb = g[0], g[1]
		h, err := e.CreateHosts([]NewHost{
			{Host: "web-01", Name: "Web 1", GroupIDs: []uint64{gWeb, gLinux}, Interfaces: []Interface{{Type: InterfaceAgent, Main: true, UseIP: true, IP: "127.0.0.1"}}},
			{Host: "db-01", Disabled: true, GroupIDs: []uint64{gLinux}},
		})
		if err != nil {
			return err
		}
		hWeb, hDB = h[0], h[1]
		items, err = e.CreateItems([]NewItem{
			{HostID: hWeb, ItemSpec: ItemSpec{Key: "app.requests", ValueType: "3", Units: "req"}},
			{HostID: hWeb, ItemSpec: ItemSpec{Key: "agent.ping", Type: "0", ValueType: "3", Delay: "30s"}},
			{HostID: hDB, ItemSpec: ItemSpec{Key: "db.log", Name: "DB log", Type: "7", ValueType: "2", Delay: "1m"}},
		})
		return err
	})
	want := EditResult{GroupsCreated: 2, HostsCreated: 2, ItemsCreated: 3}
	if res != want {
		t.Fatalf("result %+v, want %+v", res, want)
	}
	s := c.Snapshot()
	if s.Version() != 1 {
		t.Fatalf("one Edit made version %d", s.Version())
	}
	web := s.HostByID(hWeb)
	if web == nil || web.Host != "web-01" || web.Name != "Web 1" || !web.Enabled || len(web.GroupIDs) != 2 || web.GroupIDs[0] > web.GroupIDs[1] {
		t.Fatalf("host %+v", web)
	}
	if db := s.Host("db-01"); db == nil || db.Name != "db-01" || db.Enabled {
		t.Fatalf("host db-01 %+v", db)
	}
	it := s.Lookup("web-01", "app.requests")
	if it == nil || it.ID != items[0] || it.Type != Trapper || it.Delay != "0" || it.History != "90d" || it.Trends != "365d" || it.Units != "req" || !it.Enabled {
		t.Fatalf("created item %+v", it)
	}
	if it := s.Item(items[2]); it == nil || it.Trends != "0" || it.Name != "DB log" || it.Host.Host != "db-01" {
		t.Fatalf("log item %+v", it)
	}
	c = reloadMatches(t, c, path)

	// Updates: rename a group, rename a host (its visible name follows),
	// move it between groups, change and disable an item.
	res = mustEdit(t, c, func(e *Edit) error {
		if err := e.RenameGroups([]Group{{ID: gWeb, Name: "Web servers"}}); err != nil {
			return err
		}
		if err := e.UpdateHosts([]HostUpdate{
			{ID: hDB, Host: ptr("db-02"), Enabled: ptr(true)},
			{ID: hWeb, GroupIDs: []uint64{gWeb}},
		}); err != nil {
			return err
		}
		return e.UpdateItems([]ItemUpdate{
			{ID: items[0], ValueType: ptr("text"), Status: ptr("disabled"), Units: ptr("")},
			{ID: items[1], Key: ptr("agent.ping[x]"), Type: ptr("2")},
		})
	})
	want = EditResult{GroupsUpdated: 1, HostsUpdated: 2, ItemsUpdated: 2}
	if res != want {
		t.Fatalf("update result %+v, want %+v", res, want)
	}
	s = c.Snapshot()
	if s.Version() != 2 || s.Group("Web servers") == nil || s.Group("Web") != nil {
		t.Fatalf("version %d, groups %v", s.Version(), s.Groups())
	}
	if db := s.HostByID(hDB); db.Host != "db-02" || db.Name != "db-02" || !db.Enabled || s.Host("db-01") != nil {
		t.Fatalf("renamed host %+v", db)
	}
	if s.Lookup("db-02", "db.log") == nil {
		t.Fatal("a renamed host lost its items")
	}
	if web := s.HostByID(hWeb); len(web.GroupIDs) != 1 || web.GroupIDs[0] != gWeb {
		t.Fatalf("groups of web-01: %v", web.GroupIDs)
	}
	if it := s.Item(items[0]); it.ValueType.Numeric() || it.Trends != "0" || it.Enabled || it.Units != "" {
		t.Fatalf("updated item %+v", it)
	}
	if it := s.Lookup("web-01", "agent.ping[x]"); it == nil || it.ID != items[1] || it.Type != Trapper || s.Lookup("web-01", "agent.ping") != nil {
		t.Fatalf("re-keyed item %+v", it)
	}
	// An update that changes nothing writes nothing.
	res = mustEdit(t, c, func(e *Edit) error {
		return e.UpdateItems([]ItemUpdate{{ID: items[2], Name: ptr("DB log")}})
	})
	if res != (EditResult{}) || c.Snapshot().Version() != 2 {
		t.Fatalf("a no-op update: %+v, version %d", res, c.Snapshot().Version())
	}
	c = reloadMatches(t, c, path)

	// Deletes: an item, then a host with its items, then its group.
	mustEdit(t, c, func(e *Edit) error { return e.DeleteItems([]uint64{items[1]}) })
	if s := c.Snapshot(); s.Item(items[1]) != nil || s.Lookup("web-01", "agent.ping[x]") != nil || s.ItemCount() != 2 {
		t.Fatal("deleted item still in the snapshot")
	}
	mustEdit(t, c, func(e *Edit) error { return e.DeleteHosts([]uint64{hDB}) })
	s = c.Snapshot()
	if s.HostByID(hDB) != nil || s.Host("db-02") != nil || s.Item(items[2]) != nil || s.ItemCount() != 1 || s.HostCount() != 1 {
		t.Fatal("deleted host or its items still in the snapshot")
	}
	mustEdit(t, c, func(e *Edit) error { return e.DeleteGroups([]uint64{gLinux}) })
	if s := c.Snapshot(); s.GroupByID(gLinux) != nil || len(s.Groups()) != 1 {
		t.Fatal("deleted group still in the snapshot")
	}
	// A name freed by a delete can be used again, with a new ID.
	mustEdit(t, c, func(e *Edit) error {
		ids, err := e.CreateHosts([]NewHost{{Host: "db-02", GroupIDs: []uint64{gWeb}}})
		if err == nil && ids[0] == hDB {
			return fmt.Errorf("ID %d reused", hDB)
		}
		return err
	})
	reloadMatches(t, c, path)
}

// TestEditHostTags sets, replaces and clears host tags, and checks that
// they survive a reopen and Apply.
func TestEditHostTags(t *testing.T) {
	c, path := openTemp(t)
	var h uint64
	tags := []Tag{{Tag: "env", Value: "prod"}, {Tag: "team"}, {Tag: "env", Value: "eu"}}
	mustEdit(t, c, func(e *Edit) error {
		g, _ := e.CreateGroups([]string{"G"})
		ids, err := e.CreateHosts([]NewHost{{Host: "h", GroupIDs: g, Tags: tags}})
		h = ids[0]
		return err
	})
	tags[0].Value = "changed by the caller" // must not reach the catalog
	if got := c.Snapshot().HostByID(h).Tags; len(got) != 3 || got[0] != (Tag{"env", "prod"}) || got[1] != (Tag{Tag: "team"}) || got[2] != (Tag{"env", "eu"}) {
		t.Fatalf("tags %v", got)
	}
	c = reloadMatches(t, c, path)
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "h", Name: "renamed by Apply", Groups: []string{"G"}}}})
	if got := c.Snapshot().HostByID(h).Tags; len(got) != 3 {
		t.Fatalf("Apply changed the tags: %v", got)
	}
	mustEdit(t, c, func(e *Edit) error { return e.UpdateHosts([]HostUpdate{{ID: h, Tags: &[]Tag{{Tag: "only"}}}}) })
	if got := c.Snapshot().HostByID(h).Tags; len(got) != 1 || got[0].Tag != "only" {
		t.Fatalf("replaced tags %v", got)
	}
	c = reloadMatches(t, c, path)
	mustEdit(t, c, func(e *Edit) error { return e.UpdateHosts([]HostUpdate{{ID: h, Tags: &[]Tag{}}}) })
	if got := c.Snapshot().HostByID(h).Tags; got != nil {
		t.Fatalf("cleared tags %v", got)
	}
	c = reloadMatches(t, c, path)
	_, err := c.Edit(context.Background(), func(e *Edit) error {
		return e.UpdateHosts([]HostUpdate{{ID: h, Tags: &[]Tag{{Tag: "a"}, {Tag: "a"}}}})
	})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "hosts[0].tags[1]" {
		t.Fatalf("duplicate tag: %v", err)
	}
	mustEdit(t, c, func(e *Edit) error {
		if err := e.UpdateHosts([]HostUpdate{{ID: h, Tags: &[]Tag{{Tag: "x"}}}}); err != nil {
			return err
		}
		return e.DeleteHosts([]uint64{h})
	})
	reloadMatches(t, c, path)
}

// TestMigrateV1 opens a database of schema version 1 (no host tags, no
// interfaces). The spec has no interfaces, so the snapshot is the same.
func TestMigrateV1(t *testing.T) {
	c, path := openTemp(t)
	spec := testSpec()
	spec.Hosts[0].Interfaces = nil
	mustApply(t, c, spec)
	want := c.Snapshot()
	c.Close()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range append(downgradeV3, "DROP TABLE host_tags", "UPDATE catalog_meta SET schema_version = 1") {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	c2, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if d := diffMigrated(want, c2.Snapshot()); d != "" {
		t.Fatalf("migrated snapshot differs:\n%s", d)
	}
	mustEdit(t, c2, func(e *Edit) error {
		return e.UpdateHosts([]HostUpdate{{ID: c2.Snapshot().Host("web-01").ID, Tags: &[]Tag{{Tag: "migrated"}}}})
	})
	var ver int
	if err := c2.db.QueryRow("SELECT schema_version FROM catalog_meta").Scan(&ver); err != nil || ver != schemaVersion {
		t.Fatalf("schema version %d after the upgrade (%v)", ver, err)
	}
}

// TestEditErrors checks that invalid batches change nothing and that the
// error names the element and field.
func TestEditErrors(t *testing.T) {
	c, _ := openTemp(t)
	var g1, g2, h1, h2, i1 uint64
	mustEdit(t, c, func(e *Edit) error {
		g, _ := e.CreateGroups([]string{"G1", "G2"})
		g1, g2 = g[0], g[1]
		h, _ := e.CreateHosts([]NewHost{{Host: "h1", Name: "Host one", GroupIDs: []uint64{g1}}, {Host: "h2", GroupIDs: []uint64{g1, g2}}})
		h1, h2 = h[0], h[1]
		ids, err := e.CreateItems([]NewItem{{HostID: h1, ItemSpec: ItemSpec{Key: "k1"}}, {HostID: h1, ItemSpec: ItemSpec{Key: "k2"}}})
		i1 = ids[0]
		return err
	})
	version := c.Snapshot().Version()
	const (
		notFound = "not found"
		conflict = "conflict"
		invalid  = "invalid"
	)
	cases := []struct {
		name  string
		fn    func(e *Edit) error
		field string
		kind  string
		ck    ConflictKind
	}{
		{"group name empty", func(e *Edit) error { _, err := e.CreateGroups([]string{"ok", ""}); return err }, "groups[1].name", invalid, 0},
		{"group exists", func(e *Edit) error { _, err := e.CreateGroups([]string{"G2"}); return err }, "groups[0].name", conflict, GroupExists},
		{"group twice in batch", func(e *Edit) error { _, err := e.CreateGroups([]string{"N", "N"}); return err }, "groups[1].name", conflict, GroupExists},
		{"rename to taken", func(e *Edit) error { return e.RenameGroups([]Group{{ID: g1, Name: "G2"}}) }, "groups[0].name", conflict, GroupExists},
		{"rename unknown", func(e *Edit) error { return e.RenameGroups([]Group{{ID: 999, Name: "X"}}) }, "groups[0].id", notFound, 0},
		{"delete unknown group", func(e *Edit) error { return e.DeleteGroups([]uint64{g2, 999}) }, "groups[1]", notFound, 0},
		{"delete only group", func(e *Edit) error { return e.DeleteGroups([]uint64{g1}) }, "groups[0]", conflict, HostWithoutGroup},
		{"delete both groups", func(e *Edit) error { return e.DeleteGroups([]uint64{g2, g1}) }, "groups[1]", conflict, HostWithoutGroup},
		{"delete group twice", func(e *Edit) error { return e.DeleteGroups([]uint64{g2, g2}) }, "groups[1]", invalid, 0},
		{"host name bad", func(e *Edit) error {
			_, err := e.CreateHosts([]NewHost{{Host: "a/b", GroupIDs: []uint64{g1}}})
			return err
		}, "hosts[0].host", invalid, 0},
		{"host exists", func(e *Edit) error {
			_, err := e.CreateHosts([]NewHost{{Host: "h2", GroupIDs: []uint64{g1}}})
			return err
		}, "hosts[0].host", conflict, HostExists},
		{"visible name exists", func(e *Edit) error {
			_, err := e.CreateHosts([]NewHost{{Host: "h3", Name: "Host one", GroupIDs: []uint64{g1}}})
			return err
		}, "hosts[0].name", conflict, VisibleNameExists},
		{"host without groups", func(e *Edit) error { _, err := e.CreateHosts([]NewHost{{Host: "h3"}}); return err }, "hosts[0].groups", invalid, 0},
		{"host unknown group", func(e *Edit) error {
			_, err := e.CreateHosts([]NewHost{{Host: "h3", GroupIDs: []uint64{g1, 999}}})
			return err
		}, "hosts[0].groups[1]", notFound, 0},
		{"host group twice", func(e *Edit) error {
			_, err := e.CreateHosts([]NewHost{{Host: "h3", GroupIDs: []uint64{g1, g1}}})
			return err
		}, "hosts[0].groups[1]", invalid, 0},
		{"update unknown host", func(e *Edit) error { return e.UpdateHosts([]HostUpdate{{ID: 999}}) }, "hosts[0].id", notFound, 0},
		{"rename host to taken", func(e *Edit) error { return e.UpdateHosts([]HostUpdate{{ID: h2, Host: ptr("h1")}}) }, "hosts[0].host", conflict, HostExists},
		{"empty groups on update", func(e *Edit) error { return e.UpdateHosts([]HostUpdate{{ID: h2, GroupIDs: []uint64{}}}) }, "hosts[0].groups", invalid, 0},
		{"delete unknown host", func(e *Edit) error { return e.DeleteHosts([]uint64{999}) }, "hosts[0]", notFound, 0},
		{"item unknown host", func(e *Edit) error {
			_, err := e.CreateItems([]NewItem{{HostID: 999, ItemSpec: ItemSpec{Key: "k"}}})
			return err
		}, "items[0].hostid", notFound, 0},
		{"item bad key", func(e *Edit) error {
			_, err := e.CreateItems([]NewItem{{HostID: h2, ItemSpec: ItemSpec{Key: "k"}}, {HostID: h2, ItemSpec: ItemSpec{Key: "a["}}})
			return err
		}, "items[1].key", invalid, 0},
		{"item exists", func(e *Edit) error {
			_, err := e.CreateItems([]NewItem{{HostID: h1, ItemSpec: ItemSpec{Key: "k2"}}})
			return err
		}, "items[0].key", conflict, ItemExists},
		{"item twice in batch", func(e *Edit) error {
			_, err := e.CreateItems([]NewItem{{HostID: h2, ItemSpec: ItemSpec{Key: "k"}}, {HostID: h2, ItemSpec: ItemSpec{Key: "k"}}})
			return err
		}, "items[1].key", conflict, ItemExists},
		{"item bad value type", func(e *Edit) error {
			_, err := e.CreateItems([]NewItem{{HostID: h2, ItemSpec: ItemSpec{Key: "k", ValueType: "9"}}})
			return err
		}, "items[0].value_type", invalid, 0},
		{"item polled never", func(e *Edit) error {
			_, err := e.CreateItems([]NewItem{{HostID: h2, ItemSpec: ItemSpec{Key: "k", Type: "0", Delay: "0"}}})
			return err
		}, "items[0].delay", invalid, 0},
		{"update unknown item", func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: 999}}) }, "items[0].id", notFound, 0},
		{"re-key to taken", func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: i1, Key: ptr("k2")}}) }, "items[0].key", conflict, ItemExists},
		{"trends of text", func(e *Edit) error {
			return e.UpdateItems([]ItemUpdate{{ID: i1, ValueType: ptr("4"), Trends: ptr("365d")}})
		}, "items[0].trends", invalid, 0},
		{"delete unknown item", func(e *Edit) error { return e.DeleteItems([]uint64{i1, 999}) }, "items[1]", notFound, 0},
		{"delete item twice", func(e *Edit) error { return e.DeleteItems([]uint64{i1, i1}) }, "items[1]", invalid, 0},
		{"item of a host deleted before", func(e *Edit) error {
			if err := e.DeleteHosts([]uint64{h1}); err != nil {
				return err
			}
			return e.UpdateItems([]ItemUpdate{{ID: i1, Units: ptr("B")}})
		}, "items[0].id", notFound, 0},
	}
	for _, tc := range cases {
		_, err := c.Edit(context.Background(), tc.fn)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s: error %v, want one for field %s", tc.name, err, tc.field)
			continue
		}
		var ce *ConflictError
		switch tc.kind {
		case notFound:
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("%s: %v is not ErrNotFound", tc.name, err)
			}
		case conflict:
			if !errors.As(err, &ce) || ce.Kind != tc.ck {
				t.Errorf("%s: %v is not a conflict of kind %d", tc.name, err, tc.ck)
			}
		default:
			if errors.Is(err, ErrNotFound) || errors.As(err, &ce) {
				t.Errorf("%s: %v is not a plain validation error", tc.name, err)
			}
		}
		if v := c.Snapshot().Version(); v != version {
			t.Fatalf("%s: a failed edit changed the version to %d", tc.name, v)
		}
	}
	// The conflict names the host, for the API's messages.
	_, err := c.Edit(context.Background(), func(e *Edit) error { return e.DeleteGroups([]uint64{g1}) })
	if ce := (*ConflictError)(nil); !errors.As(err, &ce) || ce.Host != "h1" {
		t.Fatalf("delete of h1's only group: %v", err)
	}
	// Deleting a host's second group succeeds and updates its membership.
	mustEdit(t, c, func(e *Edit) error { return e.DeleteGroups([]uint64{g2}) })
	if gs := c.Snapshot().HostByID(h2).GroupIDs; len(gs) != 1 || gs[0] != g1 {
		t.Fatalf("h2's groups after deleting g2: %v", gs)
	}
}

// TestEditRollback checks that an Edit whose function fails after some
// successful calls writes nothing, and that a later Edit works.
func TestEditRollback(t *testing.T) {
	c, path := openTemp(t)
	boom := errors.New("boom")
	_, err := c.Edit(context.Background(), func(e *Edit) error {
		if _, err := e.CreateGroups([]string{"G"}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Edit returned %v, want the function's error", err)
	}
	if s := c.Snapshot(); s.Version() != 0 || len(s.Groups()) != 0 {
		t.Fatal("a failed Edit was published")
	}
	mustEdit(t, c, func(e *Edit) error { _, err := e.CreateGroups([]string{"G"}); return err })
	c = reloadMatches(t, c, path)
	if len(c.Snapshot().Groups()) != 1 {
		t.Fatal("rolled-back group was written")
	}
	// A cancelled context fails the Edit and writes nothing.
	ctx, cancel := context.WithCancel(context.Background())
	_, err = c.Edit(ctx, func(e *Edit) error {
		_, err := e.CreateGroups([]string{"H"})
		cancel()
		return err
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Edit: %v", err)
	}
	reloadMatches(t, c, path)
}

// TestEditDeleteAllItemsOfHost checks a host whose last item is deleted:
// its key index must not keep pointing into the old slab.
func TestEditDeleteAllItemsOfHost(t *testing.T) {
	c, _ := openTemp(t)
	mustApply(t, c, testSpec())
	s := c.Snapshot()
	var ids []uint64
	for _, it := range s.Host("switch 1").Items() {
		ids = append(ids, it.ID)
	}
	mustEdit(t, c, func(e *Edit) error { return e.DeleteItems(ids) })
	s = c.Snapshot()
	for _, k := range []string{"icmpping", "net.if.in[ifHCInOctets.1]", "x"} {
		if s.Lookup("switch 1", k) != nil {
			t.Fatalf("Lookup(switch 1, %q) found a deleted item", k)
		}
	}
	if h := s.Host("switch 1"); h.table != nil || h.items != nil {
		t.Fatal("a host without items kept the key index of the previous snapshot")
	}
	if s.Host("switch 1").ItemCount() != 0 || s.Lookup("web-01", "app.latency") == nil {
		t.Fatal("wrong items after deleting one host's items")
	}
	// Apply still works on top of edits.
	mustApply(t, c, testSpec())
	if c.Snapshot().Lookup("switch 1", "icmpping") == nil {
		t.Fatal("Apply did not recreate the deleted items")
	}
}

// TestEditMatchesReload runs random edits and checks after each that the
// snapshot the Edit built equals the one Open loads.
func TestEditMatchesReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	rng := rand.New(rand.NewPCG(3, 4))
	rounds := 30
	if testing.Short() {
		rounds = 12
	}
	c, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	start := genSpec(4, 20)
	for h := range start.Hosts {
		start.Hosts[h].Interfaces = []InterfaceSpec{{IP: "127.0.0.1"}}
		for i := 0; i < len(start.Hosts[h].Items); i += 3 {
			start.Hosts[h].Items[i].Type = "zabbix_agent"
		}
	}
	mustApply(t, c, start)
	types := []string{"trapper", "zabbix_agent", "snmp_agent"}
	vtypes := []string{"float", "character", "log", "unsigned", "text"}
	randomTags := func() []Tag {
		var tags []Tag
		for i := range rng.IntN(3) {
			tags = append(tags, Tag{Tag: fmt.Sprintf("t%d", i), Value: []string{"", "v"}[rng.IntN(2)]})
		}
		return tags
	}
	// randomIfaces makes 0..2 agent interfaces, keeping (by ID) some of
	// cur's; exactly one is main.
	randomIfaces := func(cur []Interface) []Interface {
		var out []Interface
		for _, f := range cur {
			if rng.IntN(2) == 0 {
				f.Main = false
				out = append(out, f)
			}
		}
		for range rng.IntN(2) {
			out = append(out, Interface{Type: InterfaceAgent, UseIP: true, IP: fmt.Sprintf("127.0.0.%d", 1+rng.IntN(9)), Port: []string{"", "10051"}[rng.IntN(2)]})
		}
		if len(out) > 2 {
			out = out[:2]
		}
		if len(out) > 0 {
			out[rng.IntN(len(out))].Main = true
		}
		return out
	}
	var total EditResult
	withIface := 0 // items seen with an interface, over all rounds
	for round := range rounds {
		res, err := c.Edit(context.Background(), func(e *Edit) error {
			for range 1 + rng.IntN(6) {
				s := c.Snapshot() // the edit's own changes are not in it: errors are expected
				var groupIDs, hostIDs, itemIDs []uint64
				for _, g := range s.Groups() {
					groupIDs = append(groupIDs, g.ID)
				}
				for _, h := range s.Hosts() {
					hostIDs = append(hostIDs, h.ID)
					for _, it := range h.Items() {
						itemIDs = append(itemIDs, it.ID)
					}
				}
				pick := func(ids []uint64) uint64 {
					if len(ids) == 0 {
						return 0
					}
					return ids[rng.IntN(len(ids))]
				}
				var err error
				switch rng.IntN(9) {
				case 0:
					_, err = e.CreateGroups([]string{fmt.Sprintf("g%d", rng.IntN(10))})
				case 1:
					err = e.RenameGroups([]Group{{ID: pick(groupIDs), Name: fmt.Sprintf("g%d", rng.IntN(10))}})
				case 2:
					err = e.DeleteGroups([]uint64{pick(groupIDs)})
				case 3:
					_, err = e.CreateHosts([]NewHost{{Host: fmt.Sprintf("h%d", rng.IntN(10)), GroupIDs: []uint64{pick(groupIDs)}, Tags: randomTags(), Interfaces: randomIfaces(nil)}})
				case 4:
					u := HostUpdate{ID: pick(hostIDs), Host: ptr(fmt.Sprintf("h%d", rng.IntN(10))), GroupIDs: []uint64{pick(groupIDs)}}
					if rng.IntN(2) == 0 {
						u.Tags = ptr(randomTags())
					}
					if h := s.HostByID(u.ID); h != nil && rng.IntN(2) == 0 {
						u.Interfaces = ptr(randomIfaces(h.Interfaces))
					}
					err = e.UpdateHosts([]HostUpdate{u})
				case 5:
					err = e.DeleteHosts([]uint64{pick(hostIDs)})
				case 6:
					var batch []NewItem
					h := pick(hostIDs)
					for j := range rng.IntN(20) {
						batch = append(batch, NewItem{HostID: h, ItemSpec: ItemSpec{
							Key: fmt.Sprintf("k[%d,%d]", round, j), Type: types[rng.IntN(len(types))], ValueType: vtypes[rng.IntN(len(vtypes))],
							SNMPOID: "1.3.6.1.2.1.1.5.0",
						}})
					}
					_, err = e.CreateItems(batch)
				case 7:
					err = e.UpdateItems([]ItemUpdate{{ID: pick(itemIDs), Units: ptr(fmt.Sprint(rng.IntN(3))), Key: ptr(fmt.Sprintf("r[%d]", rng.IntN(5)))}})
				case 8:
					var del []uint64
					for range rng.IntN(5) {
						if id := pick(itemIDs); id != 0 && !containsU64(del, id) {
							del = append(del, id)
						}
					}
					err = e.DeleteItems(del)
				}
				var fe *FieldError
				if err != nil && !errors.As(err, &fe) {
					return err // a database error
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		total.GroupsCreated += res.GroupsCreated
		total.GroupsUpdated += res.GroupsUpdated
		total.HostsCreated += res.HostsCreated
		total.ItemsCreated += res.ItemsCreated
		total.GroupsDeleted += res.GroupsDeleted
		total.HostsUpdated += res.HostsUpdated
		total.HostsDeleted += res.HostsDeleted
		total.ItemsUpdated += res.ItemsUpdated
		total.ItemsDeleted += res.ItemsDeleted
		want := c.Snapshot()
		for _, h := range want.Hosts() {
			for _, it := range h.Items() {
				if want.Item(it.ID) != it || want.Lookup(h.Host, it.Key) != it {
					t.Fatalf("round %d: item %d of %s not found by ID or key", round, it.ID, h.Host)
				}
				// Every item's interface is one of its host's, of the right
				// type; agent items created here always have one.
				if it.InterfaceID != 0 {
					withIface++
					f := want.Interface(it.InterfaceID)
					if f == nil || f.HostID != h.ID || it.Type == ZabbixAgent && f.Type != InterfaceAgent {
						t.Fatalf("round %d: item %d of %s uses interface %d: %+v", round, it.ID, h.Host, it.InterfaceID, f)
					}
				}
			}
			for i := range h.Interfaces {
				if f := &h.Interfaces[i]; want.Interface(f.ID) != f || f.HostID != h.ID {
					t.Fatalf("round %d: interface %+v of %s not indexed", round, f, h.Host)
				}
			}
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if c, err = openPath(path); err != nil {
			t.Fatal(err)
		}
		if d := diffViews(want, c.Snapshot()); d != "" {
			t.Fatalf("round %d: reloaded snapshot differs (-edited +loaded):\n%s", round, d)
		}
	}
	t.Logf("random edits did %+v; items with an interface seen %d times", total, withIface)
	if withIface == 0 {
		t.Fatal("the random edits never gave an item an interface")
	}
	if v := c.Snapshot().Version(); v < uint64(rounds)/2 {
		t.Fatalf("only %d of %d random edits changed anything", v-1, rounds)
	}
	c.Close()
}

func containsU64(s []uint64, v uint64) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestEditBatchIsOneSnapshot creates 10,000 items in one Edit: one
// version, one subscriber signal.
func TestEditBatchIsOneSnapshot(t *testing.T) {
	c, _ := openTemp(t)
	var hid uint64
	mustEdit(t, c, func(e *Edit) error {
		g, err := e.CreateGroups([]string{"G"})
		if err != nil {
			return err
		}
		h, err := e.CreateHosts([]NewHost{{Host: "big", GroupIDs: g}})
		hid = h[0]
		return err
	})
	sub := c.Subscribe()
	before := c.Snapshot().Version()
	batch := make([]NewItem, 10000)
	for i := range batch {
		batch[i] = NewItem{HostID: hid, ItemSpec: ItemSpec{Key: fmt.Sprintf("trap[%d]", i), ValueType: "3"}}
	}
	var ids []uint64
	res := mustEdit(t, c, func(e *Edit) error {
		var err error
		ids, err = e.CreateItems(batch)
		return err
	})
	s := c.Snapshot()
	if res.ItemsCreated != 10000 || s.Version() != before+1 || s.ItemCount() != 10000 || len(ids) != 10000 {
		t.Fatalf("result %+v, version %d -> %d, %d items", res, before, s.Version(), s.ItemCount())
	}
	for i, id := range ids {
		if it := s.Lookup("big", batch[i].Key); it == nil || it.ID != id {
			t.Fatalf("item %d: Lookup = %+v, want ID %d", i, it, id)
		}
	}
	<-sub
	select {
	case <-sub:
		t.Fatal("more than one signal")
	default:
	}
}

// TestEditConcurrentLookups edits while readers look items up; run with
// -race. Readers must always find the items that existed before the
// edits started, and each snapshot must be consistent.
func TestEditConcurrentLookups(t *testing.T) {
	c, _ := openTemp(t)
	spec := genSpec(3, 40)
	mustApply(t, c, spec)
	hid := c.Snapshot().Host(spec.Hosts[0].Host).ID
	var stop atomic.Bool
	var wg sync.WaitGroup
	errc := make(chan error, 4)
	var lookups atomic.Int64
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				s := c.Snapshot()
				hs := &spec.Hosts[(i+r)%len(spec.Hosts)]
				key := hs.Items[i%len(hs.Items)].Key
				it := s.Lookup(hs.Host, key)
				if it == nil || it.Key != key || s.Item(it.ID) != it {
					errc <- fmt.Errorf("snapshot %d: Lookup(%q, %q) = %+v", s.Version(), hs.Host, key, it)
					return
				}
				// Items created by the edits appear whole or not at all.
				if n := s.Host(spec.Hosts[0].Host).ItemCount(); (n-40)%10 != 0 {
					errc <- fmt.Errorf("snapshot %d shows a partial batch: %d items", s.Version(), n)
					return
				}
				lookups.Add(1)
			}
		}()
	}
	for round := range 20 {
		batch := make([]NewItem, 10)
		for i := range batch {
			batch[i] = NewItem{HostID: hid, ItemSpec: ItemSpec{Key: fmt.Sprintf("new[%d,%d]", round, i)}}
		}
		mustEdit(t, c, func(e *Edit) error { _, err := e.CreateItems(batch); return err })
		if round%2 == 1 {
			// Delete the previous round's batch; the snapshot then holds
			// one batch more than the base, still a multiple of ten.
			var ids []uint64
			for i := range 10 {
				ids = append(ids, c.Snapshot().Lookup(spec.Hosts[0].Host, fmt.Sprintf("new[%d,%d]", round-1, i)).ID)
			}
			mustEdit(t, c, func(e *Edit) error { return e.DeleteItems(ids) })
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	if lookups.Load() == 0 {
		t.Fatal("no lookups ran")
	}
	if n := c.Snapshot().Host(spec.Hosts[0].Host).ItemCount(); n != 140 {
		t.Fatalf("%d items after the edits, want 140", n)
	}
}

// TestEditUnusableAfterDatabaseError checks that a failed statement makes
// every later call fail and the Edit write nothing.
func TestEditUnusableAfterDatabaseError(t *testing.T) {
	c, _ := openTemp(t)
	_, err := c.Edit(context.Background(), func(e *Edit) error {
		if _, err := e.CreateGroups([]string{"G"}); err != nil {
			return err
		}
		// A statement SQLite rejects stands in for a disk error.
		if _, err := e.exec("INSERT INTO no_such_table VALUES (1)"); err == nil {
			return errors.New("the bad statement succeeded")
		} else {
			e.fail(err)
		}
		if _, err := e.CreateGroups([]string{"H"}); err == nil || !strings.Contains(err.Error(), "no_such_table") {
			return fmt.Errorf("a call after a database error returned %v", err)
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("Edit after a database error: %v", err)
	}
	if c.Snapshot().Version() != 0 {
		t.Fatal("a failed Edit was published")
	}
}
