package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/config"
)

// disk-bytes against an in-process Peregrine that flushes every second:
// the growth of its history directory per readable value, measured after
// a flush, with wal/ and blocks/ listed.
func TestDiskBytesInProcess(t *testing.T) {
	var dataDir string
	tg, _ := startPeregrineWith(t, func(c *config.Config) {
		c.History.FlushInterval = config.Duration(time.Second)
		dataDir = c.DataDir
	})
	env := newEnv(t, tg)
	dk := &DiskBytes{Items: 200, ItemsPerHost: 100, Values: 20_000, DataDir: dataDir, FlushWait: 30 * time.Second, Stall: 5 * time.Second, DrainTimeout: 30 * time.Second}
	sec, err := dk.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	c := csvRows(t, sec)
	parts := map[string]int{}
	for i := range c.Rows {
		parts[c.Get(i, "part")] = i
	}
	tot, ok := parts["total"]
	if !ok || c.Get(tot, "readable") != "20000" || c.Get(tot, "flushed") != "after a head flush" || c.Get(tot, "data") != "realistic" {
		t.Fatalf("total row: %v (all %v, notes %v)", c.Rows, c.Rows, sec.Notes)
	}
	// The growth is real bytes of these values: more than nothing, less
	// than the JSON they were sent as (≈70 bytes a value).
	if b := c.Float(tot, "bytes_per_value"); !(b > 0 && b < 70) {
		t.Errorf("bytes per value %v", b)
	}
	if _, ok := parts["blocks/"]; !ok {
		t.Errorf("no blocks/ part after a flush: %v", c.Rows)
	}
	sum := 0.0
	for p, i := range parts {
		if p != "total" {
			sum += c.Float(i, "bytes_after")
		}
	}
	if sum > c.Float(tot, "bytes_after") {
		t.Errorf("parts %v add up to more than the total %v", sum, c.Float(tot, "bytes_after"))
	}
}

func TestDiskBytesSizeCmd(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want int64
		err  string
	}{
		{"echo 12345", 12345, ""},
		{"printf ' 77 \\n'", 77, ""},
		{"echo abc", 0, "want a byte count"},
		{"true", 0, "printed nothing"},
		{"exit 3", 0, "--size-cmd failed"},
	} {
		got, err := (&DiskBytes{SizeCmd: tc.cmd}).measure(context.Background())
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.cmd, err, tc.err)
			}
			continue
		}
		if err != nil || got["total"] != tc.want {
			t.Errorf("%q: %v %v", tc.cmd, got, err)
		}
	}
	if err := (&DiskBytes{}).defaults(); err == nil || !strings.Contains(err.Error(), "--data-dir") {
		t.Errorf("no size source: %v", err)
	}
}

func TestDirSizes(t *testing.T) {
	dir := t.TempDir()
	h := filepath.Join(dir, "history")
	for path, n := range map[string]int{"wal/0001": 100, "blocks/p1/1.blk": 30, "blocks/p2/2.blk": 20, "LOCK": 1} {
		p := filepath.Join(h, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, n), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(h, "trends"), 0o700)
	got, err := dirSizes(historyDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"total": 151, "wal/": 100, "blocks/": 50, "trends/": 0}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d, want %d (all %v)", k, got[k], v, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("parts %v, want %v", got, want)
	}
}
