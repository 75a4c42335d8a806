package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peregrine-mon/peregrine/internal/daylog"
	"github.com/peregrine-mon/peregrine/internal/pglog"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// Defaults applied by Open.
const (
	DefaultRetention      = 365 * 24 * time.Hour // Zabbix's hk_audit
	DefaultRetentionCheck = time.Hour
	DefaultMaxRecords     = 1_000_000
)

// ErrCorrupt marks a log record this package could not have written.
var ErrCorrupt = errors.New("audit log is corrupt")

// Options configures Open.
type Options struct {
	// Dir holds one directory per UTC day of writing
	// (docs/format/audit.md). Required unless Postgres is set.
	Dir string
	// Postgres, when set, keeps the records in PostgreSQL instead
	// (state.store: postgres; table audit_log, package pglog, the day as
	// each row's part), every write fenced by the HA lease. Its Table is
	// set here; Sync, SyncInterval and FS do not apply then.
	Postgres *pglog.Options
	// Sync and SyncInterval are the fsync policy (audit.fsync), as the
	// event store's: what a nil error from Append promises.
	Sync         wal.SyncMode
	SyncInterval time.Duration
	// Retention is how long records are kept; whole days older than it
	// are deleted. 0 means DefaultRetention; SetRetention changes it.
	Retention time.Duration
	// RetentionCheck is how often Run applies retention. Default 1 h.
	RetentionCheck time.Duration
	// MaxRecords bounds the records kept in memory for reading, the
	// oldest dropped first. Default 1,000,000.
	MaxRecords int
	// Now is the clock that picks the day directory and applies
	// retention; default time.Now.
	Now    func() time.Time
	FS     wal.FS // nil: the operating system's
	Logger *slog.Logger
}

// Log is the audit log. See the package documentation.
type Log struct {
	opts Options
	log  *slog.Logger

	// retention is the retention in nanoseconds (<= 0: keep all);
	// disabled is Zabbix's auditlog_enabled turned off.
	retention atomic.Int64
	disabled  atomic.Bool

	// wmu serialises the write side: enqueueing into the WAL and the
	// day rollover. Lock order: wmu, then mu.
	wmu    sync.Mutex
	b      daylog.Backend
	w      daylog.Writer
	day    string
	closed bool
	buf    []byte

	// mu guards recs, the records in memory in clock order (records of
	// one clock in the order they were appended).
	mu   sync.RWMutex
	recs []Record

	// follow is a follower's reader (OpenFollower; nil otherwise);
	// followSeq the last record read and followParts when the days were
	// last listed. wmu guards them.
	follow      *pglog.Log
	followSeq   int64
	followParts time.Time
}

// Open opens or creates the log in opts.Dir and replays it.
func Open(opts Options) (*Log, error) {
	if opts.Dir == "" && opts.Postgres == nil {
		return nil, errors.New("audit: Options.Dir is empty; set it to the audit log directory")
	}
	if opts.Retention == 0 {
		opts.Retention = DefaultRetention
	}
	if opts.RetentionCheck <= 0 {
		opts.RetentionCheck = DefaultRetentionCheck
	}
	if opts.MaxRecords <= 0 {
		opts.MaxRecords = DefaultMaxRecords
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.FS == nil {
		opts.FS = wal.OS()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	var b daylog.Backend
	var err error
	if opts.Postgres != nil {
		o := *opts.Postgres
		o.Table = "audit_log"
		b, err = daylog.Postgres("audit", o)
	} else {
		b, err = daylog.Files(daylog.FileOptions{Name: "audit", Dir: opts.Dir, Sync: opts.Sync, SyncInterval: opts.SyncInterval, FS: opts.FS, Logger: opts.Logger})
	}
	if err != nil {
		return nil, err
	}
	l := &Log{opts: opts, log: opts.Logger, b: b}
	l.retention.Store(int64(opts.Retention))
	days, err := b.Days()
	if err != nil {
		b.Close()
		return nil, err
	}
	today := dayOf(opts.Now())
	for i, d := range days {
		if d > today {
			today = d // a clock set back: keep writing to the newest day
		}
		keep := i == len(days)-1 && d == today
		if err := l.replayDay(d, keep); err != nil {
			l.closeWAL()
			b.Close()
			return nil, err
		}
	}
	if l.w == nil {
		if err := l.startDay(today); err != nil {
			b.Close()
			return nil, err
		}
	}
	l.trimLocked(0)
	return l, nil
}

// dayOf is the directory name of t's UTC day.
func dayOf(t time.Time) string { return t.UTC().Format("20060102") }

// dayEnd is the Unix time at which day ends.
func dayEnd(day string) int64 {
	t, _ := time.Parse("20060102", day)
	return t.Add(24 * time.Hour).Unix()
}

// replayDay reads one day directory into memory; keep leaves its WAL
// open for appending (the current day).
func (l *Log) replayDay(day string, keep bool) error {
	w, err := l.b.Replay(day, keep, func(rec []byte) error {
		var rs []Record
		if err := json.Unmarshal(rec, &rs); err != nil {
			return fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		l.insertLocked(rs)
		return nil
	})
	if err != nil || !keep {
		return err
	}
	l.w, l.day = w, day
	return nil
}

// startDay creates a day directory and makes it the one written. wmu is
// held (or the log is being opened).
func (l *Log) startDay(day string) error {
	w, err := l.b.Create(day)
	if err != nil {
		return err
	}
	l.w, l.day = w, day
	return nil
}

func (l *Log) closeWAL() {
	if l.w != nil {
		l.w.Close()
		l.w = nil
	}
}

// Enabled reports whether changes are recorded (Zabbix's setting
// auditlog_enabled; on by default).
func (l *Log) Enabled() bool { return !l.disabled.Load() }

// SetEnabled turns recording on or off.
func (l *Log) SetEnabled(on bool) { l.disabled.Store(!on) }

// SetRetention sets how long records are kept (Zabbix's hk_audit);
// d <= 0 keeps them all. It applies at the next retention run.
func (l *Log) SetRetention(d time.Duration) { l.retention.Store(int64(d)) }

// Retention is the retention in effect (<= 0: everything is kept).
func (l *Log) Retention() time.Duration { return time.Duration(l.retention.Load()) }

// Append writes records and returns once they are durable under the
// fsync policy; only then are they visible to Walk. After a write or
// fsync failure every Append fails until the log can write again (the
// WAL retries every second; a failure it cannot undo needs a restart).
func (l *Log) Append(recs []Record) error {
	if len(recs) == 0 {
		return nil
	}
	if l.follow != nil {
		return ErrReadOnly
	}
	l.wmu.Lock()
	if l.closed {
		l.wmu.Unlock()
		return wal.ErrClosed
	}
	if day := dayOf(l.opts.Now()); day > l.day {
		if err := l.rollover(day); err != nil {
			l.wmu.Unlock()
			return err
		}
	}
	var err error
	l.buf, err = appendJSON(l.buf[:0], recs)
	if err != nil {
		l.wmu.Unlock()
		return fmt.Errorf("BUG: audit: cannot encode records: %w", err)
	}
	p := l.w.AppendAsync(l.buf) // copies the record
	l.wmu.Unlock()
	if err := p.Wait(); err != nil {
		return fmt.Errorf("audit: the records were not stored: %w", err)
	}
	l.mu.Lock()
	l.insertLocked(recs)
	l.trimLocked(0)
	l.mu.Unlock()
	return nil
}

func appendJSON(dst []byte, recs []Record) ([]byte, error) {
	b, err := json.Marshal(recs)
	return append(dst, b...), err
}

// rollover closes the current day and starts day. wmu is held.
func (l *Log) rollover(day string) error {
	old := l.w
	l.w = nil
	// nil after a rollover that failed (a full disk): the next Append
	// tries to start the day again.
	if old != nil {
		if err := old.Close(); err != nil {
			return fmt.Errorf("audit: cannot close day %s: %w", l.day, err)
		}
	}
	return l.startDay(day)
}

// insertLocked adds records in clock order; mu is held (or the log is
// being opened). Records come almost always in order: the search is
// for the rare one that waited for its turn behind a later clock.
func (l *Log) insertLocked(rs []Record) {
	for _, r := range rs {
		n := len(l.recs)
		if n == 0 || l.recs[n-1].Clock <= r.Clock {
			l.recs = append(l.recs, r)
			continue
		}
		i := sort.Search(n, func(i int) bool { return l.recs[i].Clock > r.Clock })
		l.recs = slices.Insert(l.recs, i, r)
	}
}

// trimLocked drops from memory the records older than cutoff (0: none)
// and the oldest past Options.MaxRecords. mu is held.
func (l *Log) trimLocked(cutoff int64) {
	drop := sort.Search(len(l.recs), func(i int) bool { return l.recs[i].Clock >= cutoff })
	drop = max(drop, len(l.recs)-l.opts.MaxRecords)
	if drop <= 0 {
		return
	}
	clear(l.recs[:drop])
	l.recs = l.recs[drop:]
	if cap(l.recs) > 2*len(l.recs)+1024 {
		l.recs = slices.Clone(l.recs) // give back the dropped head's memory
	}
}

// Walk calls fn with the records in clock order (newest first with
// desc) until fn returns false. fn must not keep the record nor call
// Append.
func (l *Log) Walk(desc bool, fn func(r *Record) bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if desc {
		for i := len(l.recs) - 1; i >= 0; i-- {
			if !fn(&l.recs[i]) {
				return
			}
		}
		return
	}
	for i := range l.recs {
		if !fn(&l.recs[i]) {
			return
		}
	}
}

// Len is the number of records in memory.
func (l *Log) Len() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.recs)
}

// Run applies retention at start and every Options.RetentionCheck until
// ctx ends.
func (l *Log) Run(ctx context.Context) {
	t := time.NewTicker(l.opts.RetentionCheck)
	defer t.Stop()
	for {
		if _, err := l.ApplyRetention(); err != nil {
			l.log.Error("audit log: cannot apply retention", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ApplyRetention drops the records older than the retention from
// memory and deletes the day directories (never the current one) whose
// day ended before the retention, or whose records have all left memory
// (Options.MaxRecords). It returns the number of days deleted.
func (l *Log) ApplyRetention() (int, error) {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if l.closed {
		return 0, wal.ErrClosed
	}
	now := l.opts.Now().Unix()
	var cutoff int64
	if r := l.Retention(); r > 0 {
		cutoff = now - int64(r/time.Second)
	}
	l.mu.Lock()
	l.trimLocked(cutoff)
	oldest := now
	if len(l.recs) > 0 {
		oldest = l.recs[0].Clock
	}
	l.mu.Unlock()
	days, err := l.b.Days()
	if err != nil {
		return 0, err
	}
	dropped := 0
	for _, d := range days {
		if d >= l.day {
			break
		}
		if end := dayEnd(d); end > oldest && (cutoff == 0 || end > cutoff) {
			break // some of its records are still kept
		}
		if err := l.b.Drop(d); err != nil {
			return dropped, err
		}
		dropped++
		l.log.Info("audit log dropped a day", "day", d, "retention", l.Retention())
	}
	if dropped > 0 {
		if err := l.b.Dropped(); err != nil {
			return dropped, err
		}
	}
	return dropped, nil
}

// Close stops appends and closes the current day's WAL.
func (l *Log) Close() error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	var err error
	if l.w != nil {
		err = l.w.Close()
		l.w = nil
	}
	return errors.Join(err, l.b.Close())
}
