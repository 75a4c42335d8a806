package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peregrine-mon/peregrine/internal/sqlitedb"
)

// ErrClosed is returned by Apply after Close.
var ErrClosed = errors.New("catalog is closed")

// ErrCorrupt marks errors caused by database content that Peregrine could
// not have written (an unknown value type, an item of a missing host).
// Check with errors.Is.
var ErrCorrupt = errors.New("catalog database is corrupt")

// Options configures Open.
type Options struct {
	// Path is the SQLite database file. Required. It is created with the
	// schema if it does not exist; its directory must exist. SQLite keeps
	// two companion files beside it, Path-wal and Path-shm.
	Path string
	// Postgres, when set, keeps the catalog in PostgreSQL instead
	// (state.store: postgres; sqlitedb.OpenPG): schema
	// peregrine_catalog, every write transaction fenced by the HA lease
	// (a node that lost its lease commits nothing and its snapshot
	// stays as it was). Path then only names the catalog in messages.
	// One Catalog writes at a time: open it on the active node only;
	// a standby opens it when it becomes active, reading what the
	// previous active node committed.
	Postgres *sqlitedb.PG
	// Logger receives load and apply summaries. Default: discard.
	Logger *slog.Logger
	// CheckPreprocessing, when set, validates an item's preprocessing
	// steps whenever Apply or Edit creates or changes the item; it may
	// return a *StepCheckError to name the offending step. nil accepts
	// any steps (the catalog checks only their names and count). It is a
	// hook rather than a call because package preprocess, which knows
	// what the steps mean, imports this package; the server sets it.
	CheckPreprocessing func(steps []PreprocStep) error
	// CheckFormula, when set, validates a calculated item's formula the
	// same way; nil accepts any formula that is not empty.
	CheckFormula func(formula string) error
	// ExprRefs parses trigger expressions for validation and returns the
	// items they reference. Without it, trigger changes are refused
	// (ErrNoExprParser); stored triggers still load.
	ExprRefs RefsFunc
}

// withDefaults returns o with defaults filled in, or an error naming the
// field that cannot be defaulted.
func (o Options) withDefaults() (Options, error) {
	if o.Path == "" && o.Postgres != nil {
		o.Path = "PostgreSQL"
	}
	if o.Path == "" {
		return o, errors.New("catalog: Options.Path must name the database file")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}

// Catalog is the persistent configuration store. Readers call Snapshot;
// writers call Apply. See the package documentation for the concurrency
// contract.
type Catalog struct {
	log  *slog.Logger
	path string
	refs RefsFunc
	snap atomic.Pointer[Snapshot]
	ck   checks // Options' validation hooks
	// pool is the writers' shared strings (intern.go), guarded by mu.
	pool strPool

	// mu serialises writers (Apply, Close) and guards db, closed and
	// broken. Readers never take it.
	mu     sync.Mutex
	db     *sql.DB
	begin  sqlitedb.Begin // a write transaction: fenced first on PostgreSQL
	lock   *os.File       // holds the flock that makes this process the owner (SQLite)
	closed bool
	// broken is set if an Apply wrote changes that no snapshot could be
	// built for; the snapshot then no longer matches the database and
	// further Applies, which diff against it, are refused.
	broken error

	// subMu guards subs; it is separate from mu so that Subscribe does
	// not wait for a long Apply.
	subMu     sync.Mutex
	subs      []chan struct{}
	alertSubs []chan struct{}

	// alerts is the notification configuration (alert.go): media types,
	// actions, user media. Written under mu, read without a lock.
	alerts atomic.Pointer[AlertConfig]
	// autoreg is the autoregistration settings (autoreg.go).
	autoreg atomic.Pointer[AutoregSettings]
	// drules and dstate are the discovery rules and what they found
	// (drule.go); dmu and dnext hand out discovered hosts' and
	// services' IDs.
	drules atomic.Pointer[[]DRule]
	dstate atomic.Pointer[DiscoveryState]
	dmu    sync.Mutex
	dnext  [2]uint64
}

// Open opens or creates the catalog database at opts.Path and loads the
// snapshot. Only one Catalog (in one process) may use a database file at a
// time: Apply diffs against the in-memory snapshot, so changes made behind
// its back would be missed.
func Open(ctx context.Context, opts Options) (*Catalog, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	lock, db, begin, err := openStore(ctx, opts)
	if err != nil {
		return nil, err
	}
	snap, err := loadSnapshot(ctx, db)
	if err != nil {
		db.Close()
		lock.Close()
		return nil, fmt.Errorf("catalog: cannot load %s: %w", opts.Path, err)
	}
	c := &Catalog{log: opts.Logger, path: opts.Path, db: db, begin: begin, lock: lock, refs: opts.ExprRefs,
		ck: checks{steps: opts.CheckPreprocessing, formula: opts.CheckFormula}}
	c.snap.Store(snap)
	ac, err := loadAlerts(ctx, db)
	if err != nil {
		db.Close()
		lock.Close()
		return nil, fmt.Errorf("catalog: cannot load %s: %w", opts.Path, err)
	}
	c.alerts.Store(ac)
	ar, err := loadAutoreg(ctx, db)
	if err != nil {
		db.Close()
		lock.Close()
		return nil, fmt.Errorf("catalog: cannot load %s: %w", opts.Path, err)
	}
	c.autoreg.Store(ar)
	drs, dst, err := loadDRules(ctx, db)
	if err != nil {
		db.Close()
		lock.Close()
		return nil, fmt.Errorf("catalog: cannot load %s: %w", opts.Path, err)
	}
	c.drules.Store(&drs)
	c.dstate.Store(dst)
	c.log.Info("catalog loaded", "path", opts.Path, "revision", snap.Version(),
		"groups", len(snap.groups), "hosts", len(snap.hosts), "items", snap.ItemCount(), "triggers", len(snap.triggers),
		"duration", time.Since(start))
	return c, nil
}

// Reload reads the catalog again if another writer changed its revision
// since this Catalog loaded it: an HA standby's catalog
// (sqlitedb.PG.ReadOnly) follows the active node's edits this way. It
// reports whether a new snapshot was published. The notification
// configuration, auto-registration settings and discovery rules are
// read again with it.
func (c *Catalog) Reload(ctx context.Context) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false, ErrClosed
	}
	var rev uint64
	if err := c.db.QueryRowContext(ctx, "SELECT revision FROM catalog_meta WHERE id = 1").Scan(&rev); err != nil {
		return false, fmt.Errorf("catalog: cannot read the revision: %w", err)
	}
	if rev == c.snap.Load().Version() {
		return false, nil
	}
	snap, err := loadSnapshot(ctx, c.db)
	if err != nil {
		return false, fmt.Errorf("catalog: cannot reload %s: %w", c.path, err)
	}
	ac, err := loadAlerts(ctx, c.db)
	if err != nil {
		return false, fmt.Errorf("catalog: cannot reload %s: %w", c.path, err)
	}
	ar, err := loadAutoreg(ctx, c.db)
	if err != nil {
		return false, fmt.Errorf("catalog: cannot reload %s: %w", c.path, err)
	}
	drs, dst, err := loadDRules(ctx, c.db)
	if err != nil {
		return false, fmt.Errorf("catalog: cannot reload %s: %w", c.path, err)
	}
	c.alerts.Store(ac)
	c.autoreg.Store(ar)
	c.drules.Store(&drs)
	c.dstate.Store(dst)
	c.publish(snap)
	return true, nil
}

// Snapshot returns the current snapshot. It never returns nil, never
// blocks and does not allocate; an empty catalog has an empty snapshot.
// Callers on hot paths should call it once per batch and keep the result
// for the batch.
func (c *Catalog) Snapshot() *Snapshot { return c.snap.Load() }

// Subscribe returns a channel with a buffer of one that receives a signal
// after every snapshot swap. Sends do not block: a subscriber that has not
// yet drained the previous signal misses nothing but the duplicate, and
// should call Snapshot after each receive. The channel is never closed.
func (c *Catalog) Subscribe() <-chan struct{} {
	ch := make(chan struct{}, 1)
	c.subMu.Lock()
	c.subs = append(c.subs, ch)
	c.subMu.Unlock()
	return ch
}

// publish swaps in s and signals the subscribers. c.mu must be held.
func (c *Catalog) publish(s *Snapshot) {
	c.snap.Store(s)
	c.subMu.Lock()
	for _, ch := range c.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	c.subMu.Unlock()
}

// Close closes the database. Snapshot keeps returning the last snapshot;
// Apply returns ErrClosed. Close waits for a running Apply to finish.
func (c *Catalog) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	err := c.db.Close()
	c.lock.Close() // releases the flock, after the database is closed
	if err != nil {
		return fmt.Errorf("catalog: cannot close %s: %w", c.path, err)
	}
	return nil
}
