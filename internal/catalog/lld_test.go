package catalog_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
	"github.com/peregrine-mon/peregrine/internal/trigger"
)

// stripMembers removes the named members from every mapping of an
// official template file: what another part of Peregrine imports
// (graphs, dashboards), so that a test sees the discovery rules alone.
func stripMembers(t testing.TB, data []byte, names ...string) []byte {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	drop := map[string]bool{}
	for _, n := range names {
		drop[n] = true
	}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			out := n.Content[:0]
			for i := 0; i+1 < len(n.Content); i += 2 {
				if drop[n.Content[i].Value] {
					continue
				}
				out = append(out, n.Content[i], n.Content[i+1])
			}
			n.Content = out
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&doc)
	b, err := yaml.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// LinuxActiveSpec is the official "Linux by Zabbix agent active"
// template without its graphs, graph prototypes and dashboards.
func linuxActiveSpec(t testing.TB) catalog.Spec {
	t.Helper()
	dir := testutil.ZabbixTemplates(t)
	data, err := os.ReadFile(filepath.Join(dir, "os", "linux_active", "template_os_linux_active.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := catalog.ParseSpec(stripMembers(t, data, "graphs", "graph_prototypes", "dashboards"))
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func TestImportDiscoveryRules(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	cat, err := catalog.Open(ctx, catalog.Options{Path: path, ExprRefs: trigger.ItemRefs})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	spec := linuxActiveSpec(t)
	if _, err := cat.Apply(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if again, err := cat.Apply(ctx, spec); err != nil || again.Changed() {
		t.Errorf("applied again: %+v %v", again, err)
	}
	s := cat.Snapshot()
	tm := s.TemplateByName("Linux by Zabbix agent active")
	if tm == nil {
		t.Fatal("template not stored")
	}
	rules, protos, trigs := 0, 0, 0
	for _, it := range tm.Items() {
		if it.Ext().LLD != nil {
			rules++
			protos += len(it.Ext().LLD.ItemPrototypes)
			trigs += len(it.Ext().LLD.TriggerPrototypes)
			for _, p := range it.Ext().LLD.ItemPrototypes {
				if p.ID == 0 || p.UUID == "" {
					t.Errorf("%s: prototype %q has ID %d uuid %q", it.Key, p.Item.Key, p.ID, p.UUID)
				}
				if s.AnyItem(p.ID) != nil {
					t.Errorf("prototype %q has an item's ID %d", p.Item.Key, p.ID)
				}
			}
		}
	}
	// The file: 3 rules, 22 item prototypes, 9 trigger prototypes.
	if rules != 3 || protos != 22 || trigs != 9 {
		t.Errorf("stored %d rules, %d item prototypes, %d trigger prototypes; want 3, 22, 9", rules, protos, trigs)
	}
	// Reopened, the same.
	cat.Close()
	cat2, err := catalog.Open(ctx, catalog.Options{Path: path, ExprRefs: trigger.ItemRefs})
	if err != nil {
		t.Fatal(err)
	}
	defer cat2.Close()
	tm2 := cat2.Snapshot().TemplateByName("Linux by Zabbix agent active")
	if r := tm2.Item("vfs.fs.discovery"); r == nil || r.Ext().LLD == nil || len(r.Ext().LLD.ItemPrototypes) == 0 {
		t.Errorf("reloaded rule: %+v", r)
	}
}
