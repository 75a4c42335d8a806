package auth

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// testHashParams keep argon2id cheap in tests (64 KiB, one pass).
var testHashParams = HashParams{Memory: 64, Time: 1, Threads: 1}

// fakeClock is the injected clock; tests move it by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock { return &fakeClock{t: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// syncBuffer collects log output from concurrent goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// testEnv is one Store on a temporary file with a fake clock and a log
// buffer at debug level.
type testEnv struct {
	s     *Store
	path  string
	clock *fakeClock
	logs  *syncBuffer
	opts  Options
}

func testOptions(path string, clock *fakeClock, logs *syncBuffer) Options {
	return Options{
		Path:       path,
		FailDelay:  -1, // no delay unless a test asks for one
		HashParams: testHashParams,
		Now:        clock.Now,
		Logger:     slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
}

// openEnv opens a store; edit, if not nil, changes the options first.
func openEnv(t testing.TB, edit func(*Options)) *testEnv {
	t.Helper()
	e := &testEnv{path: filepath.Join(t.TempDir(), "auth.db"), clock: newClock(), logs: &syncBuffer{}}
	e.opts = testOptions(e.path, e.clock, e.logs)
	e.opts.Postgres = pgOptions(t)
	if edit != nil {
		edit(&e.opts)
	}
	e.reopen(t)
	t.Cleanup(func() {
		if e.s != nil {
			e.s.Close()
		}
	})
	return e
}

// reopen closes the store (if open) and opens it again on the same file.
func (e *testEnv) reopen(t testing.TB) {
	t.Helper()
	if e.s != nil {
		if err := e.s.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	s, err := Open(context.Background(), e.opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	e.s = s
}

func mustCreateUser(t testing.TB, s *Store, name, pw string, role Role) User {
	t.Helper()
	u, err := s.CreateUser(context.Background(), name, pw, role)
	if err != nil {
		t.Fatalf("CreateUser(%q): %v", name, err)
	}
	return u
}

func mustLogin(t testing.TB, s *Store, name, pw string) string {
	t.Helper()
	sid, _, err := s.Login(context.Background(), name, pw)
	if err != nil {
		t.Fatalf("Login(%q): %v", name, err)
	}
	return sid
}

func TestOptionsDefaults(t *testing.T) {
	o, err := Options{Path: "x.db"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if o.SessionIdle != 15*time.Minute || o.MaxFailures != 5 || o.BlockFor != 30*time.Second ||
		o.FailDelay != time.Second || o.AccessWriteInterval != time.Minute ||
		o.HashParams != DefaultHashParams() || o.MaxConcurrentHashes < 1 || o.MaxConcurrentHashes > 4 ||
		o.Now == nil || o.Logger == nil {
		t.Fatalf("defaults not applied: %+v", o)
	}
	if got := DefaultHashParams(); got != (HashParams{Memory: 65536, Time: 2, Threads: 1}) {
		t.Fatalf("DefaultHashParams() = %+v", got)
	}
}

func TestOptionsInvalid(t *testing.T) {
	f := func(name string, o Options) {
		t.Helper()
		_, err := o.withDefaults()
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: withDefaults() error = %v, want ErrInvalid", name, err)
		}
	}
	f("no path", Options{})
	f("negative idle", Options{Path: "x", SessionIdle: -1})
	f("negative block", Options{Path: "x", BlockFor: -time.Second})
	f("negative failures", Options{Path: "x", MaxFailures: -1})
	f("negative hashes", Options{Path: "x", MaxConcurrentHashes: -2})
	f("tiny memory", Options{Path: "x", HashParams: HashParams{Memory: 8, Threads: 2}})
	f("huge memory", Options{Path: "x", HashParams: HashParams{Memory: 1 << 30}})
	f("huge time", Options{Path: "x", HashParams: HashParams{Time: 1000}})
}

func TestOpenLocked(t *testing.T) {
	e := openEnv(t, nil)
	_, err := Open(context.Background(), e.opts)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: error = %v, want ErrLocked", err)
	}
}

func TestClosed(t *testing.T) {
	e := openEnv(t, nil)
	if err := e.s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	ctx := context.Background()
	if _, err := e.s.Authenticate(ctx, "0123456789abcdef0123456789abcdef"); !errors.Is(err, ErrClosed) {
		t.Errorf("Authenticate after Close: %v", err)
	}
	if _, _, err := e.s.Login(ctx, "a", "b"); !errors.Is(err, ErrClosed) {
		t.Errorf("Login after Close: %v", err)
	}
	if _, err := e.s.Users(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Users after Close: %v", err)
	}
	e.s = nil
}

func TestOpenForeignDatabase(t *testing.T) {
	e := openEnv(t, nil)
	e.s.Close()
	e.s = nil
	// Make the file look like some other SQLite database.
	db, err := openDB(context.Background(), e.path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"DROP TABLE tokens", "DROP TABLE sessions", "DROP TABLE auth_meta"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if _, err := Open(context.Background(), e.opts); err == nil {
		t.Fatal("Open of a foreign database succeeded")
	}
}
