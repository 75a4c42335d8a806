package catalog

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestNormJMX(t *testing.T) {
	var el errList
	got := normJMX("", &HTTPSpec{Username: "monitorRole", Password: "s3cret"}, JMX, "items[0]", &el)
	if err := el.err(); err != nil || *got != (JMXItem{Endpoint: DefaultJMXEndpoint, Username: "monitorRole", Password: "s3cret"}) {
		t.Errorf("defaults: %+v %v", got, err)
	}
	if j := normJMX("x", &HTTPSpec{Username: "u"}, ZabbixAgent, "i", &el); j != nil || el.err() != nil {
		t.Errorf("agent item: %+v %v", j, el.err())
	}
	f := func(endpoint, user, pass, want string) {
		t.Helper()
		var el errList
		normJMX(endpoint, &HTTPSpec{Username: user, Password: pass}, JMX, "items[0]", &el)
		if err := el.err(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("normJMX(%q, %q, %q) = %v, want an error with %q", endpoint, user, pass, err, want)
		}
	}
	// The limits 6.0.14 refuses beyond.
	f(strings.Repeat("x", 256), "", "", "items[0].jmx_endpoint: 256 characters is longer than the limit of 255")
	f("", strings.Repeat("u", 65), "", "items[0].username: 65 characters")
	f("", "", strings.Repeat("p", 65), "items[0].password: 65 characters")
	f("", "\xff", "", "items[0].username: is not valid UTF-8")
}

// TestJMXItemStored: a JMX agent item's endpoint and credentials
// survive create, update (of them and of other fields), reopen, and are
// dropped with a type change, the item and its host.
func TestJMXItemStored(t *testing.T) {
	c, path := openTemp(t)
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "app", Groups: []string{"G"},
		Interfaces: []InterfaceSpec{{Type: "jmx", IP: "127.0.0.1", Port: "12345"}},
		Items: []ItemSpec{
			{Key: `jmx["java.lang:type=Memory","HeapMemoryUsage.used"]`, Type: "jmx", ValueType: "unsigned"},
		}}}})
	s := c.Snapshot()
	it := s.Lookup("app", `jmx["java.lang:type=Memory","HeapMemoryUsage.used"]`)
	if it.Ext().JMX == nil || *it.Ext().JMX != (JMXItem{Endpoint: DefaultJMXEndpoint}) {
		t.Fatalf("imported: %+v", it.Ext().JMX)
	}
	if f := s.Interface(it.InterfaceID); f == nil || f.Type != InterfaceJMX {
		t.Fatalf("imported item's interface: %+v", f)
	}
	hid := it.HostID
	var id2 uint64
	mustEdit(t, c, func(e *Edit) error {
		ids, err := e.CreateItems([]NewItem{{HostID: hid, ItemSpec: ItemSpec{Key: "jmx.discovery", Type: "16", ValueType: "4",
			JMXEndpoint: "service:jmx:jmxmp://{HOST.CONN}:{HOST.PORT}", HTTPSpec: HTTPSpec{Username: "{$JMX.USER}", Password: "p"}}}})
		if err != nil {
			return err
		}
		id2 = ids[0]
		return e.UpdateItems([]ItemUpdate{
			{ID: it.ID, HTTP: func(h *HTTPSpec) { h.Username, h.Password = "monitorRole", "s3cret" }},
			{ID: id2, Name: new("renamed")},
		})
	})
	check := func(c *Catalog) {
		t.Helper()
		s := c.Snapshot()
		a, b := s.Item(it.ID), s.Item(id2)
		if a.Ext().JMX == nil || *a.Ext().JMX != (JMXItem{Endpoint: DefaultJMXEndpoint, Username: "monitorRole", Password: "s3cret"}) {
			t.Errorf("updated item: %+v", a.Ext().JMX)
		}
		if b.Ext().JMX == nil || *b.Ext().JMX != (JMXItem{Endpoint: "service:jmx:jmxmp://{HOST.CONN}:{HOST.PORT}", Username: "{$JMX.USER}", Password: "p"}) || b.Name != "renamed" {
			t.Errorf("created item: %+v %q", b.Ext().JMX, b.Name)
		}
		if b.InterfaceID != a.InterfaceID {
			t.Errorf("created item's interface %d, want the host's JMX interface %d", b.InterfaceID, a.InterfaceID)
		}
	}
	check(c)
	c.Close()
	c2, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	check(c2)
	// Another endpoint only.
	mustEdit(t, c2, func(e *Edit) error {
		return e.UpdateItems([]ItemUpdate{{ID: id2, JMXEndpoint: new("service:jmx:rmi:///jndi/rmi://{HOST.CONN}:1099/jmxrmi")}})
	})
	if j := c2.Snapshot().Item(id2).Ext().JMX; j == nil || j.Endpoint != "service:jmx:rmi:///jndi/rmi://{HOST.CONN}:1099/jmxrmi" || j.Password != "p" {
		t.Errorf("after the endpoint's update: %+v", j)
	}
	// The item becomes a trapper item: its JMX settings go.
	mustEdit(t, c2, func(e *Edit) error {
		return e.UpdateItems([]ItemUpdate{{ID: id2, Type: new("trapper"), Delay: new("0")}})
	})
	if j := c2.Snapshot().Item(id2).Ext().JMX; j != nil {
		t.Errorf("trapper item kept its JMX settings: %+v", j)
	}
	mustEdit(t, c2, func(e *Edit) error { return e.DeleteItems([]uint64{id2}) })
	mustEdit(t, c2, func(e *Edit) error { return e.DeleteHosts([]uint64{hid}) })
	var rows int
	if err := c2.db.QueryRow("SELECT count(*) FROM item_jmx").Scan(&rows); err != nil || rows != 0 {
		t.Errorf("item_jmx rows left: %d (%v)", rows, err)
	}
}

// TestJMXItemNeedsInterface: a JMX item needs a JMX interface of its
// host, as in 6.0 ("No interface found."), and refuses another type's.
func TestJMXItemNeedsInterface(t *testing.T) {
	c, _ := openTemp(t)
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "app", Groups: []string{"G"},
		Interfaces: []InterfaceSpec{{Type: "agent", IP: "127.0.0.1", Port: "10050"}}}}})
	h := c.Snapshot().Host("app")
	f := func(iface uint64, want ConflictKind) {
		t.Helper()
		_, err := c.Edit(context.Background(), func(e *Edit) error {
			_, err := e.CreateItems([]NewItem{{HostID: h.ID, InterfaceID: iface, ItemSpec: ItemSpec{Key: "jmx[a,b]", Type: "jmx", ValueType: "3"}}})
			return err
		})
		var ce *ConflictError
		if !errors.As(err, &ce) || ce.Kind != want {
			t.Errorf("interface %d: %v, want conflict %v", iface, err, want)
		}
	}
	f(0, NoInterface)
	f(h.Interfaces[0].ID, WrongInterfaceType)
}

// downgradeItemJMX undoes the 22 → 23 migration (JMX items) after
// downgradeItemODBC, the first steps of every older downgrade.
var downgradeItemJMX = append(slices.Clone(downgradeItemODBC), "DROP TABLE item_jmx")

// TestMigrateItemJMX opens a database of schema version 22 (no
// item_jmx): it gains the table, and JMX items can be stored.
func TestMigrateItemJMX(t *testing.T) {
	c, path := openTemp(t)
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "app", Groups: []string{"G"},
		Interfaces: []InterfaceSpec{{Type: "jmx", IP: "127.0.0.1", Port: "12345"}}}}})
	c.Close()
	execAll(t, path, append(slices.Clone(downgradeItemJMX), "UPDATE catalog_meta SET schema_version = 22")...)
	c2, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	mustApply(t, c2, Spec{Hosts: []HostSpec{{Host: "app", Groups: []string{"G"},
		Items: []ItemSpec{{Key: "jmx[a,b]", Type: "jmx", ValueType: "3", JMXEndpoint: "service:jmx:x"}}}}})
	if j := c2.Snapshot().Lookup("app", "jmx[a,b]").Ext().JMX; j == nil || j.Endpoint != "service:jmx:x" {
		t.Fatalf("after the upgrade: %+v", j)
	}
	var ver int
	if err := c2.db.QueryRow("SELECT schema_version FROM catalog_meta").Scan(&ver); err != nil || ver != schemaVersion {
		t.Fatalf("schema version %d after the upgrade (%v)", ver, err)
	}
}
