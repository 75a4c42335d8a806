package preprocess

import (
	"strconv"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// TestExportNamesMatchCatalogImport: the catalog's import reads the same
// export names (it keeps its own table, since this package imports the
// catalog); every type and handler name must give the same numbers here
// and there.
func TestExportNamesMatchCatalogImport(t *testing.T) {
	var items []catalog.ItemSpec
	for typ := StepMultiplier; typ <= StepXMLToJSON; typ++ {
		items = append(items, catalog.ItemSpec{Key: "t" + strconv.Itoa(int(typ)), ValueType: "text",
			Preprocessing: []catalog.PreprocSpec{{Type: typ.String()}}})
	}
	for h := HandlerDefault; h <= HandlerSetError; h++ {
		items = append(items, catalog.ItemSpec{Key: "h" + strconv.Itoa(int(h)), ValueType: "text",
			Preprocessing: []catalog.PreprocSpec{{Type: "MULTIPLIER", Parameters: []string{"2"}, ErrorHandler: h.String()}}})
	}
	snap := catalogtest.Open(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h", Items: items}}}).Snapshot()
	for typ := StepMultiplier; typ <= StepXMLToJSON; typ++ {
		if back, ok := StepTypeByName(typ.String()); !ok || back != typ {
			t.Errorf("StepTypeByName(%q) = %d, %v; want %d", typ.String(), back, ok, typ)
		}
		it := snap.Lookup("h", "t"+strconv.Itoa(int(typ)))
		if it == nil || len(it.Preprocessing) != 1 || it.Preprocessing[0].Type != int(typ) {
			t.Errorf("the catalog imports %s as %+v, want type %d", typ.String(), it, typ)
		}
	}
	for h := HandlerDefault; h <= HandlerSetError; h++ {
		if back, ok := HandlerByName(h.String()); !ok || back != h {
			t.Errorf("HandlerByName(%q) = %d, %v", h.String(), back, ok)
		}
		it := snap.Lookup("h", "h"+strconv.Itoa(int(h)))
		if it == nil || it.Preprocessing[0].ErrorHandler != int(h) {
			t.Errorf("the catalog imports handler %s as %+v, want %d", h.String(), it, h)
		}
	}
	if _, err := ParseExportStep("JSON_PATH", []string{"$.a"}, "", ""); err == nil {
		t.Error("an unknown type name was accepted")
	}
	if _, err := ParseExportStep("JSONPATH", []string{"$.a"}, "IGNORE", ""); err == nil {
		t.Error("an unknown handler name was accepted")
	}
}
