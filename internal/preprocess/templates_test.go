package preprocess

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// The template conformance test: every preprocessing step of every item,
// item prototype and discovery rule of the official Zabbix 6.0 templates
// (Debian's zabbix-frontend-php, 298 YAML files) must parse with
// ParseExportStep, which compiles its regular expression, JSONPath,
// XPath, JavaScript or Prometheus pattern, and every chain must pass
// ParseChain. docs/templates-conformance.md reports the counts and the
// refused steps; knownRefusals below is that table's source of truth.

// tplExport is the part of a Zabbix export file the test reads.
type tplExport struct {
	Export struct {
		Templates []tplTemplate `yaml:"templates"`
	} `yaml:"zabbix_export"`
}

type tplTemplate struct {
	Template       string       `yaml:"template"`
	Macros         []tplMacro   `yaml:"macros"`
	Items          []tplItem    `yaml:"items"`
	DiscoveryRules []tplLLDRule `yaml:"discovery_rules"`
}

type tplMacro struct {
	Macro string `yaml:"macro"`
	Value string `yaml:"value"`
}

type tplItem struct {
	Key           string    `yaml:"key"`
	Preprocessing []tplStep `yaml:"preprocessing"`
}

type tplLLDRule struct {
	Key            string    `yaml:"key"`
	Preprocessing  []tplStep `yaml:"preprocessing"`
	ItemPrototypes []tplItem `yaml:"item_prototypes"`
}

type tplStep struct {
	Type          string   `yaml:"type"`
	Parameters    []string `yaml:"parameters"`
	ErrorHandler  string   `yaml:"error_handler"`
	ErrorHandlerP string   `yaml:"error_handler_params"`
}

// knownRefusals are the steps of the corpus that Peregrine refuses, by
// "template file:item key:step number (from 1)", with the reason; the
// test fails on any other refusal and on a listed step that now parses,
// so the list and the document stay true.
var knownRefusals = map[string]string{
	// PCRE's negative lookbehind; Go's RE2 has no lookaround.
	"app/nginx_agent/template_app_nginx_agent.yaml:nginx.version:1": "lookbehind",
	"app/nginx_http/template_app_nginx_http.yaml:nginx.version:1":   "lookbehind",
	// The filter's quotes are unbalanced ("tidb_..._total && @.labels.type
	// == "failed""): a template bug, no JSONPath parser reads it as meant.
	"db/tidb_http/tidb_tidb_http/template_db_tidb_tidb_http.yaml:tidb.domain_load_schema.failed.rate:1":          "malformed",
	"db/tidb_http/tidb_tidb_http/template_db_tidb_tidb_http.yaml:tidb.session_schema_lease_error.change.rate:1":  "malformed",
	"db/tidb_http/tidb_tidb_http/template_db_tidb_tidb_http.yaml:tidb.session_schema_lease_error.outdate.rate:1": "malformed",
}

// userMacro and lldMacro find the macros of a step's parameters: user
// macros, optionally with a context ({$NAME:"ctx"} or {$NAME:regex:"..."}),
// and low-level discovery macros ({#NAME}).
var (
	userMacro = regexp.MustCompile(`\{\$[A-Z0-9_.]+(?::[^}]*)?\}`)
	lldMacro  = regexp.MustCompile(`\{#[A-Z0-9_.]+\}`)
	// lldMacroFunc is an LLD macro with a macro function,
	// {{#NAME}.regsub("(.*)", \1)}: its result stands for the macro too.
	lldMacroFunc = regexp.MustCompile(`\{\{#[A-Z0-9_.]+\}\.[a-z]+\((?:"(?:[^"\\]|\\.)*"|[^()"])*\)\}`)
)

// lldSample replaces an LLD macro: discovery fills in an index, a number
// or a name. A digit is valid wherever the templates put these macros:
// in a JSONPath filter's quoted string or as its bare number, in a
// regular expression, a script's string, and as a multiplier (SNMP
// allocation units, {#ALLOC_UNITS}). In a Prometheus pattern an LLD
// macro is a label value or a whole metric name (Vault's
// {#PATTERN_C}): promLLDSample, a valid name, stands for both.
const (
	lldSample     = "1"
	promLLDSample = "lld_1"
)

// expandMacros does what the server does before it runs a step: user
// macros get their value (here the template's default, which is what a
// host linked to the template uses unless it overrides it) and LLD macros
// the discovered value (here lldSample). unknown lists user macros the
// template does not define (global macros).
func expandMacros(s string, macros map[string]string, lld string) (out string, unknown []string) {
	out = userMacro.ReplaceAllStringFunc(s, func(m string) string {
		if v, ok := macros[m]; ok {
			return v
		}
		// A macro with context falls back to the macro without it, as
		// Zabbix does when no context-specific value is defined.
		if i := strings.IndexByte(m, ':'); i > 0 {
			if v, ok := macros[m[:i]+"}"]; ok {
				return v
			}
		}
		unknown = append(unknown, m)
		return m
	})
	out = lldMacroFunc.ReplaceAllLiteralString(out, lld)
	return lldMacro.ReplaceAllLiteralString(out, lld), unknown
}

// corpusStats are the figures docs/templates-conformance.md reports.
type corpusStats struct {
	files, templates, withSteps        int
	items, prototypes, rules           int // with at least one step
	steps, withUserMacro, withLLDMacro int
	byType                             map[string]int
	byHandler, userMacroByType         map[string]int
	refused                            map[string]string
	unknownMacros                      map[string]int
}

func TestZabbixTemplatesPreprocessing(t *testing.T) {
	dir := testutil.ZabbixTemplates(t)
	st := corpusStats{byType: map[string]int{}, byHandler: map[string]int{}, userMacroByType: map[string]int{}, refused: map[string]string{}, unknownMacros: map[string]int{}}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var exp tplExport
		if err := yaml.Unmarshal(b, &exp); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		st.files++
		rel, _ := filepath.Rel(dir, path)
		for _, tpl := range exp.Export.Templates {
			st.add(rel, tpl)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.files != 298 {
		t.Errorf("read %d template files, want the 298 of Zabbix 6.0's zabbix-frontend-php", st.files)
	}
	for where, why := range st.refused {
		if _, ok := knownRefusals[where]; !ok {
			t.Errorf("refused: %s: %s", where, why)
		}
	}
	for where := range knownRefusals {
		if _, ok := st.refused[where]; !ok {
			t.Errorf("%s is listed in knownRefusals but parses now: update the list and docs/templates-conformance.md", where)
		}
	}
	st.log(t)
}

func (st *corpusStats) add(file string, tpl tplTemplate) {
	st.templates++
	macros := map[string]string{}
	for _, m := range tpl.Macros {
		macros[m.Macro] = m.Value
	}
	before := st.steps
	for _, it := range tpl.Items {
		if st.chain(file, it.Key, it.Preprocessing, macros) {
			st.items++
		}
	}
	for _, r := range tpl.DiscoveryRules {
		if st.chain(file, r.Key, r.Preprocessing, macros) {
			st.rules++
		}
		for _, p := range r.ItemPrototypes {
			if st.chain(file, p.Key, p.Preprocessing, macros) {
				st.prototypes++
			}
		}
	}
	if st.steps > before {
		st.withSteps++
	}
}

// chain parses one item's steps and then the chain; it reports whether
// the item has steps.
func (st *corpusStats) chain(file, key string, steps []tplStep, macros map[string]string) bool {
	if len(steps) == 0 {
		return false
	}
	chain := make([]Step, 0, len(steps))
	ok := true
	for i, ts := range steps {
		st.steps++
		st.byType[ts.Type]++
		h := ts.ErrorHandler
		if h == "" {
			h = "ORIGINAL_ERROR"
		}
		st.byHandler[h]++
		params := make([]string, len(ts.Parameters))
		sample := lldSample
		if strings.HasPrefix(ts.Type, "PROMETHEUS_") {
			sample = promLLDSample
		}
		user, lld := false, false
		for j, p := range ts.Parameters {
			var unknown []string
			if ts.Type == "JSONPATH" || ts.Type == "CHECK_JSON_ERROR" {
				// A path that starts with an LLD macro takes its root
				// from discovery (SharePoint's {#SHAREPOINT.LLD.JSON_PATH}
				// is a whole path): "$" stands for it.
				if loc := lldMacroFunc.FindStringIndex(p); loc != nil && loc[0] == 0 {
					p = "$" + p[loc[1]:]
				} else if loc := lldMacro.FindStringIndex(p); loc != nil && loc[0] == 0 {
					p = "$" + p[loc[1]:]
				}
			}
			user = user || userMacro.MatchString(ts.Parameters[j])
			lld = lld || lldMacro.MatchString(ts.Parameters[j])
			params[j], unknown = expandMacros(p, macros, sample)
			for _, m := range unknown {
				st.unknownMacros[m]++
			}
		}
		hp, _ := expandMacros(ts.ErrorHandlerP, macros, sample)
		if user {
			st.withUserMacro++
			st.userMacroByType[ts.Type]++
		}
		if lld {
			st.withLLDMacro++
		}
		s, err := ParseExportStep(ts.Type, params, ts.ErrorHandler, hp)
		if err != nil {
			st.refused[fmt.Sprintf("%s:%s:%d", file, key, i+1)] = ts.Type + ": " + err.Error()
			ok = false
			continue
		}
		chain = append(chain, s)
	}
	if ok {
		if err := ParseChain(chain); err != nil {
			st.refused[fmt.Sprintf("%s:%s:chain", file, key)] = err.Error()
		}
	}
	return true
}

func (st *corpusStats) log(t *testing.T) {
	t.Logf("%d files, %d templates, %d with preprocessing; %d items, %d item prototypes, %d discovery rules with steps; %d steps (%d with user macros, %d with LLD macros); %d refused",
		st.files, st.templates, st.withSteps, st.items, st.prototypes, st.rules, st.steps, st.withUserMacro, st.withLLDMacro, len(st.refused))
	for _, kv := range sortedCounts(st.byType) {
		t.Logf("type %-28s %5d", kv.k, kv.n)
	}
	for _, kv := range sortedCounts(st.byHandler) {
		t.Logf("error handler %-14s %5d", kv.k, kv.n)
	}
	for _, kv := range sortedCounts(st.userMacroByType) {
		t.Logf("steps with user macros: %-28s %5d", kv.k, kv.n)
	}
	for _, kv := range sortedCounts(st.unknownMacros) {
		t.Logf("user macro without a template default: %s (%d)", kv.k, kv.n)
	}
}

type countKV struct {
	k string
	n int
}

func sortedCounts(m map[string]int) []countKV {
	out := make([]countKV, 0, len(m))
	for k, n := range m {
		out = append(out, countKV{k, n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].n != out[j].n {
			return out[i].n > out[j].n
		}
		return out[i].k < out[j].k
	})
	return out
}
