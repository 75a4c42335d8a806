package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/peregrine-mon/peregrine/internal/pglog"
)

// ErrReadOnly is Append's error on a follower: an HA standby reads the
// records the active node writes and writes none.
var ErrReadOnly = errors.New("audit: this audit log is open for reading only (an HA standby node): records are written by the active node")

// OpenFollower opens the audit log in PostgreSQL for reading only, as an
// HA standby node does (issue 31): table audit_log, which the active
// node made (Options.Postgres needs Pool only; nothing is created or
// written), read in the order the records were committed; Follow
// applies what the active node committed since. Walk reads as on the
// active node; Append fails with ErrReadOnly. The records kept in
// memory are bounded by MaxRecords and Retention as the active node's,
// and the days its retention deleted are forgotten (Follow).
func OpenFollower(ctx context.Context, opts Options) (*Log, error) {
	if opts.Postgres == nil {
		return nil, errors.New("audit: OpenFollower needs Options.Postgres")
	}
	if opts.Retention == 0 {
		opts.Retention = DefaultRetention
	}
	if opts.MaxRecords <= 0 {
		opts.MaxRecords = DefaultMaxRecords
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	o := *opts.Postgres
	o.Table = "audit_log"
	r, err := pglog.OpenReader(o)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	l := &Log{opts: opts, log: opts.Logger, follow: r, closed: true}
	l.retention.Store(int64(opts.Retention))
	if _, err := l.Follow(ctx); err != nil {
		return nil, err
	}
	return l, nil
}

// Follow applies the records committed since the last call (or since
// OpenFollower), drops from memory those past the retention, and, once
// a minute, those of the days the active node's retention deleted. It
// reports how many records it applied. Only a follower follows.
func (l *Log) Follow(ctx context.Context) (int, error) {
	if l.follow == nil {
		return 0, errors.New("audit: Follow needs a log opened with OpenFollower")
	}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	n := 0
	seq, err := l.follow.Since(ctx, l.followSeq, func(_ string, rec []byte) error {
		var rs []Record
		if err := json.Unmarshal(rec, &rs); err != nil {
			return fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		l.mu.Lock()
		l.insertLocked(rs)
		l.mu.Unlock()
		n++
		return nil
	})
	l.followSeq = seq
	var cutoff int64
	if r := l.Retention(); r > 0 {
		cutoff = l.opts.Now().Unix() - int64(r/time.Second)
	}
	if err == nil && time.Since(l.followParts) >= time.Minute {
		var parts []string
		if parts, err = l.follow.PartsContext(ctx); err == nil {
			l.followParts = time.Now()
			if len(parts) > 0 {
				cutoff = max(cutoff, dayEnd(parts[0])-24*60*60) // the oldest day stored starts there
			}
		}
	}
	l.mu.Lock()
	l.trimLocked(cutoff)
	l.mu.Unlock()
	if err != nil {
		return n, fmt.Errorf("audit: cannot follow the active node's audit log: %w", err)
	}
	return n, nil
}
