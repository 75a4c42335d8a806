// Package daylog is where a store that keeps its records by UTC day
// (the event store, the audit log) puts them: a directory of WALs, one
// per day (the embedded default), or the days as parts of a pglog
// table in PostgreSQL (state.store: postgres), every write fenced by
// the HA lease. The stores keep their logic and record encoding; this
// package only places the records.
//
// It owns the day directories under FileOptions.Dir (each a WAL,
// internal/wal), or nothing of its own in PostgreSQL (package pglog owns
// the table). A Backend and its Writers are used under the store's own
// write lock: one writer per day, days created, replayed and dropped by
// one goroutine at a time. A Writer's AppendAsync and Wait may be
// called from any goroutine.
package daylog

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/peregrine-mon/peregrine/internal/pglog"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// Backend holds a store's days ("20060102").
type Backend interface {
	// Days lists the days held, oldest first.
	Days() ([]string, error)
	// Replay calls fn with each record of day in order; keep leaves
	// the day open for appending and returns its writer.
	Replay(day string, keep bool, fn func(rec []byte) error) (Writer, error)
	// Create starts an empty day and returns its writer.
	Create(day string) (Writer, error)
	// Drop deletes a day whole; Dropped ends a run of drops.
	Drop(day string) error
	Dropped() error
	// Close releases the backend after the last writer closed.
	Close() error
}

// Writer appends to one day. AppendAsync copies rec and returns at
// once; records are stored in the order appended, and Wait returns nil
// only once the record is durable (acknowledged).
type Writer interface {
	AppendAsync(rec []byte) Waiter
	Append(rec []byte) error
	// Close stores what is queued and ends the writer.
	Close() error
}

// Waiter is one append's acknowledgement.
type Waiter interface{ Wait() error }

// FileOptions configures Files.
type FileOptions struct {
	// Name prefixes errors ("event", "audit").
	Name string
	Dir  string
	// Sync and SyncInterval are the WALs' fsync policy.
	Sync         wal.SyncMode
	SyncInterval time.Duration
	FS           wal.FS // nil: the operating system's
	Logger       *slog.Logger
}

// Files is the embedded backend: a directory per day under o.Dir, each
// a WAL. It creates o.Dir.
func Files(o FileOptions) (Backend, error) {
	if o.FS == nil {
		o.FS = wal.OS()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if err := o.FS.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("%s: cannot create %s: %w", o.Name, o.Dir, err)
	}
	return &files{o}, nil
}

type files struct{ o FileOptions }

type fileDay struct{ *wal.WAL }

func (d fileDay) AppendAsync(rec []byte) Waiter { return d.WAL.AppendAsync(rec) }

func (f *files) dayDir(day string) string { return filepath.Join(f.o.Dir, day) }

func (f *files) openWAL(day string) (*wal.WAL, error) {
	return wal.Open(wal.Options{Dir: f.dayDir(day), Sync: f.o.Sync, SyncInterval: f.o.SyncInterval, FS: f.o.FS, Logger: f.o.Logger})
}

func (f *files) Days() ([]string, error) {
	names, err := f.o.FS.ReadDir(f.o.Dir)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot list %s: %w", f.o.Name, f.o.Dir, err)
	}
	var days []string
	for _, n := range names {
		if _, err := time.Parse("20060102", n); err == nil && len(n) == 8 {
			days = append(days, n)
		}
	}
	slices.Sort(days)
	return days, nil
}

func (f *files) Replay(day string, keep bool, fn func([]byte) error) (Writer, error) {
	w, err := f.openWAL(day)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot open day %s: %w", f.o.Name, day, err)
	}
	if err := w.Replay(fn); err != nil {
		w.Close()
		return nil, fmt.Errorf("%s: cannot replay day %s: %w", f.o.Name, day, err)
	}
	if !keep {
		return nil, w.Close()
	}
	return fileDay{w}, nil
}

func (f *files) Create(day string) (Writer, error) {
	w, err := f.openWAL(day)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot create day %s: %w", f.o.Name, day, err)
	}
	if err := w.Replay(func([]byte) error { return nil }); err != nil {
		w.Close()
		return nil, fmt.Errorf("%s: cannot start day %s: %w", f.o.Name, day, err)
	}
	if err := f.o.FS.SyncDir(f.o.Dir); err != nil {
		w.Close()
		return nil, fmt.Errorf("%s: cannot sync %s: %w", f.o.Name, f.o.Dir, err)
	}
	return fileDay{w}, nil
}

func (f *files) Drop(day string) error {
	if err := os.RemoveAll(f.dayDir(day)); err != nil {
		return fmt.Errorf("%s: cannot delete day %s: %w", f.o.Name, day, err)
	}
	return nil
}

func (f *files) Dropped() error {
	if err := f.o.FS.SyncDir(f.o.Dir); err != nil {
		return fmt.Errorf("%s: cannot sync %s: %w", f.o.Name, f.o.Dir, err)
	}
	return nil
}

func (f *files) Close() error { return nil }

// Postgres is the PostgreSQL backend: table o.Table (package pglog),
// the day as each row's part; Drop deletes a day's rows. Every write
// runs in o.Write, (*ha.Lease).Write. name prefixes errors.
func Postgres(name string, o pglog.Options) (Backend, error) {
	if o.Pool == nil || o.Write == nil {
		return nil, fmt.Errorf("%s: the PostgreSQL options need Pool and Write (the HA lease's)", name)
	}
	l, err := pglog.Open(o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &pgDays{name: name, l: l}, nil
}

type pgDays struct {
	name string
	l    *pglog.Log
}

func (b *pgDays) Days() ([]string, error) { return b.l.Parts() }

func (b *pgDays) Replay(day string, keep bool, fn func([]byte) error) (Writer, error) {
	if err := b.l.Replay(day, fn); err != nil {
		return nil, fmt.Errorf("%s: cannot replay day %s: %w", b.name, day, err)
	}
	if !keep {
		return nil, nil
	}
	return &pgDay{l: b.l, day: day}, nil
}

// Create returns a writer: the day exists once its first record is
// stored.
func (b *pgDays) Create(day string) (Writer, error) { return &pgDay{l: b.l, day: day}, nil }

func (b *pgDays) Drop(day string) error { return b.l.DeletePart(day) }
func (b *pgDays) Dropped() error        { return nil }
func (b *pgDays) Close() error          { return b.l.Close() }

// pgDay is the writer of one day.
type pgDay struct {
	l   *pglog.Log
	day string

	mu   sync.Mutex
	last *pglog.Pending
}

func (d *pgDay) AppendAsync(rec []byte) Waiter {
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.l.AppendAsync(d.day, rec)
	d.last = p
	return p
}

func (d *pgDay) Append(rec []byte) error { return d.AppendAsync(rec).Wait() }

// Close waits until the day's queued records are written; their errors
// went to their own waiters.
func (d *pgDay) Close() error {
	d.mu.Lock()
	p := d.last
	d.mu.Unlock()
	if p != nil {
		p.Wait()
	}
	return nil
}
