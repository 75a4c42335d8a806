package alert

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/peregrine-mon/peregrine/internal/pglog"
)

// Follower is the alert log read as an HA standby node reads it (issue
// 31): the active node's table alert_log in PostgreSQL, opened without
// writing, and Follow applying what the active node committed since.
// It sends nothing and makes nothing; it serves alert.get.
//
// The log is a sequence of upserts, and a checkpoint writes every live
// object again before deleting the records before it: a follower that
// finds records it had not read deleted (pglog.Log.Follow) reads the
// log again from its start into a fresh state, which is then the
// active node's. The alerts kept are bounded as the active node's are
// (keep, alerts.keep_alerts).
type Follower struct {
	l    *pglog.Log
	log  *slog.Logger
	keep int

	mu  sync.Mutex // serialises Follow
	seq int64
	// stale: a read of the whole log failed half way; the next Follow
	// reads it all again into a fresh state.
	stale bool
	st    *logStore // replaced whole by a re-read; guarded by mu, its own mu for reads
	// cur is what Alerts reads.
	cur sync.Mutex
}

// defaultKeepAlerts is Options.KeepAlerts's default.
const defaultKeepAlerts = 100_000

// OpenFollower opens the alert log in PostgreSQL for reading (o needs
// Pool only) and reads it. keep is the active node's KeepAlerts
// (default as New's).
func OpenFollower(ctx context.Context, o pglog.Options, keep int, log *slog.Logger) (*Follower, error) {
	if keep <= 0 {
		keep = defaultKeepAlerts
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	o.Table = "alert_log"
	l, err := pglog.OpenReader(o)
	if err != nil {
		return nil, fmt.Errorf("alert: %w", err)
	}
	f := &Follower{l: l, log: log, keep: keep, st: newFollowState(keep, log)}
	if _, err := f.Follow(ctx); err != nil {
		return nil, err
	}
	return f, nil
}

func newFollowState(keep int, log *slog.Logger) *logStore {
	return &logStore{log: log, keep: keep, alerts: map[uint64]*Alert{}, escs: map[uint64]*Escalation{},
		started: map[uint64]struct{}{}, nextAlert: 1, nextEsc: 1}
}

// Follow applies the records the active node committed since the last
// call and reports how many it applied.
func (f *Follower) Follow(ctx context.Context) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, lost, err := 0, f.stale, error(nil)
	if !lost {
		n, lost, err = f.follow(ctx, f.st)
	}
	if err == nil && lost {
		// A checkpoint deleted records not read yet (or such a read
		// failed half way): read it all again.
		st := newFollowState(f.keep, f.log)
		f.seq = 0
		if n, _, err = f.follow(ctx, st); err == nil {
			f.cur.Lock()
			f.st = st
			f.cur.Unlock()
		}
		f.stale = err != nil
	}
	if err != nil {
		return n, fmt.Errorf("alert: cannot follow the active node's alert log: %w", err)
	}
	return n, nil
}

// follow reads the records after f.seq into st.
func (f *Follower) follow(ctx context.Context, st *logStore) (int, bool, error) {
	n := 0
	added := false
	seq, lost, err := f.l.Follow(ctx, f.seq, func(_ string, rec []byte) error {
		var r record
		if err := json.Unmarshal(rec, &r); err != nil {
			return fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		st.mu.Lock()
		before := len(st.order)
		st.apply(&r)
		added = added || len(st.order) != before
		st.mu.Unlock()
		n++
		return nil
	})
	if lost {
		return 0, true, nil
	}
	f.seq = seq
	st.mu.Lock()
	if added && !slices.IsSorted(st.order) {
		slices.Sort(st.order)
		st.order = slices.Compact(st.order)
	}
	st.trim()
	st.mu.Unlock()
	return n, false, err
}

// Alerts returns copies of the alerts keep accepts, ascending by ID, as
// the active node's Engine.Alerts does.
func (f *Follower) Alerts(keep func(*Alert) bool) []Alert {
	f.cur.Lock()
	st := f.st
	f.cur.Unlock()
	return st.Alerts(keep)
}

// ErrFollower is what a follower answers to anything that would write.
var ErrFollower = errors.New("alert: this alert log is open for reading only (an HA standby node): alerts are sent by the active node")

// Close releases the follower (the reader holds no connection of its
// own).
func (f *Follower) Close() error { return nil }
