package catalog

import (
	"slices"
	"strings"
	"testing"
)

// TestLoginItems: SSH and Telnet items keep their login (authtype, user
// name, password, key file names) and command across a reopen; an
// update that does not name the login keeps it, one that does changes
// it; a type change away drops it; deleting the item (or its host)
// deletes the row.
func TestLoginItems(t *testing.T) {
	c, path := openTemp(t)
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "srv", Groups: []string{"G"},
		Interfaces: []InterfaceSpec{{Type: "agent", IP: "127.0.0.1"}},
		Items: []ItemSpec{
			{Key: "ssh.run[up]", Type: "ssh", ValueType: "text", Params: "uptime",
				HTTPSpec: HTTPSpec{Username: "mon", Password: "s3cret"}},
			{Key: "ssh.run[key]", Type: "13", ValueType: "text", Params: "df -h\r\n",
				HTTPSpec:  HTTPSpec{AuthType: "PUBLIC_KEY", Username: "mon", Password: "passphrase"},
				PublicKey: "id_ed25519.pub", PrivateKey: "id_ed25519"},
			{Key: "telnet.run[ls]", Type: "telnet", ValueType: "text", Params: "ls",
				HTTPSpec: HTTPSpec{AuthType: "1", Username: "admin", Password: "pw"}},
		}}}})
	snap := c.Snapshot()
	pw := snap.Lookup("srv", "ssh.run[up]")
	key := snap.Lookup("srv", "ssh.run[key]")
	tel := snap.Lookup("srv", "telnet.run[ls]")
	want := map[uint64]LoginItem{
		pw.ID:  {AuthType: SSHAuthPassword, Username: "mon", Password: "s3cret"},
		key.ID: {AuthType: SSHAuthPublicKey, Username: "mon", Password: "passphrase", PublicKey: "id_ed25519.pub", PrivateKey: "id_ed25519"},
		tel.ID: {Username: "admin", Password: "pw"}, // telnet has no authtype
	}
	check := func(c *Catalog, when string) {
		t.Helper()
		for id, w := range want {
			it := c.Snapshot().Item(id)
			if it.Ext().Login == nil || *it.Ext().Login != w {
				t.Fatalf("%s: item %q login %+v, want %+v", when, it.Key, it.Ext().Login, w)
			}
			if it.InterfaceID == 0 {
				t.Fatalf("%s: item %q has no interface", when, it.Key)
			}
		}
	}
	check(c, "after apply")
	if got := c.Snapshot().Item(key.ID).Ext().Params; got != "df -h\r\n" {
		t.Fatalf("command kept as given: %q", got)
	}
	c = reloadMatches(t, c, path)
	check(c, "after reopen")

	name := "renamed"
	mustEdit(t, c, func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: pw.ID, Name: &name}}) })
	check(c, "after an update without the login")
	mustEdit(t, c, func(e *Edit) error {
		return e.UpdateItems([]ItemUpdate{{ID: pw.ID, HTTP: func(h *HTTPSpec) { h.Username = "other" }}})
	})
	w := want[pw.ID]
	w.Username = "other"
	want[pw.ID] = w
	check(c, "after a user name change")
	c = reloadMatches(t, c, path)
	check(c, "after reopen")

	trapper := "trapper"
	empty := ""
	mustEdit(t, c, func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: tel.ID, Type: &trapper, Params: &empty}}) })
	if l := c.Snapshot().Item(tel.ID).Ext().Login; l != nil {
		t.Fatalf("a trapper item keeps a login: %+v", l)
	}
	delete(want, tel.ID)
	c = reloadMatches(t, c, path)
	check(c, "after a type change")
	mustEdit(t, c, func(e *Edit) error { return e.DeleteItems([]uint64{pw.ID}) })
	delete(want, pw.ID)
	c = reloadMatches(t, c, path)
	var rows int
	if err := c.db.QueryRow("SELECT count(*) FROM item_login").Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("item_login rows after deleting an item: %d (%v)", rows, err)
	}
	host := c.Snapshot().Host("srv").ID
	mustEdit(t, c, func(e *Edit) error { return e.DeleteHosts([]uint64{host}) })
	if err := c.db.QueryRow("SELECT count(*) FROM item_login").Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("item_login rows after deleting the host: %d (%v)", rows, err)
	}
}

// TestLoginItemsRefused: what the catalog refuses in an SSH or Telnet
// item's login, naming the field.
func TestLoginItemsRefused(t *testing.T) {
	long := strings.Repeat("a", maxLoginFieldLen+1)
	f := func(is ItemSpec, field string) {
		t.Helper()
		c, _ := openTemp(t)
		is.ValueType = "text"
		_, err := c.Apply(t.Context(), Spec{Hosts: []HostSpec{{Host: "srv", Groups: []string{"G"},
			Interfaces: []InterfaceSpec{{Type: "agent", IP: "127.0.0.1"}}, Items: []ItemSpec{is}}}})
		if err == nil || !strings.Contains(err.Error(), "."+field) {
			t.Fatalf("%+v: error %v, want one naming %s", is, err, field)
		}
	}
	f(ItemSpec{Key: "ssh.run[a]", Type: "ssh", HTTPSpec: HTTPSpec{AuthType: "2"}}, "authtype")
	f(ItemSpec{Key: "ssh.run[a]", Type: "ssh", HTTPSpec: HTTPSpec{Username: long}}, "username")
	f(ItemSpec{Key: "ssh.run[a]", Type: "ssh", HTTPSpec: HTTPSpec{Password: long}}, "password")
	f(ItemSpec{Key: "telnet.run[a]", Type: "telnet", HTTPSpec: HTTPSpec{Username: long}}, "username")
	f(ItemSpec{Key: "ssh.run[a]", Type: "ssh", HTTPSpec: HTTPSpec{AuthType: "1"}, PrivateKey: "id"}, "publickey")
	f(ItemSpec{Key: "ssh.run[a]", Type: "ssh", HTTPSpec: HTTPSpec{AuthType: "1"}, PublicKey: "id.pub"}, "privatekey")
	f(ItemSpec{Key: "ssh.run[a]", Type: "ssh", HTTPSpec: HTTPSpec{AuthType: "1"}, PublicKey: "../../etc/passwd", PrivateKey: "id"}, "publickey")
	f(ItemSpec{Key: "ssh.run[a]", Type: "ssh", HTTPSpec: HTTPSpec{AuthType: "1"}, PublicKey: "id.pub", PrivateKey: "/etc/ssh/id"}, "privatekey")
	f(ItemSpec{Key: "ssh.run[a]", Type: "ssh", HTTPSpec: HTTPSpec{AuthType: "1"}, PublicKey: long, PrivateKey: "id"}, "publickey")
	f(ItemSpec{Key: "ssh.run[a]", Type: "ssh", Params: strings.Repeat("x", maxParamsLen+1)}, "params")
	f(ItemSpec{Key: "agent.ping", Type: "zabbix_agent", Params: "uptime"}, "params")
}

// downgradeItemLogin undoes the 21 → 22 migration (SSH and Telnet
// logins) after downgradeItemJMX, the first steps of every older
// downgrade.
var downgradeItemLogin = append(slices.Clone(downgradeItemJMX), "DROP TABLE item_login")

// TestMigrateV21Login opens a database of schema version 21 (no
// item_login): it migrates, and SSH items can then be stored.
func TestMigrateV21Login(t *testing.T) {
	c, path := openTemp(t)
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "srv", Groups: []string{"G"}, Interfaces: []InterfaceSpec{{Type: "agent", IP: "127.0.0.1"}}}}})
	c.Close()
	execAll(t, path, append(slices.Clone(downgradeItemLogin), "UPDATE catalog_meta SET schema_version = 21")...)
	c2 := reopenTrig(t, path)
	defer c2.Close()
	mustApply(t, c2, Spec{Hosts: []HostSpec{{Host: "srv", Groups: []string{"G"}, Interfaces: []InterfaceSpec{{Type: "agent", IP: "127.0.0.1"}},
		Items: []ItemSpec{{Key: "ssh.run[a]", Type: "ssh", ValueType: "text", Params: "id", HTTPSpec: HTTPSpec{Username: "u", Password: "p"}}}}}})
	if l := c2.Snapshot().Lookup("srv", "ssh.run[a]").Ext().Login; l == nil || l.Username != "u" {
		t.Fatalf("login after the 21 → 22 migration: %+v", l)
	}
	var ver int
	if err := c2.db.QueryRow("SELECT schema_version FROM catalog_meta").Scan(&ver); err != nil || ver != schemaVersion {
		t.Fatalf("schema version %d after the upgrade (%v)", ver, err)
	}
}
