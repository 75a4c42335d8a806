package catalog_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

const peerMediaDir = "testdata/peer-export-media"

// mediaExportSweep exports each imported file's media types, imports
// the export again (nothing may change) and compares the file's export
// with the peer's (peerMediaCompare).
func mediaExportSweep(t *testing.T, cat *catalog.Catalog, dir string, files map[string][]string) []string {
	ctx := context.Background()
	var out []string
	for rel, names := range files {
		cfg := cat.AlertConfig()
		var ms []*catalog.MediaType
		for _, m := range cfg.SortedMediaTypes() {
			if slices.Contains(names, m.Name) {
				ms = append(ms, m)
			}
		}
		if len(ms) != len(names) {
			t.Fatalf("%s: %d of its %d media types stored", rel, len(ms), len(names))
		}
		doc, err := cat.Snapshot().Export(catalog.ExportOptions{MediaTypes: ms, Format: catalog.FormatYAML})
		if err != nil {
			t.Fatal(err)
		}
		again := "no change"
		spec, err := catalog.ParseExport(catalog.FormatYAML, doc)
		if err == nil {
			var res catalog.ApplyResult
			if res, err = cat.Import(ctx, spec, catalog.AllCreateUpdate); err == nil && res.Changed() {
				err = fmt.Errorf("changed: %+v", res)
			}
		}
		if err != nil {
			t.Errorf("%s: its export imported again: %v", rel, err)
			again = strings.SplitN(err.Error(), "\n", 2)[0]
		}
		cmp := peerMediaCompare(t, filepath.Join(dir, rel), filepath.Join(peerMediaDir, filepath.Base(rel)))
		out = append(out, fmt.Sprintf("| %s | %s | %s |", rel, again, strings.ReplaceAll(cmp, "|", `\|`)))
	}
	return out
}

// peerMediaCompare imports the file at src with its media types renamed
// "mtimport <name>" into an empty catalog, exports them and compares
// the export with the peer's recorded in golden: "identical", the first
// difference, or "not recorded".
func peerMediaCompare(t *testing.T, src, golden string) string {
	want, err := os.ReadFile(golden)
	if err != nil {
		return "not recorded"
	}
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cat, err := catalog.Open(ctx, catalog.Options{Path: filepath.Join(t.TempDir(), "m.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	spec, err := catalog.ParseExport(catalog.FormatYAML, data)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	var names []string
	for i := range spec.ZabbixExport.MediaTypes {
		m := &spec.ZabbixExport.MediaTypes[i]
		m.Name = "mtimport " + m.Name
		names = append(names, m.Name)
	}
	if _, err := cat.Import(ctx, spec, catalog.AllCreateUpdate); err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	var ms []*catalog.MediaType
	for _, m := range cat.AlertConfig().SortedMediaTypes() {
		if slices.Contains(names, m.Name) {
			ms = append(ms, m)
		}
	}
	got, err := cat.Snapshot().Export(catalog.ExportOptions{MediaTypes: ms, Format: catalog.FormatYAML})
	if err != nil {
		t.Fatal(err)
	}
	return firstDifference(withoutComments(exportDates.ReplaceAll(want, nil)), exportDates.ReplaceAll(got, nil))
}

var commentLine = regexp.MustCompile(`(?m)^#.*\n`)

func withoutComments(b []byte) []byte { return commentLine.ReplaceAll(b, nil) }

// TestMediaTypePeerExport compares Peregrine's export of every recorded
// media type file (the official ones and testdata/mediatypes_kinds.yaml,
// which has an email, SMS, script and webhook media type with every
// member set) with 6.0.14's export of the same file.
func TestMediaTypePeerExport(t *testing.T) {
	goldens, err := filepath.Glob(filepath.Join(peerMediaDir, "*.yaml"))
	if err != nil || len(goldens) == 0 {
		t.Fatalf("no golden files in %s: %v", peerMediaDir, err)
	}
	var dir string
	for _, g := range goldens {
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		rel := recordedFrom(b)
		src := filepath.Join("testdata", "mediatypes_kinds.yaml")
		if strings.HasPrefix(rel, "media/") {
			if dir == "" {
				dir = testutil.ZabbixTemplates(t)
			}
			src = filepath.Join(dir, rel)
		}
		if d := peerMediaCompare(t, src, g); d != "identical" {
			t.Errorf("%s: %s", rel, d)
		}
	}
}

// recordedFrom is the file a golden's header comment names.
func recordedFrom(b []byte) string {
	line, _ := bufio.NewReader(bytes.NewReader(b)).ReadString('\n')
	_, rest, _ := strings.Cut(line, "configuration.export of ")
	rel, _, _ := strings.Cut(rest, " ")
	return rel
}
