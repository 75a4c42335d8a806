package catalog

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// downgradeItemLogTimeFmt undoes the 34 → 35 migration (items'
// logtimefmt); the older downgrades chain onto it.
var downgradeItemLogTimeFmt = append(slices.Clone(downgradeCorrelations), "DROP TABLE item_logtimefmt")

// downgradeCorrelations undoes the 35 → 36 migration (event
// correlations); the older downgrades chain onto it.
var downgradeCorrelations = append(slices.Clone(downgradeItemTraps), "DROP TABLE correlations")

// TestItemLogTimeFmt: an item's logtimefmt is stored, survives a reload,
// is exported and imported back unchanged, is copied to the hosts its
// template is linked to, and one over 64 characters is refused in
// Zabbix 6.0's words.
func TestItemLogTimeFmt(t *testing.T) {
	c, path := openTemp(t)
	doc := `zabbix_export:
  version: '6.0'
  groups: [{uuid: 7df96b18c230490a9a0a9e2307226338, name: Templates}]
  templates:
    - uuid: 0ae4f5c7e3ab4a7c8b8a3a3d3b5c4d11
      template: T log
      name: T log
      groups: [{name: Templates}]
      items:
        - uuid: 85a597b741bb4e6e8fa9806e8737caf4
          name: 'SNMP traps (fallback)'
          type: SNMP_TRAP
          key: snmptrap.fallback
          history: 2w
          trends: '0'
          value_type: LOG
          logtimefmt: 'hh:mm:sszyyyy/MM/dd'
`
	spec, err := ParseSpec([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, c, spec)
	if again := mustApply(t, c, spec); again.Changed() {
		t.Fatalf("a second import changed something: %+v", again)
	}
	c = reloadMatches(t, c, path)
	tm := c.Snapshot().TemplateByName("T log")
	var it *Item
	for _, i := range tm.Items() {
		it = i
	}
	if it == nil || it.Ext().LogTimeFmt != "hh:mm:sszyyyy/MM/dd" {
		t.Fatalf("template item %+v", it)
	}
	out, err := c.Snapshot().Export(ExportOptions{Templates: []uint64{tm.ID}, Format: "yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "logtimefmt: 'hh:mm:sszyyyy/MM/dd'") {
		t.Fatalf("export lacks logtimefmt:\n%s", out)
	}
	// Linked: the host's copy has it.
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "h", Groups: []string{"G"}, Templates: []TemplateRef{{Name: "T log"}}}}})
	if cp := c.Snapshot().Lookup("h", "snmptrap.fallback"); cp == nil || cp.Ext().LogTimeFmt != "hh:mm:sszyyyy/MM/dd" {
		t.Fatalf("the host's copy: %+v", cp)
	}
	c = reloadMatches(t, c, path)
	// Cleared on the template through an update, and so on its copy.
	if _, err := c.Edit(context.Background(), func(e *Edit) error {
		empty := ""
		return e.UpdateItems([]ItemUpdate{{ID: it.ID, LogTimeFmt: &empty}})
	}); err != nil {
		t.Fatal(err)
	}
	c = reloadMatches(t, c, path)
	if cp := c.Snapshot().Lookup("h", "snmptrap.fallback"); cp == nil || cp.Ext().LogTimeFmt != "" {
		t.Fatalf("the host's copy after the template's logtimefmt was cleared: %+v", cp)
	}
	long := strings.Replace(doc, "'hh:mm:sszyyyy/MM/dd'", "'"+strings.Repeat("x", 70)+"'", 1)
	spec, err = ParseSpec([]byte(long))
	if err == nil {
		_, err = c.Apply(context.Background(), spec)
	}
	// Recorded from 6.0.14 (item.create with a 70-character logtimefmt).
	if err == nil || !strings.Contains(err.Error(), `is too long for field "logtimefmt" - 70 characters. Allowed length is 64 characters.`) {
		t.Fatalf("a 70-character logtimefmt: %v", err)
	}
}

// TestMigrateItemLogTimeFmt opens a database of schema version 34 (no
// item_logtimefmt): it gains the table.
func TestMigrateItemLogTimeFmt(t *testing.T) {
	c, path := openTemp(t)
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "h", Groups: []string{"G"}}}})
	c.Close()
	execAll(t, path, append(slices.Clone(downgradeItemLogTimeFmt), "UPDATE catalog_meta SET schema_version = 34")...)
	c2, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	mustApply(t, c2, Spec{Hosts: []HostSpec{{Host: "h", Groups: []string{"G"},
		Items: []ItemSpec{{Key: "log[/tmp/x]", Type: "zabbix_agent_active", ValueType: "log", LogTimeFmt: "yyyy-MM-dd"}}}}})
	if it := c2.Snapshot().Lookup("h", "log[/tmp/x]"); it == nil || it.Ext().LogTimeFmt != "yyyy-MM-dd" {
		t.Fatalf("after the upgrade: %+v", it)
	}
}
