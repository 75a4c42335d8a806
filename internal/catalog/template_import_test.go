package catalog_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
	"github.com/peregrine-mon/peregrine/internal/trigger"
)

// TestImportOfficialTemplates imports every official Zabbix 6.0
// template file (the corpus of issue 26): a file is either imported
// whole, every item and trigger of it stored, and imported again with
// no change, or refused with errors that each name an element of the
// file by its path; nothing is half-imported or dropped in silence.
func TestImportOfficialTemplates(t *testing.T) {
	dir := testutil.ZabbixTemplates(t)
	ctx := context.Background()
	cat, err := catalog.Open(ctx, catalog.Options{Path: filepath.Join(t.TempDir(), "c.db"), ExprRefs: trigger.ItemRefs})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	var files []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".yaml") {
			files = append(files, p)
		}
		return err
	})
	imported, refused := 0, 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		spec, err := catalog.ParseSpec(data)
		if err != nil {
			refused++
			for _, line := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(line, "zabbix_export.") && !strings.HasPrefix(line, "... and ") {
					t.Errorf("%s: a refusal that names no element: %q", f, line)
				}
			}
			var fe *catalog.FieldError
			if !errors.As(err, &fe) {
				t.Errorf("%s: %v is no field error", f, err)
			}
			continue
		}
		before := cat.Snapshot().Version()
		if _, err := cat.Apply(ctx, spec); err != nil {
			t.Errorf("%s: parsed but not applied: %v", f, err)
			continue
		}
		if again, err := cat.Apply(ctx, spec); err != nil || again.Changed() {
			t.Errorf("%s: applied again: %+v %v", f, again, err)
		}
		if cat.Snapshot().Version() == before {
			t.Errorf("%s: applying changed nothing", f)
		}
		imported++
		checkStoredWhole(t, f, data, cat.Snapshot())
	}
	t.Logf("%d files imported whole, %d refused naming what Peregrine cannot store yet", imported, refused)
	if imported < 14 {
		t.Errorf("only %d files imported whole; the item-and-trigger-only ones (service checks, ICMP ping, Zabbix agent) must", imported)
	}

	// Linux by Zabbix agent is imported with its graph prototypes,
	// which name the rule's item prototypes by key.
	lin := cat.Snapshot().TemplateByName("Linux by Zabbix agent")
	if lin == nil {
		t.Fatal("Linux by Zabbix agent was not imported")
	}
	found := false
	for _, r := range cat.Snapshot().Rules() {
		if r.HostID != lin.ID || r.Key != "net.if.discovery" {
			continue
		}
		for _, gp := range r.Ext().LLD.GraphPrototypes {
			if gp.Name == "Interface {#IFNAME}: Network traffic" && gp.ID != 0 && gp.UUID != "" && len(gp.Items) > 0 &&
				cat.Snapshot().GraphProtoItemID(r, gp.Items[0].Key) != 0 {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("Linux by Zabbix agent: no graph prototype %q on net.if.discovery", "Interface {#IFNAME}: Network traffic")
	}
}

// checkStoredWhole compares a file's templates with what the catalog
// holds: every item, value map and trigger of the file is there.
func checkStoredWhole(t *testing.T, file string, data []byte, s *catalog.Snapshot) {
	t.Helper()
	var doc struct {
		Export struct {
			Templates []struct {
				Template string `yaml:"template"`
				Items    []struct {
					Key      string `yaml:"key"`
					UUID     string `yaml:"uuid"`
					Triggers []any  `yaml:"triggers"`
				} `yaml:"items"`
				ValueMaps []any `yaml:"valuemaps"`
				Rules     []struct {
					Key            string `yaml:"key"`
					ItemPrototypes []any  `yaml:"item_prototypes"`
				} `yaml:"discovery_rules"`
				Macros []any `yaml:"macros"`
			} `yaml:"templates"`
			Triggers []any `yaml:"triggers"`
		} `yaml:"zabbix_export"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for _, tm := range doc.Export.Templates {
		h := s.TemplateByName(tm.Template)
		if h == nil {
			t.Errorf("%s: template %q not stored", file, tm.Template)
			continue
		}
		for _, it := range tm.Items {
			got := h.Item(it.Key)
			if got == nil || got.Ext().UUID != it.UUID {
				t.Errorf("%s: %s: item %q not stored with its uuid: %+v", file, tm.Template, it.Key, got)
				continue
			}
			if n := len(s.TemplateTriggersOfItem(got.ID)); n < len(it.Triggers) {
				t.Errorf("%s: %s: item %q has %d triggers, the file %d", file, tm.Template, it.Key, n, len(it.Triggers))
			}
		}
		items, rules := 0, 0
		for _, it := range h.Items() {
			if it.Ext().LLD != nil {
				rules++
			} else {
				items++
			}
		}
		if items != len(tm.Items) {
			t.Errorf("%s: %s: %d items stored, %d in the file", file, tm.Template, items, len(tm.Items))
		}
		if rules != len(tm.Rules) {
			t.Errorf("%s: %s: %d discovery rules stored, %d in the file", file, tm.Template, rules, len(tm.Rules))
		}
		for _, r := range tm.Rules {
			got := h.Item(r.Key)
			if got == nil || got.Ext().LLD == nil || len(got.Ext().LLD.ItemPrototypes) != len(r.ItemPrototypes) {
				t.Errorf("%s: %s: discovery rule %q not stored with its %d item prototypes", file, tm.Template, r.Key, len(r.ItemPrototypes))
			}
		}
		if n := len(s.Macros(h.ID)); n != len(tm.Macros) {
			t.Errorf("%s: %s: %d macros stored, %d in the file", file, tm.Template, n, len(tm.Macros))
		}
		maps := 0
		for _, m := range s.ValueMaps() {
			if m.HostID == h.ID {
				maps++
			}
		}
		if maps != len(tm.ValueMaps) {
			t.Errorf("%s: %s: %d value maps stored, %d in the file", file, tm.Template, maps, len(tm.ValueMaps))
		}
	}
}
