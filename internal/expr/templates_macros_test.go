package expr

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// corpusCatalog imports every template of the corpus (its names,
// macros and links: the catalog refuses most files whole, for their
// discovery rules and graphs, so the test keeps what it needs of each)
// into a fresh catalog, and returns it with each file's parsed YAML; only, if
// not "", keeps the file whose path ends so. Two
// templates are shipped twice (VMware Guest and VMware Hypervisor, in
// the VMware and the VMware FQDN files, meant to be imported one or the
// other): the first file's are kept.
func corpusCatalog(t *testing.T, only string) (*catalog.Catalog, map[string]any) {
	dir := testutil.ZabbixTemplates(t)
	docs := map[string]any{}
	seen := map[string]bool{}
	var all catalog.Spec
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") || !strings.HasSuffix(path, only) {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var file struct {
			Export struct {
				Templates []struct {
					Template  string                `yaml:"template"`
					Name      string                `yaml:"name"`
					Macros    []catalog.MacroSpec   `yaml:"macros"`
					Templates []catalog.TemplateRef `yaml:"templates"`
				} `yaml:"templates"`
			} `yaml:"zabbix_export"`
		}
		if err := yaml.Unmarshal(data, &file); err != nil {
			t.Errorf("%s: %v", path, err)
			return nil
		}
		for _, tm := range file.Export.Templates {
			if !seen[tm.Template] {
				seen[tm.Template] = true
				all.Templates = append(all.Templates, catalog.TemplateSpec{Template: tm.Template, Name: tm.Name, Macros: tm.Macros, Templates: tm.Templates})
			}
		}
		var doc any
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return err
		}
		docs[path] = doc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Open(context.Background(), catalog.Options{Path: filepath.Join(t.TempDir(), "c.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	if _, err := cat.Apply(context.Background(), all); err != nil {
		t.Fatalf("importing %d templates: %v", len(all.Templates), err)
	}
	return cat, docs
}

// TestTemplateCorpusMacros imports the corpus's templates with their
// macros and linked templates, then evaluates every trigger expression
// and calculated formula that uses a user macro with the scope of its
// template: every macro must resolve (its default value in the template
// or a linked one), so the thresholds the templates ship are what a host
// linked to them evaluates against.
func TestTemplateCorpusMacros(t *testing.T) {
	cat, docs := corpusCatalog(t, "")
	snap := cat.Snapshot()
	var withMacros, resolved int
	unresolved := map[string]int{}
	files := make([]string, 0, len(docs))
	for f := range docs {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, file := range files {
		root, _ := docs[file].(map[string]any)
		export, _ := root["zabbix_export"].(map[string]any)
		tmpls, _ := export["templates"].([]any)
		for _, tn := range tmpls {
			tm, _ := tn.(map[string]any)
			name, _ := tm["template"].(string)
			tpl := snap.TemplateByName(name)
			if tpl == nil {
				t.Fatalf("%s: template %q was not imported", file, name)
			}
			scope := snap.UserMacros(tpl.ID)
			for _, ce := range templateExpressions(file, tm) {
				if !strings.Contains(ce.text, "{$") {
					continue
				}
				e, err := Parse(ce.text)
				if err != nil {
					continue // TestTemplateCorpus reports it
				}
				withMacros++
				undefined := false
				for _, vt := range []history.ValueType{history.Float, history.Uint, history.Str, history.Log} {
					v := e.Eval(context.Background(), Options{Now: time.Unix(100000, 0), Source: sameTypeSource{vt}, Macros: scope})
					if v.IsError() && strings.Contains(v.Err, "undefined user macro") {
						undefined = true
						_, m, _ := strings.Cut(v.Err, "undefined user macro ")
						unresolved[name+": "+m]++
						break
					}
				}
				if !undefined {
					resolved++
				}
			}
		}
	}
	for m, n := range unresolved {
		if want, ok := knownUndefinedMacros[m]; ok && want == n {
			continue
		}
		t.Errorf("%s is not defined by its template or the templates it links (%d expressions)", m, n)
	}
	for m := range knownUndefinedMacros {
		if unresolved[m] == 0 {
			t.Errorf("listed as undefined but resolves now: %s", m)
		}
	}
	if withMacros < 1000 {
		t.Fatalf("only %d expressions with user macros found", withMacros)
	}
	t.Logf("%d templates; %d expressions with user macros, %d resolve with their template's macros", len(snap.Templates()), withMacros, resolved)
}

// knownUndefinedMacros are the template bugs of the corpus: a trigger
// uses a macro its template does not define (the template defines
// {$TEMP.MAX.CRIT:"Ambient"} but not "CPU"; {$CONSUL.SERVICE_NODES...}
// but not {$CONSUL.CLUSTER.SERVICE_NODES...}); Zabbix leaves such a
// trigger unknown too unless the host or a global macro defines it.
// Keyed by "template: macro", with the number of expressions;
// docs/templates-conformance.md lists them.
var knownUndefinedMacros = map[string]int{
	`Cisco UCS Manager by SNMP: {$TEMP.MAX.CRIT:"CPU"}`:                                                    2,
	`Cisco UCS Manager by SNMP: {$TEMP.MAX.WARN:"CPU"}`:                                                    2,
	`HashiCorp Consul Cluster by HTTP: {$CONSUL.CLUSTER.SERVICE_NODES.CRITICAL.MAX.AVG:"{#SERVICE_NAME}"}`: 1,
}

// valueSource answers every item with one float value.
type valueSource float64

func (v valueSource) History(_ context.Context, _ ItemRef, q HistoryQuery) ([]history.Sample, error) {
	return []history.Sample{{Clock: q.Till, Type: history.Float, F: float64(v)}}, nil
}

func (valueSource) Trends(context.Context, ItemRef, int64, int64) ([]history.Trend, error) {
	return nil, nil
}

// TestTemplateCorpusLinuxCPU evaluates the official Linux template's CPU
// trigger against its shipped threshold ({$CPU.UTIL.CRIT} = 90) and
// against a host that overrides it.
func TestTemplateCorpusLinuxCPU(t *testing.T) {
	cat, _ := corpusCatalog(t, "/os/linux/template_os_linux.yaml")
	const expr = "min(/Linux by Zabbix agent/system.cpu.util,5m)>{$CPU.UTIL.CRIT}"
	e, err := Parse(expr)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := catalog.ParseSpec([]byte(`
hosts:
  - host: web
    groups: [G]
    templates: [{name: Linux by Zabbix agent}]
  - host: batch
    groups: [G]
    templates: [{name: Linux by Zabbix agent}]
    macros: [{macro: '{$CPU.UTIL.CRIT}', value: '99'}]
`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.Apply(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	snap := cat.Snapshot()
	for _, c := range []struct {
		host string
		cpu  float64
		want float64
	}{{"web", 95, 1}, {"web", 50, 0}, {"batch", 95, 0}, {"batch", 99.5, 1}} {
		v := e.Eval(context.Background(), Options{Now: time.Unix(100000, 0), Source: valueSource(c.cpu), Macros: snap.UserMacros(snap.Host(c.host).ID)})
		if f, ok := v.number(); !ok || f != c.want {
			t.Errorf("%s at %v%%: %s = %+v, want %v", c.host, c.cpu, expr, v, c.want)
		}
	}
}
