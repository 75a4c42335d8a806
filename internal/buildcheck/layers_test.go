package buildcheck

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The layer rule (issue 23). Every package of the module is placed in one
// layer below; a package imports only packages of its own layer or lower
// ones, and the rules further down narrow what is allowed inside a layer.
// The import graph is read from the non-test .go files with go/parser:
// tests may import anything (a test of the catalog may use trigger), and
// test helpers exist for them.
//
// docs/layout.md lists every package with what it owns, layer by layer;
// change it together with these tables.

// A pattern names packages by their path inside the module:
//
//	"internal/x"      internal/x only;
//	"internal/x/..."  internal/x and every package below it, one unit;
//	"internal/x/*"    every package strictly below internal/x, each
//	                  internal/x/<name> tree a unit of its own.
//
// A unit is what a rule treats as a package's own tree: an import that
// stays inside one unit of a rule's pattern never breaks that rule
// (history/engine may import history/engine/chunkenc; poll/calc may not
// import poll/agent).
type pattern string

// match reports whether p names pkg, and the unit pkg belongs to under p.
func (p pattern) match(pkg string) (unit string, ok bool) {
	s := string(p)
	switch {
	case strings.HasSuffix(s, "/..."):
		base := strings.TrimSuffix(s, "/...")
		if pkg == base || strings.HasPrefix(pkg, base+"/") {
			return base, true
		}
	case strings.HasSuffix(s, "/*"):
		base := strings.TrimSuffix(s, "*")
		if rest, ok := strings.CutPrefix(pkg, base); ok && rest != "" {
			first, _, _ := strings.Cut(rest, "/")
			return base + first, true
		}
	case pkg == s:
		return s, true
	}
	return "", false
}

// specificity orders the patterns that match one package: the longest
// base wins, and at equal length "x" beats "x/*" beats "x/...".
func (p pattern) specificity() int {
	s := string(p)
	switch {
	case strings.HasSuffix(s, "/..."):
		return 4*len(s) - 4*len("/...") + 1
	case strings.HasSuffix(s, "/*"):
		return 4*len(s) - 4*len("/*") + 2
	}
	return 4*len(s) + 3
}

type layer struct {
	name string
	what string // one line, for failure messages
	pkgs []pattern
}

// Groups of packages the rules below name; the layer table is built from
// them so that a package added to a group is placed and ruled at once.
var (
	// The value path, in the order values take it. A step never imports
	// an earlier one: the sources import the pipeline, not the reverse.
	sources   = []pattern{"internal/ingest/...", "internal/poll/..."}
	pipeline  = []pattern{"internal/pipeline/..."}
	preproc   = []pattern{"internal/preprocess/..."}
	backends  = []pattern{"internal/history/engine/...", "internal/history/clickhouse/...", "internal/history/memstore/...", "internal/history/valuecache/..."}
	valuePath = slices.Concat(sources, pipeline, preproc, backends)

	// The event path: trigger writes events, alert, maintenance and
	// service read them; they meet only in the event store.
	eventStore = []pattern{"internal/event/..."}
	eventUsers = []pattern{"internal/trigger/...", "internal/alert/...", "internal/maintenance/...", "internal/service/..."}

	// Plug-ins of a source, chosen and registered by the wiring.
	plugins = []pattern{"internal/ingest/*", "internal/poll/*"}

	// Producers of events beside trigger: auto-registration (which uses
	// alert's filter evaluation), internal events and network discovery
	// (which reuses auto-registration's host operations); the wiring
	// feeds them from ingest and the item states, and hands discovery
	// its checkers.
	eventProducers = []pattern{"internal/autoreg/...", "internal/internalev/...", "internal/netdisc/..."}

	exprLang    = []pattern{"internal/expr/..."}
	discovery   = []pattern{"internal/lld/..."}
	housekeep   = []pattern{"internal/housekeep/..."}
	stages      = slices.Concat(valuePath, eventStore, eventUsers, eventProducers, exprLang, housekeep, discovery)
	testHelpers = []pattern{"internal/testutil/...", "internal/history/historytest/...", "internal/poll/polltest"}
	readers     = []pattern{"internal/api/...", "internal/web/..."}
	wiring      = []pattern{"internal/server/...", "internal/bench/...", "cmd/...", "internal/buildcheck", "internal/conformance", "internal/migrate", "internal/hamigrate"}
	mains       = []pattern{"cmd/..."}
)

// layers, lowest first.
var layers = []layer{
	{"foundation", "pure syntax, codecs and shared mechanisms that import nothing above them", []pattern{
		"internal/zbx/...", "internal/sqlitedb", "internal/selfmon", "internal/usermacro",
		"internal/history", "internal/history/record", "internal/fsutil", "internal/wal", "internal/config",
		"internal/itemstate", "internal/jsvm",
	}},
	{"catalog", "the configuration stores: what is monitored, and who may use the API", []pattern{
		"internal/catalog", "internal/auth", "internal/audit", "internal/ha", "internal/pglog", "internal/daylog",
	}},
	{"stages", "the value and event paths and the work beside them", stages},
	{"test helpers", "imported only by _test.go files", testHelpers},
	{"readers", "answer users from the catalog, the stores and the stages' read interfaces", readers},
	{"wiring", "assemble stages into a server or a tool", wiring},
}

type rule struct {
	name string
	// from must not import to; or, with only set, to may be imported
	// only by from. Imports inside one unit of a to pattern are exempt.
	from, to []pattern
	only     bool
	why      string // the rule in words
}

const ruleLayerOrder = "layer-order"

var rules = slices.Concat(flow("value-path-one-way",
	"the value path is ingest/poll → pipeline → preprocess → history; a later step never imports an earlier one (values reach it through the interface it defines)",
	sources, pipeline, preproc, backends), []rule{
	{
		name: "sources-independent", from: sources, to: sources,
		why: "ingest and poll are parallel sources of values: neither imports the other",
	},
	{
		name: "plugins-chosen-by-wiring", only: true, from: wiring, to: plugins,
		why: "checkers (poll/<x>) and receivers (ingest/<x>) import their source and are registered with it by the wiring; the source and other plug-ins never import them",
	},
	{
		name: "backends-chosen-by-wiring", only: true, from: wiring, to: backends,
		why: "everything but the wiring uses history through the interfaces of internal/history; which backend runs is the wiring's choice, and backends do not import one another",
	},
	{
		name: "value-path-before-events", from: valuePath, to: slices.Concat(eventStore, eventUsers, eventProducers),
		why: "the value path runs before triggers and never imports the event path; the wiring connects trigger to the pipeline's OnCommit hook",
	},
	{
		name: "lld-consumes-commits", from: discovery, to: slices.Concat(sources, pipeline, eventStore, eventUsers),
		why: "the LLD engine sees committed values of discovery rules through the pipeline's OnCommit hook, connected by the wiring, and changes the catalog through Edit: it never imports the ways in, the pipeline or the event path",
	},
	{
		name: "trigger-consumes-commits", from: []pattern{"internal/trigger/..."}, to: slices.Concat(sources, pipeline, preproc),
		why: "trigger sees committed values through the pipeline's OnCommit hook, connected by the wiring, and reads history through history interfaces: it never imports ingest, poll, pipeline or preprocess",
	},
	{
		name: "event-store-imports-no-stage", from: eventStore, to: stages,
		why: "the event store is where trigger (producer) and alert and maintenance (consumers) meet: it imports none of them, nor any other stage",
	},
	{
		name: "event-users-meet-in-store", from: eventUsers, to: eventUsers,
		why: "trigger, alert, maintenance and service exchange problems only through the event store: none imports another",
	},
	{
		name: "expr-is-a-library", from: exprLang, to: stages,
		why: "the expression language is used by trigger and poll/calc and reads values through history and the catalog: it imports no stage",
	},
	{
		name: "housekeep-through-interfaces", from: housekeep, to: stages,
		why: "housekeeping schedules flush, retention and compaction through history.Flusher, Dropper and Compactor: it imports no stage",
	},
	{
		name: "readers-not-value-path", from: readers, to: slices.Concat(sources, pipeline),
		why: "api and web read through the catalog, the stores and read interfaces the wiring hands them: they never import ingest, poll or the pipeline",
	},
	{
		name: "wiring-only-from-cmd", only: true, from: mains, to: wiring,
		why: "internal/server (and bench, the tool) wire many stages together; only cmd/* imports them",
	},
	{
		name: "test-helpers-only-in-tests", only: true, from: testHelpers, to: testHelpers,
		why: "test helpers may import any stage because only _test.go files (and other helpers) import them",
	},
})

// flow returns the rules of a path whose steps import only later steps:
// one rule per step, all under one name.
func flow(name, why string, steps ...[]pattern) []rule {
	var out []rule
	for i := 1; i < len(steps); i++ {
		out = append(out, rule{name: name, from: steps[i], to: slices.Concat(steps[:i]...), why: why})
	}
	return out
}

// allowance is a known violation kept on purpose, with why and when it
// goes. An allowance that no longer matches a violation fails the test:
// delete it then.
type allowance struct {
	rule, from, to string
	why            string
}

// allowances is empty today: every layering exception issue 23 found was
// fixed by moving code.
var allowances = []allowance{}

// pos is where a file imports a package.
type pos struct {
	file string // relative to the module root
	line int
}

func (p pos) String() string { return fmt.Sprintf("%s:%d", p.file, p.line) }

// graph maps each package of the module (its path inside the module) to
// the module packages its non-test files import, with where.
type graph map[string]map[string][]pos

// modulePath reads the module line of go.mod.
func modulePath(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^module\s+(\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("go.mod has no module line")
	}
	return string(m[1])
}

// skipDir reports whether a directory of the walk holds no module code.
func skipDir(root, path, name string) bool {
	if path == root {
		return false
	}
	if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor" {
		return true
	}
	_, err := os.Stat(filepath.Join(path, "go.mod")) // another module
	return err == nil
}

// walkGoFiles calls fn with every .go file of the module under root, the
// directories skipDir leaves out skipped, _test.go files only if tests,
// with its path and its path relative to root in slash form: the one walk
// of the module's code that the layer, size and one-way tests share.
func walkGoFiles(root string, tests bool, fn func(path, rel string) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDir(root, path, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || (!tests && strings.HasSuffix(path, "_test.go")) {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		return fn(path, filepath.ToSlash(rel))
	})
}

// loadGraph parses the imports of every non-test .go file of the module.
// Files under build constraints all count (socket.go and
// socket_other.go alike): a rule holds on every platform.
func loadGraph(t *testing.T, root string) graph {
	t.Helper()
	mod := modulePath(t, root) + "/"
	g := graph{}
	fset := token.NewFileSet()
	err := walkGoFiles(root, false, func(path, rel string) error {
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(rel))
		if g[pkg] == nil {
			g[pkg] = map[string][]pos{}
		}
		for _, is := range f.Imports {
			imp := strings.Trim(is.Path.Value, `"`)
			if dep, ok := strings.CutPrefix(imp, mod); ok {
				g[pkg][dep] = append(g[pkg][dep], pos{rel, fset.Position(is.Pos()).Line})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(g) < 10 {
		t.Fatalf("found %d packages: the walk is broken", len(g))
	}
	return g
}

// place returns the index of pkg's layer, or a message saying what is
// wrong with its placement.
func place(pkg string, ls []layer) (int, string) {
	best, bestSpec, tie := -1, -1, ""
	for i, l := range ls {
		for _, p := range l.pkgs {
			if _, ok := p.match(pkg); !ok {
				continue
			}
			switch s := p.specificity(); {
			case s > bestSpec:
				best, bestSpec, tie = i, s, ""
			case s == bestSpec && i != best:
				tie = ls[i].name
			}
		}
	}
	switch {
	case best < 0:
		return -1, fmt.Sprintf("package %s is in no layer: place it in the layers table of internal/buildcheck/layers_test.go (the lowest layer whose packages it needs, see docs/layout.md) and add its line to docs/layout.md", pkg)
	case tie != "":
		return -1, fmt.Sprintf("package %s is placed in both layer %s and layer %s: keep one entry in internal/buildcheck/layers_test.go", pkg, ls[best].name, tie)
	}
	return best, ""
}

type violation struct {
	from, to, rule string
	at             []pos
	why            string
}

func (v violation) String() string {
	where := v.from
	if len(v.at) > 0 {
		where = v.at[0].String()
		if len(v.at) > 1 {
			var more []string
			for _, p := range v.at[1:] {
				more = append(more, p.String())
			}
			where += " (also " + strings.Join(more, ", ") + ")"
		}
	}
	return fmt.Sprintf("%s imports %s, which breaks rule %q: %s.\n"+
		"\tWhat to do: move what %s needs into a package it may import (usually a lower layer), or invert the dependency: "+
		"let the lower side declare a function type or small interface and internal/server pass the implementation in. "+
		"If the import is right and the rule is wrong, change the rule in internal/buildcheck/layers_test.go and docs/layout.md together; "+
		"a temporary exception goes in allowances there with a reason and when it goes.",
		where, v.to, v.rule, v.why, v.from)
}

type layerReport struct {
	unplaced   []string
	violations []violation
	unused     []allowance // allowances that matched no violation
}

// sameUnit reports whether pkg and imp are inside one unit of a pattern
// of ps that names imp (see pattern).
func sameUnit(ps []pattern, pkg, imp string) (named, same bool) {
	for _, p := range ps {
		u, ok := p.match(imp)
		if !ok {
			continue
		}
		named = true
		if v, ok := p.match(pkg); ok && v == u {
			return true, true
		}
	}
	return named, false
}

func matchesAny(ps []pattern, pkg string) bool {
	for _, p := range ps {
		if _, ok := p.match(pkg); ok {
			return true
		}
	}
	return false
}

// checkLayers holds g to the layer table, the rules and the allowances.
func checkLayers(g graph, ls []layer, rs []rule, allows []allowance) layerReport {
	var rep layerReport
	rank := map[string]int{}
	pkgs := make([]string, 0, len(g))
	for pkg := range g {
		pkgs = append(pkgs, pkg)
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		i, msg := place(pkg, ls)
		if msg != "" {
			rep.unplaced = append(rep.unplaced, msg)
			continue
		}
		rank[pkg] = i
	}
	used := make([]bool, len(allows))
	for _, pkg := range pkgs {
		from, ok := rank[pkg]
		if !ok {
			continue
		}
		imps := make([]string, 0, len(g[pkg]))
		for imp := range g[pkg] {
			imps = append(imps, imp)
		}
		sort.Strings(imps)
		for _, imp := range imps {
			to, ok := rank[imp]
			if !ok {
				if _, known := g[imp]; !known {
					rep.unplaced = append(rep.unplaced, fmt.Sprintf("%s imports %s, which has no non-test .go file in the module", pkg, imp))
				}
				continue
			}
			var broken []violation
			if to > from {
				broken = append(broken, violation{rule: ruleLayerOrder, why: fmt.Sprintf(
					"a package imports only its own layer and lower ones, and %s is in layer %d (%s: %s) while %s is in layer %d (%s)",
					pkg, from, ls[from].name, ls[from].what, imp, to, ls[to].name)})
			}
			for _, r := range rs {
				named, same := sameUnit(r.to, pkg, imp)
				if !named || same {
					continue
				}
				importer := matchesAny(r.from, pkg)
				if r.only && importer || !r.only && !importer {
					continue // an allowed importer, or one the rule is not about
				}
				broken = append(broken, violation{rule: r.name, why: r.why})
			}
			for _, v := range broken {
				v.from, v.to, v.at = pkg, imp, g[pkg][imp]
				allowed := false
				for i, a := range allows {
					if a.rule == v.rule && a.from == pkg && a.to == imp {
						used[i], allowed = true, true
					}
				}
				if !allowed {
					rep.violations = append(rep.violations, v)
				}
			}
		}
	}
	for i, a := range allows {
		if !used[i] {
			rep.unused = append(rep.unused, a)
		}
	}
	return rep
}

func TestLayers(t *testing.T) {
	root := repoRoot(t)
	g := loadGraph(t, root)
	rep := checkLayers(g, layers, rules, allowances)
	for _, msg := range rep.unplaced {
		t.Error(msg)
	}
	for _, v := range rep.violations {
		t.Error(v)
	}
	for _, a := range rep.unused {
		t.Errorf("allowance %s → %s (rule %q) matches no violation any more: delete it from allowances in internal/buildcheck/layers_test.go (it was: %s)", a.from, a.to, a.rule, a.why)
	}
	// A pattern that names no package is a stale entry (a package moved
	// or renamed): the rule would silently stop holding.
	check := func(where string, p pattern) {
		for pkg := range g {
			if _, ok := p.match(pkg); ok {
				return
			}
		}
		t.Errorf("%s names %s, which matches no package: fix or delete the entry in internal/buildcheck/layers_test.go", where, p)
	}
	for _, l := range layers {
		for _, p := range l.pkgs {
			check("layer "+l.name, p)
		}
	}
	for _, r := range rules {
		for _, p := range slices.Concat(r.from, r.to) {
			check("rule "+r.name, p)
		}
	}
	t.Logf("%d packages in %d layers, %d rules, %d allowances", len(g), len(layers), len(rules), len(allowances))
}

// TestNoInternalPackageImportedUpward states the layer order on its own,
// with no allowance: no package under internal/ is imported by a
// package of a lower layer.
func TestNoInternalPackageImportedUpward(t *testing.T) {
	g := loadGraph(t, repoRoot(t))
	for pkg, imps := range g {
		from, msg := place(pkg, layers)
		if msg != "" {
			continue // TestLayers reports it
		}
		for imp, at := range imps {
			if !strings.HasPrefix(imp, "internal/") {
				continue
			}
			if to, msg := place(imp, layers); msg == "" && to > from {
				t.Errorf("%s: %s (layer %s) imports %s of the higher layer %s: move the code down or invert the dependency (see docs/layout.md)", at[0], pkg, layers[from].name, imp, layers[to].name)
			}
		}
	}
}

// TestLayerCheckerCatchesPlantedViolations runs the checker, with the real
// tables, on synthetic graphs: each planted import must be reported,
// under exactly the rules listed, and nothing else.
func TestLayerCheckerCatchesPlantedViolations(t *testing.T) {
	f := func(from, to string, want ...string) {
		t.Helper()
		g := graph{from: {to: {{from + "/x.go", 7}}}, to: {}}
		rep := checkLayers(g, layers, rules, allowances)
		if len(rep.unplaced) > 0 {
			t.Fatalf("%s → %s: unplaced: %v", from, to, rep.unplaced)
		}
		var got []string
		for _, v := range rep.violations {
			if v.from != from || v.to != to {
				t.Errorf("%s → %s: reported an edge not planted: %s", from, to, v)
			}
			msg := v.String()
			for _, part := range []string{from + "/x.go:7", to, v.rule, "What to do"} {
				if !strings.Contains(msg, part) {
					t.Errorf("%s → %s: message does not name %q:\n%s", from, to, part, msg)
				}
			}
			got = append(got, v.rule)
		}
		sort.Strings(got)
		sort.Strings(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s → %s: broken rules %q, want %q", from, to, got, want)
		}
	}
	// The one the issue names: the catalog imports a stage.
	f("internal/catalog", "internal/trigger", ruleLayerOrder)

	f("internal/config", "internal/catalog", ruleLayerOrder)
	f("internal/testutil/catalogtest", "internal/api", ruleLayerOrder)
	f("internal/pipeline", "internal/ingest", "value-path-one-way")
	f("internal/preprocess", "internal/pipeline", "value-path-one-way")
	f("internal/history/engine", "internal/preprocess", "value-path-one-way")
	f("internal/ingest", "internal/poll", "sources-independent")
	f("internal/poll", "internal/poll/agent", "plugins-chosen-by-wiring")
	f("internal/poll/calc", "internal/poll/agent", "plugins-chosen-by-wiring")
	f("internal/trigger", "internal/history/engine", "backends-chosen-by-wiring")
	f("internal/history/memstore", "internal/history/engine", "backends-chosen-by-wiring")
	f("internal/pipeline", "internal/trigger", "value-path-before-events")
	f("internal/trigger", "internal/pipeline", "trigger-consumes-commits")
	f("internal/event", "internal/trigger", "event-store-imports-no-stage")
	f("internal/alert", "internal/trigger", "event-users-meet-in-store")
	f("internal/expr", "internal/trigger", "expr-is-a-library")
	f("internal/housekeep", "internal/history/engine", "housekeep-through-interfaces", "backends-chosen-by-wiring")
	f("internal/api", "internal/poll", "readers-not-value-path")
	f("internal/api", "internal/server", ruleLayerOrder, "wiring-only-from-cmd")
	f("internal/bench", "internal/server", "wiring-only-from-cmd")
	f("internal/web", "internal/testutil", "test-helpers-only-in-tests")

	// Imports the rules allow.
	f("internal/history/engine", "internal/history/engine/chunkenc")
	f("internal/history/engine", "internal/history/record")
	f("internal/poll/calc", "internal/poll")
	f("internal/ingest", "internal/pipeline")
	f("internal/alert", "internal/event")
	f("internal/server", "internal/poll/agent")
	f("cmd/peregrine", "internal/server")
	f("internal/testutil/catalogtest", "internal/trigger")
	f("internal/history/clickhouse", "internal/history/record")
	// Allowed by an allowance.
	f("internal/bench", "internal/bench/sim/agentsim")

	// A package in no layer is reported, saying to place it.
	rep := checkLayers(graph{"internal/newstage": {}}, layers, rules, nil)
	if len(rep.unplaced) != 1 || !strings.Contains(rep.unplaced[0], "place it") {
		t.Errorf("unplaced package: got %q, want one message saying to place it", rep.unplaced)
	}
	// An allowance covers its violation, and one that matches nothing
	// is reported.
	planted := []allowance{{"readers-not-value-path", "internal/api", "internal/ingest", "a planted exception"}}
	g := graph{"internal/api": {"internal/ingest": {{"internal/api/x.go", 3}}}, "internal/ingest": {}}
	rep = checkLayers(g, layers, rules, planted)
	if len(rep.unused) != 0 {
		t.Errorf("an allowance that covers a violation is reported unused: %v", rep.unused)
	}
	for _, v := range rep.violations {
		if v.rule == "readers-not-value-path" {
			t.Errorf("allowed violation still reported: %s", v)
		}
	}
	rep = checkLayers(graph{"internal/api": {}}, layers, rules, planted)
	if len(rep.unused) != 1 {
		t.Errorf("unused allowances: got %d, want 1", len(rep.unused))
	}
}

// maxFileLines is the size past which a hand-written Go file must be split
// by concern (STYLE.md section 1).
const maxFileLines = 1000

// longFiles returns the hand-written .go files under root (generated
// files and testdata excluded) longer than maxFileLines, with their
// length.
func longFiles(t *testing.T, root string) map[string]int {
	t.Helper()
	out := map[string]int{}
	fset := token.NewFileSet()
	err := walkGoFiles(root, true, func(path, rel string) error {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n := bytes.Count(b, []byte("\n"))
		if len(b) > 0 && b[len(b)-1] != '\n' {
			n++
		}
		if n <= maxFileLines {
			return nil
		}
		f, err := parser.ParseFile(fset, path, b, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		out[rel] = n
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestNoGoFileOverMaxLines(t *testing.T) {
	for path, n := range longFiles(t, repoRoot(t)) {
		t.Errorf("%s has %d lines, over %d: split it by concern into files (STYLE.md section 1)", path, n, maxFileLines)
	}
}

func TestLongFilesPlanted(t *testing.T) {
	root := t.TempDir()
	write := func(rel, head string, lines int) {
		t.Helper()
		path := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		body := head + "package p\n" + strings.Repeat("\n", lines-strings.Count(head, "\n")-1)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("p/long.go", "", maxFileLines+1)
	write("p/long_test.go", "", maxFileLines+1)
	write("p/ok.go", "", maxFileLines)
	write("p/gen.go", "// Code generated by hand for this test. DO NOT EDIT.\n\n", 3*maxFileLines)
	write("p/testdata/big.go", "", 3*maxFileLines)
	got := longFiles(t, root)
	want := map[string]int{"p/long.go": maxFileLines + 1, "p/long_test.go": maxFileLines + 1}
	if len(got) != len(want) || got["p/long.go"] != want["p/long.go"] || got["p/long_test.go"] != want["p/long_test.go"] {
		t.Errorf("longFiles = %v, want %v", got, want)
	}
}

// TestLayoutDocListsEveryPackage keeps docs/layout.md true: its layer
// lists ("- `path` — what it owns") name every package of the module,
// each under the heading of the layer the table puts it in.
func TestLayoutDocListsEveryPackage(t *testing.T) {
	root := repoRoot(t)
	g := loadGraph(t, root)
	f, err := os.Open(filepath.Join(root, "docs", "layout.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	heading := regexp.MustCompile(`^### (?:\d+\. )?(.+)$`)
	item := regexp.MustCompile("^- `([a-z0-9_/.-]+)`")
	listed := map[string]string{} // package → layer heading
	cur := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := heading.FindStringSubmatch(sc.Text()); m != nil {
			cur = m[1]
		} else if m := item.FindStringSubmatch(sc.Text()); m != nil {
			listed[m[1]] = cur
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for pkg := range g {
		i, msg := place(pkg, layers)
		if msg != "" {
			continue // TestLayers reports it
		}
		switch h, ok := listed[pkg]; {
		case !ok:
			t.Errorf("docs/layout.md does not list %s: add \"- `%s` — what it owns\" under ### %s", pkg, pkg, layers[i].name)
		case h != layers[i].name:
			t.Errorf("docs/layout.md lists %s under %q; the layer table puts it in %q", pkg, h, layers[i].name)
		}
	}
	for pkg := range listed {
		if _, ok := g[pkg]; !ok {
			t.Errorf("docs/layout.md lists %s, which is not a package of the module: delete or fix the line", pkg)
		}
	}
}
