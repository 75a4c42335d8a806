package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestServeFlagsOverrideFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(file, []byte("data_dir: /from/file\ntrapper:\n  listen: \":20051\"\nhttp:\n  listen: \":28080\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := func(args []string, dataDir, trapper, http, level string) {
		t.Helper()
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var stderr bytes.Buffer
		cfg, ok := loadConfig(fs, args, true, &stderr)
		if !ok {
			t.Fatalf("%q: refused: %s", args, stderr.String())
		}
		if cfg.DataDir != dataDir || cfg.Trapper.Listen != trapper || cfg.HTTP.Listen != http || cfg.Log.Level != level {
			t.Errorf("%q: got data_dir %q trapper %q http %q level %q", args, cfg.DataDir, cfg.Trapper.Listen, cfg.HTTP.Listen, cfg.Log.Level)
		}
	}
	f(nil, "./data", ":10051", ":8080", "info")
	f([]string{"-config", file}, "/from/file", ":20051", ":28080", "info")
	f([]string{"-config", file, "-data-dir", "/x", "-trapper.listen", "127.0.0.1:1", "-http.listen", "127.0.0.1:2", "-log.level", "debug"},
		"/x", "127.0.0.1:1", "127.0.0.1:2", "debug")
	f([]string{"-http.listen", "127.0.0.1:9", "-config", file}, "/from/file", ":20051", "127.0.0.1:9", "info")
}

func TestFlagErrorsNameTheSetting(t *testing.T) {
	f := func(args []string, want string) {
		t.Helper()
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var stderr bytes.Buffer
		if _, ok := loadConfig(fs, args, true, &stderr); ok {
			t.Fatalf("%q: accepted", args)
		}
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("%q: error %q does not mention %q", args, stderr.String(), want)
		}
	}
	f([]string{"-trapper.listen", "nonsense"}, "trapper.listen")
	f([]string{"-http.listen", "1.2.3.4:99999"}, "http.listen")
	f([]string{"-log.level", "loud"}, "log.level")
}

func TestImportHasNoServeFlags(t *testing.T) {
	var stderr bytes.Buffer
	if code := run([]string{"import", "-http.listen", ":1", "x.yaml"}, io.Discard, &stderr); code != 2 {
		t.Fatalf("exit %d, want 2 (flag not defined for import)", code)
	}
}
