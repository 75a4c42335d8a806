package event

import (
	"errors"
	"fmt"
	"sync"

	"github.com/peregrine-mon/peregrine/internal/pglog"
)

// pgLog is the PostgreSQL backend (state.store: postgres): table
// event_log (package pglog) holds the same records as the embedded day
// WALs (docs/format/events.md), one row each, its day as the row's
// part; retention deletes a day's rows. Every write, the table's
// migrations included, runs in a transaction of Options.Postgres.Write,
// which checks the HA lease first ((*ha.Lease).Write): a node that lost
// its lease commits nothing, and a refused batch leaves no row.
type pgLog struct{ l *pglog.Log }

func openPG(p *pglog.Options) (*pgLog, error) {
	if p.Pool == nil || p.Write == nil {
		return nil, errors.New("event: Options.Postgres needs Pool and Write (the HA lease's)")
	}
	o := *p
	o.Table = "event_log"
	l, err := pglog.Open(o)
	if err != nil {
		return nil, err
	}
	return &pgLog{l}, nil
}

func (b *pgLog) days() ([]string, error) { return b.l.Parts() }

func (b *pgLog) replay(day string, keep bool, fn func([]byte) error) (dayWriter, error) {
	if err := b.l.Replay(day, fn); err != nil {
		return nil, fmt.Errorf("event: cannot replay day %s: %w", day, err)
	}
	if !keep {
		return nil, nil
	}
	return &pgDay{l: b.l, day: day}, nil
}

// create returns a writer: the day exists once its first record (the
// carry record) is stored.
func (b *pgLog) create(day string) (dayWriter, error) { return &pgDay{l: b.l, day: day}, nil }

func (b *pgLog) drop(day string) error { return b.l.DeletePart(day) }
func (b *pgLog) dropped() error        { return nil }
func (b *pgLog) close() error          { return b.l.Close() }

// pgDay is the writer of one day.
type pgDay struct {
	l   *pglog.Log
	day string

	mu   sync.Mutex
	last *pglog.Pending
}

func (d *pgDay) AppendAsync(rec []byte) waiter {
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.l.AppendAsync(d.day, rec)
	d.last = p
	return p
}

func (d *pgDay) Append(rec []byte) error { return d.AppendAsync(rec).Wait() }

// Close waits until the day's queued records are written; their
// errors went to their own waiters.
func (d *pgDay) Close() error {
	d.mu.Lock()
	p := d.last
	d.mu.Unlock()
	if p != nil {
		p.Wait()
	}
	return nil
}
