package lld_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/lld"
	"github.com/peregrine-mon/peregrine/internal/testutil"
	"github.com/peregrine-mon/peregrine/internal/trigger"
)

// stripMembers removes members another part of Peregrine imports
// (graphs, dashboards) from an official template file.
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
				if !drop[n.Content[i].Value] {
					out = append(out, n.Content[i], n.Content[i+1])
				}
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

// fixture is a catalog holding "Linux by Zabbix agent active" linked to
// n hosts with agent interfaces; rules[i] is host i's vfs.fs.discovery.
type fixture struct {
	cat   *catalog.Catalog
	hosts []uint64
	now   time.Time
}

func newFixture(t testing.TB, n int) *fixture {
	t.Helper()
	ctx := context.Background()
	cat, err := catalog.Open(ctx, catalog.Options{Path: filepath.Join(t.TempDir(), "c.db"), ExprRefs: trigger.ItemRefs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	data, err := os.ReadFile(filepath.Join(testutil.ZabbixTemplates(t), "os", "linux_active", "template_os_linux_active.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := catalog.ParseSpec(stripMembers(t, data, "graphs", "graph_prototypes", "dashboards"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.Apply(ctx, spec); err != nil {
		t.Fatal(err)
	}
	f := &fixture{cat: cat, now: time.Unix(1_700_000_000, 0)}
	tmpl := cat.Snapshot().TemplateByName("Linux by Zabbix agent active").ID
	_, err = cat.Edit(ctx, func(e *catalog.Edit) error {
		gids, err := e.CreateGroups([]string{"lld"})
		if err != nil {
			return err
		}
		var nh []catalog.NewHost
		for i := range n {
			nh = append(nh, catalog.NewHost{Host: "h" + strings.Repeat("0", 5-len(itoa(i))) + itoa(i), GroupIDs: gids,
				Interfaces: []catalog.Interface{{Type: catalog.InterfaceAgent, Main: true, UseIP: true, IP: "127.0.0.1"}}})
		}
		ids, err := e.CreateHosts(nh)
		if err != nil {
			return err
		}
		f.hosts = ids
		for _, h := range ids {
			if _, err := e.LinkTemplates(h, []uint64{tmpl}, "templates"); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func itoa(i int) string {
	const d = "0123456789"
	if i < 10 {
		return d[i : i+1]
	}
	return itoa(i/10) + d[i%10:i%10+1]
}

func (f *fixture) rule(t testing.TB, host int, key string) *catalog.Item {
	t.Helper()
	h := f.cat.Snapshot().HostByID(f.hosts[host])
	r := h.Item(key)
	if r == nil || r.Ext().LLD == nil {
		t.Fatalf("host %s has no rule %s: %+v", h.Host, key, r)
	}
	return r
}

func discovered(h *catalog.Host) map[string]*catalog.Item {
	out := map[string]*catalog.Item{}
	for _, it := range h.Items() {
		if it.Discovery != nil {
			out[it.Key] = it
		}
	}
	return out
}

const fsTwo = `{"data":[{"{#FSNAME}":"/","{#FSTYPE}":"ext4"},{"{#FSNAME}":"/data","{#FSTYPE}":"xfs"},{"{#FSNAME}":"/proc","{#FSTYPE}":"proc"}]}`
const fsOne = `[{"{#FSNAME}":"/","{#FSTYPE}":"ext4"}]`

func TestDiscoverLoseDelete(t *testing.T) {
	f := newFixture(t, 1)
	ctx := context.Background()
	eng := lld.New(lld.Options{Catalog: f.cat, Now: func() time.Time { return f.now }})
	rule := f.rule(t, 0, "vfs.fs.discovery")
	eng.Apply(ctx, []lld.Value{{RuleID: rule.ID, Value: fsTwo}})
	if e := eng.RuleError(rule.ID); e != "" {
		t.Fatalf("rule error: %q", e)
	}
	s := f.cat.Snapshot()
	h := s.HostByID(f.hosts[0])
	got := discovered(h)
	// 4 item prototypes per file system; /proc is filtered out by
	// {$VFS.FS.FSTYPE.MATCHES}.
	if len(got) != 8 {
		t.Fatalf("discovered %d items, want 8: %v", len(got), keys(got))
	}
	it := got["vfs.fs.size[/data,pused]"]
	if it == nil || it.Flags() != catalog.FlagDiscovered || it.Discovery.RuleID != rule.ID {
		t.Fatalf("vfs.fs.size[/data,pused]: %+v", it)
	}
	var fsTrigs int
	for _, tr := range s.Triggers() {
		if tr.Discovery != nil && tr.Discovery.RuleID == rule.ID {
			fsTrigs++
			if strings.Contains(tr.Expression, "{#") || !strings.Contains(tr.Expression, h.Host) {
				t.Errorf("trigger %q: expression %q", tr.Description, tr.Expression)
			}
		}
	}
	if fsTrigs == 0 {
		t.Error("no discovered trigger")
	}
	// The same value again changes nothing: no new snapshot.
	v := s.Version()
	eng.Apply(ctx, []lld.Value{{RuleID: rule.ID, Value: fsTwo}})
	if f.cat.Snapshot().Version() != v {
		t.Error("an unchanged result made a new snapshot")
	}
	// /data disappears: lost, kept until the lifetime (30d) passed.
	eng.Apply(ctx, []lld.Value{{RuleID: rule.ID, Value: fsOne}})
	got = discovered(f.cat.Snapshot().HostByID(f.hosts[0]))
	lost := got["vfs.fs.size[/data,pused]"]
	if lost == nil || lost.Discovery.TSDelete != f.now.Unix()+30*86400 {
		t.Fatalf("lost item: %+v", lost)
	}
	f.now = f.now.Add(31 * 24 * time.Hour)
	eng.Apply(ctx, []lld.Value{{RuleID: rule.ID, Value: fsOne}})
	got = discovered(f.cat.Snapshot().HostByID(f.hosts[0]))
	if len(got) != 4 || got["vfs.fs.size[/data,pused]"] != nil {
		t.Fatalf("after the lifetime: %v", keys(got))
	}
	for _, tr := range f.cat.Snapshot().Triggers() {
		if strings.Contains(tr.Expression, "/data") {
			t.Errorf("trigger of a deleted item kept: %q", tr.Description)
		}
	}
}

func TestRuleErrors(t *testing.T) {
	f := newFixture(t, 1)
	ctx := context.Background()
	eng := lld.New(lld.Options{Catalog: f.cat, Now: func() time.Time { return f.now }})
	rule := f.rule(t, 0, "vfs.fs.discovery")
	for _, c := range []struct{ value, want string }{
		// Recorded from 6.0.14 (discoveryrule.get error).
		{"not json", `Invalid discovery rule value: cannot parse as a valid JSON object: invalid object format, expected opening character '{' or '[' at: 'not json'`},
		{`{"a":1}`, `Cannot find the "data" array in the received JSON object.`},
	} {
		eng.Apply(ctx, []lld.Value{{RuleID: rule.ID, Value: c.value}})
		if got := eng.RuleError(rule.ID); got != c.want {
			t.Errorf("%q: error %q, want %q", c.value, got, c.want)
		}
	}
	// An item of the host with a prototype's key.
	_, err := f.cat.Edit(ctx, func(e *catalog.Edit) error {
		_, err := e.CreateItems([]catalog.NewItem{{HostID: f.hosts[0], ItemSpec: catalog.ItemSpec{Key: "vfs.fs.size[/,pused]", Type: "zabbix_agent_active"}}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	eng.Apply(ctx, []lld.Value{{RuleID: rule.ID, Value: fsOne}})
	// Recorded from 6.0.14: the rule stays supported; each object it
	// could not make is a line of its error.
	if got, want := eng.RuleError(rule.ID), "Cannot create item: item with the same key \"vfs.fs.size[/,pused]\" already exists.\n"; got != want {
		t.Errorf("collision: error %q, want %q", got, want)
	}
	if n := len(discovered(f.cat.Snapshot().HostByID(f.hosts[0]))); n != 3 {
		t.Errorf("%d items discovered beside the collision, want 3", n)
	}
}

func keys(m map[string]*catalog.Item) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
