package ingest

import (
	"os/exec"
	"strings"
	"testing"
)

// TestAPIDoesNotImportIngest: the API reaches the trapper's push through
// an interface with preprocess's types; main wires the two. An import
// of ingest from api would make the API depend on the trapper's
// transport and its pipeline.
func TestAPIDoesNotImportIngest(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", "../api").Output()
	if err != nil {
		t.Fatalf("go list -deps ../api: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasSuffix(dep, "/internal/ingest") {
			t.Fatalf("internal/api depends on %s", dep)
		}
	}
	if !strings.Contains(string(out), "/internal/preprocess") {
		t.Fatalf("internal/api does not use internal/preprocess; deps:\n%s", out)
	}
}
