package maintenance

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// Events is what the Tracker needs of the event store (*event.Store).
type Events interface {
	OpenProblems() []event.Event
	Event(id uint64) (event.Event, bool)
	Commit(b *event.Batch) error
}

// Catalog gives snapshots and signals their swaps (*catalog.Catalog).
type Catalog interface {
	Snapshot() *catalog.Snapshot
	Subscribe() <-chan struct{}
}

// Options configures New.
type Options struct {
	Catalog Catalog // required
	Events  Events  // required
	// Location is the time zone of daily and weekly periods; default
	// time.Local, as Zabbix uses the server's.
	Location *time.Location
	// Now is the clock; default time.Now. Tests inject one.
	Now     func() time.Time
	Logger  *slog.Logger
	Metrics *selfmon.Registry
}

// Tracker suppresses and unsuppresses problems as maintenances start and
// end. See the package documentation.
type Tracker struct {
	opts Options
	mu   sync.Mutex // serialises passes
	// idle is set after a pass that found no maintenance: with none then
	// and none now no problem can be suppressed, so the next pass is
	// skipped rather than walk every open problem (a storm's 100,000)
	// at every catalog change. Guarded by mu.
	idle bool

	changed  *selfmon.Counter // problems whose suppression a pass changed
	passErrs *selfmon.Counter
}

// New makes a Tracker.
func New(opts Options) (*Tracker, error) {
	if opts.Catalog == nil || opts.Events == nil {
		return nil, errors.New("maintenance: Options.Catalog and Options.Events are required")
	}
	if opts.Location == nil {
		opts.Location = time.Local
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
	return &Tracker{opts: opts,
		changed:  opts.Metrics.Counter("peregrine_maintenance_suppression_changes_total", "Open problems whose suppression a maintenance pass changed."),
		passErrs: opts.Metrics.Counter("peregrine_maintenance_pass_errors_total", "Maintenance passes whose changes could not be stored."),
	}, nil
}

// Covers reports whether a problem of trigger t with tags, at time at,
// is covered by a maintenance in effect: the trigger machine suppresses
// the problem it makes then.
func (tr *Tracker) Covers(snap *catalog.Snapshot, t *catalog.Trigger, tags []event.Tag, at time.Time) bool {
	ms := snap.Maintenances()
	if len(ms) == 0 {
		return false
	}
	for i := range ms {
		m := &ms[i]
		if Active(m, at, tr.opts.Location) && covers(snap, m, t, tags) {
			return true
		}
	}
	return false
}

// covers reports whether m (in effect) covers a problem of t with tags.
func covers(snap *catalog.Snapshot, m *catalog.Maintenance, t *catalog.Trigger, tags []event.Tag) bool {
	hit := false
	for _, hid := range t.HostIDs {
		if slices.Contains(m.HostIDs, hid) {
			hit = true
			break
		}
		if h := snap.HostByID(hid); h != nil && slices.ContainsFunc(h.GroupIDs, func(g uint64) bool { return slices.Contains(m.GroupIDs, g) }) {
			hit = true
			break
		}
	}
	return hit && tagsMatch(m, tags)
}

// Suppressed reports whether the event is a suppressed problem: the
// hook of the "problem is (not) suppressed" action condition.
func (tr *Tracker) Suppressed(eventID uint64) bool {
	e, ok := tr.opts.Events.Event(eventID)
	return ok && e.Suppressed
}

// Pass makes every open problem's suppression match the maintenances in
// effect now, in one commit, and returns how many changed.
func (tr *Tracker) Pass() (int, error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	snap := tr.opts.Catalog.Snapshot()
	now := tr.opts.Now()
	none := len(snap.Maintenances()) == 0
	if none && tr.idle {
		return 0, nil
	}
	var b event.Batch
	for _, e := range tr.opts.Events.OpenProblems() {
		t := snap.Trigger(e.ObjectID)
		want := t != nil && tr.Covers(snap, t, e.Tags, now)
		if t == nil {
			want = e.Suppressed // a deleted trigger's problem is resolved elsewhere
		}
		if want != e.Suppressed {
			b.Suppress = append(b.Suppress, event.Suppression{EventID: e.ID, Suppressed: want})
		}
	}
	if len(b.Suppress) == 0 {
		tr.idle = none
		return 0, nil
	}
	if err := tr.opts.Events.Commit(&b); err != nil {
		tr.passErrs.Inc()
		return 0, err
	}
	tr.idle = none
	tr.changed.Add(uint64(len(b.Suppress)))
	return len(b.Suppress), nil
}

// Run makes a pass at every minute boundary and after every catalog
// change, until ctx ends. A failed pass is logged and retried at the
// next one.
func (tr *Tracker) Run(ctx context.Context) {
	changes := tr.opts.Catalog.Subscribe()
	pass := func(why string) {
		n, err := tr.Pass()
		if err != nil {
			tr.opts.Logger.Error("cannot store maintenance suppression changes; retrying at the next pass", "err", err, "cause", why)
			return
		}
		if n > 0 {
			tr.opts.Logger.Info("maintenance changed problem suppression", "problems", n, "cause", why)
		}
	}
	pass("start")
	for {
		now := tr.opts.Now()
		// A little after the boundary: periods start and end on whole
		// minutes, and the clock of the last check must be past it.
		next := now.Truncate(time.Minute).Add(time.Minute + 100*time.Millisecond)
		timer := time.NewTimer(next.Sub(now))
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-changes:
			timer.Stop()
			pass("catalog change")
		case <-timer.C:
			pass("timer")
		}
	}
}
