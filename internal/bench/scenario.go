package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"
)

// Env is what every scenario runs with.
type Env struct {
	Target   *Target
	API      *APIClient
	Progress *Progress
	// Keep leaves the scenario's hosts and items in place (a later run
	// reuses them instead of creating them again).
	Keep bool
	// Group is the host group bench hosts go into.
	Group string
	// ItemsTemplate, if set, is the name of a template that carries the
	// bench items, linked to every bench host (Layout.Template).
	ItemsTemplate string
	Cores         int
	// Packet is the values per sender frame (default 1000; zabbix_sender
	// sends 250).
	Packet int
	// Data is the shape and seed of every value sent (values.go).
	Data Data
	// Warmup is how long each scenario sends, unmeasured, to all its
	// items at WarmupRate before its first measured step, then waits
	// until that is readable: neither server is measured cold (Zabbix
	// right after creating 100k items is still loading its caches and
	// its database is cold). 0: no warm-up (tests).
	Warmup     time.Duration
	WarmupRate float64 // values/s (default 10,000)
	// settleSample, settleMax and settleIdle tune settle (defaults 5 s,
	// 2 min and settleBelow; tests change them).
	settleSample, settleMax time.Duration
	settleIdle              float64

	mu        sync.Mutex
	nextClock int64
}

// Scenario is one measurement method.
type Scenario interface {
	// Name is the scenario's command-line name and CSV file stem.
	Name() string
	// Run measures and returns the report section. A scenario that stops
	// early returns the rows it has, with a note saying where and why.
	Run(ctx context.Context, env *Env) (Section, error)
}

func (e *Env) packet() int {
	if e.Packet <= 0 {
		return 1000
	}
	return e.Packet
}

// clockSpan reserves n consecutive seconds of value clocks, disjoint from
// every other span of this run, starting a day ago (inside every item's
// history retention, older than anything a live agent sends).
func (e *Env) clockSpan(n int64) int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.nextClock == 0 {
		e.nextClock = time.Now().Add(-24 * time.Hour).Unix()
	}
	c := e.nextClock
	e.nextClock += n + 10
	return c
}

// runNS is a random nanosecond value for a send: values of different runs
// that reuse items and clocks still differ.
func runNS() int { return rand.IntN(999_000_000) + 1 }

func (e *Env) layout(prefix string, hosts, items int) Layout {
	g := e.Group
	if g == "" {
		g = "Peregrine bench"
	}
	return Layout{Group: g, HostPrefix: prefix, Hosts: hosts, ItemsPerHost: items, KeyPrefix: "bench.item.", Template: e.ItemsTemplate}
}

// provision creates the layout with a progress line.
func (e *Env) provision(ctx context.Context, l Layout) (Provisioned, error) {
	var status string
	var mu sync.Mutex
	stop := e.Progress.Run(Phase{Label: fmt.Sprintf("setup: %d hosts × %d items", l.Hosts, l.ItemsPerHost), Extra: func() string {
		mu.Lock()
		defer mu.Unlock()
		return status
	}})
	p, err := Provision(ctx, e.API, e.Target, l, func(s string) { mu.Lock(); status = s; mu.Unlock() })
	stop()
	if err != nil {
		return p, fmt.Errorf("cannot create the bench hosts and items on %s: %w", e.Target.APIURL, err)
	}
	e.Progress.Logf("setup: %d hosts × %d items ready (%d created) in %s", l.Hosts, l.ItemsPerHost, p.CreatedItems, p.Elapsed.Round(100*time.Millisecond))
	return p, nil
}

// cleanup deletes what provision made unless Keep is set.
func (e *Env) cleanup(p Provisioned) {
	if e.Keep || len(p.HostIDs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	t0 := time.Now()
	if err := Cleanup(ctx, e.API, p); err != nil {
		e.Progress.Logf("cleanup failed (delete the hosts of group %q by hand): %v", e.Group, err)
		return
	}
	e.Progress.Logf("cleanup: %d hosts deleted in %s", len(p.HostIDs), time.Since(t0).Round(100*time.Millisecond))
}

// plan is a SendPlan with the run's frame size and data.
func (e *Env) plan(items ItemSet, startClock int64) SendPlan {
	return SendPlan{Items: items, StartClock: startClock, NS: runNS(), PacketValues: e.packet(), Data: e.Data}
}

// warmUp sends to every item of items (on hosts hostids) at WarmupRate
// for Warmup, at least one value per item, then waits until the values
// are readable, so that the first measured step finds the server warm
// and idle. It returns the note the report prints about it.
func (e *Env) warmUp(ctx context.Context, scenario string, items ItemSet, hostids []string) (string, error) {
	if e.Warmup <= 0 {
		return "No warm-up (--warmup-time 0): the first measured step met the server cold.", nil
	}
	rate := e.WarmupRate
	if rate <= 0 {
		rate = 10_000
	}
	n := int64(items.Len())
	want := max(int64(rate*e.Warmup.Seconds()), n)
	rounds := (want + n - 1) / n
	base := e.clockSpan(rounds)
	count := func(ctx context.Context) (int64, error) { return e.API.HistoryCount(ctx, hostids, base, base+rounds-1) }
	before, err := count(ctx)
	if err != nil {
		return "", err
	}
	plan := e.plan(items, base)
	plan.TotalValues, plan.Rate = want, rate
	t0 := time.Now()
	label := scenario + ": warm-up (not measured)"
	res, err := e.sendWithProgress(ctx, label, plan, want)
	if err != nil {
		return "", err
	}
	got, at, _, err := e.waitReadable(ctx, label+": until readable", count, before+res.Sent, 30*time.Second, 5*time.Minute)
	if err != nil {
		return "", err
	}
	note := fmt.Sprintf("Warm-up (not measured): %s values to all %s items at %s values/s for %s; %s of them readable %s after its start.",
		human(float64(res.Sent)), human(float64(n)), human(rate), res.Elapsed.Round(100*time.Millisecond), human(float64(got-before)), at.Sub(t0).Round(100*time.Millisecond))
	if res.Errors > 0 || res.Failed > 0 || got-before < res.Sent {
		note += fmt.Sprintf(" It did not end clean (%d frames and %d values failed, %s not readable): the server was still busy when the measurement began.",
			res.Errors, res.Failed, human(float64(res.Sent-(got-before))))
	}
	note += " " + e.settle(ctx)
	e.Progress.Logf("%s", note)
	return note, nil
}

// settle waits until the server's processes are idle — under
// settleBelow of a core over a settleSample — at most settleMax: after a
// burst Zabbix's history syncers and PostgreSQL's checkpointer keep
// working after the values are readable, and a step that starts then
// measures the tail of the warm-up. It says what it found; a server it
// cannot observe (none found, or running inside the harness) is not
// waited for.
func (e *Env) settle(ctx context.Context) string {
	sc := e.Target.ServerCPU
	if len(sc.PIDs) == 0 || sc.Self {
		return "The server's CPU cannot be observed apart from the harness, so the first step did not wait for it to idle."
	}
	sample, limit, idle := e.settleSample, e.settleMax, e.settleIdle
	if idle <= 0 {
		idle = settleBelow
	}
	if sample <= 0 {
		sample = 5 * time.Second
	}
	if limit <= 0 {
		limit = 2 * time.Minute
	}
	t0 := time.Now()
	for {
		m := StartCPU(sc)
		select {
		case <-ctx.Done():
			return "Interrupted while waiting for the server to idle."
		case <-time.After(sample):
		}
		u := m.Stop()
		if u.Server < idle {
			return fmt.Sprintf("The server then idled (%.0f %% of a core over %s) %s after the warm-up.", 100*u.Server, sample, time.Since(t0).Round(time.Second))
		}
		if time.Since(t0) >= limit {
			return fmt.Sprintf("The server was still busy %s after the warm-up (%.0f %% of a core over %s): the first step met it working.", limit, 100*u.Server, sample)
		}
	}
}

// settleBelow is "idle" in cores: above a Zabbix server's own background
// work (pollers, the configuration syncer), below a history syncer busy
// with a backlog.
const settleBelow = 0.25

// sendWithProgress runs a send with a live line.
func (e *Env) sendWithProgress(ctx context.Context, label string, plan SendPlan, total int64) (SendResult, error) {
	var prog SendProgress
	stop := e.Progress.Run(Phase{Label: label, Done: prog.Processed.Load, Total: total, Unit: "values", Extra: func() string {
		if n := prog.Errors.Load(); n > 0 {
			return fmt.Sprintf("frame errors %d", n)
		}
		return ""
	}})
	s := e.Target.Sender
	res, err := s.Send(ctx, plan, &prog)
	stop()
	return res, err
}

// waitReadable polls a count with a live line.
func (e *Env) waitReadable(ctx context.Context, label string, count Counter, want int64, stall, timeout time.Duration) (int64, time.Time, time.Duration, error) {
	var cur int64
	var mu sync.Mutex
	stop := e.Progress.Run(Phase{Label: label, Done: func() int64 { mu.Lock(); defer mu.Unlock(); return cur }, Total: want, Unit: "readable"})
	n, at, call, err := WaitCount(ctx, count, want, 200*time.Millisecond, stall, timeout, func(v int64) { mu.Lock(); cur = v; mu.Unlock() })
	stop()
	return n, at, call, err
}

// cpuCells formats a CPU interval for tables.
func cpuCells(u CPUUse, cores int) (gen, srv, sat string) {
	gen = fmt.Sprintf("%.0f %%", 100*u.Generator)
	srv = "—"
	if u.Measured {
		srv = fmt.Sprintf("%.0f %%", 100*u.Server)
	}
	sat = "no"
	if u.GeneratorSaturated(cores) {
		sat = "**yes**"
	}
	return
}

// saturationNote is added to a section when any step's generator was
// saturated.
func saturationNote(steps []string) string {
	return "The load generator was saturated (≥ 90 % of a core, or ≥ a quarter of a fully busy machine) in: " +
		strings.Join(steps, ", ") + ". Those steps measure the generator as much as the server."
}

// cpuHelp is the common explanation of the CPU columns.
const cpuHelp = "CPU columns are in % of one core over the step (100 % = one core busy): " +
	"`generator` is this harness (getrusage), `server` is the target's local processes and their children (/proc)."

// minStep is the shortest measured step whose figure counts: Zabbix's
// history cache, its syncers and PostgreSQL's checkpoints work in cycles
// of tens of seconds, and a shorter step can end before the backlog it
// built shows (issue 10: "≥ 60 s at the knee").
const minStep = time.Minute

func shortStepNote(flag string, d time.Duration) string {
	return fmt.Sprintf("Steps of %s (%s) are shorter than %s: the peer's caches and syncers may not reach a steady state within a step, so these figures are a quick look, not for publication.", d, flag, minStep)
}
