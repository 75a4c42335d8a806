package catalog

import (
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// freshRegexps are the global regular expressions of a fresh Zabbix
// 6.0.14, recorded from the peer (regexp.get {"output":"extend",
// "selectExpressions":"extend"}): IDs, names, test strings and
// expressions in order.
var freshRegexps = []GlobalRegexp{
	{ID: 1, Name: "File systems for discovery", TestString: "ext3", Expressions: []Expression{
		{Expression: "^(btrfs|ext2|ext3|ext4|reiser|xfs|ffs|ufs|jfs|jfs2|vxfs|hfs|apfs|refs|ntfs|fat32|zfs)$", Type: ExprTrue, Delimiter: ","}}},
	{ID: 2, Name: "Network interfaces for discovery", TestString: "eth0", Expressions: []Expression{
		{Expression: "^Software Loopback Interface", Type: ExprFalse, Delimiter: ",", CaseSensitive: true},
		{Expression: "^(In)?[Ll]oop[Bb]ack[0-9._]*$", Type: ExprFalse, Delimiter: ",", CaseSensitive: true},
		{Expression: "^NULL[0-9.]*$", Type: ExprFalse, Delimiter: ",", CaseSensitive: true},
		{Expression: "^[Ll]o[0-9.]*$", Type: ExprFalse, Delimiter: ",", CaseSensitive: true},
		{Expression: "^[Ss]ystem$", Type: ExprFalse, Delimiter: ",", CaseSensitive: true},
		{Expression: "^Nu[0-9.]*$", Type: ExprFalse, Delimiter: ",", CaseSensitive: true}}},
	{ID: 3, Name: "Storage devices for SNMP discovery", TestString: "/boot", Expressions: []Expression{
		{Expression: "^(Physical memory|Virtual memory|Memory buffers|Cached memory|Swap space)$", Type: ExprFalse, Delimiter: ",", CaseSensitive: true}}},
	{ID: 4, Name: "Windows service names for discovery", TestString: "SysmonLog", Expressions: []Expression{
		{Expression: "^(MMCSS|gupdate|SysmonLog|clr_optimization_v2.0.50727_32|clr_optimization_v4.0.30319_32)$", Type: ExprFalse, Delimiter: ",", CaseSensitive: true}}},
	{ID: 5, Name: "Windows service startup states for discovery", TestString: "automatic", Expressions: []Expression{
		{Expression: "^(automatic|automatic delayed)$", Type: ExprTrue, Delimiter: ",", CaseSensitive: true}}},
}

// TestRegexpsFresh: a new catalog has 6.0's five regular expressions
// with its IDs, the next one created gets ID 6, and each default's test
// string passes or fails it as the templates' discovery expects.
func TestRegexpsFresh(t *testing.T) {
	c, _ := openTrig(t)
	s := c.Snapshot()
	if got := s.Regexps(); !reflect.DeepEqual(got, freshRegexps) {
		t.Fatalf("fresh regular expressions:\n got %+v\nwant %+v", got, freshRegexps)
	}
	if r := s.RegexpByName("Network interfaces for discovery"); r == nil || r.ID != 2 || s.Regexp(2) != r {
		t.Fatalf("lookup by name: %+v", r)
	}
	if s.RegexpByName("nope") != nil || s.Regexp(99) != nil {
		t.Fatal("a missing regular expression was found")
	}
	for _, tc := range []struct {
		id   uint64
		v    string
		want bool
	}{
		{1, "ext3", true}, {1, "EXT4", true}, {1, "tmpfs", false},
		{2, "eth0", true}, {2, "lo", false}, {2, "Loopback0", false}, {2, "NULL0", false},
		{3, "/boot", true}, {3, "Swap space", false},
		{4, "SysmonLog", false}, {4, "Spooler", true},
		{5, "automatic", true}, {5, "Automatic", false}, {5, "manual", false},
	} {
		if got := s.Regexp(tc.id).Match(tc.v); got != tc.want {
			t.Errorf("regexp %d on %q: %v, want %v", tc.id, tc.v, got, tc.want)
		}
	}
	var ids []uint64
	mustEdit(t, c, func(e *Edit) (err error) {
		ids, err = e.CreateRegexps([]GlobalRegexp{{Name: "mine", Expressions: []Expression{{Expression: "a", Type: ExprIncluded, Delimiter: ","}}}})
		return err
	})
	if len(ids) != 1 || ids[0] != 6 {
		t.Fatalf("first created regular expression: %v, want [6]", ids)
	}
}

// TestRegexpMatch: each expression type, with and without case.
func TestRegexpMatch(t *testing.T) {
	for _, tc := range []struct {
		x    Expression
		v    string
		want bool
	}{
		{Expression{Expression: "err", Type: ExprIncluded}, "An ERROR", true},
		{Expression{Expression: "err", Type: ExprIncluded, CaseSensitive: true}, "An ERROR", false},
		{Expression{Expression: "warn,err", Type: ExprAnyIncluded, Delimiter: ","}, "an Error", true},
		{Expression{Expression: "warn/crit", Type: ExprAnyIncluded, Delimiter: "/"}, "an error", false},
		{Expression{Expression: "err", Type: ExprNotIncluded}, "fine", true},
		{Expression{Expression: "err", Type: ExprNotIncluded}, "ERR", false},
		{Expression{Expression: "^e.*r$", Type: ExprTrue}, "EliteR", true},
		{Expression{Expression: "^e.*r$", Type: ExprTrue, CaseSensitive: true}, "EliteR", false},
		{Expression{Expression: "^e", Type: ExprFalse}, "abc", true},
		{Expression{Expression: "(", Type: ExprTrue}, "(", false}, // does not compile: no match
	} {
		if got := tc.x.Match(tc.v); got != tc.want {
			t.Errorf("%+v on %q: %v, want %v", tc.x, tc.v, got, tc.want)
		}
	}
	r := GlobalRegexp{Expressions: []Expression{{Expression: "a", Type: ExprIncluded}, {Expression: "b", Type: ExprNotIncluded}}}
	if !r.Match("xa") || r.Match("ab") {
		t.Fatal("every expression must match")
	}
}

// TestRegexpEdits: create, update and delete, with their refusals, are
// kept across a reopen; one refused change in a batch changes nothing.
func TestRegexpEdits(t *testing.T) {
	c, path := openTrig(t)
	x := []Expression{{Expression: "^a", Type: ExprTrue, Delimiter: ","}}
	var ids []uint64
	mustEdit(t, c, func(e *Edit) (err error) {
		ids, err = e.CreateRegexps([]GlobalRegexp{{Name: "r1", TestString: "abc", Expressions: x}, {Name: "r2", Expressions: x}})
		return err
	})
	for _, tc := range []struct {
		name string
		fn   func(e *Edit) error
	}{
		{"name taken", func(e *Edit) error {
			_, err := e.CreateRegexps([]GlobalRegexp{{Name: "File systems for discovery", Expressions: x}})
			return err
		}},
		{"name twice", func(e *Edit) error {
			_, err := e.CreateRegexps([]GlobalRegexp{{Name: "n", Expressions: x}, {Name: "n", Expressions: x}})
			return err
		}},
		{"rename onto another", func(e *Edit) error { return e.UpdateRegexps([]RegexpUpdate{{ID: ids[0], Name: new("r2")}}) }},
	} {
		_, err := c.Edit(t.Context(), tc.fn)
		var ce *ConflictError
		if !errors.As(err, &ce) || ce.Kind != RegexpExists {
			t.Errorf("%s: %v, want RegexpExists", tc.name, err)
		}
	}
	for _, tc := range []struct {
		name string
		r    GlobalRegexp
	}{
		{"no name", GlobalRegexp{Expressions: x}},
		{"no expressions", GlobalRegexp{Name: "n"}},
		{"bad type", GlobalRegexp{Name: "n", Expressions: []Expression{{Expression: "a", Type: 5}}}},
		{"bad regexp", GlobalRegexp{Name: "n", Expressions: []Expression{{Expression: "a(", Type: ExprTrue}}}},
		{"no delimiter", GlobalRegexp{Name: "n", Expressions: []Expression{{Expression: "a", Type: ExprAnyIncluded}}}},
		{"twice", GlobalRegexp{Name: "n", Expressions: []Expression{{Expression: "a", Type: ExprIncluded}, {Expression: "a", Type: ExprIncluded, CaseSensitive: true}}}},
	} {
		_, err := c.Edit(t.Context(), func(e *Edit) error {
			_, err := e.CreateRegexps([]GlobalRegexp{{Name: "ok", Expressions: x}, tc.r})
			return err
		})
		var fe *FieldError
		if !errors.As(err, &fe) {
			t.Errorf("%s: %v, want a field error", tc.name, err)
		}
	}
	if c.Snapshot().RegexpByName("ok") != nil {
		t.Fatal("a refused batch created a regular expression")
	}
	nx := []Expression{{Expression: "b", Type: ExprAnyIncluded, Delimiter: "."}}
	mustEdit(t, c, func(e *Edit) error {
		if err := e.UpdateRegexps([]RegexpUpdate{{ID: ids[0], Name: new("r1b"), Expressions: &nx}, {ID: ids[1], TestString: new("t")}}); err != nil {
			return err
		}
		return e.DeleteRegexps([]uint64{1})
	})
	if _, err := c.Edit(t.Context(), func(e *Edit) error { return e.DeleteRegexps([]uint64{1}) }); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleting a deleted regular expression: %v", err)
	}
	want := c.Snapshot().Regexps()
	if len(want) != 6 || want[0].ID != 2 || c.Snapshot().Regexp(ids[0]).Name != "r1b" || c.Snapshot().Regexp(ids[1]).TestString != "t" {
		t.Fatalf("after the edits: %+v", want)
	}
	c.Close()
	c2 := reopenTrig(t, path)
	if got := c2.Snapshot().Regexps(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after reopen:\n got %+v\nwant %+v", got, want)
	}
	// Apply keeps them.
	mustApply(t, c2, testSpec())
	if got := c2.Snapshot().Regexps(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after Apply: %+v", got)
	}
}

// TestRegexpMigration: a database of schema version 16 gains 6.0's
// regular expressions.
func TestRegexpMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	c := reopenTrig(t, path)
	c.Close()
	execAll(t, path, append(slices.Clone(downgradeItemDesc), "DROP TABLE regexps", "UPDATE catalog_meta SET schema_version = 16")...)
	c2 := reopenTrig(t, path)
	if got := c2.Snapshot().Regexps(); !reflect.DeepEqual(got, freshRegexps) {
		t.Fatalf("after the 16 → 17 migration: %+v", got)
	}
}
