package expr

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// corpusExpr is one expression found in a template file.
type corpusExpr struct {
	file  string
	where string // "trigger expression", "calculated item params", ...
	text  string
}

// templateExpressions walks the YAML tree of one template file and
// collects every trigger (prototype) expression and recovery expression
// and every calculated item (prototype) formula.
func templateExpressions(file string, doc any) []corpusExpr {
	var out []corpusExpr
	var visit func(parentKey string, n any)
	visit = func(parentKey string, n any) {
		switch n := n.(type) {
		case map[string]any:
			if parentKey == "triggers" || parentKey == "trigger_prototypes" {
				for _, f := range []string{"expression", "recovery_expression"} {
					if s, ok := n[f].(string); ok && s != "" {
						out = append(out, corpusExpr{file, parentKey + " " + f, s})
					}
				}
			}
			if (parentKey == "items" || parentKey == "item_prototypes") && n["type"] == "CALCULATED" {
				if s, ok := n["params"].(string); ok {
					out = append(out, corpusExpr{file, parentKey + " params", s})
				}
			}
			keys := make([]string, 0, len(n))
			for k := range n {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				visit(k, n[k])
			}
		case []any:
			for _, v := range n {
				visit(parentKey, v)
			}
		}
	}
	visit("", doc)
	return out
}

// refusedTemplateExpressions are the template expressions Parse refuses
// on purpose, each explained in docs/templates-conformance.md
// ("Expressions"). Keyed by the expression text.
var refusedTemplateExpressions = map[string]string{}

// TestTemplateCorpus parses every trigger expression, recovery
// expression and calculated-item formula of the official Zabbix 6.0
// templates.
func TestTemplateCorpus(t *testing.T) {
	dir := testutil.ZabbixTemplates(t)
	// Templates sit two or three levels deep (os/linux/x.yaml,
	// net/cisco/cisco_snmp/x.yaml): walk the whole tree.
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".yaml") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var triggers, calculated int
	refused := map[string]bool{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, ce := range templateExpressions(file, doc) {
			if ce.where == "items params" || ce.where == "item_prototypes params" {
				calculated++
			} else {
				triggers++
			}
			e, err := Parse(ce.text)
			if err != nil {
				if _, ok := refusedTemplateExpressions[ce.text]; ok {
					refused[ce.text] = true
					continue
				}
				rel, _ := filepath.Rel(dir, file)
				t.Errorf("%s: %s %q: %v", rel, ce.where, ce.text, err)
				continue
			}
			// The canonical spelling must parse to the same.
			again, err := Parse(e.String())
			if err != nil || again.String() != e.String() {
				t.Errorf("%q: String() %q does not parse back: %v", ce.text, e.String(), err)
			}
		}
	}
	for text := range refusedTemplateExpressions {
		if !refused[text] {
			t.Errorf("listed as refused but parsed or absent: %q", text)
		}
	}
	if triggers < 1000 || calculated < 100 {
		t.Fatalf("found only %d trigger and %d calculated-item expressions in %d files under %s", triggers, calculated, len(files), dir)
	}
	t.Logf("%d files: %d trigger and %d calculated-item expressions, %d refused as documented", len(files), triggers, calculated, len(refused))
}
