package catalog

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// preprocYAML has a trapper master with steps, two levels of dependent
// items below it (named by key, as Zabbix's template YAML does, one of
// them before its master in the list) and a calculated item.
const preprocYAML = `
hosts:
  - host: h
    groups: [G]
    items:
      - key: cpu.user
        type: dependent
        master_item: {key: stats.cpu}
        preprocessing:
          - type: JSONPATH
            parameters: ['$.user']
          - type: CHANGE_PER_SECOND
            parameters: ['']
      - key: stats
        value_type: text
        preprocessing:
          - type: CHECK_JSON_ERROR
            parameters: ['$.error']
            error_handler: DISCARD_VALUE
      - key: stats.cpu
        type: dependent
        value_type: text
        master_item: {key: stats}
        preprocessing:
          - type: "12"
            parameters: ['$.cpu']
            error_handler: CUSTOM_VALUE
            error_handler_params: '{}'
      - key: total
        type: calculated
        params: last(//cpu.user)*2
`

func TestImportPreprocessingAndDependents(t *testing.T) {
	c, path := openTemp(t)
	spec, err := ParseSpec([]byte(preprocYAML))
	if err != nil {
		t.Fatal(err)
	}
	if res := mustApply(t, c, spec); res.ItemsCreated != 4 {
		t.Fatalf("created %d items, want 4", res.ItemsCreated)
	}
	s := c.Snapshot()
	h := s.Host("h")
	stats, cpu, user, total := h.Item("stats"), h.Item("stats.cpu"), h.Item("cpu.user"), h.Item("total")
	if cpu.MasterItemID != stats.ID || user.MasterItemID != cpu.ID || stats.MasterItemID != 0 || total.MasterItemID != 0 {
		t.Fatalf("masters: stats %d, stats.cpu %d (want %d), cpu.user %d (want %d)", stats.MasterItemID, cpu.MasterItemID, stats.ID, user.MasterItemID, cpu.ID)
	}
	wantSteps := []PreprocStep{{Type: 12, Params: "$.user"}, {Type: 10}}
	if d := cmp.Diff(wantSteps, user.Preprocessing); d != "" {
		t.Errorf("cpu.user steps (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]PreprocStep{{Type: 12, Params: "$.cpu", ErrorHandler: 2, ErrorHandlerParams: "{}"}}, cpu.Preprocessing); d != "" {
		t.Errorf("stats.cpu steps (-want +got):\n%s", d)
	}
	if total.Type != Calculated || total.Ext().Params != "last(//cpu.user)*2" || total.Delay != DefaultPolledDelay {
		t.Errorf("calculated item %+v", total)
	}
	if user.Delay != "0" {
		t.Errorf("a dependent item's delay is %q, want 0", user.Delay)
	}
	if !stats.HasDependents() || !cpu.HasDependents() || user.HasDependents() {
		t.Errorf("HasDependents: stats %v, stats.cpu %v, cpu.user %v", stats.HasDependents(), cpu.HasDependents(), user.HasDependents())
	}
	if d := s.Dependents(stats.ID); len(d) != 1 || d[0] != cpu {
		t.Errorf("Dependents(stats) = %v", d)
	}
	if s.Root(user) != stats || s.Root(stats) != stats {
		t.Errorf("Root(cpu.user) = %v", s.Root(user).Key)
	}
	// Importing again changes nothing; the loaded snapshot equals the
	// built one.
	if res := mustApply(t, c, spec); res.ItemsCreated+res.ItemsUpdated != 0 {
		t.Fatalf("re-import changed something: %+v", res)
	}
	c2 := reloadMatches(t, c, path)
	if got := c2.Snapshot().Host("h").Item("cpu.user"); !c2.Snapshot().Host("h").Item("stats").HasDependents() || got.MasterItemID != cpu.ID {
		t.Fatal("the reloaded snapshot lost the master links")
	}
	// Changing a step updates the item and keeps the others' chains.
	spec.Hosts[0].Items[0].Preprocessing[1].Type = "SIMPLE_CHANGE"
	if res := mustApply(t, c2, spec); res.ItemsUpdated != 1 {
		t.Fatalf("changing one step: %+v", res)
	}
	if got := c2.Snapshot().Host("h").Item("cpu.user").Preprocessing[1].Type; got != 9 {
		t.Fatalf("step type %d after the change, want 9", got)
	}
	reloadMatches(t, c2, path)
}

func TestImportDependentErrors(t *testing.T) {
	c, _ := openTemp(t)
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "other", Groups: []string{"G"}, Items: []ItemSpec{{Key: "m"}}}}})
	dep := func(key, master string) ItemSpec {
		return ItemSpec{Key: key, Type: "dependent", MasterItem: &MasterItemSpec{Key: master}}
	}
	for _, tc := range []struct {
		name  string
		items []ItemSpec
		field string
		msg   string
	}{
		{"no master", []ItemSpec{{Key: "d", Type: "dependent"}}, "hosts[0].items[0].master_item", "needs a master"},
		{"master of a trapper", []ItemSpec{{Key: "m"}, {Key: "t", MasterItem: &MasterItemSpec{Key: "m"}}}, "hosts[0].items[1].master_item", "only dependent items"},
		{"master on another host", []ItemSpec{dep("d", "m")}, "hosts[0].items[0].master_item", `not an item of host "h"`},
		{"itself", []ItemSpec{dep("d", "d")}, "hosts[0].items[0].master_item", "its own master"},
		{"cycle", []ItemSpec{dep("a", "b"), dep("b", "a")}, "hosts[0].items[0].master_item", "cycle"},
		{"four levels", []ItemSpec{{Key: "m"}, dep("d1", "m"), dep("d2", "d1"), dep("d3", "d2"), dep("d4", "d3")}, "hosts[0].items[4].master_item", "at most 3 levels"},
		{"params of a trapper", []ItemSpec{{Key: "x", Params: "1"}}, "hosts[0].items[0].params", "only calculated, script"},
		{"calculated without formula", []ItemSpec{{Key: "x", Type: "calculated"}}, "hosts[0].items[0].params", "needs its formula"},
		{"unknown step", []ItemSpec{{Key: "x", Preprocessing: []PreprocSpec{{Type: "JSONPATHS"}}}}, "hosts[0].items[0].preprocessing[0].type", "unknown preprocessing step type"},
		{"unknown handler", []ItemSpec{{Key: "x", Preprocessing: []PreprocSpec{{Type: "TRIM", Parameters: []string{" "}, ErrorHandler: "IGNORE"}}}}, "hosts[0].items[0].preprocessing[0].error_handler", "unknown error handler"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Apply(context.Background(), Spec{Hosts: []HostSpec{{Host: "h", Groups: []string{"G"}, Items: tc.items}}})
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("error %v, want one at %s containing %q", err, tc.field, tc.msg)
			}
			if c.Snapshot().Host("h") != nil {
				t.Fatal("a refused import created the host")
			}
		})
	}
	// Three levels are fine, also with the chain reaching an item the
	// import leaves alone.
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "h", Groups: []string{"G"}, Items: []ItemSpec{{Key: "m"}, dep("d1", "m"), dep("d2", "d1")}}}})
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "h", Groups: []string{"G"}, Items: []ItemSpec{dep("d3", "d2")}}}})
	_, err := c.Apply(context.Background(), Spec{Hosts: []HostSpec{{Host: "h", Groups: []string{"G"}, Items: []ItemSpec{{Key: "top"}, dep("m", "top")}}}})
	if err == nil || !strings.Contains(err.Error(), "at most 3 levels") {
		t.Fatalf("making a three-level tree four deep from above: %v", err)
	}
}

func TestEditDependents(t *testing.T) {
	c, _ := openTemp(t)
	mustApply(t, c, Spec{Hosts: []HostSpec{
		{Host: "h", Groups: []string{"G"}, Items: []ItemSpec{{Key: "m", ValueType: "text"}, {Key: "other"}, {Key: "p"}, {Key: "q"}}},
		{Host: "h2", Groups: []string{"G"}, Items: []ItemSpec{{Key: "x"}}},
	}})
	s := c.Snapshot()
	h, m, x := s.Host("h"), s.Host("h").Item("m"), s.Host("h2").Item("x")
	var d1, d2, d3 uint64
	mustEdit(t, c, func(e *Edit) error {
		ids, err := e.CreateItems([]NewItem{{HostID: h.ID, MasterItemID: m.ID, ItemSpec: ItemSpec{Key: "d1", Type: "18", ValueType: "text",
			Preprocessing: []PreprocSpec{StepSpec("12", "$.a", "0", "")}}}})
		if err != nil {
			return err
		}
		d1 = ids[0]
		if ids, err = e.CreateItems([]NewItem{{HostID: h.ID, MasterItemID: d1, ItemSpec: ItemSpec{Key: "d2", Type: "dependent"}}}); err != nil {
			return err
		}
		d2 = ids[0]
		ids, err = e.CreateItems([]NewItem{{HostID: h.ID, ItemSpec: ItemSpec{Key: "d3", Type: "dependent", MasterItem: &MasterItemSpec{Key: "d2"}}}})
		if err != nil {
			return err
		}
		d3 = ids[0]
		return nil
	})
	s = c.Snapshot()
	if got := s.Item(d1).Preprocessing; len(got) != 1 || got[0] != (PreprocStep{Type: 12, Params: "$.a"}) {
		t.Fatalf("d1 steps %+v", got)
	}
	if s.Root(s.Item(d3)).ID != m.ID {
		t.Fatalf("root of d3 is %d, want %d", s.Root(s.Item(d3)).ID, m.ID)
	}
	edit := func(fn func(e *Edit) error) error {
		_, err := c.Edit(context.Background(), fn)
		return err
	}
	u64 := func(v uint64) *uint64 { return &v }
	str := func(v string) *string { return &v }
	for _, tc := range []struct {
		name string
		fn   func(e *Edit) error
		msg  string
	}{
		{"fourth level", func(e *Edit) error {
			_, err := e.CreateItems([]NewItem{{HostID: h.ID, MasterItemID: d3, ItemSpec: ItemSpec{Key: "d4", Type: "dependent"}}})
			return err
		}, "at most 3 levels"},
		{"master on another host", func(e *Edit) error {
			_, err := e.CreateItems([]NewItem{{HostID: h.ID, MasterItemID: x.ID, ItemSpec: ItemSpec{Key: "d4", Type: "dependent"}}})
			return err
		}, "another host"},
		{"missing master", func(e *Edit) error {
			_, err := e.CreateItems([]NewItem{{HostID: h.ID, MasterItemID: 999999, ItemSpec: ItemSpec{Key: "d4", Type: "dependent"}}})
			return err
		}, "does not exist"},
		{"cycle", func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: d1, MasterItemID: u64(d3)}}) }, "cycle"},
		{"cycle within one batch", func(e *Edit) error {
			p, q := s.Host("h").Item("p").ID, s.Host("h").Item("q").ID
			return e.UpdateItems([]ItemUpdate{{ID: p, Type: str("dependent"), MasterItemID: u64(q)}, {ID: q, Type: str("dependent"), MasterItemID: u64(p)}})
		}, "cycle"},
		{"deepening from above", func(e *Edit) error {
			return e.UpdateItems([]ItemUpdate{{ID: m.ID, Type: str("dependent"), MasterItemID: u64(s.Host("h").Item("other").ID)}})
		}, "at most 3 levels"},
		{"master of a trapper", func(e *Edit) error {
			return e.UpdateItems([]ItemUpdate{{ID: s.Host("h").Item("other").ID, MasterItemID: u64(m.ID)}})
		}, "only dependent items"},
	} {
		if err := edit(tc.fn); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.msg)
		}
	}
	if c.Snapshot() != s {
		t.Fatal("a refused edit published a snapshot")
	}
	// Moving d2 (with d3 below) up to m keeps the tree within bounds.
	mustEdit(t, c, func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: d2, MasterItemID: u64(m.ID)}}) })
	if got := c.Snapshot().Item(d2).MasterItemID; got != m.ID {
		t.Fatalf("d2's master %d, want %d", got, m.ID)
	}
	// Deleting the master deletes its dependents, recursively.
	res := mustEdit(t, c, func(e *Edit) error { return e.DeleteItems([]uint64{m.ID}) })
	s = c.Snapshot()
	if res.ItemsDeleted != 4 || s.ItemCount() != 4 || s.Item(d1) != nil || s.Item(d2) != nil || s.Item(d3) != nil || s.Host("h").Item("other") == nil {
		t.Fatalf("delete of the master: %+v; d1 %v d2 %v d3 %v", res, s.Item(d1), s.Item(d2), s.Item(d3))
	}
}

// TestCheckHooks: Options' hooks see the steps and formulas of created
// and changed items, and their errors name the step.
func TestCheckHooks(t *testing.T) {
	var seen [][]PreprocStep
	c, err := Open(context.Background(), Options{
		Path: filepath.Join(t.TempDir(), "c.db"),
		CheckPreprocessing: func(steps []PreprocStep) error {
			seen = append(seen, steps)
			for i, s := range steps {
				if s.Type == 1 && s.Params == "x" {
					return &StepCheckError{Step: i, Err: errors.New(`invalid parameter "params": a numeric value is expected`)}
				}
			}
			return nil
		},
		CheckFormula: func(f string) error {
			if strings.Contains(f, "(") {
				return nil
			}
			return errors.New("not a function call")
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	mult := func(p string) []PreprocSpec {
		return []PreprocSpec{{Type: "TRIM", Parameters: []string{" "}}, {Type: "MULTIPLIER", Parameters: []string{p}}}
	}
	_, err = c.Apply(context.Background(), Spec{Hosts: []HostSpec{{Host: "h", Groups: []string{"G"}, Items: []ItemSpec{{Key: "a", Preprocessing: mult("x")}}}}})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "hosts[0].items[0].preprocessing[1]" || !strings.Contains(err.Error(), "numeric value") {
		t.Fatalf("bad step: %v", err)
	}
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "h", Groups: []string{"G"}, Items: []ItemSpec{{Key: "a", Preprocessing: mult("8")}}}}})
	if len(seen) != 2 || seen[1][1] != (PreprocStep{Type: 1, Params: "8"}) {
		t.Fatalf("the hook saw %+v", seen)
	}
	id := c.Snapshot().Host("h").Item("a").ID
	steps := mult("x")
	_, err = c.Edit(context.Background(), func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: id, Preprocessing: &steps}}) })
	if !errors.As(err, &fe) || fe.Field != "items[0].preprocessing[1]" {
		t.Fatalf("bad step by update: %v", err)
	}
	_, err = c.Edit(context.Background(), func(e *Edit) error {
		_, err := e.CreateItems([]NewItem{{HostID: c.Snapshot().Host("h").ID, ItemSpec: ItemSpec{Key: "calc", Type: "calculated", Params: "1+"}}})
		return err
	})
	if !errors.As(err, &fe) || fe.Field != "items[0].params" || !strings.Contains(err.Error(), "not a function call") {
		t.Fatalf("bad formula: %v", err)
	}
	// An empty list removes the steps.
	none := []PreprocSpec{}
	mustEdit(t, c, func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: id, Preprocessing: &none}}) })
	if got := c.Snapshot().Item(id).Preprocessing; got != nil {
		t.Fatalf("steps after removing them: %+v", got)
	}
}

// TestMigrateV5Preprocessing opens a database of schema version 5 (no
// master, params or steps): items load without them and can be given
// them.
func TestMigrateV5Preprocessing(t *testing.T) {
	c, path := openTemp(t)
	mustApply(t, c, testSpec())
	want := c.Snapshot()
	c.Close()
	execAll(t, path, downgradeV6...)
	c2, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := diffMigrated(want, c2.Snapshot()); d != "" {
		t.Fatalf("migrated snapshot differs:\n%s", d)
	}
	spec, err := ParseSpec([]byte(preprocYAML))
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, c2, spec)
	c3 := reloadMatches(t, c2, path)
	var ver int
	if err := c3.db.QueryRow("SELECT schema_version FROM catalog_meta").Scan(&ver); err != nil || ver != schemaVersion {
		t.Fatalf("schema version %d after the upgrade (%v)", ver, err)
	}
}
