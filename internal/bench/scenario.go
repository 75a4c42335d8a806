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
	Cores int
	// Packet is the values per sender frame (default 1000; zabbix_sender
	// sends 250).
	Packet int

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
	return Layout{Group: g, HostPrefix: prefix, Hosts: hosts, ItemsPerHost: items, KeyPrefix: "bench.item."}
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
