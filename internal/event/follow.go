package event

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/peregrine-mon/peregrine/internal/pglog"
)

// ErrReadOnly is Commit's error on a follower: an HA standby reads the
// events the active node commits and makes none.
var ErrReadOnly = errors.New("event: this event store is open for reading only (an HA standby node): events are made by the active node")

// OpenFollower opens the event store in PostgreSQL for reading only, as
// an HA standby node does (issue 31): it reads table event_log, which
// the active node made (nothing is created or written; Options.Postgres
// needs Pool only), in the order the records were committed, and
// Follow applies what the active node committed since. Reads are those
// of a store opened with Open; Commit fails with ErrReadOnly, and
// retention is the active node's: Follow forgets the days it deleted.
func OpenFollower(ctx context.Context, opts Options) (*Store, error) {
	if opts.Postgres == nil {
		return nil, errors.New("event: OpenFollower needs Options.Postgres")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	o := *opts.Postgres
	o.Table = "event_log"
	l, err := pglog.OpenReader(o)
	if err != nil {
		return nil, fmt.Errorf("event: %w", err)
	}
	s := &Store{
		opts: opts, log: opts.Logger, nextEvent: 1, nextAck: 1, follow: l,
		events: map[uint64]*Event{}, open: map[uint64]*Event{}, byTrig: map[uint64][]uint64{},
		acks: map[uint64][]Ack{}, rts: map[uint64]Runtime{}, dayIDs: map[string][]uint64{}, last: map[uint64]uint64{},
	}
	s.cond = sync.NewCond(&s.mu)
	start := time.Now()
	if _, err := s.Follow(ctx); err != nil {
		return nil, err
	}
	s.log.Info("event store following the active node's log", "events", len(s.events), "open_problems", len(s.open), "duration", time.Since(start))
	return s, nil
}

// Follow applies the records committed since the last call (or since
// OpenFollower) and forgets the days the active node's retention
// deleted; it reports how many records it applied. Only a follower
// follows.
func (s *Store) Follow(ctx context.Context) (int, error) {
	if s.follow == nil {
		return 0, errors.New("event: Follow needs a store opened with OpenFollower")
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return 0, pglog.ErrClosed
	}
	n := 0
	seq, err := s.follow.Since(ctx, s.followSeq, func(part string, rec []byte) error {
		h, b, err := decode(rec)
		if err != nil {
			return err
		}
		s.mu.Lock()
		s.nextEvent, s.nextAck = max(s.nextEvent, h.nextEvent), max(s.nextAck, h.nextAck)
		s.curDay = part
		if part > s.day {
			s.day = part
		}
		s.applyLocked(&b)
		s.mu.Unlock()
		n++
		return nil
	})
	s.followSeq = seq
	if err != nil {
		return n, fmt.Errorf("event: cannot follow the active node's events: %w", err)
	}
	if len(s.dayIDs) <= 1 || time.Since(s.followParts) < time.Minute {
		return n, nil // listing the days reads the table's index: once a minute
	}
	s.followParts = time.Now()
	parts, err := s.follow.PartsContext(ctx)
	if err != nil {
		return n, err
	}
	kept := make(map[string]bool, len(parts))
	for _, p := range parts {
		kept[p] = true
	}
	s.mu.Lock()
	for d := range s.dayIDs {
		if !kept[d] && d < s.day {
			s.forgetDayLocked(d, s.day)
		}
	}
	s.mu.Unlock()
	return n, nil
}
