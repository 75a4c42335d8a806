package server

import (
	"context"
	"time"

	"github.com/peregrine-mon/peregrine/internal/alert"
	"github.com/peregrine-mon/peregrine/internal/api"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
)

// The standby API's views of the active node's runtime state
// (docs/ha.md, "The API and UI on a standby"): alerts from the followed
// alert log, last values from ClickHouse.

// standbyAlerting serves mediatype.*, action.*, alert.get, script.* and
// correlation.* reads on a standby: the notification configuration from
// the followed catalog, the alerts from the followed alert log. Changes
// are refused before they reach it (api.Options.Standby); what reaches
// it anyway is refused here too.
type standbyAlerting struct {
	cat     *catalog.Catalog
	alerts  *alert.Follower
	minStep time.Duration
	refuse  func() error
}

func (a standbyAlerting) AlertConfig() *catalog.AlertConfig { return a.cat.AlertConfig() }

func (a standbyAlerting) EditAlerts(context.Context, func(*catalog.AlertConfig) error) error {
	return a.refuse()
}

func (a standbyAlerting) Alerts(keep func(*alert.Alert) bool) []alert.Alert {
	return a.alerts.Alerts(keep)
}

func (a standbyAlerting) MinStepDuration() time.Duration { return a.minStep }

func (a standbyAlerting) RunScript(context.Context, *catalog.GlobalScript, *catalog.Host, string) (string, error) {
	return "", a.refuse()
}

// standbyLast gives item.get's last and previous values on a standby:
// the newest two values of each item in ClickHouse, where the active
// node's pipeline puts every value before acknowledging it (history.
// clickhouse.ack: inserted), so they are the active node's last values.
// item.get reads those of its answer at once (api.LastPrefetcher); a
// single Last is one request.
type standbyLast struct {
	h       history.NewestReader
	timeout time.Duration
}

func (l standbyLast) Last(item uint64) (last, prev history.Sample, ok bool) {
	ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
	defer cancel()
	v := l.read(ctx, []uint64{item})[item]
	return v.last, v.prev, v.ok
}

func (l standbyLast) PrefetchLast(ctx context.Context, items []uint64) api.LastValues {
	return lastValues(l.read(ctx, items))
}

type lastPair struct {
	last, prev history.Sample
	ok         bool
}

// read reads the newest two values of items; an item whose values
// cannot be read (ClickHouse out of reach) has none.
func (l standbyLast) read(ctx context.Context, items []uint64) map[uint64]lastPair {
	out := make(map[uint64]lastPair, len(items))
	_ = l.h.ReadNewest(ctx, items, 2, func(s []history.Sample) bool {
		p := lastPair{last: s[0], ok: true}
		if len(s) > 1 {
			p.prev = s[1]
		}
		out[s[0].ItemID] = p
		return true
	})
	return out
}

// lastValues is a prefetched answer of standbyLast.
type lastValues map[uint64]lastPair

func (m lastValues) Last(item uint64) (last, prev history.Sample, ok bool) {
	p := m[item]
	return p.last, p.prev, p.ok
}

// dropEndedSessions, on an active node, drops every standbyPoll the
// cached sessions that a standby's user.logout deleted (auth.Store.
// DropEnded), so a logout on any node ends the session on this one
// within a poll. Standalone servers have no other writer and return at
// once.
func (s *Server) dropEndedSessions(ctx context.Context) {
	if s.pg == nil || s.authStore == nil {
		return
	}
	t := time.NewTicker(standbyPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if n, err := s.authStore.DropEnded(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("cannot check the sessions ended on other nodes", "err", err)
		} else if n > 0 {
			s.log.Debug("sessions ended on other nodes", "sessions", n)
		}
	}
}

// itemStatesFlush is how often an active cluster node stores what
// changed of its item states and interface availabilities
// (itemstate.Writer); a standby reads them every standbyPoll.
const itemStatesFlush = time.Second
