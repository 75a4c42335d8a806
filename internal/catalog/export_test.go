package catalog_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/trigger"
)

// peerExports are configuration.export's answers recorded from 6.0.14
// (the API package's testdata): the template "Nginx by Zabbix agent",
// imported into the peer from its official file, exported in each
// format on the date below.
const peerExports = "../api/testdata/export/"

var peerExportDate = time.Date(2026, 11, 29, 14, 8, 52, 0, time.UTC)

func openExportCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	cat, err := catalog.Open(context.Background(), catalog.Options{Path: filepath.Join(t.TempDir(), "c.db"), ExprRefs: trigger.ItemRefs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	return cat
}

func importFile(t *testing.T, cat *catalog.Catalog, format string, src []byte) {
	t.Helper()
	spec, err := catalog.ParseExport(format, src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.Import(context.Background(), spec, catalog.AllCreateUpdate); err != nil {
		t.Fatal(err)
	}
}

// TestExportMatchesPeer imports the peer's export and exports it back in
// each format: byte for byte the peer's.
func TestExportMatchesPeer(t *testing.T) {
	src, err := os.ReadFile(peerExports + "nginx_agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cat := openExportCatalog(t)
	importFile(t, cat, catalog.FormatYAML, src)
	s := cat.Snapshot()
	tm := s.TemplateByName("Nginx by Zabbix agent")
	for _, format := range []string{"yaml", "xml", "json"} {
		want, err := os.ReadFile(peerExports + "nginx_agent." + format)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Export(catalog.ExportOptions{Templates: []uint64{tm.ID}, Format: format, Date: peerExportDate})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s: export differs from 6.0.14's:\n%s", format, cmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(got), "\n")))
		}
	}
}
