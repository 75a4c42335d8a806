package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/record"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// Acknowledgement modes (Options.Ack).
const (
	// AckSpooled acknowledges a value once it is in the spool's WAL on
	// this node's disk; the shipper inserts it later (the default).
	AckSpooled = "spooled"
	// AckInserted acknowledges a value only once ClickHouse accepted
	// the insert that holds it: nothing acknowledged depends on this
	// node's disk (high availability, issue 31).
	AckInserted = "inserted"
)

// DefaultAckTimeout bounds how long a Write waits for its insert in
// AckInserted mode.
const DefaultAckTimeout = 10 * time.Second

// ErrAckTimeout is returned by Write in AckInserted mode when the insert
// holding its values did not finish within Options.AckTimeout. The
// values may still land; a sender told "failed" sends them again and
// the copies are one value (the tables' (itemid, clock, ns) key).
var ErrAckTimeout = errors.New("clickhouse: the insert was not confirmed within history.clickhouse.ack_timeout; the values are not acknowledged")

// ackReq is one Write waiting for the insert that holds its values.
type ackReq struct {
	samples []history.Sample
	done    chan error // buffered: the inserter never blocks on it
}

// inserted reports whether the store acknowledges after the insert.
func (s *Store) inserted() bool { return s.o.Ack == AckInserted }

// drainSpool runs at Open in AckInserted mode: a spool left by an
// earlier run in AckSpooled mode is inserted whole before the store
// takes writes, then emptied. ClickHouse must accept it: Open fails
// otherwise and the spool stays for the next try.
func (s *Store) drainSpool(ctx context.Context) error {
	if _, err := os.Stat(s.o.Dir); s.o.Dir == "" || errors.Is(err, os.ErrNotExist) {
		return nil
	}
	w, err := wal.Open(wal.Options{Dir: s.o.Dir, Sync: s.o.Sync, SyncInterval: s.o.SyncInterval, Logger: s.o.Logger})
	if err != nil {
		return err
	}
	defer w.Close()
	g := newGen()
	var buf []history.Sample
	err = w.Replay(func(rec []byte) error {
		buf, err = record.DecodeSamples(buf[:0], rec)
		if err != nil {
			return err
		}
		g.add(buf)
		return nil
	})
	if err != nil {
		return fmt.Errorf("clickhouse: replaying the spool in %s: %w", s.o.Dir, err)
	}
	if g.n == 0 {
		return nil
	}
	s.ctx, s.cancel = context.WithCancel(ctx)
	defer s.cancel()
	if err := s.insertGen(g); err != nil {
		return fmt.Errorf("clickhouse: inserting the %d values left in the spool %s before acknowledging after inserts: %w", g.n, s.o.Dir, err)
	}
	idx, err := w.Cut()
	if err == nil {
		err = w.Truncate(idx)
	}
	if err != nil {
		return fmt.Errorf("clickhouse: the spool %s was inserted but cannot be emptied: %w", s.o.Dir, err)
	}
	s.log.Info("clickhouse: the spool of an earlier run was inserted", "values", g.n)
	return nil
}

// writeInserted is Write in AckInserted mode: it queues samples for the
// inserter and waits until ClickHouse accepted them, the insert failed,
// or Options.AckTimeout passed.
func (s *Store) writeInserted(ctx context.Context, samples []history.Sample) error {
	if err := s.recentFailure(); err != nil {
		return err
	}
	r := &ackReq{samples: make([]history.Sample, len(samples)), done: make(chan error, 1)}
	copy(r.samples, samples)
	for i := range r.samples {
		if lm := r.samples[i].Log; lm != nil { // the caller may reuse it
			c := *lm
			r.samples[i].Log = &c
		}
	}
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		return history.ErrClosed
	}
	s.queue = append(s.queue, r)
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
	t := time.NewTimer(s.o.AckTimeout)
	defer t.Stop()
	select {
	case err := <-r.done:
		return err
	case <-t.C:
		return ErrAckTimeout
	case <-ctx.Done():
		return ctx.Err()
	}
}

// recentFailure is the last insert's error while it is younger than
// RetryInterval: writes are refused at once meanwhile instead of each
// waiting for an insert that is likely to fail too; the first write
// after it tries again.
func (s *Store) recentFailure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastErr != nil && time.Since(s.lastFail) < s.o.RetryInterval {
		return fmt.Errorf("clickhouse: the last insert failed %s ago, values are not acknowledged: %w", time.Since(s.lastFail).Round(time.Millisecond), s.lastErr)
	}
	return nil
}

// maxInserts is the most inserts AckInserted runs at once: a write
// that arrives while one runs starts its own instead of waiting behind
// it; past this many the writes queue and go together in the next.
const maxInserts = 4

// insertLoop is the inserter goroutine of AckInserted mode: it takes
// every queued write and inserts them together (a group commit), up to
// maxInserts groups at once, and answers each write.
func (s *Store) insertLoop() {
	defer close(s.done)
	defer s.failQueued(history.ErrClosed)
	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, maxInserts)
	for {
		select {
		case <-s.stop:
			return
		case <-s.kick:
		}
		for {
			s.mu.Lock()
			empty := len(s.queue) == 0
			s.mu.Unlock()
			if empty {
				break
			}
			select {
			case slots <- struct{}{}:
			case <-s.stop:
				return
			}
			s.mu.Lock()
			q := s.queue
			s.queue = nil
			s.mu.Unlock()
			if len(q) == 0 {
				<-slots
				break
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.insertGroup(q)
				<-slots
			}()
		}
	}
}

// insertGroup inserts the writes of q together and answers each.
func (s *Store) insertGroup(q []*ackReq) {
	g := newGen()
	for _, r := range q {
		g.add(r.samples)
	}
	err := s.insertGen(g)
	if err != nil && s.ctx.Err() != nil {
		err = history.ErrClosed
	}
	s.mu.Lock()
	if err != nil {
		s.lastErr, s.lastFail = err, time.Now()
	} else {
		s.lastErr = nil
		for _, r := range q {
			for i := range r.samples {
				s.types[r.samples[i].ItemID] |= 1 << r.samples[i].Type
			}
		}
	}
	s.mu.Unlock()
	if err != nil && !errors.Is(err, history.ErrClosed) {
		kind := Kind(err)
		s.mShipErr[kind].Inc()
		if sup, ok := s.throttle.Allow("ship-" + kind); ok {
			s.log.Error("clickhouse insert failed; its values are answered failed, not acknowledged",
				"kind", kind, "err", err, "values", g.n, "suppressed", sup)
		}
	}
	for _, r := range q {
		r.done <- err
	}
}

// failQueued answers the writes still queued at Close.
func (s *Store) failQueued(err error) {
	s.mu.Lock()
	q := s.queue
	s.queue = nil
	s.mu.Unlock()
	for _, r := range q {
		r.done <- err
	}
}
