package ingest

import (
	"context"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
)

// PushValue is one value of an API history.push request (Zabbix 7.0's
// JSON ingest). The item is named by ItemID, or by Host and Key when
// ItemID is 0.
type PushValue struct {
	ItemID    uint64
	Host, Key string
	Value     []byte // the value's text, as a sender would send it
	Clock     int64  // Unix seconds; -1: the receive time
	NS        int64  // -1: absent
}

// PushResult is the outcome of one PushValue: the item it was stored for,
// or why it was refused.
type PushResult struct {
	ItemID uint64
	Err    string
}

// Push-specific refusals, worded for an API client.
const (
	pushNoItem     = "No permissions to referred object or it does not exist."
	pushNotTrapper = "Item is not a trapper item."
	pushDisabled   = "Item is disabled."
	pushHostOff    = "Host is not monitored."
	pushBadClock   = "Invalid clock or ns: clock must be 0..2147483647, ns 0..999999999."
)

// Push validates values exactly as the trapper validates sender data (the
// item must exist, be a trapper item and be enabled, its host monitored,
// the value convertible to the item's type, the clock in range), stores
// the accepted ones through the pipeline and returns once they are
// durable, with one result per value in request order. Accepted and
// refused values are counted in the trapper's counters, so /metrics shows
// one ingest figure whichever door values came through.
//
// The returned error is a store failure: then nothing of the request is
// acknowledged.
func (s *Server) Push(ctx context.Context, values []PushValue) ([]PushResult, error) {
	return push(ctx, s.opts.Catalog.Snapshot(), s.opts.Pipeline, s, values, s.opts.Now())
}

// push is Push without the Server, so that its rules are testable alone.
// s may be nil (no counting, no logging).
func push(_ context.Context, snap *catalog.Snapshot, sub Submitter, s *Server, values []PushValue, recv time.Time) ([]PushResult, error) {
	out := make([]PushResult, len(values))
	samples := make([]history.Sample, 0, len(values))
	var failed [numFailReasons]int
	st := newStamper(recv)
	for i := range values {
		v := &values[i]
		sm := history.Sample{}
		reason, msg := checkPush(snap, v, &sm)
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
	if len(samples) > 0 {
		if err := sub.Submit(samples, pipeline.NewTicket()); err != nil {
			if s != nil {
				s.m.received.Add(uint64(len(values)))
				s.m.failed[failStore].Add(uint64(len(samples)))
			}
			return nil, err
		}
	}
	if s != nil {
		s.m.received.Add(uint64(len(values)))
		s.m.countFailed(len(samples), &failed)
	}
	return out, nil
}

// checkPush applies the trapper's per-value rules to one pushed value.
func checkPush(snap *catalog.Snapshot, v *PushValue, sm *history.Sample) (failReason, string) {
	if v.Clock > maxClock || v.NS > 999999999 || (v.Clock < 0 && v.Clock != -1) || (v.NS < 0 && v.NS != -1) {
		return failBadClock, pushBadClock
	}
	var it *catalog.Item
	if v.ItemID != 0 {
		it = snap.Item(v.ItemID)
		if it == nil {
			return failUnknownItem, pushNoItem
		}
	} else {
		h := snap.Host(v.Host)
		if h == nil {
			return failUnknownHost, pushNoItem
		}
		if it = h.Item(v.Key); it == nil {
			return failUnknownItem, pushNoItem
		}
	}
	switch {
	case it.Host != nil && !it.Host.Enabled:
		return failHostDisabled, pushHostOff
	case it.Type != catalog.Trapper:
		return failWrongItemType, pushNotTrapper
	case !it.Enabled:
		return failItemDisabled, pushDisabled
	}
	sm.ItemID = it.ID
	if err := convert(it.ValueType, v.Value, sm); err != nil {
		return failBadValue, "Invalid value: " + err.Error() + "."
	}
	return 0, ""
}
