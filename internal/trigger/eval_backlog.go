package trigger

import (
	"context"
	"slices"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// The backlog: what a shard does when values arrive faster than it
// evaluates them (a proxy catching up after an outage, a backfill).
//
// The queue holds one entry per value and trigger; past MaxPending it
// stops growing. Dropping the newest entries loses evaluations, and
// merging a trigger's waiting times into one (what the evaluator did
// before: 16 times per trigger, then the newest replaced) loses the
// values in between: a problem that opens and closes inside a merged span
// was never raised. Neither is needed, because every committed value is
// already in the history store: the shard only has to remember which
// span of time each trigger has values in, and read them back when it
// gets there. So a commit that finds the queue full puts the shard in
// backlog mode, and from then until a pass finds the backlog empty every
// commit only widens its triggers' spans (one map entry per trigger, so
// memory is bounded by the catalog, not by the backlog's length). The
// pass evaluates the queue first (committed before the backlog began),
// then each backlogged trigger at every distinct time of its items'
// values in its span, read from the store in chunks of rereadChunk
// values per item, oldest first.
//
// A trigger's re-read evaluations are strictly ascending in time: a time
// at or before one the backlog already evaluated is skipped. That keeps a
// trigger over several items from being evaluated twice at a time (its
// span's read also finds the other items' values, which their own
// commits add to the next span), at the price of a value that arrives
// out of time order (older than one already evaluated) while the shard
// is backlogged: it is seen by later evaluations' history reads, not
// evaluated at its own time. A span whose values cannot be read back (a
// store error) is counted in peregrine_trigger_eval_dropped_total and
// logged: the only evaluations the evaluator can still lose.

// backlogSpan is the times (unix ns, inclusive) a backlogged trigger's
// values cover.
type backlogSpan struct{ from, to int64 }

// rereadChunk is how many values of one item a re-read takes per store
// read: it bounds a backlogged trigger's memory, not its evaluations.
const rereadChunk = 1024

// rereadBatch is how many results a re-read hands to Process at once.
const rereadBatch = 1024

// backlogLocked widens b's triggers' spans and enters backlog mode; it
// returns how many triggers were added to the backlog. sh.mu is held.
func (sh *evalShard) backlogLocked(b []queuedEval) int {
	sh.backlogging = true
	if sh.backlog == nil {
		sh.backlog = make(map[uint64]backlogSpan)
	}
	n := len(sh.backlog)
	for _, e := range b {
		sp, ok := sh.backlog[e.trigger]
		if !ok {
			sp = backlogSpan{from: e.ts, to: e.ts}
		}
		sp.from, sp.to = min(sp.from, e.ts), max(sp.to, e.ts)
		sh.backlog[e.trigger] = sp
	}
	return len(sh.backlog) - n
}

// drainBacklog takes the shard's backlog and evaluates it; it returns
// false when there was none, leaving backlog mode (new commits go to the
// queue again). sh.passMu is held.
func (sh *evalShard) drainBacklog(ctx context.Context) bool {
	sh.mu.Lock()
	m := sh.backlog
	if len(m) == 0 {
		sh.backlogging = false
		sh.mu.Unlock()
		clear(sh.doneTill)
		return false
	}
	sh.backlog, sh.spareMap = sh.spareMap, nil
	sh.mu.Unlock()
	sh.ev.backlogGauge.Add(-int64(len(m)))
	sh.evalBacklog(ctx, m)
	clear(m)
	sh.mu.Lock()
	if sh.spareMap == nil {
		sh.spareMap = m
	}
	sh.mu.Unlock()
	return true
}

// evalBacklog evaluates each trigger of m at every distinct time of its
// items' values in its span, oldest first, trigger by trigger (ascending
// IDs, the order of the snapshot and the parse cache).
func (sh *evalShard) evalBacklog(ctx context.Context, m map[uint64]backlogSpan) {
	ev := sh.ev
	start := time.Now()
	defer func() { ev.passSeconds.Observe(time.Since(start).Seconds()) }()
	snap := ev.opts.Snapshot()
	sh.reindex(snap)
	trigs := snap.Triggers()
	ids := sh.ids[:0]
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if sh.doneTill == nil {
		sh.doneTill = make(map[uint64]int64)
	}
	results := sh.results[:0]
	flush := func() {
		ev.process(snap, results, "backlog")
		clear(results)
		results = results[:0]
	}
	pos := 0
	for _, id := range ids {
		if ctx.Err() != nil {
			break
		}
		pos = seekTrigger(trigs, pos, id)
		if pos == len(trigs) || trigs[pos].ID != id || !trigs[pos].Enabled {
			continue
		}
		t := &trigs[pos]
		c := sh.compile(t, pos)
		sp := m[id]
		if done, ok := sh.doneTill[id]; ok {
			sp.from = max(sp.from, done+1)
		}
		// inBatch: a result of t is in results, not yet processed, so
		// Machine.Settled does not know it yet: an OK after it must be
		// sent even when the trigger looks settled.
		inBatch := false
		evalAt := func(ts int64) {
			res, send := sh.evaluateCompiled(ctx, snap, t, c, time.Unix(0, ts), nil)
			if send || inBatch {
				results = append(results, res)
				inBatch = true
			}
			if len(results) >= rereadBatch {
				flush()
				inBatch = false
			}
		}
		for from := sp.from; from <= sp.to; {
			times, next, err := sh.rereadTimes(ctx, t.ItemIDs, from, sp.to)
			if err != nil {
				ev.dropped.Inc()
				if others, ok := ev.throttle.Allow("reread"); ok {
					ev.opts.Logger.Error("cannot read backlogged values of a trigger back from the history store: its evaluations in the span are lost",
						"trigger", id, "from", time.Unix(0, from).UTC(), "till", time.Unix(0, sp.to).UTC(), "err", err, "others_suppressed", others)
				}
				break
			}
			for _, ts := range times {
				evalAt(ts)
				sh.doneTill[id] = ts
			}
			ev.reread.Add(uint64(len(times)))
			from = next
		}
	}
	flush()
	sh.results = results[:0]
	clear(ids)
	sh.ids = ids[:0]
}

// rereadTimes returns the distinct times in [from, to] (unix ns) of the
// values of items, ascending, read from the store oldest first at most
// rereadChunk per item, and where the next read starts: past the newest
// time every item was read up to.
func (sh *evalShard) rereadTimes(ctx context.Context, items []uint64, from, to int64) (times []int64, next int64, err error) {
	times = sh.times[:0]
	end := to
	for _, item := range items {
		for limit := rereadChunk; ; limit *= 2 {
			n, last := 0, int64(0)
			mark := len(times)
			q := history.Query{ItemID: item, From: from / 1e9, Till: to / 1e9, Limit: limit}
			err := sh.ev.opts.Store.Read(ctx, q, func(s *history.Sample) bool {
				ts := s.Clock*1e9 + int64(s.NS)
				n, last = n+1, ts
				if ts >= from && ts <= to {
					times = append(times, ts)
				}
				return true
			})
			if err != nil {
				return times, 0, err
			}
			if n < limit {
				break // every value of the item in the span is read
			}
			if last >= from {
				end = min(end, last) // the item may have more after last
				break
			}
			// A full read of values of from's second before from: read
			// that second again with room past them.
			times = times[:mark]
		}
	}
	slices.Sort(times)
	k := 0
	for _, ts := range times {
		if ts <= end && (k == 0 || ts != times[k-1]) {
			times[k] = ts
			k++
		}
	}
	sh.times = times[:0]
	return times[:k], end + 1, nil
}
