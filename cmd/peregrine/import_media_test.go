package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestImportMediaTypes runs `peregrine import` on official media type
// files (YAML) and on every kind of media type: created, then no change
// the second time; a bad value is refused in mediatype.create's words.
func TestImportMediaTypes(t *testing.T) {
	dir := testutil.ZabbixTemplates(t)
	data := t.TempDir()
	imp := func(file string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run([]string{"import", "-data-dir", data, file}, &out, &errb)
		return code, out.String(), errb.String()
	}
	kinds := "../../internal/catalog/testdata/mediatypes_kinds.yaml"
	for _, f := range []string{filepath.Join(dir, "media/telegram/media_telegram.yaml"), filepath.Join(dir, "media/github/media_github.yaml"), kinds} {
		// Telegram and Github update the default media types of those
		// names; the kinds file creates its five.
		code, out, errs := imp(f)
		if code != 0 || !strings.Contains(out, "media types created: ") {
			t.Fatalf("%s: exit %d: %s %s", f, code, out, errs)
		}
		if code, out, errs = imp(f); code != 0 || !strings.Contains(out, "media types created: 0, updated: 0;") {
			t.Errorf("%s again: exit %d: %s %s", f, code, out, errs)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	src, err := os.ReadFile(kinds)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, bytes.Replace(src, []byte("max_sessions: '4'"), []byte("max_sessions: '400'"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	if code := run([]string{"import", "-data-dir", data, bad}, io.Discard, &errb); code != 1 ||
		!strings.Contains(errb.String(), `Invalid parameter "/1/maxsessions": value must be one of 0-100.`) {
		t.Errorf("bad value: exit %d: %s", code, errb.String())
	}
}
