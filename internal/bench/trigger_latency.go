package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// TriggerLatency is value-to-event latency under load (issue 13): Items
// trapper items on hosts of up to 1,000, one trigger `last(/host/key)>0`
// each (as the storm). After a baseline 0 to every item, values are sent
// at Rate for Duration with the current time as their clock: every
// second a fresh set of Flip×Items items gets 1 (its triggers fire) and
// the previous second's set gets 0 (they recover); every other value is
// a 0 to the next item in turn (evaluated, no change), skipping the set
// in problem. A poller asks problem.get for problems newer than the last
// it saw every Poll; a problem's latency is from the acknowledgement of
// the frame that carried its 1 until the first poll that returned it, so
// it includes up to one poll period. Sets never repeat an item, so every
// problem is matched to one sent value.
type TriggerLatency struct {
	Items    int           // default 1,000,000
	Rate     float64       // values/s offered, default 500,000
	Flip     float64       // share of the triggers that fire each second, default 0.001
	Duration time.Duration // default 60 s
	Poll     time.Duration // problem.get period, default 50 ms
	Batch    int           // triggers per trigger.create call, default 10,000
	Timeout  time.Duration // longest wait for the last problems to show and to resolve, default 2 min
}

// Name implements Scenario.
func (*TriggerLatency) Name() string { return "trigger-latency" }

// TriggerLatencyColumns is the CSV header.
var TriggerLatencyColumns = []string{"target", "triggers", "hosts", "offered_vps", "acked_vps", "flips_per_s", "flips_sent", "problems_seen",
	"latency_p50_s", "latency_p99_s", "latency_max_s", "frames_failed", "all_resolved", "server_cpu"}

func (s *TriggerLatency) defaults() error {
	if s.Items <= 0 {
		s.Items = 1_000_000
	}
	if s.Items > stormPerHost && s.Items%stormPerHost != 0 {
		return fmt.Errorf("trigger-latency: --latency-items %d must be a multiple of %d (hosts of %d items)", s.Items, stormPerHost, stormPerHost)
	}
	if s.Rate <= 0 {
		s.Rate = 500_000
	}
	if s.Flip <= 0 {
		s.Flip = 0.001
	}
	if s.Duration <= 0 {
		s.Duration = time.Minute
	}
	if s.Poll <= 0 {
		s.Poll = 50 * time.Millisecond
	}
	if s.Batch <= 0 {
		s.Batch = 10_000
	}
	if s.Timeout <= 0 {
		s.Timeout = 2 * time.Minute
	}
	k := s.flips()
	if k < 1 {
		return fmt.Errorf("trigger-latency: --latency-flip %g of %d triggers is less than one a second", s.Flip, s.Items)
	}
	if secs := int64(s.Duration/time.Second) + 2; int64(k)*secs > int64(s.Items) {
		return fmt.Errorf("trigger-latency: %d flips a second for %s need %d items, more than --latency-items %d (a flipped item is never reused)", k, s.Duration, int64(k)*secs, s.Items)
	}
	if float64(2*k) > s.Rate/2 {
		return fmt.Errorf("trigger-latency: %d flips and %d recoveries a second leave too little of --latency-rate %g for the other items", k, k, s.Rate)
	}
	return nil
}

func (s *TriggerLatency) flips() int { return int(s.Flip * float64(s.Items)) }

// Run implements Scenario.
func (s *TriggerLatency) Run(ctx context.Context, env *Env) (Section, error) {
	sec := Section{Title: "trigger-latency (value-to-event latency under a steady load)"}
	if err := s.defaults(); err != nil {
		return sec, err
	}
	per := min(s.Items, stormPerHost)
	hosts := s.Items / per
	lay := env.layout("pb-tl-", hosts, per)
	prov, err := env.provision(ctx, lay)
	if err != nil {
		return sec, err
	}
	defer env.cleanup(prov)
	st := &Storm{Items: s.Items, Timeout: s.Timeout, Poll: s.Poll, Batch: s.Batch}
	if err := st.defaults(); err != nil {
		return sec, err
	}
	t0 := time.Now()
	trigIDs, err := st.createTriggers(ctx, env, lay, prov.HostIDs)
	if len(trigIDs) > 0 && !env.Keep {
		defer st.deleteTriggers(env, trigIDs)
	}
	if err != nil {
		return sec, err
	}
	env.Progress.Logf("trigger-latency: %d triggers created in %s", len(trigIDs), time.Since(t0).Round(100*time.Millisecond))
	itemOf := make(map[uint64]int32, len(trigIDs)) // trigger ID → item index (host × per + key)
	for i, id := range trigIDs {
		v, err := strconv.ParseUint(id, 10, 64)
		if err != nil {
			return sec, fmt.Errorf("trigger.create returned trigger ID %q", id)
		}
		itemOf[v] = int32(i)
	}
	count := func(ctx context.Context) (int64, error) { return env.API.ProblemCount(ctx, prov.HostIDs) }

	// Baseline: every trigger evaluated once (OK) and its item's value
	// read once, so that the measured values meet warm caches.
	base := env.clockSpan(1)
	items := lay.ItemSet(hosts)
	n := int64(s.Items)
	if _, err := st.send(ctx, env, "trigger-latency: baseline 0 to every item", items, base, 0); err != nil {
		return sec, err
	}
	hc := func(ctx context.Context) (int64, error) { return env.API.HistoryCount(ctx, prov.HostIDs, base, base) }
	if got, _, _, err := env.waitReadable(ctx, "trigger-latency: baseline readable", hc, n, time.Minute, s.Timeout); err != nil {
		return sec, err
	} else if got < n {
		return sec, fmt.Errorf("trigger-latency baseline: only %d of %d values readable", got, n)
	}
	warm := "Warm-up: the baseline (one 0 per item, not measured). " + env.settle(ctx)

	run := &latencyRun{s: s, env: env, lay: lay, k: s.flips(), itemOf: itemOf, hostids: prov.HostIDs,
		ack: make([]int64, s.Items), seen: make([]int64, s.Items)}
	cpu := StartCPU(env.Target.ServerCPU)
	res, err := run.do(ctx)
	if err != nil {
		return sec, err
	}
	resolvedAt, resolved, err := st.waitFor(ctx, env, "trigger-latency: problems resolved", count, func(v int64) bool { return v == 0 }, int64(run.k))
	if err != nil {
		return sec, err
	}
	use := cpu.Stop()
	_, srv, _ := cpuCells(use, env.Cores)

	var lat []float64
	var flipsSent int64
	for i := range run.ack {
		if run.ack[i] == 0 {
			continue
		}
		flipsSent++
		if run.seen[i] > 0 {
			lat = append(lat, max(0, float64(run.seen[i]-run.ack[i]))/1e9)
		}
	}
	ls := latencyStats(lat)
	p99 := quantile(lat, 0.99)
	ackedVPS := float64(res.acked) / res.elapsed.Seconds()
	reached := secs(resolvedAt.Seconds())
	if !resolved {
		reached = fmt.Sprintf("**not within %s**", s.Timeout)
	}
	sec.Tables = append(sec.Tables, Table{
		Header: []string{"triggers", "offered values/s", "acknowledged values/s", "fire + recover /s", "problems seen / sent", "latency p50", "latency p99", "max", "last resolved after", "server CPU"},
		Rows: [][]string{{human(float64(n)), human(s.Rate), human(ackedVPS), fmt.Sprintf("%s + %s", human(float64(run.k)), human(float64(run.k))),
			fmt.Sprintf("%s / %s", human(float64(len(lat))), human(float64(flipsSent))), secs(ls.median), secs(p99), secs(ls.max), reached, srv}},
	})
	sec.CSV = &CSV{File: "trigger-latency.csv", Header: TriggerLatencyColumns, Rows: [][]string{{env.Target.Name, fi(n), fi(int64(hosts)),
		f(s.Rate), f(ackedVPS), fi(int64(run.k)), fi(flipsSent), fi(int64(len(lat))), f(ls.median), f(p99), f(ls.max), fi(res.failed), fmt.Sprint(resolved), f(use.Server)}}}
	sec.Text = append(sec.Text, fmt.Sprintf(
		"%s trapper items on %d hosts of %d, one trigger `last(/host/key)>0` each (trigger.create in batches of %d). For %s, values at %s/s offered over %d sender connections "+
			"in frames of %d, clocked with the time they were sent: each second %s items get 1 (their triggers fire) and the previous second's %s get 0 (they recover); "+
			"every other value is a 0 to the next item in turn (an evaluation that changes nothing). Latency is from the acknowledgement of the frame carrying a 1 until the first "+
			"problem.get (`eventid_from` the newest seen, every %s) that returned its problem, so it includes up to one poll period. "+
			"`last resolved after` is from the end of sending until problem.get counted no open problem on these hosts. %s",
		human(float64(n)), hosts, per, s.Batch, s.Duration, human(s.Rate), max(env.Target.Sender.Conns, 1), env.packet(), human(float64(run.k)), human(float64(run.k)), s.Poll, cpuHelp))
	sec.Text = append(sec.Text, warm)
	if res.failed > 0 {
		sec.Notes = append(sec.Notes, fmt.Sprintf("%d frames failed (first error: %v).", res.failed, res.firstErr))
	}
	if ackedVPS < 0.95*s.Rate {
		sec.Notes = append(sec.Notes, fmt.Sprintf("The server acknowledged %s values/s of the %s offered: the load was not sustained.", human(ackedVPS), human(s.Rate)))
	}
	if int64(len(lat)) < flipsSent {
		sec.Notes = append(sec.Notes, fmt.Sprintf("%d of %d problems were never seen in problem.get (waited until none showed for %s): "+
			"the poller asks for open problems, so a problem resolved by its item's next-second 0 before a poll saw it is not counted "+
			"(with evaluation lagging; a server that coalesces a trigger's values, as Peregrine did before every value was evaluated, may also never raise it: count the events to tell).", flipsSent-int64(len(lat)), flipsSent, latencyStall))
	}
	env.Progress.Logf("trigger-latency %s triggers at %s values/s offered (%s acknowledged): p50 %s, p99 %s, max %s; %d/%d problems seen",
		human(float64(n)), human(s.Rate), human(ackedVPS), secs(ls.median), secs(p99), secs(ls.max), len(lat), flipsSent)
	return sec, nil
}

// latencyRun is one measured run: the senders and the poller.
type latencyRun struct {
	s       *TriggerLatency
	env     *Env
	lay     Layout
	k       int // flips a second
	itemOf  map[uint64]int32
	hostids []string
	// ack[i] and seen[i] are unix ns of flip i's acknowledgement and of
	// the poll that first returned its problem (0: not yet). Flip i is
	// item i: set j is items [j×k, (j+1)×k).
	ack, seen []int64

	mu       sync.Mutex
	sec      int     // the second being sent: set sec fires
	fired    int     // items of set sec given their 1
	recoverQ []int32 // fired items of earlier sets still to get their 0
	next     int     // background round-robin position
}

type latencyResult struct {
	acked, failed int64
	elapsed       time.Duration
	firstErr      error
}

// frame is one frame's items and values, and whether its 1s are flips
// whose acknowledgement is recorded.
type latencyFrame struct {
	items []int32
	vals  []byte // '0' or '1' per item
	flips []int32
}

// take builds the next frame's content for second sec: the second's
// flips first, then the recoveries due, then background values.
func (r *latencyRun) take(sec int, fr *latencyFrame) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fr.items, fr.vals, fr.flips = fr.items[:0], fr.vals[:0], fr.flips[:0]
	if sec > r.sec {
		// The set of the second that ended recovers now, with what was
		// fired of it; flips an earlier second did not send are dropped
		// (never reused) rather than sent late.
		for j := range r.fired {
			r.recoverQ = append(r.recoverQ, int32(r.sec*r.k+j))
		}
		r.sec, r.fired = sec, 0
	}
	per := r.env.packet()
	for len(fr.items) < per && r.fired < r.k {
		i := int32(r.sec*r.k + r.fired)
		fr.items, fr.vals, fr.flips = append(fr.items, i), append(fr.vals, '1'), append(fr.flips, i)
		r.fired++
	}
	for len(fr.items) < per && len(r.recoverQ) > 0 {
		fr.items, fr.vals = append(fr.items, r.recoverQ[0]), append(fr.vals, '0')
		r.recoverQ = r.recoverQ[1:]
	}
	lo, hi := r.sec*r.k, (r.sec+1)*r.k // in problem: no background 0
	for len(fr.items) < per {
		i := r.next
		r.next = (r.next + 1) % r.s.Items
		if i >= lo && i < hi {
			continue
		}
		fr.items, fr.vals = append(fr.items, int32(i)), append(fr.vals, '0')
	}
}

func (r *latencyRun) build(dst []byte, fr *latencyFrame) []byte {
	now := time.Now()
	dst = append(dst[:0], `{"request":"sender data","data":[`...)
	for j, i := range fr.items {
		if j > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"host":"`...)
		dst = append(dst, r.lay.HostName(int(i)/r.lay.ItemsPerHost)...)
		dst = append(dst, `","key":"`...)
		dst = append(dst, r.lay.Key(int(i)%r.lay.ItemsPerHost)...)
		dst = append(dst, `","value":"`...)
		dst = append(dst, fr.vals[j])
		dst = append(dst, `","clock":`...)
		dst = strconv.AppendInt(dst, now.Unix(), 10)
		dst = append(dst, `,"ns":`...)
		dst = strconv.AppendInt(dst, int64(now.Nanosecond()), 10)
		dst = append(dst, '}')
	}
	return append(dst, "]}"...)
}

// do sends for Duration while the poller runs, then sends the last
// set's recovery and lets the poller finish seeing the last problems.
func (r *latencyRun) do(ctx context.Context) (latencyResult, error) {
	var res latencyResult
	var acked, failed atomic.Int64
	var errMu sync.Mutex
	pctx, stopPoll := context.WithCancel(ctx)
	defer stopPoll()
	pollErr := make(chan error, 1)
	go func() { pollErr <- r.poll(pctx) }()

	conns := max(r.env.Target.Sender.Conns, 1)
	start := time.Now()
	deadline := start.Add(r.s.Duration)
	limiter := newRateLimiter(r.s.Rate)
	var sent atomic.Int64
	stopProg := r.env.Progress.Run(Phase{Label: "trigger-latency: sending", Done: sent.Load, Total: int64(r.s.Rate * r.s.Duration.Seconds()), Unit: "values"})
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cn := &senderConn{addr: r.env.Target.Trapper, timeout: 60 * time.Second, mode: r.env.Target.Sender.Persistent}
			defer cn.close()
			var fr latencyFrame
			var buf []byte
			for ctx.Err() == nil {
				limiter.wait(r.env.packet())
				now := time.Now()
				if !now.Before(deadline) {
					return
				}
				r.take(int(now.Sub(start)/time.Second), &fr)
				buf = r.build(buf, &fr)
				_, bad, _, err := cn.exchange(buf, len(fr.items))
				at := time.Now().UnixNano()
				sent.Add(int64(len(fr.items)))
				if err != nil || bad > 0 {
					failed.Add(1)
					errMu.Lock()
					if res.firstErr == nil {
						res.firstErr = err
						if err == nil {
							res.firstErr = fmt.Errorf("%d values failed", bad)
						}
					}
					errMu.Unlock()
					continue
				}
				acked.Add(int64(len(fr.items)))
				for _, i := range fr.flips {
					atomic.StoreInt64(&r.ack[i], at)
				}
			}
		}()
	}
	wg.Wait()
	stopProg()
	res.elapsed = time.Since(start)
	res.acked, res.failed = acked.Load(), failed.Load()
	// Whatever is still in problem recovers.
	r.mu.Lock()
	var fr latencyFrame
	for _, i := range r.recoverQ {
		fr.items, fr.vals = append(fr.items, i), append(fr.vals, '0')
	}
	for j := range r.fired {
		fr.items, fr.vals = append(fr.items, int32(r.sec*r.k+j)), append(fr.vals, '0')
	}
	r.recoverQ, r.fired = nil, 0
	r.mu.Unlock()
	cn := &senderConn{addr: r.env.Target.Trapper, timeout: 60 * time.Second, mode: r.env.Target.Sender.Persistent}
	for len(fr.items) > 0 {
		n := min(len(fr.items), r.env.packet())
		part := latencyFrame{items: fr.items[:n], vals: fr.vals[:n]}
		if _, _, _, err := cn.exchange(r.build(nil, &part), n); err != nil {
			cn.close()
			return res, fmt.Errorf("trigger-latency: sending the last recovery: %w", err)
		}
		fr.items, fr.vals = fr.items[n:], fr.vals[n:]
	}
	cn.close()
	// Let the poller see the last problems; give up after Timeout, or
	// once no new one showed for latencyStall (a 1 whose 0 was already
	// resolved before a poll saw it is never returned by problem.get).
	wait := time.Now().Add(r.s.Timeout)
	last, lastChange := r.unseen(), time.Now()
	for time.Now().Before(wait) && ctx.Err() == nil && last > 0 && time.Since(lastChange) < latencyStall {
		time.Sleep(r.s.Poll)
		if n := r.unseen(); n != last {
			last, lastChange = n, time.Now()
		}
	}
	stopPoll()
	if err := <-pollErr; err != nil && !errors.Is(err, context.Canceled) {
		return res, err
	}
	return res, ctx.Err()
}

// latencyStall is how long the end of a run waits for a problem to
// show before it counts the rest as never made.
const latencyStall = 15 * time.Second

// unseen counts acknowledged flips whose problem no poll returned yet.
func (r *latencyRun) unseen() int {
	n := 0
	for i := range r.ack {
		if atomic.LoadInt64(&r.ack[i]) > 0 && atomic.LoadInt64(&r.seen[i]) == 0 {
			n++
		}
	}
	return n
}

// poll asks problem.get for problems newer than the newest seen, every
// Poll, and records when each flip's problem was first returned.
func (r *latencyRun) poll(ctx context.Context) error {
	var from uint64
	t := time.NewTicker(r.s.Poll)
	defer t.Stop()
	for {
		params := map[string]any{"hostids": r.hostids, "output": []string{"eventid", "objectid"}, "sortfield": []string{"eventid"}, "sortorder": "ASC"}
		if from > 0 {
			params["eventid_from"] = strconv.FormatUint(from+1, 10)
		}
		var got []struct {
			EventID  string `json:"eventid"`
			ObjectID string `json:"objectid"`
		}
		if err := r.env.API.Call(ctx, "problem.get", params, &got); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("trigger-latency poll: %w", err)
		}
		at := time.Now().UnixNano()
		for _, p := range got {
			eid, _ := strconv.ParseUint(p.EventID, 10, 64)
			oid, _ := strconv.ParseUint(p.ObjectID, 10, 64)
			from = max(from, eid)
			if i, ok := r.itemOf[oid]; ok {
				atomic.CompareAndSwapInt64(&r.seen[i], 0, at)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// quantile is the nearest-rank p quantile of v (NaN when empty).
func quantile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return nanF
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[max(0, min(len(s)-1, int(math.Ceil(p*float64(len(s))))-1))]
}
