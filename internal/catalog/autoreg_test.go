package catalog

import (
	"context"
	"slices"
	"testing"
)

// downgradeAutoreg undoes the 29 → 30 migration (autoregistration
// settings) after downgradeHostInventory.
var downgradeAutoreg = append(slices.Clone(downgradeHostInventory), "DROP TABLE autoreg_settings")

// TestAutoregSettings: a fresh 6.0's settings (tls_accept 1) until set;
// set ones survive a reopen; a migration from 26 starts with the
// defaults; dropping PSK from tls_accept drops the key.
func TestAutoregSettings(t *testing.T) {
	c, path := openTemp(t)
	if got := c.AutoregSettings(); got != DefaultAutoregSettings {
		t.Fatalf("fresh: %+v", got)
	}
	want := AutoregSettings{TLSAccept: 3, PSKIdentity: "ar", PSK: "0123456789abcdef0123456789abcdef"}
	if err := c.SetAutoregSettings(context.Background(), want); err != nil {
		t.Fatal(err)
	}
	if k, ok := c.AutoregSettings().PSKKey(); !ok || k.Identity != "ar" || len(k.Secret) != 16 {
		t.Fatalf("key: %v %v", k, ok)
	}
	c.Close()
	c2, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := c2.AutoregSettings(); got != want {
		t.Fatalf("reopened: %+v", got)
	}
	if err := c2.SetAutoregSettings(context.Background(), AutoregSettings{TLSAccept: 1, PSKIdentity: "x", PSK: "00"}); err != nil {
		t.Fatal(err)
	}
	if got := c2.AutoregSettings(); got != DefaultAutoregSettings {
		t.Fatalf("unencrypted only keeps no key: %+v", got)
	}
	c2.Close()
	execAll(t, path, append(slices.Clone(downgradeAutoreg), "UPDATE catalog_meta SET schema_version = 29")...)
	c3, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if got := c3.AutoregSettings(); got != DefaultAutoregSettings {
		t.Fatalf("migrated: %+v", got)
	}
}

// TestDefaultInternalActions: a fresh catalog has 6.0's actions 3-6
// (recorded in defaults/actions.json), the internal ones with their
// IDs; a catalog whose alert defaults were added before gets 4-6 once.
func TestDefaultInternalActions(t *testing.T) {
	c, path := openTemp(t)
	if _, err := c.EnsureDefaults(context.Background()); err != nil {
		t.Fatal(err)
	}
	cfg := c.AlertConfig()
	for id, name := range map[uint64]string{3: "Report problems to Zabbix administrators", 4: "Report not supported items",
		5: "Report not supported low level discovery rules", 6: "Report unknown triggers"} {
		if a := cfg.Actions[id]; a == nil || a.Name != name {
			t.Fatalf("action %d: %+v", id, a)
		}
	}
	if a := cfg.Actions[4]; a.EventSource != SourceInternal || a.Filter.Conditions[0].ConditionType != CondEventType || len(a.RecoveryOperations) != 1 {
		t.Fatalf("action 4: %+v", a)
	}
	// The discovery action (recorded from 6.0.14: action.get eventsource 1).
	if a := cfg.Actions[2]; a == nil || a.Name != "Auto discovery. Linux servers." || a.EventSource != SourceDiscovery || a.Status != 1 ||
		len(a.Filter.Conditions) != 3 || len(a.Operations) != 2 || len(cfg.Actions) != 5 {
		t.Fatalf("actions: %v", cfg.SortedActions())
	}
	// An older database: the internal set not yet added, 4 deleted by
	// nobody (it never existed).
	err := c.EditAlerts(context.Background(), func(cfg *AlertConfig) error {
		delete(cfg.Actions, 4)
		delete(cfg.Actions, 5)
		delete(cfg.Actions, 6)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	execAll(t, path, "DELETE FROM catalog_defaults WHERE name = 'internalactions'")
	c2, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	d, err := c2.EnsureDefaults(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Actions) != 3 || c2.AlertConfig().Actions[5] == nil {
		t.Fatalf("added %v", d.Actions)
	}
	if d, _ := c2.EnsureDefaults(context.Background()); len(d.Actions) != 0 {
		t.Fatalf("added twice: %v", d.Actions)
	}
}
