package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryLinksNoTestHelpers fails if the production binary links a
// test helper: package testing or a testing/* or *test package of the
// standard library (httptest, iotest...), internal/testutil or one of its
// subpackages, or a package of ours whose name ends in "test"
// (catalogtest, historytest, polltest). Test helpers may fake, panic or
// call t.Fatal; linked into the server they are dead weight at best. The
// simulated fleets `peregrine bench` runs live in internal/bench/sim for
// this reason.
//
// The standard library's own internal/* packages (internal/synctest,
// internal/testlog, linked by the runtime and os) are not helpers and
// are left out.
func TestBinaryLinksNoTestHelpers(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command on PATH: %v", err)
	}
	const module = "github.com/peregrine-mon/peregrine/"
	out, err := exec.Command(goBin, "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	var bad []string
	n := 0
	for line := range strings.Lines(string(out)) {
		path, std, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			t.Fatalf("go list printed %q, not \"path standard\"", line)
		}
		n++
		last := path[strings.LastIndexByte(path, '/')+1:]
		switch {
		case std == "true":
			if strings.HasPrefix(path, "internal/") || strings.Contains(path, "/internal/") {
				continue
			}
			if path == "testing" || strings.HasPrefix(path, "testing/") || strings.HasSuffix(last, "test") {
				bad = append(bad, path)
			}
		case strings.HasPrefix(path, module):
			rel := strings.TrimPrefix(path, module)
			if rel == "internal/testutil" || strings.HasPrefix(rel, "internal/testutil/") || strings.HasSuffix(last, "test") {
				bad = append(bad, path)
			}
		}
	}
	if n < 20 {
		t.Fatalf("go list -deps named only %d packages; is the test in cmd/peregrine?\n%s", n, out)
	}
	if len(bad) > 0 {
		t.Errorf("cmd/peregrine links test helpers (move what the binary needs out of them; `go list -deps ./cmd/peregrine` shows the chain):\n  %s",
			strings.Join(bad, "\n  "))
	}
}
