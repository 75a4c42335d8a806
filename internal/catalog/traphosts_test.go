package catalog

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// downgradeItemTraps undoes the 36 → 37 migration (items' allowed
// hosts); the older downgrades chain onto it.
var downgradeItemTraps = []string{"DROP TABLE item_traps"}

// TestItemTrapHosts: a trapper item's allowed hosts and an HTTP agent
// item's allow_traps are stored, survive a reload, are exported under
// 6.0's names (allowed_hosts after value_type, allow_traps: 'YES' after
// the HTTP fields, as 6.0.14's configuration.export writes them) and
// imported back unchanged, are copied to the hosts the template is
// linked to and follow it when cleared.
func TestItemTrapHosts(t *testing.T) {
	c, path := openTemp(t)
	doc := `zabbix_export:
  version: '6.0'
  groups: [{uuid: 7df96b18c230490a9a0a9e2307226338, name: Templates}]
  templates:
    - uuid: 0ae4f5c7e3ab4a7c8b8a3a3d3b5c4d12
      template: T traps
      name: T traps
      groups: [{name: Templates}]
      items:
        - uuid: 85a597b741bb4e6e8fa9806e8737caf5
          name: trap
          type: TRAP
          key: trap.k
          delay: '0'
          allowed_hosts: '127.0.0.2, {HOST.CONN},10.0.0.0/8'
        - uuid: 85a597b741bb4e6e8fa9806e8737caf6
          name: web
          type: HTTP_AGENT
          key: web.k
          allowed_hosts: '{$TRAPPERS}'
          url: 'http://x'
          allow_traps: 'YES'
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
	tm := c.Snapshot().TemplateByName("T traps")
	var trap, web *Item
	for _, i := range tm.Items() {
		switch i.Key {
		case "trap.k":
			trap = i
		case "web.k":
			web = i
		}
	}
	if trap == nil || trap.Ext().Traps == nil || trap.Ext().Traps.Hosts != "127.0.0.2, {HOST.CONN},10.0.0.0/8" || trap.Ext().Traps.Allow {
		t.Fatalf("trapper item %+v", trap)
	}
	if web == nil || web.Ext().Traps == nil || web.Ext().Traps.Hosts != "{$TRAPPERS}" || !web.Ext().Traps.Allow {
		t.Fatalf("HTTP agent item %+v", web)
	}
	out, err := c.Snapshot().Export(ExportOptions{Templates: []uint64{tm.ID}, Format: "yaml"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"allowed_hosts: '127.0.0.2, {HOST.CONN},10.0.0.0/8'", "allowed_hosts: '{$TRAPPERS}'", "allow_traps: 'YES'"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("export lacks %s:\n%s", want, out)
		}
	}
	back, err := ParseSpec(out)
	if err != nil {
		t.Fatal(err)
	}
	if again := mustApply(t, c, back); again.Changed() {
		t.Fatalf("importing the export changed something: %+v", again)
	}
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "h", Groups: []string{"G"}, Templates: []TemplateRef{{Name: "T traps"}}}}})
	if cp := c.Snapshot().Lookup("h", "trap.k"); cp == nil || !cp.Ext().Traps.equal(trap.Ext().Traps) {
		t.Fatalf("the host's copy: %+v", cp)
	}
	c = reloadMatches(t, c, path)
	if _, err := c.Edit(context.Background(), func(e *Edit) error {
		empty := ""
		return e.UpdateItems([]ItemUpdate{{ID: trap.ID, TrapperHosts: &empty}})
	}); err != nil {
		t.Fatal(err)
	}
	c = reloadMatches(t, c, path)
	if cp := c.Snapshot().Lookup("h", "trap.k"); cp == nil || cp.Ext().Traps != nil {
		t.Fatalf("the host's copy after the template's list was cleared: %+v", cp)
	}
	bad := strings.Replace(doc, "10.0.0.0/8", "127.0.0.0/33", 1)
	spec, err = ParseSpec([]byte(bad))
	if err == nil {
		_, err = c.Apply(context.Background(), spec)
	}
	// Recorded from 6.0.14 (item.create with trapper_hosts "127.0.0.0/33").
	if err == nil || !strings.Contains(err.Error(), `Incorrect value for field "trapper_hosts": invalid address range "127.0.0.0/33".`) {
		t.Fatalf("a bad prefix: %v", err)
	}
}

// TestParseTrapPeers: what 6.0.14's item.create accepts and refuses
// (recorded with trapper_hosts on a trapper item).
func TestParseTrapPeers(t *testing.T) {
	for _, ok := range []string{"127.0.0.2", "300.1.1.1", "{HOST.CONN}, {HOST.HOST},{HOST.IP},{HOST.DNS},{HOST.NAME}",
		"{$FOO}", "example.com, ::1/64, 10.0.0.0/8", "127.0.0.1, 127.0.0.2 ", ""} {
		if _, err := ParseTrapPeers(ok, true); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for s, entry := range map[string]string{"127.0.0.0/33": "127.0.0.0/33", "bad_host!": "bad_host!", "{HOST.XYZ}": "{HOST.XYZ}",
		"127.0.0.1,,::1": "", "  ": "", "a b": "a b", "{$A}/24": "{$A}/24", "::1/129": "::1/129",
		"localhost/24": "localhost/24", "300.1.1.1/24": "300.1.1.1/24", "example.com/8": "example.com/8"} {
		_, err := ParseTrapPeers(s, true)
		var te *TrapHostsError
		if !errors.As(err, &te) || te.Entry != entry {
			t.Errorf("%q: %v, want the entry %q refused", s, err, entry)
		}
	}
	ps, err := ParseTrapPeers("10.0.0.0/8, example.com, ::1", true)
	if err != nil || len(ps) != 3 || ps[0].Prefix.String() != "10.0.0.0/8" || ps[1].Name != "example.com" || ps[2].Prefix.String() != "::1/128" {
		t.Fatalf("%+v %v", ps, err)
	}
}

// TestMigrateItemTraps opens a database of schema version 36 (no
// item_traps): it gains the table.
func TestMigrateItemTraps(t *testing.T) {
	c, path := openTemp(t)
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "h", Groups: []string{"G"}}}})
	c.Close()
	execAll(t, path, append(slices.Clone(downgradeItemTraps), "UPDATE catalog_meta SET schema_version = 36")...)
	c2, err := Open(context.Background(), Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	mustApply(t, c2, Spec{Hosts: []HostSpec{{Host: "h", Groups: []string{"G"},
		Items: []ItemSpec{{Key: "t", Type: "trapper", ValueType: "unsigned", TrapperHosts: "127.0.0.1"}}}}})
	if it := c2.Snapshot().Lookup("h", "t"); it == nil || it.Ext().Traps == nil || it.Ext().Traps.Hosts != "127.0.0.1" {
		t.Fatalf("after the upgrade: %+v", it)
	}
}

// FuzzParseTrapPeers: any list parses or is refused by an entry of it,
// without panicking; what parses keeps an entry per comma-separated
// part, each an address range or a name.
func FuzzParseTrapPeers(f *testing.F) {
	for _, s := range []string{"127.0.0.2", "300.1.1.1", "{HOST.CONN}, {HOST.HOST},{HOST.IP}", "{$FOO}", "example.com, ::1/64, 10.0.0.0/8",
		"127.0.0.1,,::1", "127.0.0.0/33", "{$A}/24", "fe80::1%eth0", "1.2.3.4/+8", "a b", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := ParseTrapPeers(s, true)
		if err != nil {
			var te *TrapHostsError
			if !errors.As(err, &te) || !strings.Contains(s, te.Entry) {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		if s != "" && len(ps) != strings.Count(s, ",")+1 {
			t.Fatalf("%q: %d entries", s, len(ps))
		}
		for _, p := range ps {
			if p.Prefix.IsValid() == (p.Name != "") {
				t.Fatalf("%q: entry %+v", s, p)
			}
		}
	})
}
