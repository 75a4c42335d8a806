package bench

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Storm is the incident storm (issue 13): Items trapper items on hosts of
// up to 1,000 items, one trigger `last(/host/key)>0` per item. Every item
// gets a baseline 0 (waited until readable), then one value 1 each as
// fast as the senders go; the figure is the time from the last value's
// acknowledgement until problem.get countOutput over the storm's hosts
// says Items. Then every item gets 0 and the figure is the time until the
// count is 0. At the peak it times problem.get of 1,000 problems and of
// all open ones. Before the storm a probe fires and recovers the last
// trigger alone, so that Zabbix's configuration cache is known to hold
// the triggers. Only the shared API is used (trigger.create with an
// array, problem.get), so it runs against Zabbix 6.0 as well.
type Storm struct {
	Items   int           // default 100,000
	Timeout time.Duration // longest wait for each count (default 5 min)
	Poll    time.Duration // count polling period (default 50 ms)
	Reps    int           // problem.get calls per size at the peak (default 5)
	Batch   int           // triggers per trigger.create call (default 1,000)
}

// Name implements Scenario.
func (*Storm) Name() string { return "storm" }

// StormColumns is the CSV header.
var StormColumns = []string{"target", "triggers", "hosts", "fire_send_s", "fire_visible_s", "fire_reached", "recover_send_s", "recover_visible_s", "recover_reached",
	"get_1k_median_s", "get_1k_rows", "get_all_median_s", "get_all_rows", "trigger_create_s", "server_cpu"}

// stormPerHost is the items per host (Zabbix's practical host size).
const stormPerHost = 1000

// triggerBatch is the triggers per trigger.create call.
const triggerBatch = 1000

func (s *Storm) defaults() error {
	if s.Items <= 0 {
		s.Items = 100_000
	}
	if s.Items > stormPerHost && s.Items%stormPerHost != 0 {
		return fmt.Errorf("storm: --storm-items %d must be a multiple of %d (hosts of %d items)", s.Items, stormPerHost, stormPerHost)
	}
	if s.Timeout <= 0 {
		s.Timeout = 5 * time.Minute
	}
	if s.Poll <= 0 {
		s.Poll = 50 * time.Millisecond
	}
	if s.Reps <= 0 {
		s.Reps = 5
	}
	if s.Batch <= 0 {
		s.Batch = triggerBatch
	}
	return nil
}

// Run implements Scenario.
func (s *Storm) Run(ctx context.Context, env *Env) (Section, error) {
	sec := Section{Title: "storm (incident storm: every trigger fires at once, then recovers)"}
	if err := s.defaults(); err != nil {
		return sec, err
	}
	per := min(s.Items, stormPerHost)
	hosts := s.Items / per
	lay := env.layout("pb-st-", hosts, per)
	prov, err := env.provision(ctx, lay)
	if err != nil {
		return sec, err
	}
	defer env.cleanup(prov)
	t0 := time.Now()
	trigIDs, err := s.createTriggers(ctx, env, lay, prov.HostIDs)
	if len(trigIDs) > 0 && !env.Keep {
		// Deleted before the hosts, so a server that keeps triggers of
		// deleted hosts (or deletes them slowly) is left clean either way.
		defer s.deleteTriggers(env, trigIDs)
	}
	if err != nil {
		return sec, err
	}
	createdIn := time.Since(t0)
	env.Progress.Logf("storm: %d triggers created in %s", len(trigIDs), createdIn.Round(100*time.Millisecond))
	count := func(ctx context.Context) (int64, error) { return env.API.ProblemCount(ctx, prov.HostIDs) }

	// Baseline: every trigger evaluated once, OK, and the values readable.
	// Clocks: base for the baseline, base+1 and base+2 for the storm,
	// the rest for the probe.
	base := env.clockSpan(3 + 2*probeAttempts)
	items := lay.ItemSet(hosts)
	n := int64(s.Items)
	if _, err := s.send(ctx, env, "storm: baseline 0 to every item", items, base, 0); err != nil {
		return sec, err
	}
	hc := func(ctx context.Context) (int64, error) { return env.API.HistoryCount(ctx, prov.HostIDs, base, base) }
	got, _, _, err := env.waitReadable(ctx, "storm: baseline readable", hc, n, time.Minute, s.Timeout)
	if err != nil {
		return sec, err
	}
	if got < n {
		return sec, fmt.Errorf("storm baseline: only %d of %d values readable", got, n)
	}
	if open, err := count(ctx); err != nil {
		return sec, err
	} else if open != 0 {
		return sec, fmt.Errorf("storm baseline: %d problems open on the storm's hosts after every item got 0, want 0", open)
	}
	if err := s.probe(ctx, env, lay, count, base+3); err != nil {
		return sec, err
	}
	// No warm-up of realistic values: they would fire the triggers. The
	// baseline is the warm-up; then wait for the server to idle.
	warm := "Warm-up: the baseline (one 0 per item, not measured). " + env.settle(ctx)

	cpu := StartCPU(env.Target.ServerCPU)
	fireSend, err := s.send(ctx, env, "storm: 1 to every item", items, base+1, 1)
	if err != nil {
		return sec, err
	}
	fireAt, fireOK, err := s.waitFor(ctx, env, "storm: problems visible", count, func(v int64) bool { return v >= n }, n)
	if err != nil {
		return sec, err
	}
	var get1k, getAll stats
	var rows1k, rowsAll int64
	if fireOK {
		if get1k, rows1k, err = s.timeGet(ctx, env, prov.HostIDs, 1000); err != nil {
			return sec, err
		}
		if getAll, rowsAll, err = s.timeGet(ctx, env, prov.HostIDs, 0); err != nil {
			return sec, err
		}
	}
	recSend, err := s.send(ctx, env, "storm: 0 to every item", items, base+2, 0)
	if err != nil {
		return sec, err
	}
	recAt, recOK, err := s.waitFor(ctx, env, "storm: problems resolved", count, func(v int64) bool { return v == 0 }, n)
	if err != nil {
		return sec, err
	}
	use := cpu.Stop()
	_, srv, _ := cpuCells(use, env.Cores)

	reached := func(ok bool, d time.Duration) string {
		if !ok {
			return fmt.Sprintf("**not within %s**", s.Timeout)
		}
		return secs(d.Seconds())
	}
	getCell := func(st stats, rows int64) string {
		if !fireOK {
			return "—"
		}
		return fmt.Sprintf("%s (%s rows)", secs(st.median), human(float64(rows)))
	}
	sec.Tables = append(sec.Tables, Table{
		Header: []string{"triggers", "send all 1s", "all problems visible", "send all 0s", "all resolved", "problem.get 1,000", "problem.get all open", "server CPU"},
		Rows: [][]string{{human(float64(n)), secs(fireSend.Seconds()), reached(fireOK, fireAt), secs(recSend.Seconds()), reached(recOK, recAt),
			getCell(get1k, rows1k), getCell(getAll, rowsAll), srv}},
	})
	sec.CSV = &CSV{File: "storm.csv", Header: StormColumns, Rows: [][]string{{env.Target.Name, fi(n), fi(int64(hosts)),
		f(fireSend.Seconds()), f(fireAt.Seconds()), fmt.Sprint(fireOK), f(recSend.Seconds()), f(recAt.Seconds()), fmt.Sprint(recOK),
		f(get1k.median), fi(rows1k), f(getAll.median), fi(rowsAll), f(createdIn.Seconds()), f(use.Server)}}}
	sec.Text = append(sec.Text, fmt.Sprintf(
		"%s trapper items on %d hosts of %d, one trigger `last(/host/key)>0` each (created with trigger.create in batches of %d in %s). "+
			"Every item first got 0 (readable, no problem open); then one 1 each as fast as %d sender connections go, and `all problems visible` is the time from the last frame's acknowledgement "+
			"until problem.get `countOutput` over the storm's hosts returned %s (polled every %s); then one 0 each, and `all resolved` is the time until it returned 0. "+
			"At the peak, problem.get (`output: extend`, the storm's hosts) of `limit: 1000` and of all open problems, %d calls each, median. "+
			"Server CPU is over the fire and recovery. %s",
		human(float64(n)), hosts, per, s.Batch, createdIn.Round(100*time.Millisecond), max(env.Target.Sender.Conns, 1), human(float64(n)), s.Poll, s.Reps, cpuHelp))
	sec.Text = append(sec.Text, warm)
	if !fireOK || !recOK {
		sec.Notes = append(sec.Notes, fmt.Sprintf("The problem count did not reach its target within --storm-timeout %s (fire reached: %v, recovery reached: %v).", s.Timeout, fireOK, recOK))
	}
	env.Progress.Logf("storm %s triggers: visible after %s, resolved after %s; problem.get 1k %s, all %s",
		human(float64(n)), reached(fireOK, fireAt), reached(recOK, recAt), secs(get1k.median), secs(getAll.median))
	return sec, nil
}

// send sends value v to every item at clock and fails on any failed
// frame or value: a lost value would leave a trigger that never fires.
// It returns the time until the last frame's reply.
func (s *Storm) send(ctx context.Context, env *Env, label string, items ItemSet, clock int64, v float64) (time.Duration, error) {
	plan := env.plan(items, clock)
	plan.Rounds, plan.Fixed = 1, &v
	res, err := env.sendWithProgress(ctx, label, plan, int64(items.Len()))
	if err != nil {
		return 0, err
	}
	if res.Errors > 0 || res.Failed > 0 {
		return 0, fmt.Errorf("%s: %d frames failed, %d values failed (first error %v)", label, res.Errors, res.Failed, res.FirstErr)
	}
	return res.Elapsed, nil
}

// waitFor polls count every Poll until done says so or Timeout passes;
// it returns the time from its start until the reply that satisfied done.
func (s *Storm) waitFor(ctx context.Context, env *Env, label string, count Counter, done func(int64) bool, total int64) (time.Duration, bool, error) {
	var cur atomic.Int64
	stop := env.Progress.Run(Phase{Label: label, Done: cur.Load, Total: total, Unit: "open problems"})
	defer stop()
	t0 := time.Now()
	tick := time.NewTicker(s.Poll)
	defer tick.Stop()
	for {
		v, err := count(ctx)
		if err != nil {
			return 0, false, err
		}
		cur.Store(v)
		if done(v) {
			return time.Since(t0), true, nil
		}
		if time.Since(t0) >= s.Timeout {
			return time.Since(t0), false, nil
		}
		select {
		case <-ctx.Done():
			return 0, false, ctx.Err()
		case <-tick.C:
		}
	}
}

// timeGet times Reps calls of problem.get over hostids with limit (0:
// all) and checks they all returned the same row count.
func (s *Storm) timeGet(ctx context.Context, env *Env, hostids []string, limit int) (stats, int64, error) {
	var lat []float64
	var rows int64 = -1
	for range s.Reps {
		t0 := time.Now()
		n, err := env.API.ProblemRead(ctx, hostids, limit)
		if err != nil {
			return stats{}, 0, err
		}
		lat = append(lat, time.Since(t0).Seconds())
		if rows >= 0 && n != rows {
			return stats{}, 0, fmt.Errorf("problem.get limit %d: %d rows, then %d at the peak", limit, rows, n)
		}
		rows = n
	}
	return latencyStats(lat), rows, nil
}

// createTriggers deletes the triggers an earlier run left on the storm's
// hosts, then makes one trigger last(/host/key)>0 per item.
func (s *Storm) createTriggers(ctx context.Context, env *Env, lay Layout, hostids []string) ([]string, error) {
	return createItemTriggers(ctx, env, lay, hostids, 1, s.Batch, func(host, key string, _ int) (string, string) {
		return "storm " + host + " " + key, fmt.Sprintf("last(/%s/%s)>0", host, key)
	})
}

// createItemTriggers deletes the triggers an earlier kept run left on
// hostids (trigger.create of a duplicate fails on Zabbix), then makes perItem triggers on every item of lay, in trigger.create
// calls of batch triggers; def gives the j-th trigger of an item its
// name and expression. It returns the ids made so far even on error, so
// the caller can delete them.
func createItemTriggers(ctx context.Context, env *Env, lay Layout, hostids []string, perItem, batchSize int,
	def func(host, key string, j int) (name, expr string)) ([]string, error) {
	var old []struct {
		TriggerID string `json:"triggerid"`
	}
	if err := env.API.Call(ctx, "trigger.get", map[string]any{"hostids": hostids, "output": []string{"triggerid"}}, &old); err != nil {
		return nil, err
	}
	if len(old) > 0 {
		ids := make([]string, len(old))
		for i, o := range old {
			ids[i] = o.TriggerID
		}
		if err := deleteTriggerIDs(ctx, env.API, ids); err != nil {
			return nil, fmt.Errorf("deleting %d triggers of an earlier run: %w", len(ids), err)
		}
	}
	var ids []string
	var batch []map[string]any
	flush := func() error {
		var res struct {
			TriggerIDs []string `json:"triggerids"`
		}
		if err := env.API.Call(ctx, "trigger.create", batch, &res); err != nil {
			return err
		}
		if len(res.TriggerIDs) != len(batch) {
			return fmt.Errorf("trigger.create of %d triggers returned %d ids", len(batch), len(res.TriggerIDs))
		}
		ids = append(ids, res.TriggerIDs...)
		batch = batch[:0]
		return nil
	}
	for h := range lay.Hosts {
		for k := range lay.ItemsPerHost {
			host, key := lay.HostName(h), lay.Key(k)
			for j := range perItem {
				name, expr := def(host, key, j)
				batch = append(batch, map[string]any{"description": name, "expression": expr, "priority": 3})
				if len(batch) == batchSize {
					if err := flush(); err != nil {
						return ids, err
					}
				}
			}
		}
	}
	if len(batch) > 0 {
		if err := flush(); err != nil {
			return ids, err
		}
	}
	return ids, nil
}

func (s *Storm) deleteTriggers(env *Env, ids []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := deleteTriggerIDs(ctx, env.API, ids); err != nil {
		env.Progress.Logf("storm cleanup: cannot delete %d triggers: %v", len(ids), err)
	}
}

func deleteTriggerIDs(ctx context.Context, c *APIClient, ids []string) error {
	var errs []error
	for len(ids) > 0 {
		n := min(len(ids), triggerBatch)
		if err := c.Call(ctx, "trigger.delete", ids[:n], nil); err != nil {
			errs = append(errs, err)
		}
		ids = ids[n:]
	}
	return errors.Join(errs...)
}

// probeAttempts bounds the probe's sends (one every probeWait).
const (
	probeAttempts = 150
	probeWait     = 2 * time.Second
)

// probe fires and recovers the last trigger alone until a problem shows:
// Zabbix evaluates only the triggers its configuration cache has loaded
// (every CacheUpdateFrequency), and a storm sent before then would never
// fire. Triggers were created in order, so the last one loaded means all
// are. Each attempt uses its own clocks from clock on.
func (s *Storm) probe(ctx context.Context, env *Env, lay Layout, count Counter, clock int64) error {
	one := ItemSet{Hosts: []string{lay.HostName(lay.Hosts - 1)}, Keys: []string{lay.Key(lay.ItemsPerHost - 1)}}
	sender := env.Target.Sender
	sender.Conns = 1
	t0 := time.Now()
	for a := range probeAttempts {
		v := 1.0
		plan := env.plan(one, clock+int64(2*a))
		plan.Rounds, plan.Fixed = 1, &v
		if res, err := sender.Send(ctx, plan, nil); err != nil {
			return fmt.Errorf("storm probe: %w", err)
		} else if res.Failed > 0 || res.Errors > 0 {
			return fmt.Errorf("storm probe: the value was not accepted (%v)", res.FirstErr)
		}
		ps := *s
		ps.Timeout = probeWait
		_, fired, err := ps.waitFor(ctx, env, "storm: probe trigger", count, func(n int64) bool { return n >= 1 }, 1)
		if err != nil {
			return err
		}
		if !fired {
			continue
		}
		v = 0
		plan.StartClock++
		if _, err := sender.Send(ctx, plan, nil); err != nil {
			return fmt.Errorf("storm probe: %w", err)
		}
		if _, ok, err := s.waitFor(ctx, env, "storm: probe recovery", count, func(n int64) bool { return n == 0 }, 1); err != nil {
			return err
		} else if !ok {
			return fmt.Errorf("storm probe: the probe problem did not resolve within %s", s.Timeout)
		}
		env.Progress.Logf("storm: triggers evaluated (probe fired after %s)", time.Since(t0).Round(100*time.Millisecond))
		return nil
	}
	return fmt.Errorf("storm probe: the last trigger did not fire within %d attempts (%s): the server is not evaluating the storm's triggers", probeAttempts, time.Since(t0).Round(time.Second))
}
