package ingest

import (
	"context"
	"errors"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
)

// pushMessages words each refusal for an API client, as Zabbix's
// history.push does; an unknown host reads like an unknown item so that
// the API does not tell which names exist.
var pushMessages = [pipeline.NumRefusals]string{
	pipeline.UnknownHost:      "No permissions to referred object or it does not exist.",
	pipeline.UnknownItem:      "No permissions to referred object or it does not exist.",
	pipeline.HostDisabled:     "Host is not monitored.",
	pipeline.WrongItemType:    "Item is not a trapper item.",
	pipeline.ItemDisabled:     "Item is disabled.",
	pipeline.MonitoredByProxy: "Host is monitored by a proxy.",
}

const pushBadClock = "Invalid clock or ns: clock must be 0..2147483647, ns 0..999999999."

// Push validates values exactly as the trapper validates sender data (the
// item must exist, be a trapper item and be enabled, its host monitored,
// the value convertible to the item's type, the clock in range), stores
// the accepted ones through the pipeline and returns once they are
// durable, with one result per value in request order. Accepted and
// refused values are counted in the trapper's counters, so /metrics shows
// one ingest figure whichever door values came through.
//
// The returned error is a store failure: then nothing of the request is
// acknowledged. When the store took the values of some items and not of
// others (a *pipeline.PartialError), the request succeeds and each value
// not stored has its Err.
func (s *Server) Push(ctx context.Context, values []pipeline.RawValue) ([]pipeline.Result, error) {
	return push(ctx, s.opts.Catalog.Snapshot(), s.opts.Pipeline, s, values, s.opts.Now(), checkPush)
}

// Import stores values copied from another server (`peregrine migrate`
// copying a Zabbix server's history): for an item of any type, of a host
// enabled or not, monitored by a proxy or not, each with its own clock
// (required), and without preprocessing, which ran where the value was
// collected. The value is converted to the item's type as any value is,
// and goes through the pipeline like the others: stored once durable,
// seen by triggers and the value cache as late data is.
func (s *Server) Import(ctx context.Context, values []pipeline.RawValue) ([]pipeline.Result, error) {
	return push(ctx, s.opts.Catalog.Snapshot(), s.opts.Pipeline, s, values, s.opts.Now(), checkImport)
}

// push is Push without the Server, so that its rules are testable alone.
// s may be nil (no counting, no logging).
func push(_ context.Context, snap *catalog.Snapshot, sub Submitter, s *Server, values []pipeline.RawValue, recv time.Time,
	check func(*catalog.Snapshot, *pipeline.RawValue, *history.Sample) (failReason, string)) ([]pipeline.Result, error) {
	out := make([]pipeline.Result, len(values))
	samples := make([]history.Sample, 0, len(values))
	var failed [numFailReasons]int
	st := newStamper(recv)
	for i := range values {
		v := &values[i]
		sm := history.Sample{}
		reason, msg := check(snap, v, &sm)
		if msg != "" {
			failed[reason]++
			out[i].Err = msg
			if s != nil {
				s.valueFailed(reason, []byte(v.Host), []byte(v.Key), nil)
			}
			continue
		}
		sm.Clock, sm.NS = v.Clock, int32(v.NS)
		st.stamp(&sm, i)
		out[i].ItemID = sm.ItemID
		samples = append(samples, sm)
	}
	stored := len(samples)
	if len(samples) > 0 {
		if err := sub.Submit(samples, pipeline.NewTicket()); err != nil {
			var partial *pipeline.PartialError
			if !errors.As(err, &partial) {
				if s != nil {
					s.m.received.Add(uint64(len(values)))
					s.m.failed[failStore].Add(uint64(len(samples)))
				}
				return nil, err
			}
			// Some were stored: each value's result says whether it was.
			msg := "Cannot store the value: " + partial.Err.Error()
			for i := range out {
				if out[i].Err == "" && !partial.StoredItem(out[i].ItemID) {
					out[i].ItemID, out[i].Err = 0, msg
				}
			}
			stored = partial.Stored
			if s != nil {
				s.m.failed[failStore].Add(uint64(len(samples) - stored))
			}
		}
	}
	if s != nil {
		s.m.received.Add(uint64(len(values)))
		s.m.countFailed(stored, &failed)
	}
	return out, nil
}

// checkPush applies the trapper's per-value rules to one pushed value.
func checkPush(snap *catalog.Snapshot, v *pipeline.RawValue, sm *history.Sample) (failReason, string) {
	if v.Clock > maxClock || v.NS > 999999999 || (v.Clock < 0 && v.Clock != -1) || (v.NS < 0 && v.NS != -1) {
		return failBadClock, pushBadClock
	}
	var it *catalog.Item
	var r pipeline.Refusal
	if v.ItemID != 0 {
		it, r = pipeline.ItemByID(snap, v.ItemID, pipeline.TrapperTypes)
	} else {
		it, r = pipeline.ItemByKey(snap, v.Host, v.Key, pipeline.TrapperTypes)
	}
	if r != pipeline.Accepted {
		return refused(r), pushMessages[r]
	}
	if err := pipeline.Prepare(it, v.Value, sm); err != nil {
		return refused(pipeline.BadValue), "Invalid value: " + err.Error() + "."
	}
	return 0, ""
}

// checkImport is Import's rule for one value: the item exists and the
// value converts to its type; the clock is the value's own.
func checkImport(snap *catalog.Snapshot, v *pipeline.RawValue, sm *history.Sample) (failReason, string) {
	if v.Clock < 0 || v.Clock > maxClock || v.NS < 0 || v.NS > 999999999 {
		return failBadClock, pushBadClock
	}
	it := snap.Item(v.ItemID)
	if it == nil {
		return refused(pipeline.UnknownItem), pushMessages[pipeline.UnknownItem]
	}
	if err := pipeline.PrepareCopied(it, v.Value, sm); err != nil {
		return refused(pipeline.BadValue), "Invalid value: " + err.Error() + "."
	}
	return 0, ""
}
