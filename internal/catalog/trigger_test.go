package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// fakeRefs stands in for the expression parser: it takes /host/key
// after an opening parenthesis (keys without commas or parentheses) and
// refuses unbalanced parentheses with a position, as the parser would.
var fakeRefRE = regexp.MustCompile(`\(/([^/]*)/([^,)]+)`)

func fakeRefs(expr string) ([]ItemRef, error) {
	depth := 0
	for i, c := range expr {
		switch c {
		case '(':
			depth++
		case ')':
			if depth--; depth < 0 {
				return nil, fmt.Errorf("unexpected \")\" at position %d", i+1)
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("missing \")\" at position %d", len(expr)+1)
	}
	var refs []ItemRef
	for _, m := range fakeRefRE.FindAllStringSubmatch(expr, -1) {
		refs = append(refs, ItemRef{Host: m[1], Key: m[2]})
	}
	return refs, nil
}

// openTrig opens a catalog with the fake parser and testSpec applied.
func openTrig(t *testing.T) (*Catalog, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "catalog.db")
	c := reopenTrig(t, path)
	mustApply(t, c, testSpec())
	return c, path
}

func reopenTrig(t *testing.T, path string) *Catalog {
	t.Helper()
	c, err := Open(context.Background(), Options{Path: path, ExprRefs: fakeRefs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func createTriggers(t *testing.T, c *Catalog, fs ...TriggerFields) []uint64 {
	t.Helper()
	var ids []uint64
	mustEdit(t, c, func(e *Edit) error {
		var err error
		ids, err = e.CreateTriggers(fs)
		return err
	})
	return ids
}

func TestTriggerCreateLookupReload(t *testing.T) {
	c, path := openTrig(t)
	s := c.Snapshot()
	lat, req := s.Lookup("web-01", "app.latency"), s.Lookup("web-01", "app.requests")
	ping := s.Lookup("switch 1", "icmpping")
	ids := createTriggers(t, c,
		TriggerFields{Description: "Slow on {HOST.NAME}", Expression: "last(/web-01/app.latency)>1 and last(/web-01/app.requests)>0",
			Priority: 4, Enabled: true, Multiple: true, ManualClose: true, Opdata: "{ITEM.LASTVALUE}",
			Tags: []Tag{{Tag: "scope", Value: "performance"}}, CorrelationMode: 1, CorrelationTag: "scope"},
		TriggerFields{Description: "Unreachable", Expression: "max(/switch 1/icmpping,3m)=0",
			RecoveryMode: RecoverRecoveryExpression, RecoveryExpression: "min(/switch 1/icmpping,1m)=1", Priority: 5, Enabled: true},
	)
	s = c.Snapshot()
	slow, down := s.Trigger(ids[0]), s.Trigger(ids[1])
	if slow == nil || down == nil {
		t.Fatalf("triggers %v not in the snapshot", ids)
	}
	if !slices.Equal(slow.ItemIDs, sorted(lat.ID, req.ID)) || !slices.Equal(slow.HostIDs, []uint64{lat.HostID}) {
		t.Errorf("slow: items %v hosts %v", slow.ItemIDs, slow.HostIDs)
	}
	if !slow.Multiple || !slow.ManualClose || slow.Priority != 4 || slow.CorrelationTag != "scope" || len(slow.Tags) != 1 {
		t.Errorf("slow: fields not kept: %+v", slow)
	}
	if got := s.TriggersOfItem(lat.ID); len(got) != 1 || got[0].ID != ids[0] {
		t.Errorf("TriggersOfItem(latency) = %v", got)
	}
	if got := s.TriggersOfItem(ping.ID); len(got) != 1 || got[0] != down {
		t.Errorf("TriggersOfItem(icmpping) = %v", got)
	}
	if got := s.TriggersOfItem(s.Lookup("web-01", "app.version").ID); len(got) != 0 {
		t.Errorf("an unreferenced item has triggers %v", got)
	}
	mustEdit(t, c, func(e *Edit) error {
		return e.UpdateTriggers([]TriggerUpdate{{ID: ids[0], Dependencies: &[]uint64{ids[1]}, Priority: new(uint8(2))}})
	})
	c = reloadMatches(t, c, path)
	if got := c.Snapshot().Trigger(ids[0]); !slices.Equal(got.Dependencies, []uint64{ids[1]}) || got.Priority != 2 {
		t.Fatalf("after reload: %+v", got)
	}
}

func sorted(ids ...uint64) []uint64 { slices.Sort(ids); return ids }

// TestTriggerRefused checks that invalid triggers change nothing and name
// the field.
func TestTriggerRefused(t *testing.T) {
	c, _ := openTrig(t)
	ok := TriggerFields{Description: "ok", Expression: "last(/web-01/app.latency)>1", Enabled: true}
	base := createTriggers(t, c, ok)[0]
	f := func(name, field, msg string, tf TriggerFields) {
		t.Helper()
		before := c.Snapshot().Version()
		_, err := c.Edit(context.Background(), func(e *Edit) error {
			good := ok
			good.Description = "good"
			_, err := e.CreateTriggers([]TriggerFields{good, tf})
			return err
		})
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != field || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: error %v, want field %s with %q", name, err, field, msg)
		}
		if c.Snapshot().Version() != before {
			t.Errorf("%s: a refused batch changed the catalog", name)
		}
	}
	f("unknown host", "triggers[1].expression", `Host "db-01" does not exist`, TriggerFields{Description: "x", Expression: "last(/db-01/app.latency)>1"})
	f("unknown key", "triggers[1].expression", `Incorrect item key "nope"`, TriggerFields{Description: "x", Expression: "last(/web-01/nope)>1"})
	f("parse error", "triggers[1].expression", "at position 27", TriggerFields{Description: "x", Expression: "last(/web-01/app.latency>1"})
	f("no reference", "triggers[1].expression", "at least one", TriggerFields{Description: "x", Expression: "1=1"})
	f("empty name", "triggers[1].description", "cannot be empty", TriggerFields{Expression: ok.Expression})
	f("priority", "triggers[1].priority", "not 6", TriggerFields{Description: "x", Expression: ok.Expression, Priority: 6})
	f("recovery without expression", "triggers[1].recovery_expression", "cannot be empty", TriggerFields{Description: "x", Expression: ok.Expression, RecoveryMode: 1})
	f("recovery expression unused", "triggers[1].recovery_expression", "must be empty", TriggerFields{Description: "x", Expression: ok.Expression, RecoveryExpression: ok.Expression})
	f("recovery mode", "triggers[1].recovery_mode", "not 3", TriggerFields{Description: "x", Expression: ok.Expression, RecoveryMode: 3})
	f("correlation tag", "triggers[1].correlation_tag", "cannot be empty", TriggerFields{Description: "x", Expression: ok.Expression, CorrelationMode: 1})
	f("unknown dependency", "triggers[1].dependencies[0]", "no such object", TriggerFields{Description: "x", Expression: ok.Expression, Dependencies: []uint64{base + 100}})
	f("empty tag", "triggers[1].tags[0].tag", "cannot be empty", TriggerFields{Description: "x", Expression: ok.Expression, Tags: []Tag{{Value: "v"}}})
	// A trigger of the host with the same name and expression (Zabbix
	// 6.0: `Trigger "ok" already exists on "web-01".`), stored or earlier
	// in the batch; the same name with another expression is another
	// trigger.
	f("duplicate", "triggers[1].description", `trigger "ok" already exists on "web-01"`, ok)
	f("duplicate in the batch", "triggers[1].description", `trigger "good" already exists on "web-01"`, TriggerFields{Description: "good", Expression: ok.Expression})
	other := createTriggers(t, c, TriggerFields{Description: "ok", Expression: "last(/web-01/app.latency)>2", Enabled: true})[0]
	if _, err := c.Edit(context.Background(), func(e *Edit) error {
		expr := ok.Expression
		return e.UpdateTriggers([]TriggerUpdate{{ID: other, Expression: &expr}})
	}); err == nil || !strings.Contains(err.Error(), `trigger "ok" already exists on "web-01"`) {
		t.Errorf("update into a duplicate: %v", err)
	}

	// Without a parser nothing can be validated, so nothing is stored.
	c.refs = nil
	_, err := c.Edit(context.Background(), func(e *Edit) error { _, err := e.CreateTriggers([]TriggerFields{ok}); return err })
	if !errors.Is(err, ErrNoExprParser) {
		t.Errorf("without a parser: %v", err)
	}
}

func TestTriggerDependencyCycles(t *testing.T) {
	c, _ := openTrig(t)
	e1 := "last(/web-01/app.latency)>1"
	ids := createTriggers(t, c, TriggerFields{Description: "a", Expression: e1}, TriggerFields{Description: "b", Expression: e1}, TriggerFields{Description: "c", Expression: e1})
	a, b, cc := ids[0], ids[1], ids[2]
	mustEdit(t, c, func(e *Edit) error {
		return e.UpdateTriggers([]TriggerUpdate{{ID: a, Dependencies: &[]uint64{b}}, {ID: b, Dependencies: &[]uint64{cc}}})
	})
	// a depends on b, b on c. The paths are Zabbix 6.0's: from the new
	// master through its dependents back to it.
	f := func(name string, want []uint64, ups ...TriggerUpdate) {
		t.Helper()
		_, err := c.Edit(context.Background(), func(e *Edit) error { return e.UpdateTriggers(ups) })
		var ce *DepCycleError
		if !errors.As(err, &ce) || !slices.Equal(ce.Path, want) {
			t.Errorf("%s: %v, want a cycle %v", name, err, want)
		}
	}
	f("self", []uint64{a, a}, TriggerUpdate{ID: a, Dependencies: &[]uint64{a}})
	f("two", []uint64{a, b, a}, TriggerUpdate{ID: b, Dependencies: &[]uint64{a}})
	f("three", []uint64{a, cc, b, a}, TriggerUpdate{ID: cc, Dependencies: &[]uint64{a}})
	f("in one batch", []uint64{b, cc, b}, TriggerUpdate{ID: cc, Dependencies: &[]uint64{b}}, TriggerUpdate{ID: b, Dependencies: &[]uint64{cc}})
	if got := c.Snapshot().Trigger(cc); len(got.Dependencies) != 0 {
		t.Fatalf("a refused update left dependencies %v", got.Dependencies)
	}
	// Deleting b drops a's dependency on it.
	mustEdit(t, c, func(e *Edit) error { return e.DeleteTriggers([]uint64{b}) })
	if got := c.Snapshot().Trigger(a); len(got.Dependencies) != 0 || c.Snapshot().Trigger(b) != nil {
		t.Fatalf("after deleting b: a depends on %v", got.Dependencies)
	}
}

// TestTriggerCascade checks that deleting an item or a host deletes the
// triggers that reference it, in the database too.
func TestTriggerCascade(t *testing.T) {
	c, path := openTrig(t)
	s := c.Snapshot()
	ids := createTriggers(t, c,
		TriggerFields{Description: "a", Expression: "last(/web-01/app.latency)>1"},
		TriggerFields{Description: "b", Expression: "last(/web-01/app.requests)>1 or last(/switch 1/icmpping)=0"},
		TriggerFields{Description: "c", Expression: "last(/switch 1/icmpping)=0"},
	)
	res := mustEdit(t, c, func(e *Edit) error { return e.DeleteItems([]uint64{s.Lookup("web-01", "app.latency").ID}) })
	if res.TriggersDeleted != 1 || c.Snapshot().Trigger(ids[0]) != nil || c.Snapshot().Trigger(ids[1]) == nil {
		t.Fatalf("deleting an item: %+v", res)
	}
	res = mustEdit(t, c, func(e *Edit) error { return e.DeleteHosts([]uint64{s.Host("switch 1").ID}) })
	if res.TriggersDeleted != 2 || len(c.Snapshot().Triggers()) != 0 {
		t.Fatalf("deleting a host: %+v, left %d triggers", res, len(c.Snapshot().Triggers()))
	}
	c = reloadMatches(t, c, path)
	var n int
	if err := c.db.QueryRow("SELECT (SELECT count(*) FROM triggers) + (SELECT count(*) FROM trigger_items)").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d trigger rows left (%v)", n, err)
	}
}

// downgradeTriggers turns a database of the current schema (version 12)
// into version 8 but for the version number.
var downgradeTriggers = append(slices.Clone(downgradeV10), "DROP TABLE trigger_tags", "DROP TABLE trigger_deps", "DROP TABLE trigger_items", "DROP TABLE triggers")

// downgradeV11 takes away what schema versions 12 and 11 added (11:
// media types, actions, user media).
var downgradeV11 = append(slices.Clone(downgradeValueMaps), "DROP TABLE media_types", "DROP TABLE actions", "DROP TABLE user_medias", "DROP TABLE alert_seq")

// downgradeV10 takes away what schema versions 11 and 10 added (10:
// macros, templates, maintenances, soft/hard state columns).
var downgradeV10 = append(slices.Clone(downgradeV11), "DROP TABLE usermacros", "DROP TABLE templates", "DROP TABLE template_links", "DROP TABLE maintenances",
	"DELETE FROM sqlite_sequence WHERE name IN ('usermacros', 'templates', 'maintenances')",
	"ALTER TABLE items DROP COLUMN retry_delay", "ALTER TABLE triggers DROP COLUMN max_check_attempts")

// TestMigrateV8Triggers opens a database of schema version 8 (no
// triggers): it is upgraded and triggers can be created.
func TestMigrateV8Triggers(t *testing.T) {
	c, path := openTemp(t)
	mustApply(t, c, testSpec())
	want := c.Snapshot()
	c.Close()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range append(slices.Clip(downgradeTriggers), "UPDATE catalog_meta SET schema_version = 8") {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	c2 := reopenTrig(t, path)
	if d := diffViews(want, c2.Snapshot()); d != "" {
		t.Fatalf("migrated snapshot differs:\n%s", d)
	}
	createTriggers(t, c2, TriggerFields{Description: "a", Expression: "last(/web-01/app.latency)>1"})
	var ver int
	if err := c2.db.QueryRow("SELECT schema_version FROM catalog_meta").Scan(&ver); err != nil || ver != schemaVersion {
		t.Fatalf("schema version %d after the upgrade (%v)", ver, err)
	}
}

const triggerYAML = `
hosts:
  - host: web-01
    groups: [Linux servers]
    items:
      - key: app.latency
      - key: app.errors
        value_type: unsigned
    triggers:
      - name: 'Errors on {HOST.NAME}'
        expression: 'last(/web-01/app.errors)>0'
        priority: HIGH
        type: MULTIPLE
        manual_close: 'YES'
        description: 'Check the application log.'
        tags:
          - tag: scope
            value: availability
        dependencies:
          - name: 'Slow'
            expression: 'avg(/web-01/app.latency,5m)>2'
      - name: 'Slow'
        uuid: 3f8ad1c0e5c04a4ab3ff0e8a3f0c4d11
        event_name: 'Slow: latency over 2 s for 5m'
        expression: 'avg(/web-01/app.latency,5m)>2'
        recovery_mode: RECOVERY_EXPRESSION
        recovery_expression: 'avg(/web-01/app.latency,5m)<1'
        priority: '2'
`

func TestApplyTriggers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	c := reopenTrig(t, path)
	spec, err := ParseSpec([]byte(triggerYAML))
	if err != nil {
		t.Fatal(err)
	}
	res := mustApply(t, c, spec)
	if res.TriggersCreated != 2 || res.ItemsCreated != 2 {
		t.Fatalf("first apply: %+v", res)
	}
	s := c.Snapshot()
	var errs, slow *Trigger
	for i := range s.Triggers() {
		switch tr := &s.Triggers()[i]; tr.Description {
		case "Slow":
			slow = tr
		default:
			errs = tr
		}
	}
	if errs == nil || slow == nil {
		t.Fatalf("triggers: %+v", s.Triggers())
	}
	if errs.Priority != 4 || !errs.Multiple || !errs.ManualClose || errs.Comments != "Check the application log." ||
		!slices.Equal(errs.Dependencies, []uint64{slow.ID}) || len(errs.Tags) != 1 || errs.Tags[0].Value != "availability" {
		t.Errorf("errors trigger: %+v", errs)
	}
	if slow.RecoveryMode != RecoverRecoveryExpression || slow.Priority != 2 || !slow.Enabled || slow.EventName != "Slow: latency over 2 s for 5m" || errs.EventName != "" {
		t.Errorf("slow trigger: %+v", slow)
	}
	if res := mustApply(t, c, spec); res.Changed() {
		t.Errorf("second apply changed something: %+v", res)
	}
	spec.Hosts[0].Triggers[1].Priority = "DISASTER"
	if res := mustApply(t, c, spec); res.TriggersUpdated != 1 || res.TriggersCreated != 0 || c.Snapshot().Trigger(slow.ID).Priority != 5 {
		t.Errorf("changed priority: %+v", res)
	}
	spec.Hosts[0].Triggers[1].EventName = "Slow on {HOST.NAME}"
	if res := mustApply(t, c, spec); res.TriggersUpdated != 1 || c.Snapshot().Trigger(slow.ID).EventName != "Slow on {HOST.NAME}" {
		t.Errorf("changed event name: %+v", res)
	}
	spec.Hosts[0].Triggers[1].MaxCheckAttempts = 3
	if res := mustApply(t, c, spec); res.TriggersUpdated != 1 || c.Snapshot().Trigger(slow.ID).MaxCheckAttempts != 3 {
		t.Errorf("changed max_check_attempts: %+v, now %d", res, c.Snapshot().Trigger(slow.ID).MaxCheckAttempts)
	}

	bad := strings.Replace(triggerYAML, "priority: HIGH", "priority: URGENT", 1)
	if _, err := ParseSpec([]byte(bad)); err == nil || !strings.Contains(err.Error(), "hosts[0].triggers[0].priority") {
		t.Errorf("bad priority: %v", err)
	}
	spec.Hosts[0].Triggers[0].Expression = "last(/web-01/nope)>0"
	_, err = c.Apply(context.Background(), spec)
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "hosts[0].triggers[0].expression" {
		t.Errorf("unknown key in an imported trigger: %v", err)
	}
}

// downgradeEventName turns a database of the current schema into version
// 13 but for the version number (15: hosts' description; 14: event
// names).
var downgradeEventName = append(slices.Clone(downgradeHostDesc), "ALTER TABLE triggers DROP COLUMN event_name")

// TestTriggerEventName: a trigger's event name is stored, read back
// after a reopen, changed by an update, and refused past Zabbix's 2,048
// characters; a database of schema version 13 gains the column with ""
// for its triggers.
func TestTriggerEventName(t *testing.T) {
	c, path := openTrig(t)
	ids := createTriggers(t, c,
		TriggerFields{Description: "latency", EventName: "Latency over {$MAX} on {HOST.NAME}", Expression: "last(/web-01/app.latency)>1"},
		TriggerFields{Description: "plain", Expression: "last(/web-01/app.latency)>2"})
	c.Close()
	c = reopenTrig(t, path)
	if got := c.Snapshot().Trigger(ids[0]).EventName; got != "Latency over {$MAX} on {HOST.NAME}" {
		t.Fatalf("event name after reopen: %q", got)
	}
	if got := c.Snapshot().Trigger(ids[1]).EventName; got != "" {
		t.Fatalf("unset event name: %q", got)
	}
	name := "renamed"
	mustEdit(t, c, func(e *Edit) error { return e.UpdateTriggers([]TriggerUpdate{{ID: ids[1], EventName: &name}}) })
	if got := c.Snapshot().Trigger(ids[1]); got.EventName != "renamed" || got.Description != "plain" {
		t.Fatalf("after update: %+v", got)
	}
	long := strings.Repeat("x", 2049)
	if _, err := c.Edit(t.Context(), func(e *Edit) error { return e.UpdateTriggers([]TriggerUpdate{{ID: ids[1], EventName: &long}}) }); err == nil || !strings.Contains(err.Error(), "event_name") {
		t.Fatalf("2,049-character event name: %v", err)
	}
	c.Close()

	execAll(t, path, append(slices.Clone(downgradeEventName), "UPDATE catalog_meta SET schema_version = 13")...)
	c2 := reopenTrig(t, path)
	defer c2.Close()
	for _, id := range ids {
		if tr := c2.Snapshot().Trigger(id); tr == nil || tr.EventName != "" {
			t.Fatalf("trigger %d after the 13 → 14 migration: %+v", id, tr)
		}
	}
	var ver int
	if err := c2.db.QueryRow("SELECT schema_version FROM catalog_meta").Scan(&ver); err != nil || ver != schemaVersion {
		t.Fatalf("schema version %d after the upgrade (%v)", ver, err)
	}
}
