package catalog_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// hostExport is 6.0.14's export of a host with items (trapper,
// agent, simple, calculated, dependent; preprocessing, tags, a value
// map), triggers (one depending on another, one over two items), a
// graph, a discovery rule with prototypes and a web scenario of its own.
const hostExport = "testdata/export-host/host.yaml"

// hostParts is what a host holds of its own in an export, and the
// document's triggers and graphs.
func hostParts(t *testing.T, doc []byte) map[string]any {
	t.Helper()
	var d struct {
		X map[string]any `yaml:"zabbix_export"`
	}
	if err := yaml.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{"triggers": d.X["triggers"], "graphs": d.X["graphs"]}
	h := d.X["hosts"].([]any)[0].(map[string]any)
	for _, k := range []string{"items", "discovery_rules", "httptests", "valuemaps"} {
		out[k] = h[k]
	}
	return out
}

func hostCatalog(t *testing.T, name string) (*catalog.Catalog, uint64) {
	t.Helper()
	cat := openExportCatalog(t)
	var id uint64
	_, err := cat.Edit(context.Background(), func(e *catalog.Edit) error {
		g, err := e.CreateGroups([]string{"g"})
		if err != nil {
			return err
		}
		ids, err := e.CreateHosts([]catalog.NewHost{{Host: name, GroupIDs: g,
			Interfaces: []catalog.Interface{{Type: 1, Main: true, UseIP: true, IP: "127.0.0.1", Port: "10050"}}}})
		if err != nil {
			return err
		}
		id = ids[0]
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return cat, id
}

var hostContentRules = func() catalog.ImportRules {
	r := catalog.AllCreateUpdate
	r.Hosts = catalog.ImportRule{}
	return r
}()

// TestImportHostContents imports a host's export onto an existing host
// with the hosts rule off (its properties are left alone, as 6.0.14
// leaves them): exported back, its contents are the peer's; a second
// import changes nothing.
func TestImportHostContents(t *testing.T) {
	src, err := os.ReadFile(hostExport)
	if err != nil {
		t.Fatal(err)
	}
	cat, id := hostCatalog(t, "migrate-host-000")
	spec, err := catalog.ParseExport(catalog.FormatYAML, src)
	if err == nil {
		err = spec.ZabbixExport.RequireUUIDs() // a host's contents have none
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.Import(context.Background(), spec, hostContentRules); err != nil {
		t.Fatal(err)
	}
	s := cat.Snapshot()
	if h := s.HostOrTemplate(id); h.Name != "migrate-host-000" || len(h.Tags) != 0 {
		t.Errorf("the host's properties changed: name %q, tags %v", h.Name, h.Tags)
	}
	got, err := s.Export(catalog.ExportOptions{Hosts: []uint64{id}, Format: catalog.FormatYAML})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(hostParts(t, src), hostParts(t, got)); d != "" {
		t.Errorf("exported contents differ from 6.0.14's (-peer +Peregrine):\n%s", d)
	}
	for _, it := range s.HostOrTemplate(id).Items() {
		if it.Key == "agent.ping" && it.InterfaceID == 0 {
			t.Error("the agent item has no interface")
		}
	}
	spec, _ = catalog.ParseExport(catalog.FormatYAML, src)
	if res, err := cat.Import(context.Background(), spec, hostContentRules); err != nil || res.Changed() {
		t.Errorf("second import: %+v, %v; want nothing changed", res, err)
	}
}

// TestImportHostRules: a hosts rule creating or updating hosts is
// refused (Peregrine cannot yet), naming the host; a host that does not
// exist is skipped with its items, as 6.0.14 skips it (its triggers
// then name a host that does not exist, as 6.0.14's refusal says).
func TestImportHostRules(t *testing.T) {
	src, err := os.ReadFile(hostExport)
	if err != nil {
		t.Fatal(err)
	}
	cat, _ := hostCatalog(t, "migrate-host-000")
	for _, r := range []catalog.ImportRule{{CreateMissing: true}, {UpdateExisting: true}} {
		rules := hostContentRules
		rules.Hosts = r
		spec, _ := catalog.ParseExport(catalog.FormatYAML, src)
		if r.CreateMissing {
			spec.ZabbixExport.Hosts[0].Host = "elsewhere"
		}
		_, err := cat.Import(context.Background(), spec, rules)
		if err == nil || !strings.Contains(err.Error(), "cannot create hosts") && !strings.Contains(err.Error(), "cannot update hosts") {
			t.Errorf("hosts rule %+v: %v, want a refusal", r, err)
		}
	}
	rules := hostContentRules
	rules.Items.DeleteMissing = true
	spec, _ := catalog.ParseExport(catalog.FormatYAML, src)
	if _, err := cat.Import(context.Background(), spec, rules); err == nil || !strings.Contains(err.Error(), "deleteMissing") {
		t.Errorf("items deleteMissing on a host: %v, want a refusal", err)
	}
	other := strings.ReplaceAll(string(mustRead(t, hostExport)), "migrate-host-000", "absent-host")
	spec, err = catalog.ParseExport(catalog.FormatYAML, []byte(other))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.Import(context.Background(), spec, hostContentRules); err == nil {
		t.Error("the triggers of a host that does not exist were imported")
	}
	spec.ZabbixExport.Triggers, spec.ZabbixExport.Graphs = nil, nil
	for i := range spec.ZabbixExport.Hosts[0].Items {
		spec.ZabbixExport.Hosts[0].Items[i].Triggers = nil
	}
	spec.ZabbixExport.Hosts[0].DiscoveryRules = nil
	// (Its group is created: that is the groups rule's.)
	if res, err := cat.Import(context.Background(), spec, hostContentRules); err != nil || res.HostsCreated+res.ItemsCreated+res.ValueMapsCreated > 0 {
		t.Errorf("a host that does not exist: %+v, %v; want it skipped", res, err)
	}
	// A template's item names no interface.
	tpl := "zabbix_export:\n  version: '6.0'\n  templates:\n    - uuid: 0123456789abcdef0123456789abcdef\n      template: t\n      items:\n        - uuid: 1123456789abcdef0123456789abcdef\n          key: k\n          interface_ref: if1\n"
	if _, err := catalog.ParseExport(catalog.FormatYAML, []byte(tpl)); err == nil || !strings.Contains(err.Error(), "interface_ref") {
		t.Errorf("a template item's interface_ref: %v, want a refusal", err)
	}
}

func mustRead(t *testing.T, f string) []byte {
	t.Helper()
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
