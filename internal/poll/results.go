package poll

import (
	"context"
	"slices"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
)

// maxTake bounds the results one worker takes at once, so that the
// other workers share a burst (and one Submit stays a reasonable batch).
const maxTake = 4096

// work is a result worker: it turns results into stored values and item
// states, then hands the checks back to the loop. Several run, because
// Submit blocks until the values are durable.
func (s *Scheduler) work(ctx context.Context) {
	for {
		s.mu.Lock()
		n := min(len(s.results), maxTake)
		batch := make([]*Result, n)
		copy(batch, s.results)
		s.results = s.results[:copy(s.results, s.results[n:])]
		more := len(s.results) > 0
		s.mu.Unlock()
		if more {
			select {
			case s.wakeWork <- struct{}{}: // let another worker help
			default:
			}
		}
		if n > 0 {
			s.process(batch)
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-s.wakeWork:
		}
	}
}

// process stores one batch of results and reports their checks done.
// Values go the trapper's way: acceptance (the item may have been
// disabled or deleted since the check started; its value is then
// dropped), pipeline.Prepare (conversion to the item's value type, where
// a value that does not convert makes the item not supported, as in
// Zabbix; or, for an item with preprocessing steps or dependent items,
// the text handed to the pipeline shard, which runs the steps and sets
// the item's state), the pipeline. A failed check of an item with steps
// or dependents goes to the shard too, for its "Check for not supported
// value" step and its dependents.
func (s *Scheduler) process(batch []*Result) {
	snap := s.opts.Catalog.Snapshot()
	samples := make([]history.Sample, 0, len(batch))
	stored := make([]*Result, 0, len(batch))
	comps := make([]completion, len(batch))
	rt := s.opts.ItemStates
	var rawIDs []uint64 // items whose values went to the shard as text
	for i, r := range batch {
		c := &comps[i]
		*c = completion{id: r.ItemID, iface: r.InterfaceID, status: r.Status, err: r.Error, clock: r.Clock.Unix()}
		if (r.Status == NetworkError || r.TimedOut) && !s.stopping.Load() && s.behind(r) {
			// Counted as a network error (its value, if any, is a
			// timeout's: not stored).
			c.status, c.postponed = NetworkError, true
			continue
		}
		switch r.Status {
		case OK:
			it, ref := pipeline.ItemByID(snap, r.ItemID, s.accept)
			if ref != pipeline.Accepted {
				s.m.dropped.Inc()
				continue
			}
			var sm history.Sample
			if err := pipeline.Prepare(it, r.Value, &sm); err != nil {
				c.status, c.err = NotSupported, err.Error()
				s.m.badValues.Inc()
				rt.SetItemState(r.ItemID, itemstate.Item{NotSupported: true, Error: err.Error(), Clock: c.clock})
				continue
			}
			ts := r.Clock.UnixNano()
			if s.opts.StampTolerance > 0 {
				ts = history.SnapStamp(r.Due.UnixNano(), ts, int64(s.opts.StampTolerance))
			}
			sm.Clock, sm.NS = ts/1e9, int32(ts%1e9)
			samples = append(samples, sm)
			if sm.Type == pipeline.Raw {
				rawIDs = append(rawIDs, r.ItemID)
			}
			stored = append(stored, r)
			samples = s.also(snap, r, samples)
		case NotSupported:
			if it, ref := pipeline.ItemByID(snap, r.ItemID, s.accept); ref == pipeline.Accepted {
				var sm history.Sample
				if pipeline.PrepareError(it, r.Error, &sm) {
					sm.Clock, sm.NS = c.clock, 0
					samples = append(samples, sm)
					continue
				}
			}
			rt.SetItemState(r.ItemID, itemstate.Item{NotSupported: true, Error: r.Error, Clock: c.clock})
		}
	}
	slices.Sort(rawIDs)
	if len(samples) > 0 {
		if err := s.opts.Submit(samples); err != nil {
			s.m.storeErrors.Add(uint64(len(samples)))
			if n, ok := s.throttle.Allow("store"); ok {
				s.opts.Logger.Error("cannot store polled values", "values", len(samples), "err", err, "suppressed", n)
			}
			stored = stored[:0]
		}
	}
	now := s.opts.Now()
	for _, r := range stored {
		if _, raw := slices.BinarySearch(rawIDs, r.ItemID); raw {
			s.m.latency.Observe(now.Sub(r.Due).Seconds())
			continue // the shard set its state from the steps' result
		}
		rt.SetItemState(r.ItemID, itemstate.Item{}) // supported again; no-op if it was
		s.m.latency.Observe(now.Sub(r.Due).Seconds())
	}
	s.m.stored.Add(uint64(len(stored)))
	for _, r := range batch {
		if r.Status == NotSupported {
			s.m.latency.Observe(now.Sub(r.Due).Seconds())
		}
	}
	s.mu.Lock()
	s.comps = append(s.comps, comps...)
	s.mu.Unlock()
	s.wake()
}

// behind reports whether a network error happened while this process
// was too far behind to tell: the lag measured between the check's
// hand-over and its result was at least half of that span. Then the
// reply may have waited in the socket, or the connect's answer in the
// kernel, while the goroutine that would have read it waited for a CPU:
// a timeout says nothing of the target, and blaming it would make healthy
// interfaces unreachable exactly when the server is overloaded, which
// then postpones their checks and collapses the done rate. The check is
// postponed instead (counted by reason, logged once a minute). Only a
// check that ran out its time is excused: a refusal or reset that came
// before the timeout is the target's answer whatever the lag. A result
// the checker marked TimedOut ran out its time by its own account (an
// ICMP check's packets each have their own timeout, an external check's
// process its own): the lag test alone decides. Every checker's
// timeouts take this one path (agent, SNMP, ICMP, HTTP, simple TCP
// checks, external checks; TestBehindEveryChecker).
func (s *Scheduler) behind(r *Result) bool {
	if r.Sent.IsZero() {
		return false
	}
	end := r.Clock
	if end.IsZero() || end.Before(r.Sent) {
		end = time.Now()
	}
	span := end.Sub(r.Sent)
	if span <= 0 || (!r.TimedOut && r.Timeout > 0 && span < r.Timeout*9/10) {
		return false // over before its timeout: the target's answer
	}
	stalled := s.lag.Stalled(r.Sent, end)
	if stalled*2 < span {
		return false
	}
	s.m.postponed.Inc()
	if n, ok := s.throttle.Allow("postponed:behind"); ok {
		s.opts.Logger.Warn("check postponed: the server was behind, the target is not blamed", "itemid", r.ItemID, "interfaceid", r.InterfaceID,
			"err", r.Error, "span", span.Round(time.Millisecond), "lag", stalled.Round(time.Millisecond), "others_suppressed", n)
	}
	return true
}

// also appends r.Also's values, prepared as r's own (an item that is
// gone or whose value does not convert loses that value alone).
func (s *Scheduler) also(snap *catalog.Snapshot, r *Result, samples []history.Sample) []history.Sample {
	for i := range r.Also {
		v := &r.Also[i]
		it, ref := pipeline.ItemByID(snap, v.ItemID, s.accept)
		if ref != pipeline.Accepted {
			s.m.dropped.Inc()
			continue
		}
		var sm history.Sample
		if err := pipeline.Prepare(it, v.Value, &sm); err != nil {
			s.m.badValues.Inc()
			s.opts.ItemStates.SetItemState(v.ItemID, itemstate.Item{NotSupported: true, Error: err.Error(), Clock: v.Clock.Unix()})
			continue
		}
		ts := v.Clock.UnixNano()
		sm.Clock, sm.NS = ts/1e9, int32(ts%1e9)
		samples = append(samples, sm)
	}
	return samples
}

// latencyBuckets are the check latency histogram's bounds in seconds.
var latencyBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
