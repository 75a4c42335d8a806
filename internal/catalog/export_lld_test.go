package catalog_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// TestExportLLDMatchesPeer imports a template with a discovery rule
// with every member set (filter with a formula, lifetime, LLD macro
// path, an override of each object, item, trigger and host prototypes
// with status and discover) as 6.0.14 exported it, recorded from the
// peer, and exports it back: byte for byte the peer's.
func TestExportLLDMatchesPeer(t *testing.T) {
	src, err := os.ReadFile("testdata/lld/peer_export.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cat := openExportCatalog(t)
	importFile(t, cat, catalog.FormatYAML, src)
	s := cat.Snapshot()
	tm := s.TemplateByName("s5-lldapi-t")
	date, err := time.Parse(time.RFC3339, strings.TrimSpace(strings.SplitN(strings.SplitN(string(src), "date: '", 2)[1], "'", 2)[0]))
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Export(catalog.ExportOptions{Templates: []uint64{tm.ID}, Format: "yaml", Date: date})
	if err != nil {
		t.Fatal(err)
	}
	// A host group's uuid is derived from its name in Peregrine (see
	// Export); the peer made this group's up.
	want := strings.Replace(string(src), "b41ce6c1156d40ab8a0df876c0b11356", catalog.GroupUUID("s5-lldapi-g"), 1)
	if string(got) != want {
		t.Errorf("export differs from 6.0.14's:\n%s", cmp.Diff(strings.Split(want, "\n"), strings.Split(string(got), "\n")))
	}
}
