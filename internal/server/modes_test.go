package server

import (
	"bytes"
	"context"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// lockedBuffer is a log sink safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestDataDirOwnerOnly runs a server under a umask of 0 on an existing
// data directory of mode 0755, stores and flushes values, and checks that
// the directory was made 0700 (said once in the log) and that every
// directory in it is 0700 and every file 0600: both SQLite databases with
// their -wal, -shm and lock files, the admin password, WAL segments,
// history and trend blocks.
func TestDataDirOwnerOnly(t *testing.T) {
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })
	cfg := testConfig(t, integrationSpec())
	if err := os.Chmod(cfg.DataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	s, stop := runServerLog(t, cfg, log)
	it := s.Catalog.Snapshot().Lookup("peregrine-test", "trap.float")
	// A recent value, so that retention does not drop its block.
	if err := s.Pipeline.Submit([]history.Sample{{ItemID: it.ID, Clock: time.Now().Unix() - 60, Type: history.Float, F: 1}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Store.(history.Flusher).Flush(); err != nil {
		t.Fatal(err)
	}
	adminLogin(t, s) // a session in auth.db
	// Walk while the server runs: SQLite removes its -wal and -shm files
	// on a clean close.
	checkModes(t, cfg.DataDir, ".|", "catalog.db|.db", "catalog.db-wal|.db-wal", "catalog.db-shm|.db-shm", "catalog.db.lock|.lock",
		"auth.db|.db", "auth.db-wal|.db-wal", "auth.db-shm|.db-shm", "auth.db.lock|.lock",
		"agent-state.db|.db", "agent-state.db.lock|.lock", "admin-password|", "history|.wal", "history|.blk")
	stop()
	_, stop2 := runServerLog(t, cfg, log) // a second start finds nothing to fix
	stop2()
	if n := strings.Count(logs.String(), "made it owner-only"); n != 1 {
		t.Errorf("the data directory fix was logged %d times, want once:\n%s", n, logs.String())
	}
	checkModes(t, cfg.DataDir)
}

// checkModes walks dir: every directory must be 0700 and every file 0600;
// want lists "top-level entry|extension" keys the walk must see.
func checkModes(t *testing.T, dir string, want ...string) {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if info.Mode().Perm() != want {
			t.Errorf("%s: mode %#o, want %#o", path, info.Mode().Perm(), want)
		}
		rel, _ := filepath.Rel(dir, path)
		top, _, _ := strings.Cut(rel, string(filepath.Separator))
		seen[top+"|"+filepath.Ext(path)] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range want {
		if !seen[k] {
			t.Errorf("the walk did not see %q: %v", k, seen)
		}
	}
}

// TestCredentialsBeforeListening starts a first-time server whose trapper
// or HTTP port is taken, so that New fails when it binds: the admin
// password file must exist by then, which shows that the credentials are
// written before any port accepts a connection.
func TestCredentialsBeforeListening(t *testing.T) {
	for _, which := range []string{"trapper", "http"} {
		t.Run(which, func(t *testing.T) {
			taken, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer taken.Close()
			cfg := testConfig(t, integrationSpec())
			if which == "trapper" {
				cfg.Trapper.Listen = taken.Addr().String()
			} else {
				cfg.HTTP.Listen = taken.Addr().String()
			}
			s, err := New(context.Background(), cfg, slog.New(slog.DiscardHandler))
			if err == nil {
				s.closeAll()
				t.Fatalf("New succeeded on a taken %s port", which)
			}
			pw, rerr := os.ReadFile(filepath.Join(cfg.DataDir, "admin-password"))
			if rerr != nil || len(bytes.TrimSpace(pw)) == 0 {
				t.Fatalf("New failed binding (%v), and the admin password was not written before: %v", err, rerr)
			}
		})
	}
}
