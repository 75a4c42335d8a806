package event

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/peregrine-mon/peregrine/internal/wal"
)

// backend is where the store keeps its records: one ordered sequence
// of records per UTC day ("20060102"), whole days deleted by
// retention. The embedded one is a directory of WALs (fileLog); the
// PostgreSQL one a table whose every write is fenced by the HA lease
// (pgLog, postgres.go). The Store's logic (IDs, carry records,
// replay into memory) is the same over both.
type backend interface {
	// days lists the days held, oldest first.
	days() ([]string, error)
	// replay calls fn with each record of day in order; keep leaves the
	// day open for appending and returns its writer.
	replay(day string, keep bool, fn func(rec []byte) error) (dayWriter, error)
	// create starts an empty day and returns its writer.
	create(day string) (dayWriter, error)
	// drop deletes a day whole; dropped ends a run of drops.
	drop(day string) error
	dropped() error
	// close releases the backend after the last day writer closed.
	close() error
}

// dayWriter appends to one day. AppendAsync copies rec and returns at
// once; records are stored in the order they were appended, and Wait
// returns nil only once a record is durable (acknowledged).
type dayWriter interface {
	AppendAsync(rec []byte) waiter
	Append(rec []byte) error
	// Close stores what is queued and ends the day's writer.
	Close() error
}

type waiter interface{ Wait() error }

// fileLog is the embedded backend: Options.Dir holds a directory per
// day, each a WAL (docs/format/events.md).
type fileLog struct {
	opts Options
	log  *slog.Logger
}

// fileDay adapts a WAL to dayWriter.
type fileDay struct{ *wal.WAL }

func (d fileDay) AppendAsync(rec []byte) waiter { return d.WAL.AppendAsync(rec) }

func (f *fileLog) dayDir(day string) string { return filepath.Join(f.opts.Dir, day) }

func (f *fileLog) openWAL(day string) (*wal.WAL, error) {
	return wal.Open(wal.Options{Dir: f.dayDir(day), Sync: f.opts.Sync, SyncInterval: f.opts.SyncInterval, FS: f.opts.FS, Logger: f.log})
}

func (f *fileLog) days() ([]string, error) {
	names, err := f.opts.FS.ReadDir(f.opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("event: cannot list %s: %w", f.opts.Dir, err)
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

func (f *fileLog) replay(day string, keep bool, fn func([]byte) error) (dayWriter, error) {
	w, err := f.openWAL(day)
	if err != nil {
		return nil, fmt.Errorf("event: cannot open day %s: %w", day, err)
	}
	if err := w.Replay(fn); err != nil {
		w.Close()
		return nil, fmt.Errorf("event: cannot replay day %s: %w", day, err)
	}
	if !keep {
		return nil, w.Close()
	}
	return fileDay{w}, nil
}

func (f *fileLog) create(day string) (dayWriter, error) {
	w, err := f.openWAL(day)
	if err != nil {
		return nil, fmt.Errorf("event: cannot create day %s: %w", day, err)
	}
	if err := w.Replay(func([]byte) error { return nil }); err != nil {
		w.Close()
		return nil, fmt.Errorf("event: cannot start day %s: %w", day, err)
	}
	if err := f.opts.FS.SyncDir(f.opts.Dir); err != nil {
		w.Close()
		return nil, fmt.Errorf("event: cannot sync %s: %w", f.opts.Dir, err)
	}
	return fileDay{w}, nil
}

func (f *fileLog) drop(day string) error {
	if err := os.RemoveAll(f.dayDir(day)); err != nil {
		return fmt.Errorf("event: cannot delete day %s: %w", day, err)
	}
	return nil
}

func (f *fileLog) dropped() error {
	if err := f.opts.FS.SyncDir(f.opts.Dir); err != nil {
		return fmt.Errorf("event: cannot sync %s: %w", f.opts.Dir, err)
	}
	return nil
}

func (f *fileLog) close() error { return nil }
