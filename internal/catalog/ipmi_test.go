package catalog

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestEditIPMI: host IPMI settings and item ipmi_sensor are stored by
// create and update, survive a reopen and a re-import, go with their
// host or item, and are checked as Zabbix 6.0 checks them (recorded
// from 6.0.14: lengths 16/20/128, ipmi_sensor required on IPMI items
// but ipmi.get, kept on items of any type).
func TestEditIPMI(t *testing.T) {
	c, path := openTemp(t)
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "h", Groups: []string{"G"}}}})
	gid := c.Snapshot().Group("G").ID
	bmc := Interface{Type: InterfaceIPMI, Main: true, UseIP: true, IP: "127.0.0.1", Port: "623"}
	set := HostIPMI{AuthType: 6, Privilege: 4, Username: "admin", Password: "s3cret"}
	mustEdit(t, c, func(e *Edit) error {
		_, err := e.CreateHosts([]NewHost{{Host: "bmc", GroupIDs: []uint64{gid}, Interfaces: []Interface{bmc}, IPMI: set}, {Host: "plain", GroupIDs: []uint64{gid}}})
		return err
	})
	s := c.Snapshot()
	if got := s.Host("bmc").Ext().IPMI; got != set {
		t.Fatalf("created IPMI %+v, want %+v", got, set)
	}
	if got := s.Host("plain").Ext().IPMI; got != DefaultHostIPMI {
		t.Fatalf("created without IPMI: %+v, want the default", got)
	}
	if got := s.Host("h").Ext().IPMI; got != DefaultHostIPMI {
		t.Fatalf("imported host: %+v, want the default", got)
	}
	hid := s.Host("bmc").ID
	mustEdit(t, c, func(e *Edit) error {
		_, err := e.CreateItems([]NewItem{
			{HostID: hid, ItemSpec: ItemSpec{Key: "cpu.temp", Type: "ipmi", ValueType: "float", IPMISensor: "CPU Temp"}},
			{HostID: hid, ItemSpec: ItemSpec{Key: IPMIGetKey, Type: "12", ValueType: "text"}},
			{HostID: hid, ItemSpec: ItemSpec{Key: "trap", Type: "trapper", IPMISensor: "kept"}},
		})
		return err
	})
	s = c.Snapshot()
	h := s.Host("bmc")
	if it := h.Item("cpu.temp"); it.Ext().IPMISensor != "CPU Temp" || it.Type != IPMI || it.InterfaceID != h.Interfaces[0].ID {
		t.Fatalf("IPMI item %+v: want its sensor and the host's IPMI interface", it)
	}
	if it := h.Item("trap"); it.Ext().IPMISensor != "kept" {
		t.Fatalf("a trapper item's ipmi_sensor %q, want it kept as 6.0 keeps it", it.Ext().IPMISensor)
	}
	// Updates.
	other := "name:(7.1).CPU Temp"
	changed := HostIPMI{AuthType: -1, Privilege: 2, Username: "op"}
	mustEdit(t, c, func(e *Edit) error {
		if err := e.UpdateItems([]ItemUpdate{{ID: h.Item("cpu.temp").ID, IPMISensor: &other}}); err != nil {
			return err
		}
		return e.UpdateHosts([]HostUpdate{{ID: hid, IPMI: &changed}})
	})
	want := c.Snapshot()
	if got := want.Host("bmc").Item("cpu.temp").Ext().IPMISensor; got != other {
		t.Fatalf("updated sensor %q", got)
	}
	if got := want.Host("bmc").Ext().IPMI; got != changed {
		t.Fatalf("updated IPMI %+v", got)
	}
	// A reopen sees the same.
	c.Close()
	c2, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	got := c2.Snapshot()
	if got.Host("bmc").Ext().IPMI != changed || got.Host("bmc").Item("cpu.temp").Ext().IPMISensor != other || got.Host("bmc").Item("trap").Ext().IPMISensor != "kept" {
		t.Fatalf("after reopen: %+v, %q", got.Host("bmc").Ext().IPMI, got.Host("bmc").Item("cpu.temp").Ext().IPMISensor)
	}
	if got.Host("plain").Ext().IPMI != DefaultHostIPMI {
		t.Fatalf("after reopen, default host: %+v", got.Host("plain").Ext().IPMI)
	}

	// Refusals.
	refused := func(what string, fn func(e *Edit) error, want string) {
		t.Helper()
		_, err := c2.Edit(context.Background(), fn)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", what, err, want)
		}
	}
	refused("no sensor", func(e *Edit) error {
		_, err := e.CreateItems([]NewItem{{HostID: hid, ItemSpec: ItemSpec{Key: "x", Type: "ipmi"}}})
		return err
	}, `"ipmi_sensor": cannot be empty`)
	refused("ipmi.get with parameters", func(e *Edit) error {
		_, err := e.CreateItems([]NewItem{{HostID: hid, ItemSpec: ItemSpec{Key: "ipmi.get[x]", Type: "ipmi", ValueType: "text"}}})
		return err
	}, `"ipmi_sensor": cannot be empty`)
	refused("long sensor", func(e *Edit) error {
		_, err := e.CreateItems([]NewItem{{HostID: hid, ItemSpec: ItemSpec{Key: "x", Type: "ipmi", IPMISensor: strings.Repeat("s", 129)}}})
		return err
	}, `is too long for field "ipmi_sensor" - 129 characters. Allowed length is 128 characters.`)
	refused("long username", func(e *Edit) error {
		return e.UpdateHosts([]HostUpdate{{ID: hid, IPMI: &HostIPMI{Username: strings.Repeat("u", 17)}}})
	}, `"ipmi_username" - 17 characters. Allowed length is 16 characters.`)
	refused("long password", func(e *Edit) error {
		return e.UpdateHosts([]HostUpdate{{ID: hid, IPMI: &HostIPMI{Password: "supersecretpassword21"}}})
	}, `"ipmi_password" - 21 characters. Allowed length is 20 characters.`)
	var fe *IPMIFieldError
	if err := (HostIPMI{Password: "supersecretpassword21"}).Check(); !errors.As(err, &fe) || strings.Contains(err.Error(), "supersecret") {
		t.Errorf("a long password's error %v carries the password", err)
	}

	// Deleting the host deletes the rows with it.
	mustEdit(t, c2, func(e *Edit) error { return e.DeleteHosts([]uint64{hid}) })
	for _, q := range []string{"SELECT count(*) FROM host_ipmi", "SELECT count(*) FROM item_ipmi"} {
		var n int
		if err := c2.db.QueryRow(q).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s = %d (%v) after the host was deleted", q, n, err)
		}
	}
}
