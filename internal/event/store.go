package event

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peregrine-mon/peregrine/internal/daylog"
	"github.com/peregrine-mon/peregrine/internal/pglog"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// Defaults applied by Open.
const (
	DefaultRetention      = 365 * 24 * time.Hour // Zabbix's default for trigger events
	DefaultRetentionCheck = time.Hour
	// RecentWindow is how long a resolved problem stays in Recent, for
	// problem.get's "recent" (Zabbix's default "display OK triggers for"
	// is 5 minutes; resolved problems are kept listed a little longer).
	RecentWindow = 30 * time.Minute
)

// Options configures Open.
type Options struct {
	// Dir holds one directory per day (docs/format/events.md). Required
	// unless Postgres is set.
	Dir string
	// Postgres, when set, keeps the records in PostgreSQL instead of
	// Dir (state.store: postgres; table event_log, package pglog), every
	// write fenced by the HA lease (postgres.go). Its Table is set here;
	// Sync, SyncInterval and FS do not apply then.
	Postgres *pglog.Options
	// Sync and SyncInterval are the fsync policy, as the history WAL's
	// (history.fsync): what a nil error from Commit promises.
	Sync         wal.SyncMode
	SyncInterval time.Duration
	// Retention is how long events are kept (events.retention); whole
	// days older than it are deleted. Default 365 days.
	Retention time.Duration
	// RetentionCheck is how often Run applies retention. Default 1 h.
	RetentionCheck time.Duration
	// Now is the clock that picks the day directory; default time.Now.
	Now    func() time.Time
	FS     wal.FS // nil: the operating system's
	Logger *slog.Logger
}

// Store is the event store. See the package documentation for the
// concurrency contract.
type Store struct {
	opts Options
	log  *slog.Logger

	// wmu serialises the write side: ID assignment, enqueueing into the
	// WAL (so that WAL order is ID order) and day rollover.
	wmu       sync.Mutex
	b         daylog.Backend
	w         daylog.Writer
	day       string // the day directory w writes to
	nextEvent uint64
	nextAck   uint64
	seq       uint64 // commits enqueued
	buf       []byte
	closed    bool

	commits, commitErrs atomic.Uint64

	// mu guards the in-memory state below; applied counts the commits
	// applied to it, in seq order (cond waits for a commit's turn).
	mu      sync.RWMutex
	cond    *sync.Cond
	applied uint64
	events  map[uint64]*Event
	open    map[uint64]*Event   // open problems by ID
	byTrig  map[uint64][]uint64 // open problem IDs by trigger, ascending
	// order holds the open problems ascending by ID, plus problems
	// resolved since the last compaction (dead of them, REventID set):
	// problem.get walks it newest first and stops at its limit instead
	// of sorting every open problem. New problems get the highest IDs,
	// so an insert is an append; a resolve only counts, and the slice is
	// compacted once half of it is dead, so both cost O(1) amortised.
	// It holds the events themselves, not their IDs, so that a walk
	// costs no map lookup per problem: the storm's problem.get polls
	// walk 100,000 open problems every 50 ms on the evaluator's core.
	order  []*Event
	dead   int
	acks   map[uint64][]Ack    // by event ID
	rts    map[uint64]Runtime  // by trigger ID
	recent []uint64            // problems resolved, in resolution order (Recent)
	last   map[uint64]uint64   // the newest event ID of each trigger
	dayIDs map[string][]uint64 // event IDs written in each day directory
	curDay string              // the day being replayed or written, for dayIDs
	// tags indexes the open problems by tag for event correlation
	// (tagindex.go): nil until correlation first asks, so that a server
	// without correlation rules pays nothing for it.
	tags *tagIndex

	// follow is the log a follower (OpenFollower, an HA standby) reads,
	// nil otherwise; followSeq is the last record it applied. Follow
	// runs under wmu.
	follow      *pglog.Log
	followSeq   int64
	followParts time.Time // when Follow last listed the days
}

// Open opens or creates the store in opts.Dir and replays it.
func Open(opts Options) (*Store, error) {
	if opts.Dir == "" && opts.Postgres == nil {
		return nil, errors.New("event: Options.Dir is empty; set it to the events directory")
	}
	if opts.Retention == 0 {
		opts.Retention = DefaultRetention
	}
	if opts.RetentionCheck == 0 {
		opts.RetentionCheck = DefaultRetentionCheck
	}
	if opts.Retention < 24*time.Hour {
		return nil, fmt.Errorf("event: retention %v is shorter than one day; events are kept in whole days", opts.Retention)
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
		// Table event_log (docs/format/events.md): the same records,
		// every write fenced by the HA lease.
		o := *opts.Postgres
		o.Table = "event_log"
		b, err = daylog.Postgres("event", o)
	} else {
		b, err = daylog.Files(daylog.FileOptions{Name: "event", Dir: opts.Dir, Sync: opts.Sync, SyncInterval: opts.SyncInterval, FS: opts.FS, Logger: opts.Logger})
	}
	if err != nil {
		return nil, err
	}
	s := &Store{
		opts: opts, log: opts.Logger, b: b, nextEvent: 1, nextAck: 1,
		events: map[uint64]*Event{}, open: map[uint64]*Event{}, byTrig: map[uint64][]uint64{},
		acks: map[uint64][]Ack{}, rts: map[uint64]Runtime{}, dayIDs: map[string][]uint64{}, last: map[uint64]uint64{},
	}
	s.cond = sync.NewCond(&s.mu)
	start := time.Now()
	days, err := b.Days()
	if err != nil {
		b.Close()
		return nil, err
	}
	today := dayOf(opts.Now())
	for i, d := range days {
		if d > today {
			// A clock set back: keep writing to the newest directory
			// rather than to one that sorts before it.
			today = d
		}
		keep := i == len(days)-1 && d == today
		if err := s.replayDay(d, keep); err != nil {
			s.closeWAL()
			b.Close()
			return nil, err
		}
	}
	if s.w == nil {
		if err := s.startDay(today); err != nil {
			b.Close()
			return nil, err
		}
	}
	s.log.Info("event store loaded", "dir", opts.Dir, "days", len(days), "events", len(s.events),
		"open_problems", len(s.open), "triggers", len(s.rts), "duration", time.Since(start))
	return s, nil
}

// dayOf is the directory name of t's UTC day.
func dayOf(t time.Time) string { return t.UTC().Format("20060102") }

// replayDay replays one day directory; keep leaves its WAL open for
// appending (the current day).
func (s *Store) replayDay(day string, keep bool) error {
	s.curDay = day
	w, err := s.b.Replay(day, keep, func(rec []byte) error {
		h, b, err := decode(rec)
		if err != nil {
			return err
		}
		s.nextEvent, s.nextAck = max(s.nextEvent, h.nextEvent), max(s.nextAck, h.nextAck)
		s.applyLocked(&b)
		return nil
	})
	if err != nil || !keep {
		return err
	}
	s.w, s.day = w, day
	return nil
}

// startDay opens a new day directory and writes its carry record. wmu
// is held (or the store is being opened).
func (s *Store) startDay(day string) error {
	w, err := s.b.Create(day)
	if err != nil {
		return err
	}
	s.mu.Lock()
	carry := s.carryLocked()
	s.curDay = day
	s.mu.Unlock()
	s.buf = encode(s.buf[:0], kindCarry, s.nextEvent, s.nextAck, &carry)
	if err := w.Append(s.buf); err != nil {
		w.Close()
		return fmt.Errorf("event: cannot write the carry record of day %s: %w", day, err)
	}
	s.w, s.day = w, day
	return nil
}

// carryLocked is what a new day starts with: open problems, their acks,
// and every trigger runtime.
func (s *Store) carryLocked() Batch {
	var b Batch
	for _, e := range s.sortedOpenLocked() {
		b.Events = append(b.Events, *e)
		b.Acks = append(b.Acks, s.acks[e.ID]...)
	}
	for _, r := range s.rts {
		b.Runtimes = append(b.Runtimes, r)
	}
	slices.SortFunc(b.Runtimes, func(a, c Runtime) int { return cmp.Compare(a.TriggerID, c.TriggerID) })
	return b
}

func (s *Store) closeWAL() {
	if s.w != nil {
		s.w.Close()
		s.w = nil
	}
}

// Commit assigns IDs to the batch's new events and acks (written back
// into b), appends it to the log and applies it to memory. It returns
// nil only once the batch is durable under the fsync policy: an event
// is acknowledged to its producer only then. Commits from concurrent
// callers are applied in the order they were logged. After a write or
// fsync failure every Commit fails until the log can write again (the
// WAL retries every second; a failure it cannot undo needs a restart).
func (s *Store) Commit(b *Batch) error {
	if b.empty() {
		return nil
	}
	if s.follow != nil {
		return ErrReadOnly
	}
	s.wmu.Lock()
	if s.closed {
		s.wmu.Unlock()
		return wal.ErrClosed
	}
	if day := dayOf(s.opts.Now()); day > s.day {
		if err := s.rollover(day); err != nil {
			s.wmu.Unlock()
			return err
		}
	}
	for i := range b.Events {
		if c := b.Events[i].Cause; c < 0 || c > i {
			s.wmu.Unlock()
			return fmt.Errorf("BUG: event: event %d of a batch names event %d as its cause; it must come before", i, c-1)
		}
	}
	for i := range b.Events {
		if b.Events[i].ID == 0 {
			b.Events[i].ID = s.nextEvent
			s.nextEvent++
		}
	}
	for i := range b.Events {
		if e := &b.Events[i]; e.Cause > 0 {
			cause := b.Events[e.Cause-1].ID
			e.CEventID = cause
			if len(e.Resolves) == 0 {
				e.Resolves = []uint64{cause}
			}
		}
	}
	for i := range b.Acks {
		if b.Acks[i].ID == 0 {
			b.Acks[i].ID = s.nextAck
			s.nextAck++
		}
	}
	s.buf = encode(s.buf[:0], kindCommit, s.nextEvent, s.nextAck, b)
	p := s.w.AppendAsync(s.buf) // copies the record
	seq := s.seq
	s.seq++
	s.wmu.Unlock()

	err := p.Wait()
	s.mu.Lock()
	for s.applied != seq {
		s.cond.Wait()
	}
	if err == nil {
		s.applyLocked(b)
	}
	s.applied++
	s.cond.Broadcast()
	s.mu.Unlock()
	s.commits.Add(1)
	if err != nil {
		s.commitErrs.Add(1)
		return fmt.Errorf("event: commit failed, the events were not stored: %w", err)
	}
	return nil
}

// rollover closes the current day and starts day. wmu is held. It
// waits until every commit enqueued so far is applied, so the carry
// record holds them.
func (s *Store) rollover(day string) error {
	old := s.w
	s.w = nil
	// nil after a rollover that failed (a full disk): the next commit
	// tries to start the day again.
	if old != nil {
		if err := old.Close(); err != nil { // writes and fsyncs what is queued
			return fmt.Errorf("event: cannot close day %s: %w", s.day, err)
		}
	}
	s.mu.Lock()
	for s.applied != s.seq {
		s.cond.Wait()
	}
	s.mu.Unlock()
	if err := s.startDay(day); err != nil {
		return err
	}
	s.log.Info("event store started a new day", "day", day)
	return nil
}

// applyLocked applies b to memory; mu is held (or the store is being
// opened). Events and acks already known (carried into a later day) are
// skipped.
func (s *Store) applyLocked(b *Batch) {
	// The batch's events are kept in one slab and the open problem IDs
	// of triggers without any in another: a storm's commit of 100,000
	// problems makes two allocations instead of 200,000. Both live as
	// long as their longest-kept event, which is at most its day.
	slab := make([]Event, len(b.Events))
	var idSlab []uint64
	for i := range b.Events {
		p := &slab[i]
		*p = b.Events[i]
		p.Cause = 0 // resolved by Commit; replay has none
		e := p
		if _, dup := s.events[e.ID]; dup {
			continue
		}
		s.events[e.ID] = p
		s.dayIDs[s.curDay] = append(s.dayIDs[s.curDay], e.ID)
		if e.Source != SourceTrigger {
			// Auto-registration and internal events: kept and read
			// (event.get), never open trigger problems; an internal OK
			// event resolves its object's problem event directly.
			for _, pid := range e.Resolves {
				if pr := s.events[pid]; pr != nil && pr.REventID == 0 {
					pr.REventID, pr.RClock, pr.RNS = e.ID, e.Clock, e.NS
				}
			}
			continue
		}
		if e.ID > s.last[e.ObjectID] {
			s.last[e.ObjectID] = e.ID
		}
		if e.Value == ValueProblem && e.REventID == 0 {
			s.open[e.ID] = p
			ids := s.byTrig[e.ObjectID]
			if ids == nil {
				if len(idSlab) == cap(idSlab) {
					idSlab = make([]uint64, 0, len(b.Events)-i)
				}
				idSlab = append(idSlab, e.ID)
				// Capped at one, so a second problem of the trigger
				// reallocates instead of writing over its neighbour.
				ids = idSlab[len(idSlab)-1 : len(idSlab) : len(idSlab)]
			} else {
				ids = append(ids, e.ID)
			}
			s.byTrig[e.ObjectID] = ids
			s.addOrderLocked(p)
			if s.tags != nil {
				s.tags.add(p)
			}
		}
		for _, pid := range e.Resolves {
			pr := s.open[pid]
			if pr == nil {
				continue // resolved before, or older than retention
			}
			pr.REventID, pr.RClock, pr.RNS, pr.UserID = e.ID, e.Clock, e.NS, e.UserID
			pr.CorrelationID = e.CorrelationID
			delete(s.open, pid)
			if s.tags != nil {
				s.tags.remove(pr)
			}
			s.dropOrderLocked()
			ids := slices.DeleteFunc(s.byTrig[pr.ObjectID], func(id uint64) bool { return id == pid })
			if len(ids) == 0 {
				delete(s.byTrig, pr.ObjectID)
			} else {
				s.byTrig[pr.ObjectID] = ids
			}
			s.recent = append(s.recent, pid)
		}
	}
	for _, a := range b.Acks {
		if slices.ContainsFunc(s.acks[a.EventID], func(x Ack) bool { return x.ID == a.ID }) {
			continue
		}
		e := s.events[a.EventID]
		if e == nil {
			continue // the event's day was dropped
		}
		s.acks[a.EventID] = append(s.acks[a.EventID], a)
		if a.Action&ActionAcknowledge != 0 {
			e.Acknowledged = true
		}
		if a.Action&ActionUnacknowledge != 0 {
			e.Acknowledged = false
		}
		if a.Action&ActionSeverity != 0 {
			e.Severity = a.NewSeverity
		}
	}
	for _, r := range b.Runtimes {
		s.rts[r.TriggerID] = r
	}
	for _, sp := range b.Suppress {
		if e := s.events[sp.EventID]; e != nil {
			e.Suppressed = sp.Suppressed
		}
	}
}

// addOrderLocked adds an open problem to order. IDs are assigned in
// commit order and applied in that order, so this is an append; a
// replay that meets an older ID (never expected) inserts it in place.
func (s *Store) addOrderLocked(e *Event) {
	if n := len(s.order); n == 0 || s.order[n-1].ID < e.ID {
		s.order = append(s.order, e)
		return
	}
	i, found := slices.BinarySearchFunc(s.order, e.ID, func(x *Event, id uint64) int { return cmp.Compare(x.ID, id) })
	if found {
		// Events are applied once per ID (applyLocked skips
		// duplicates), so this cannot happen; keep order consistent
		// anyway: the entry now stands for the live event.
		if s.order[i].REventID != 0 {
			s.dead--
		}
		s.order[i] = e
		return
	}
	s.order = slices.Insert(s.order, i, e)
}

// dropOrderLocked counts one problem of order as resolved, and compacts
// order once half of it is.
func (s *Store) dropOrderLocked() {
	s.dead++
	if s.dead < 1024 || s.dead*2 < len(s.order) {
		return
	}
	s.order = slices.DeleteFunc(s.order, func(e *Event) bool { return e.REventID != 0 })
	s.dead = 0
}

// Close writes what is queued and closes the log. Later Commits fail.
func (s *Store) Close() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.follow != nil {
		return s.follow.Close()
	}
	var err error
	if s.w != nil {
		err = s.w.Close()
		s.w = nil
	}
	return errors.Join(err, s.b.Close())
}

// Run applies retention at start and every Options.RetentionCheck until
// ctx ends.
func (s *Store) Run(ctx context.Context) {
	t := time.NewTicker(s.opts.RetentionCheck)
	defer t.Stop()
	for {
		if _, err := s.ApplyRetention(); err != nil {
			s.log.Error("event store: cannot apply retention", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ApplyRetention deletes the day directories whose day ended more than
// Options.Retention ago (never the current day) and forgets their events
// that are not open problems: open problems and trigger runtimes were
// carried into every later day. It returns the number of days deleted.
func (s *Store) ApplyRetention() (int, error) {
	if s.follow != nil {
		return 0, nil // the active node applies retention; Follow forgets its days
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return 0, wal.ErrClosed
	}
	days, err := s.b.Days()
	if err != nil {
		return 0, err
	}
	now := s.opts.Now()
	dropped := 0
	for _, d := range days {
		if d >= s.day {
			break
		}
		t, _ := time.Parse("20060102", d)
		if now.Sub(t.Add(24*time.Hour)) <= s.opts.Retention {
			break
		}
		if err := s.b.Drop(d); err != nil {
			return dropped, err
		}
		s.mu.Lock()
		s.forgetDayLocked(d, s.day)
		s.mu.Unlock()
		dropped++
		s.log.Info("event store dropped a day older than the retention", "day", d, "retention", s.opts.Retention)
	}
	if dropped > 0 {
		if err := s.b.Dropped(); err != nil {
			return dropped, err
		}
	}
	return dropped, nil
}

// forgetDayLocked forgets day d's events that are not open problems
// (their rows are gone); the open ones now belong to day cur, whose
// carry record holds them. mu is held.
func (s *Store) forgetDayLocked(d, cur string) {
	for _, id := range s.dayIDs[d] {
		if _, open := s.open[id]; open {
			s.dayIDs[cur] = append(s.dayIDs[cur], id)
			continue
		}
		delete(s.events, id)
		delete(s.acks, id)
	}
	delete(s.dayIDs, d)
}
