package buildcheck

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// machinePaths are references that only work on one machine: a home or
// work directory, and scripts kept in a session's scratch directory under
// /tmp (a run.sh in /tmp/s5run) rather than in the repository. A path is
// flagged only where it starts a path: "https://host/home/x" is a URL,
// not a home directory, and a path after "${ROOT}" is relative to it.
// Scratch files that a command creates in /tmp (mktemp -d /tmp/pg-XXXXXX,
// a peer's socket directory) are fine.
var machinePaths = []struct {
	re   *regexp.Regexp
	what string
}{
	{regexp.MustCompile(`(^|[^A-Za-z0-9._~$}/])(/(?:work|home|root|Users)/[^\s"'` + "`" + `)]*)`), "a path on one machine (a work, home or root directory)"},
	{regexp.MustCompile(`(^|[^A-Za-z0-9._~$}/])(/tmp/[\w.-]+/(?:[\w.-]+/)*[\w.-]+\.sh)\b`), "a script under /tmp, which a clean clone does not have: use or add one in bench/"},
	{regexp.MustCompile(`(^|[^A-Za-z0-9._~$}/])(/tmp/s\d+[\w-]*/[^\s"'` + "`" + `)]*)`), "a session's scratch directory under /tmp"},
}

// skipPathsDir reports whether the walk leaves out the directory at rel (slash
// separated, relative to the root): version control, test fixtures, and
// build and run output that .gitignore keeps out of the tree. Recorded
// bench reports are checked too: their commands name the machine's
// scratch directories as DATA_DIR and REPORT_DIR (bench/reports/README.md).
func skipPathsDir(rel, name string) bool {
	switch {
	case name == ".git", name == "testdata", name == "vendor", name == "node_modules":
		return true
	case rel == "bin", rel == "data":
		return true
	}
	return false
}

// skipFile leaves out files that are not text of the tree: the .git file
// of a worktree, test binaries and profiles (.gitignore), binary files.
// (This test's own examples are built so that they do not match.)
func skipFile(name string, head []byte) bool {
	switch {
	case name == ".git", strings.HasSuffix(name, ".test"), strings.HasSuffix(name, ".prof"), name == "peregrine.log":
		return true
	}
	return bytes.IndexByte(head, 0) >= 0
}

// TestNoMachinePaths fails on every reference to a path that exists only
// on one machine, naming the file, the line and the path, so that every
// command in the tree runs from a clean clone.
func TestNoMachinePaths(t *testing.T) {
	root := repoRoot(t)
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if path != root && skipPathsDir(rel, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if skipFile(d.Name(), b[:min(len(b), 8000)]) {
			return nil
		}
		files++
		for i, line := range strings.Split(string(b), "\n") {
			for _, p := range machinePaths {
				for _, m := range p.re.FindAllStringSubmatch(line, -1) {
					t.Errorf("%s:%d: %s: %s", rel, i+1, m[2], p.what)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("checked only %d files: the walk is broken", files)
	}
}

// TestMachinePathPatterns pins what the patterns flag and what they leave.
func TestMachinePathPatterns(t *testing.T) {
	// dir spells a machine path without writing it out, so that a plain
	// grep of the tree for one finds nothing here either.
	dir := func(top, rest string) string { return "/" + top + "/" + rest }
	flagged := func(line string) bool {
		for _, p := range machinePaths {
			if p.re.MatchString(line) {
				return true
			}
		}
		return false
	}
	for _, line := range []string{
		dir("work", "notes/quietbench") + " bench/peer-run.sh",
		"PEERS=${PEERS:-" + dir("work", "shared/peers") + "}",
		"see ../x or `" + dir("home", "ann/peregrine") + "`",
		"cd " + dir("root", "src") + " && make",
		"open " + dir("Users", "ann/bench.txt"),
		dir("tmp", "s5run/run.sh") + " NAME default.yaml storm",
		"bash " + dir("tmp", "trig/events.sh"),
		"go build -o " + dir("tmp", "s4ch-bench/peregrine") + " ./cmd/peregrine",
	} {
		if !flagged(line) {
			t.Errorf("not flagged: %q", line)
		}
	}
	for _, line := range []string{
		"DATA=$(mktemp -d /tmp/pg-sbs-XXXXXX)",
		"psql -X -h /tmp/zbxpeer/sock -p 55432",
		"QUIET_LOCK:-/tmp/peregrine-quiet.lock",
		"https://example.com/home/index.html",
		"bench/quiet.sh bench/peer-run.sh bench/sidebyside.sh icmp 10",
		"$HOME/.cache and ~" + dir("work", "x") + " and ${ROOT}" + dir("work", "x"),
		"/usr/lib/nagios/plugins/check_dummy",
	} {
		if flagged(line) {
			t.Errorf("flagged: %q", line)
		}
	}
}
