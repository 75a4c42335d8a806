package service

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/sqlitedb"
)

// OpenFollower opens the services for reading only, as an HA standby
// node does (issue 31): Options.Postgres must be ReadOnly (the active
// node made the schema; nothing is written at open or later) and
// Options.Events the standby's follower of the active node's events.
//
// A follower computes no status of its own: the statuses are those the
// active node's engine stored, status changes (the SLA report) are read
// from the same table, and the problems behind a status
// (ProblemEvents) are the followed open problems matched to the
// services. Follow reads the configuration and statuses again; Edit
// fails with sqlitedb.ErrReadOnly, and Notify and Run are not used.
//
// Why not recalculate on the standby: the recalculation at Open and
// after an overflow stores the changes it finds, which only the active
// node may write; reading the stored statuses gives the standby the
// active node's answer exactly, one poll late at most.
func OpenFollower(ctx context.Context, opts Options) (*Engine, error) {
	if opts.Postgres == nil || !opts.Postgres.ReadOnly || opts.Events == nil {
		return nil, errors.New("service: OpenFollower needs a read-only Options.Postgres and Options.Events")
	}
	if opts.Path == "" {
		opts.Path = "PostgreSQL"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Metrics == nil {
		opts.Metrics = selfmon.NewRegistry()
	}
	d, err := openDB(ctx, opts.Path, opts.Postgres)
	if err != nil {
		return nil, err
	}
	e := &Engine{opts: opts, db: d, signal: make(chan struct{}, 1), follower: true,
		alarms: &selfmon.Counter{}, writeErr: &selfmon.Counter{}, resyncs: &selfmon.Counter{}}
	if err := e.Follow(ctx); err != nil {
		d.close()
		return nil, err
	}
	return e, nil
}

// Follow reads the configuration and the statuses the active node
// stored, and matches the followed open problems to the services again.
// Only a follower follows.
func (e *Engine) Follow(ctx context.Context) error {
	if !e.follower {
		return errors.New("service: Follow needs an engine opened with OpenFollower")
	}
	cfg, status, err := e.db.load(ctx)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cfg.Store(cfg)
	e.st.status = status
	e.st.problems = map[uint64]*problem{}
	for _, ev := range e.opts.Events.OpenProblems() {
		if isTriggerProblem(&ev) {
			e.st.problems[ev.ID] = newProblem(&ev)
		}
	}
	e.rematchLocked(cfg)
	return nil
}

// errFollower is what a follower's writes return.
var errFollower = sqlitedb.ErrReadOnly
