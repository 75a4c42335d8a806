package catalog_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// TestImportMediaTypePassword: the export never writes an email media
// type's password, and importing the export keeps the stored one; a
// document that gives one sets it.
func TestImportMediaTypePassword(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	cat, err := catalog.Open(ctx, catalog.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cat.Close() }()
	doc := func(pw string) string {
		return "zabbix_export:\n  version: '6.0'\n  media_types:\n    - name: relay\n      type: EMAIL\n      smtp_server: s\n      smtp_helo: h\n" +
			"      smtp_email: a@b\n      smtp_authentication: PASSWORD\n      username: u\n" + pw
	}
	imp := func(src string) catalog.ApplyResult {
		t.Helper()
		spec, err := catalog.ParseExport(catalog.FormatYAML, []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		res, err := cat.Import(ctx, spec, catalog.AllCreateUpdate)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	relay := func() *catalog.MediaType {
		for _, m := range cat.AlertConfig().SortedMediaTypes() {
			if m.Name == "relay" {
				return m
			}
		}
		t.Fatal("relay not stored")
		return nil
	}
	if res := imp(doc("      password: s3cret\n")); res.MediaTypesCreated != 1 || relay().Passwd != "s3cret" {
		t.Fatalf("created: %+v, password %q", res, relay().Passwd)
	}
	out, err := cat.Snapshot().Export(catalog.ExportOptions{MediaTypes: []*catalog.MediaType{relay()}, Format: catalog.FormatYAML})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "s3cret") || strings.Contains(string(out), "password") {
		t.Errorf("the export has the password:\n%s", out)
	}
	if res := imp(string(out)); res.Changed() || relay().Passwd != "s3cret" {
		t.Errorf("the export imported again: %+v, password %q", res, relay().Passwd)
	}
	if res := imp(doc("      password: other\n")); res.MediaTypesUpdated != 1 || relay().Passwd != "other" {
		t.Errorf("a new password: %+v, password %q", res, relay().Passwd)
	}
	// Written with the import's transaction: there after a restart.
	cat.Close()
	if cat, err = catalog.Open(ctx, catalog.Options{Path: path}); err != nil {
		t.Fatal(err)
	}
	if relay().Passwd != "other" || relay().SMTPAuth != 1 {
		t.Errorf("after a restart: %+v", relay())
	}
}
