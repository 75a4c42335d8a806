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

	"github.com/peregrine-mon/peregrine/internal/history"
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

// sameTypeSource answers every item with three values of one type, so
// that a template expression can be evaluated without its host.
type sameTypeSource struct{ vt history.ValueType }

func (s sameTypeSource) History(_ context.Context, _ ItemRef, q HistoryQuery) ([]history.Sample, error) {
	out := make([]history.Sample, 3)
	for i := range out {
		out[i] = history.Sample{Clock: q.Till - int64(i*10), Type: s.vt, F: float64(i + 1), U: uint64(i + 1), S: "v"}
		if s.vt == history.Log {
			out[i].Log = &history.LogMeta{Severity: 1, Source: "s", EventID: 1}
		}
	}
	return out, nil
}

// Items answers an aggregate query with three histogram buckets: the
// key with its "*" parameters replaced by 0.1, 1 and +Inf.
func (sameTypeSource) Items(_ context.Context, q ItemQuery) ([]ItemRef, error) {
	var out []ItemRef
	for _, le := range []string{"0.1", "1", "+Inf"} {
		out = append(out, ItemRef{Host: q.Host, Key: strings.ReplaceAll(q.Key, "*", le)})
	}
	return out, nil
}

func (sameTypeSource) Trends(context.Context, ItemRef, int64, int64) ([]history.Trend, error) {
	return []history.Trend{{Clock: 0, Num: 1, Min: 1, Max: 1, Sum: 1}}, nil
}

// evaluatesCleanly evaluates e with items of each value type in turn and
// returns "" when one of them gives a value or an unknown that only the
// missing context explains (macros not defined here, discovery macros,
// aggregate functions, a division by zero of the fake data); else the
// first reason. It catches run-time parameter checks (modes, fits,
// operators, periods) that would refuse what templates ship.
func evaluatesCleanly(e *Expr) string {
	first := ""
	for _, vt := range []history.ValueType{history.Float, history.Uint, history.Str, history.Log} {
		v := e.Eval(context.Background(), Options{Now: time.Unix(100000, 0), Source: sameTypeSource{vt}})
		if !v.IsError() {
			return ""
		}
		for _, ok := range []string{"user macro", "{$", "low-level discovery macro", "not supported yet", "division by zero"} {
			if strings.Contains(v.Err, ok) {
				return ""
			}
		}
		if first == "" {
			first = v.Err
		}
	}
	return first
}

// refusedTemplateExpressions are the template expressions Parse refuses
// on purpose, each explained in docs/templates-conformance.md
// ("Expressions"). Keyed by the expression text.
var refusedTemplateExpressions = map[string]string{}

// TestTemplateCorpus parses every trigger expression, recovery
// expression and calculated-item formula of the official Zabbix 6.0
// templates, and evaluates each against items of a suitable value type.
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
			if msg := evaluatesCleanly(e); msg != "" {
				t.Errorf("%q does not evaluate with any value type: %s", ce.text, msg)
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
