package catalog

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"testing"
)

// The downgrades below turn a database of the current schema (version
// 9) into an older version, for the migration tests. Each ends with the
// version update; the statements before it compose longer downgrades.

// downgradeHTTP: version 7, without the triggers (version 9) and the HTTP
// agent requests (version 8).
var downgradeHTTP = slices.Concat(downgradeTriggers, []string{
	"DROP TABLE item_http",
	"UPDATE catalog_meta SET schema_version = 7",
})

// downgradeSNMP: version 6, also without the items' snmp_oid (version 7).
// It keeps item_http, which the 7 → 8 migration creates only if missing,
// so that the migrated snapshot still matches the one before.
var downgradeSNMP = slices.Concat(downgradeTriggers, []string{
	"ALTER TABLE items DROP COLUMN snmp_oid",
	"UPDATE catalog_meta SET schema_version = 6",
})

// downgradeV6: version 5, also without the items' master, params and
// preprocessing (version 6).
var downgradeV6 = slices.Concat(downgradeSNMP[:len(downgradeSNMP)-1], []string{
	"ALTER TABLE items DROP COLUMN master_item_id",
	"ALTER TABLE items DROP COLUMN params",
	"ALTER TABLE items DROP COLUMN preprocessing",
	"UPDATE catalog_meta SET schema_version = 5",
})

// downgradeTLS: version 4, also without the hosts' encryption settings
// (version 5). Its first tlsSteps statements are the steps without the
// version update, for longer downgrades.
var downgradeTLS = slices.Concat(downgradeV6[:len(downgradeV6)-1], []string{
	"ALTER TABLE hosts DROP COLUMN tls_connect",
	"ALTER TABLE hosts DROP COLUMN tls_accept",
	"ALTER TABLE hosts DROP COLUMN tls_issuer",
	"ALTER TABLE hosts DROP COLUMN tls_subject",
	"UPDATE catalog_meta SET schema_version = 4",
})

var tlsSteps = len(downgradeTLS) - 1

// downgradeV3: version 2, also without the per-item timestamp precision
// (version 4) and the interfaces (version 3).
var downgradeV3 = slices.Concat(downgradeTLS[:tlsSteps], []string{
	"ALTER TABLE items DROP COLUMN timestamp_precision",
	"DROP TABLE interfaces",
	"ALTER TABLE items DROP COLUMN interface_id",
	"ALTER TABLE items DROP COLUMN timeout",
	"UPDATE catalog_meta SET schema_version = 2",
})

func execAll(t *testing.T, path string, qs ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range qs {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestMigrateV2 opens a database of schema version 2 (no interfaces, no
// item interface or timeout): its agent items load without an interface,
// and the host can then be given one and the items pointed at it.
func TestMigrateV2(t *testing.T) {
	c, path := openTemp(t)
	spec := testSpec()
	spec.Hosts[0].Interfaces = nil
	if res := mustApply(t, c, spec); res.NotPolled != 2 {
		t.Fatalf("NotPolled %d, want 2 (the agent items of a host without interfaces)", res.NotPolled)
	}
	want := c.Snapshot()
	c.Close()
	execAll(t, path, downgradeV3...)
	c2, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := diffMigrated(want, c2.Snapshot()); d != "" {
		t.Fatalf("migrated snapshot differs:\n%s", d)
	}
	// Re-importing with an interface gives the agent items that interface
	// (and the SNMP item the snmp_oid the downgrade took away).
	spec.Hosts[0].Interfaces = []InterfaceSpec{{DNS: "web-01.example.net"}}
	spec.Hosts[0].Items[4].Timeout = "5s"
	res := mustApply(t, c2, spec)
	if res.HostsUpdated != 1 || res.ItemsUpdated != 3 || res.NotPolled != 0 {
		t.Fatalf("re-import: %+v", res)
	}
	h := c2.Snapshot().Host("web-01")
	f := h.MainInterface(InterfaceAgent)
	if f == nil || f.Addr() != "web-01.example.net:10050" || f.UseIP {
		t.Fatalf("main agent interface %+v", f)
	}
	for _, key := range []string{"system.uname", "system.cpu.load[all,avg1]"} {
		if it := h.Item(key); it.InterfaceID != f.ID {
			t.Errorf("%s: interface %d, want %d", key, it.InterfaceID, f.ID)
		}
	}
	if it := h.Item("system.uname"); it.Ext().Timeout != "5s" {
		t.Errorf("timeout %q", it.Ext().Timeout)
	}
	if it := h.Item("app.latency"); it.InterfaceID != 0 {
		t.Errorf("a trapper item got interface %d", it.InterfaceID)
	}
	if c2.Snapshot().Interface(f.ID) != f {
		t.Error("Snapshot.Interface does not find the host's interface")
	}
	reloadMatches(t, c2, path)
}

func TestInterfaceAddr(t *testing.T) {
	for _, tc := range []struct {
		f    Interface
		want string
	}{
		{Interface{Type: InterfaceAgent, UseIP: true, IP: "127.0.0.1", Port: "10050"}, "127.0.0.1:10050"},
		{Interface{Type: InterfaceAgent, UseIP: true, IP: "::1", Port: "10051"}, "[::1]:10051"},
		{Interface{Type: InterfaceAgent, UseIP: false, IP: "127.0.0.1", DNS: "a.example", Port: "1"}, "a.example:1"},
		{Interface{Type: InterfaceAgent, UseIP: true, IP: "10.0.0.1"}, "10.0.0.1:10050"},
		{Interface{Type: InterfaceSNMP, UseIP: true, IP: "10.0.0.1"}, "10.0.0.1:161"},
	} {
		if got := tc.f.Addr(); got != tc.want {
			t.Errorf("%+v: Addr %q, want %q", tc.f, got, tc.want)
		}
	}
}

// TestApplyInterfaces covers the import format's interface rules.
func TestApplyInterfaces(t *testing.T) {
	yes, no := true, false
	agent := func(key string) ItemSpec { return ItemSpec{Key: key, Type: "zabbix_agent"} }
	f := func(name string, hs HostSpec, wantErr string) {
		t.Helper()
		c, _ := openTemp(t)
		hs.Host, hs.Groups = "h", []string{"G"}
		_, err := c.Apply(context.Background(), Spec{Hosts: []HostSpec{hs}})
		switch {
		case wantErr == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
			t.Errorf("%s: error %v, want one containing %q", name, err, wantErr)
		}
	}
	f("ip default useip", HostSpec{Interfaces: []InterfaceSpec{{IP: "127.0.0.1"}}, Items: []ItemSpec{agent("a")}}, "")
	f("dns only", HostSpec{Interfaces: []InterfaceSpec{{DNS: "h.example"}}, Items: []ItemSpec{agent("a")}}, "")
	f("useip without ip", HostSpec{Interfaces: []InterfaceSpec{{DNS: "h.example", UseIP: &yes}}}, "interfaces[0].ip: cannot be empty")
	f("useip 0 without dns", HostSpec{Interfaces: []InterfaceSpec{{IP: "127.0.0.1", UseIP: &no}}}, "interfaces[0].dns: cannot be empty")
	f("neither", HostSpec{Interfaces: []InterfaceSpec{{}}}, "interfaces[0].dns: cannot be empty")
	f("bad ip", HostSpec{Interfaces: []InterfaceSpec{{IP: "300.1.1.1"}}}, "not an IPv4 or IPv6 address")
	f("bad dns", HostSpec{Interfaces: []InterfaceSpec{{DNS: "a b"}}}, "DNS name")
	f("bad port", HostSpec{Interfaces: []InterfaceSpec{{IP: "127.0.0.1", Port: "70000"}}}, "not a port number")
	f("port with sign", HostSpec{Interfaces: []InterfaceSpec{{IP: "127.0.0.1", Port: "+1"}}}, "not a port number")
	f("bad type", HostSpec{Interfaces: []InterfaceSpec{{Type: "ssh", IP: "127.0.0.1"}}}, "unknown interface type")
	f("two main", HostSpec{Interfaces: []InterfaceSpec{{IP: "127.0.0.1", Main: true}, {IP: "127.0.0.2", Main: true}}}, "more than one main agent interface")
	f("first is main", HostSpec{Interfaces: []InterfaceSpec{{IP: "127.0.0.1"}, {IP: "127.0.0.2"}}, Items: []ItemSpec{agent("a")}}, "")
	f("same address twice", HostSpec{Interfaces: []InterfaceSpec{{IP: "127.0.0.1"}, {IP: "127.0.0.1", Port: "10050"}}}, "the same agent interface")
	f("snmp needs version", HostSpec{Interfaces: []InterfaceSpec{{Type: "snmp", IP: "127.0.0.1"}}}, "details.version: is required")
	f("snmp v2 needs community", HostSpec{Interfaces: []InterfaceSpec{{Type: "snmp", IP: "127.0.0.1", Details: map[string]string{"version": "2"}}}}, "details.community")
	f("snmp v2", HostSpec{Interfaces: []InterfaceSpec{{Type: "snmp", IP: "127.0.0.1", Details: map[string]string{"version": "2", "community": "public"}}}}, "")
	f("details on agent", HostSpec{Interfaces: []InterfaceSpec{{IP: "127.0.0.1", Details: map[string]string{"version": "2"}}}}, "only SNMP interfaces have details")
	f("item by address", HostSpec{Interfaces: []InterfaceSpec{{IP: "127.0.0.1"}, {IP: "127.0.0.2"}}, Items: []ItemSpec{{Key: "a", Type: "zabbix_agent", Interface: "127.0.0.2:10050"}}}, "")
	f("item unknown address", HostSpec{Interfaces: []InterfaceSpec{{IP: "127.0.0.1"}}, Items: []ItemSpec{{Key: "a", Type: "zabbix_agent", Interface: "127.0.0.9:10050"}}}, `no agent interface with address "127.0.0.9:10050"`)
	f("trapper with interface", HostSpec{Interfaces: []InterfaceSpec{{IP: "127.0.0.1"}}, Items: []ItemSpec{{Key: "a", Interface: "127.0.0.1:10050"}}}, "item type trapper uses no interface")
	f("agent item on snmp-only host", HostSpec{Interfaces: []InterfaceSpec{{Type: "snmp", IP: "127.0.0.1", Details: map[string]string{"version": "3"}}}, Items: []ItemSpec{{Key: "a", Type: "zabbix_agent", Interface: "127.0.0.1:161"}}}, "no agent interface")
	f("timeout", HostSpec{Interfaces: []InterfaceSpec{{IP: "127.0.0.1"}}, Items: []ItemSpec{{Key: "a", Type: "zabbix_agent", Timeout: "30s"}}}, "")
	f("timeout zero", HostSpec{Items: []ItemSpec{{Key: "a", Timeout: "0"}}}, "timeout \"0\" is out of range")
	f("timeout too long", HostSpec{Items: []ItemSpec{{Key: "a", Timeout: "11m"}}}, "out of range")
	f("timeout garbage", HostSpec{Items: []ItemSpec{{Key: "a", Timeout: "3 s"}}}, "items[0].timeout")
}

// TestApplyInterfacesKeepIDs re-imports a host: interfaces matched by
// type and address keep their IDs, a removed one used by an item is
// refused, an unused one is deleted.
func TestApplyInterfacesKeepIDs(t *testing.T) {
	c, path := openTemp(t)
	spec := Spec{Hosts: []HostSpec{{
		Host: "h", Groups: []string{"G"},
		Interfaces: []InterfaceSpec{{IP: "127.0.0.1"}, {IP: "127.0.0.2"}},
		Items:      []ItemSpec{{Key: "a", Type: "zabbix_agent"}},
	}}}
	mustApply(t, c, spec)
	h := c.Snapshot().Host("h")
	first, second := h.Interfaces[0], h.Interfaces[1]
	if !first.Main || second.Main || h.Item("a").InterfaceID != first.ID {
		t.Fatalf("interfaces %+v, item interface %d", h.Interfaces, h.Item("a").InterfaceID)
	}
	// Swap the main flag: IDs stay, the item stays on its interface.
	spec.Hosts[0].Interfaces = []InterfaceSpec{{IP: "127.0.0.2", Main: true}, {IP: "127.0.0.1"}}
	if res := mustApply(t, c, spec); res.HostsUpdated != 1 || res.ItemsUpdated != 1 {
		// The item is re-defaulted to the new main interface.
		t.Fatalf("swap: %+v", res)
	}
	h = c.Snapshot().Host("h")
	if h.Interfaces[0].ID != first.ID || h.Interfaces[1].ID != second.ID || h.Interfaces[0].Main || !h.Interfaces[1].Main {
		t.Fatalf("after swap: %+v", h.Interfaces)
	}
	if h.Item("a").InterfaceID != second.ID {
		t.Fatalf("item follows the main interface: got %d, want %d", h.Item("a").InterfaceID, second.ID)
	}
	if res := mustApply(t, c, spec); res.Changed() {
		t.Fatalf("same spec again changed something: %+v", res)
	}
	// Dropping the interface the item uses, with the item left out of
	// the spec (so Apply leaves it alone), is refused.
	spec.Hosts[0].Interfaces = []InterfaceSpec{{IP: "127.0.0.1"}}
	spec.Hosts[0].Items = nil
	_, err := c.Apply(context.Background(), spec)
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Kind != InterfaceInUse || ce.Name != "a" {
		t.Fatalf("removing a used interface: %v", err)
	}
	// Moving the item to the other interface in the same spec is fine.
	spec.Hosts[0].Items = []ItemSpec{{Key: "a", Type: "zabbix_agent"}}
	mustApply(t, c, spec)
	h = c.Snapshot().Host("h")
	if len(h.Interfaces) != 1 || h.Interfaces[0].ID != first.ID || h.Item("a").InterfaceID != first.ID {
		t.Fatalf("after removal: %+v, item on %d", h.Interfaces, h.Item("a").InterfaceID)
	}
	if c.Snapshot().Interface(second.ID) != nil {
		t.Fatal("the removed interface is still in the snapshot")
	}
	// No interfaces key: the host keeps its interfaces.
	spec.Hosts[0].Interfaces = nil
	if res := mustApply(t, c, spec); res.Changed() {
		t.Fatalf("absent interfaces changed something: %+v", res)
	}
	reloadMatches(t, c, path)
}

// TestEditInterfaceRules covers the Zabbix 6.0 rules of the edit API: one
// main interface per type, agent items need an agent interface of their
// own host, an interface in use cannot be deleted or change type.
func TestEditInterfaceRules(t *testing.T) {
	c, path := openTemp(t)
	agentIf := func(ip string, main bool) Interface {
		return Interface{Type: InterfaceAgent, Main: main, UseIP: true, IP: ip}
	}
	var g, h1, h2, i1 uint64
	mustEdit(t, c, func(e *Edit) error {
		gs, _ := e.CreateGroups([]string{"G"})
		g = gs[0]
		hs, err := e.CreateHosts([]NewHost{
			{Host: "h1", GroupIDs: []uint64{g}, Interfaces: []Interface{agentIf("127.0.0.1", true), agentIf("127.0.0.2", false)}},
			{Host: "h2", GroupIDs: []uint64{g}, Interfaces: []Interface{agentIf("127.0.0.3", true)}},
		})
		if err != nil {
			return err
		}
		h1, h2 = hs[0], hs[1]
		ids, err := e.CreateItems([]NewItem{{HostID: h1, ItemSpec: ItemSpec{Key: "agent.ping", Type: "0", Timeout: "4s"}}})
		if err != nil {
			return err
		}
		i1 = ids[0]
		return nil
	})
	snap := c.Snapshot()
	host1 := snap.HostByID(h1)
	main1, other1 := host1.Interfaces[0].ID, host1.Interfaces[1].ID
	other2 := snap.HostByID(h2).Interfaces[0].ID
	if it := snap.Item(i1); it.InterfaceID != main1 || it.Ext().Timeout != "4s" {
		t.Fatalf("agent item: interface %d (want the main one, %d), timeout %q", it.InterfaceID, main1, it.Ext().Timeout)
	}
	if host1.Interfaces[0].Port != "10050" {
		t.Fatalf("default port %q", host1.Interfaces[0].Port)
	}

	f := func(name string, fn func(e *Edit) error, kind ConflictKind, field string) {
		t.Helper()
		before := c.Snapshot()
		_, err := c.Edit(context.Background(), fn)
		if err == nil {
			t.Errorf("%s: no error", name)
			return
		}
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: error %v, want one on field %s", name, err, field)
		}
		var ce *ConflictError
		if kind != 0 && (!errors.As(err, &ce) || ce.Kind != kind) {
			t.Errorf("%s: error %v, want conflict kind %d", name, err, kind)
		}
		if c.Snapshot() != before {
			t.Errorf("%s: a refused edit changed the snapshot", name)
		}
	}
	f("two main", func(e *Edit) error {
		_, err := e.CreateHosts([]NewHost{{Host: "x", GroupIDs: []uint64{g}, Interfaces: []Interface{agentIf("127.0.0.1", true), agentIf("127.0.0.2", true)}}})
		return err
	}, TwoDefaultInterfaces, "hosts[0].interfaces")
	f("no main", func(e *Edit) error {
		_, err := e.CreateHosts([]NewHost{{Host: "x", GroupIDs: []uint64{g}, Interfaces: []Interface{agentIf("127.0.0.1", false)}}})
		return err
	}, NoDefaultInterface, "hosts[0].interfaces")
	f("new host keeps an ID", func(e *Edit) error {
		fi := agentIf("127.0.0.1", true)
		fi.ID = main1
		_, err := e.CreateHosts([]NewHost{{Host: "x", GroupIDs: []uint64{g}, Interfaces: []Interface{fi}}})
		return err
	}, 0, "hosts[0].interfaces[0].interfaceid")
	f("useip without ip", func(e *Edit) error {
		_, err := e.CreateHosts([]NewHost{{Host: "x", GroupIDs: []uint64{g}, Interfaces: []Interface{{Type: InterfaceAgent, Main: true, UseIP: true, DNS: "x"}}}})
		return err
	}, 0, "hosts[0].interfaces[0].ip")
	f("dns without dns", func(e *Edit) error {
		_, err := e.CreateHosts([]NewHost{{Host: "x", GroupIDs: []uint64{g}, Interfaces: []Interface{{Type: InterfaceAgent, Main: true, IP: "127.0.0.1"}}}})
		return err
	}, 0, "hosts[0].interfaces[0].dns")
	f("agent item without interface", func(e *Edit) error {
		hs, err := e.CreateHosts([]NewHost{{Host: "x", GroupIDs: []uint64{g}}})
		if err != nil {
			return err
		}
		_, err = e.CreateItems([]NewItem{{HostID: hs[0], ItemSpec: ItemSpec{Key: "k", Type: "0"}}})
		return err
	}, NoInterface, "items[0].interfaceid")
	f("interface of another host", func(e *Edit) error {
		_, err := e.CreateItems([]NewItem{{HostID: h1, ItemSpec: ItemSpec{Key: "k", Type: "0"}, InterfaceID: other2}})
		return err
	}, ForeignInterface, "items[0].interfaceid")
	f("update to interface of another host", func(e *Edit) error {
		return e.UpdateItems([]ItemUpdate{{ID: i1, InterfaceID: &other2}})
	}, ForeignInterface, "items[0].interfaceid")
	f("wrong interface type", func(e *Edit) error {
		err := e.UpdateHosts([]HostUpdate{{ID: h1, Interfaces: &[]Interface{
			{ID: main1, Type: InterfaceAgent, Main: true, UseIP: true, IP: "127.0.0.1"},
			{ID: other1, Type: InterfaceAgent, UseIP: true, IP: "127.0.0.2"},
			{Type: InterfaceSNMP, Main: true, UseIP: true, IP: "127.0.0.1", Details: map[string]string{"version": "3"}},
		}}})
		if err != nil {
			return err
		}
		snmp := e.host(h1).Interfaces[2].ID
		return e.UpdateItems([]ItemUpdate{{ID: i1, InterfaceID: &snmp}})
	}, WrongInterfaceType, "items[0].interfaceid")
	f("delete interface in use", func(e *Edit) error {
		return e.UpdateHosts([]HostUpdate{{ID: h1, Interfaces: &[]Interface{{ID: other1, Type: InterfaceAgent, Main: true, UseIP: true, IP: "127.0.0.2"}}}})
	}, InterfaceInUse, "hosts[0].interfaces")
	f("change type of interface in use", func(e *Edit) error {
		return e.UpdateHosts([]HostUpdate{{ID: h1, Interfaces: &[]Interface{{ID: main1, Type: InterfaceJMX, Main: true, UseIP: true, IP: "127.0.0.1"}}}})
	}, InterfaceInUse, "hosts[0].interfaces")
	f("keep an interface of another host", func(e *Edit) error {
		return e.UpdateHosts([]HostUpdate{{ID: h1, Interfaces: &[]Interface{
			{ID: main1, Type: InterfaceAgent, Main: true, UseIP: true, IP: "127.0.0.1"},
			{ID: other2, Type: InterfaceAgent, UseIP: true, IP: "127.0.0.3"},
		}}})
	}, 0, "hosts[0].interfaces[1].interfaceid")
	f("timeout out of range", func(e *Edit) error {
		return e.UpdateItems([]ItemUpdate{{ID: i1, Timeout: ptr("601s")}})
	}, 0, "items[0].timeout")

	// Allowed: move the item to the other interface, then delete the
	// first one and edit the remaining one in place (keeping its ID).
	mustEdit(t, c, func(e *Edit) error {
		if err := e.UpdateItems([]ItemUpdate{{ID: i1, InterfaceID: &other1, Timeout: ptr("")}}); err != nil {
			return err
		}
		return e.UpdateHosts([]HostUpdate{{ID: h1, Interfaces: &[]Interface{{ID: other1, Type: InterfaceAgent, Main: true, UseIP: false, DNS: "h1.example", Port: "20050"}}}})
	})
	snap = c.Snapshot()
	if it := snap.Item(i1); it.InterfaceID != other1 || it.Ext().Timeout != "" {
		t.Fatalf("item after the move: interface %d timeout %q", it.InterfaceID, it.Ext().Timeout)
	}
	if fi := snap.Interface(other1); fi == nil || fi.Addr() != "h1.example:20050" || !fi.Main || fi.HostID != h1 {
		t.Fatalf("edited interface: %+v", fi)
	}
	if snap.Interface(main1) != nil {
		t.Fatal("deleted interface still in the snapshot")
	}
	// Changing the item type to trapper drops its interface; back to
	// agent picks the main one again.
	mustEdit(t, c, func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: i1, Type: ptr("2")}}) })
	if it := c.Snapshot().Item(i1); it.InterfaceID != 0 {
		t.Fatalf("trapper item kept interface %d", it.InterfaceID)
	}
	mustEdit(t, c, func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: i1, Type: ptr("0")}}) })
	if it := c.Snapshot().Item(i1); it.InterfaceID != other1 {
		t.Fatalf("agent item again: interface %d, want %d", it.InterfaceID, other1)
	}
	// Deleting the host deletes its interfaces.
	mustEdit(t, c, func(e *Edit) error { return e.DeleteHosts([]uint64{h2}) })
	if c.Snapshot().Interface(other2) != nil {
		t.Fatal("interface of a deleted host is still in the snapshot")
	}
	c = reloadMatches(t, c, path)
	var n int
	if err := c.db.QueryRow("SELECT count(*) FROM interfaces WHERE host_id = ?", h2).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d interface rows of the deleted host (%v)", n, err)
	}
}
