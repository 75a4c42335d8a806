package buildcheck

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// repoRoot is the directory holding go.mod, found upwards from the test's
// working directory (its package directory).
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

// testFunc is a function declared in a _test.go file.
type testFunc struct {
	name string
	pkg  string // "./internal/zbx", as a Makefile or .ci/run names it
	decl *ast.FuncDecl
}

// testFuncs parses every _test.go file of the module (testdata, hidden
// and report directories skipped).
func testFuncs(t *testing.T, root string) []testFunc {
	t.Helper()
	var out []testFunc
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := "./" + filepath.ToSlash(rel)
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Recv == nil {
				out = append(out, testFunc{name: fd.Name.Name, pkg: pkg, decl: fd})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// isFuzzTarget reports whether fd is func FuzzX(f *testing.F).
func isFuzzTarget(fd *ast.FuncDecl) bool {
	if !strings.HasPrefix(fd.Name.Name, "Fuzz") || len(fd.Type.Params.List) != 1 {
		return false
	}
	star, ok := fd.Type.Params.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "F"
}

// recipe returns the command lines of a Makefile target (the tab-indented
// lines after "target:"), with $$ unescaped to $.
func recipe(t *testing.T, makefile, target string) []string {
	t.Helper()
	f, err := os.Open(makefile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, target+":"):
			in = true
		case in && strings.HasPrefix(line, "\t"):
			out = append(out, strings.ReplaceAll(strings.TrimSpace(line), "$$", "$"))
		case in:
			in = false
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s has no %q target", makefile, target)
	}
	return out
}

// cleanPkg is a package argument without a trailing slash or "/...".
func cleanPkg(p string) string {
	return strings.TrimSuffix(strings.TrimSuffix(p, "/..."), "/")
}

var fuzzLine = regexp.MustCompile(`-fuzz '\^(Fuzz\w+)\$'.*\s(\./\S+)$`)

func TestMakeFuzzListsEveryFuzzTarget(t *testing.T) {
	root := repoRoot(t)
	want := map[string]bool{} // "pkg FuzzX"
	for _, fn := range testFuncs(t, root) {
		if isFuzzTarget(fn.decl) {
			want[fn.pkg+" "+fn.name] = true
		}
	}
	if len(want) == 0 {
		t.Fatal("found no fuzz targets in the tree: the walk is broken")
	}
	have := map[string]bool{}
	for _, line := range recipe(t, filepath.Join(root, "Makefile"), "fuzz") {
		m := fuzzLine.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("Makefile fuzz line not in the form -fuzz '^FuzzX$$' ... ./pkg/: %s", line)
			continue
		}
		k := cleanPkg(m[2]) + " " + m[1]
		if have[k] {
			t.Errorf("Makefile fuzz target lists %s twice", k)
		}
		have[k] = true
	}
	for k := range want {
		if !have[k] {
			t.Errorf("make fuzz does not run %s: add a line for it to the Makefile's fuzz target", k)
		}
	}
	for k := range have {
		if !want[k] {
			t.Errorf("make fuzz runs %s, which is not a fuzz target in the tree (renamed or moved?)", k)
		}
	}
	t.Logf("%d fuzz targets in the tree", len(want))
}

// skipsUnderRace reports whether fd has an `if raceEnabled { ... }` (the
// repository's build-tagged constant): such a test only runs without -race.
func skipsUnderRace(fd *ast.FuncDecl) bool {
	found := false
	ast.Inspect(fd, func(n ast.Node) bool {
		if is, ok := n.(*ast.IfStmt); ok {
			if id, ok := is.Cond.(*ast.Ident); ok && id.Name == "raceEnabled" {
				found = true
			}
		}
		return !found
	})
	return found
}

// goTestLine is `go test ... -run 'RE' ... ./pkg/` in a shell script.
var goTestLine = regexp.MustCompile(`^go test .*-run '([^']+)'`)

// TestCIRunsRaceSkippedTestsPlainly: CI's main run uses -race, so a test
// that skips itself under the race detector runs only if .ci/run has a
// plain go test line for it.
func TestCIRunsRaceSkippedTestsPlainly(t *testing.T) {
	root := repoRoot(t)
	type plainRun struct {
		re   *regexp.Regexp
		pkgs []string
	}
	var runs []plainRun
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(ci), "\n") {
		line = strings.TrimSpace(line)
		m := goTestLine.FindStringSubmatch(line)
		if m == nil || strings.Contains(line, "-race") {
			continue
		}
		re, err := regexp.Compile(m[1])
		if err != nil {
			t.Errorf(".ci/run: bad -run pattern %q: %v", m[1], err)
			continue
		}
		var pkgs []string
		for _, f := range strings.Fields(line) {
			if strings.HasPrefix(f, "./") {
				pkgs = append(pkgs, cleanPkg(f))
			}
		}
		runs = append(runs, plainRun{re, pkgs})
	}
	n := 0
	for _, fn := range testFuncs(t, root) {
		if !strings.HasPrefix(fn.name, "Test") || !skipsUnderRace(fn.decl) {
			continue
		}
		n++
		ok := slices.ContainsFunc(runs, func(r plainRun) bool {
			return r.re.MatchString(fn.name) && slices.Contains(r.pkgs, fn.pkg)
		})
		if !ok {
			t.Errorf("%s in %s skips itself under -race and no plain `go test -run` line of .ci/run runs it", fn.name, fn.pkg)
		}
	}
	if n == 0 {
		t.Fatal("found no test that skips under -race: the check is looking for the wrong thing")
	}
}

func TestLintRunsStaticcheckInCI(t *testing.T) {
	root := repoRoot(t)
	lint := strings.Join(recipe(t, filepath.Join(root, "Makefile"), "lint"), "\n")
	for _, want := range []string{"vet", "gofmt", "STATICCHECK"} {
		if !strings.Contains(lint, want) {
			t.Errorf("make lint does not run %s:\n%s", want, lint)
		}
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^make lint$`).Match(ci) {
		t.Error(".ci/run does not run make lint")
	}
}
