package bench

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Backfill measures values that arrive late and out of order — what a
// proxy or an agent sends after an outage, or an import — against the
// same amount sent in order. Three phases of Values values each go to the
// same Items items, one value per item per round, a second apart:
//
//  1. in order: the newest clocks (ending a minute ago), ascending per
//     item — the baseline;
//  2. random, inside the head window: clocks just before phase 1's
//     (within HeadWindow of now), every item's rounds in a seeded random
//     time order; each value is older than its item's newest;
//  3. random, outside the head window: the same, OldAge back (older than
//     anything a server still holds in memory).
//
// For each phase: the sender rate (values acknowledged / time until the
// last reply), the time until history.get countOutput returns them all,
// and both rates as a ratio to phase 1's.
type Backfill struct {
	Items        int   // default 10,000
	ItemsPerHost int   // default 1000
	Values       int64 // per phase, default 5,000,000 (10M in random order)
	HeadWindow   time.Duration
	OldAge       time.Duration
	DrainTimeout time.Duration
	Stall        time.Duration
}

// Name implements Scenario.
func (*Backfill) Name() string { return "backfill" }

// BackfillColumns is the CSV header.
var BackfillColumns = []string{"target", "phase", "items", "values", "clock_from", "clock_till", "sent", "processed", "failed", "frame_errors",
	"send_s", "accepted_vps", "readable", "readable_s", "readable_vps", "loss", "accepted_vs_in_order", "readable_vs_in_order",
	"gen_cpu", "server_cpu", "gen_saturated"}

// Backfill phases, in the order they run.
const (
	PhaseInOrder    = "in order"
	PhaseInsideHead = "random, inside head window"
	PhaseOutside    = "random, outside head window"
)

func (b *Backfill) defaults() error {
	if b.Items <= 0 {
		b.Items = 10_000
	}
	if b.ItemsPerHost <= 0 {
		b.ItemsPerHost = 1000
	}
	if b.Items%b.ItemsPerHost != 0 {
		return errors.New("backfill: --items must be a multiple of --items-per-host")
	}
	if b.Values <= 0 {
		b.Values = 5_000_000
	}
	if b.Values%int64(b.Items) != 0 {
		return fmt.Errorf("backfill: --backfill-values %d must be a multiple of --items %d (whole rounds, so every item gets each clock once)", b.Values, b.Items)
	}
	if b.HeadWindow <= 0 {
		b.HeadWindow = time.Hour
	}
	if b.OldAge <= 0 {
		b.OldAge = 72 * time.Hour
	}
	rounds := b.Values / int64(b.Items)
	if need := time.Duration(2*rounds+120) * time.Second; need > b.HeadWindow {
		return fmt.Errorf("backfill: two phases of %d rounds a second apart need %s, more than --head-window %s (use more --items or fewer values)", rounds, need, b.HeadWindow)
	}
	if b.OldAge < b.HeadWindow+time.Duration(rounds)*time.Second {
		return errors.New("backfill: --old-age must reach further back than --head-window plus one phase")
	}
	if b.DrainTimeout <= 0 {
		b.DrainTimeout = 10 * time.Minute
	}
	if b.Stall <= 0 {
		b.Stall = time.Minute
	}
	return nil
}

// Run implements Scenario.
func (b *Backfill) Run(ctx context.Context, env *Env) (Section, error) {
	sec := Section{Title: "backfill (late values in random time order against in order)"}
	if err := b.defaults(); err != nil {
		return sec, err
	}
	hosts := b.Items / b.ItemsPerHost
	lay := env.layout("pb-bf-", hosts, b.ItemsPerHost)
	prov, err := env.provision(ctx, lay)
	if err != nil {
		return sec, err
	}
	defer env.cleanup(prov)
	items := lay.ItemSet(hosts)
	warm, err := env.warmUp(ctx, "backfill", items, prov.HostIDs)
	if err != nil {
		return sec, err
	}
	sec.Text = append(sec.Text, warm)
	rounds := b.Values / int64(b.Items)
	now := time.Now().Unix()
	// Phase 1 ends a minute ago; phase 2 ends a minute before phase 1
	// starts, so all of it is older than every item's newest value.
	inOrderFrom := now - 60 - rounds
	insideFrom := inOrderFrom - 60 - rounds
	outsideFrom := now - int64(b.OldAge/time.Second) - rounds
	phases := []struct {
		name     string
		from     int64
		position func(int, int64) int64
	}{
		{PhaseInOrder, inOrderFrom, nil},
		{PhaseInsideHead, insideFrom, ShuffledPositions(rounds, env.Data.Seed)},
		{PhaseOutside, outsideFrom, ShuffledPositions(rounds, env.Data.Seed+1)},
	}
	csv := &CSV{File: "backfill.csv", Header: BackfillColumns}
	table := Table{Header: []string{"phase", "clocks", "values", "sender rate (acknowledged/s)", "vs in order", "all readable after", "readable values/s", "vs in order", "lost", "failed", "generator CPU", "server CPU", "generator saturated"}}
	var baseAcc, baseRead float64
	var saturated []string
	for _, ph := range phases {
		from, till := ph.from, ph.from+rounds-1
		count := func(ctx context.Context) (int64, error) { return env.API.HistoryCount(ctx, prov.HostIDs, from, till) }
		before, err := count(ctx)
		if err != nil {
			return sec, err
		}
		plan := env.plan(items, from)
		plan.Rounds, plan.Position = rounds, ph.position
		cpu := StartCPU(env.Target.ServerCPU)
		t0 := time.Now()
		label := fmt.Sprintf("backfill %s: %s values", ph.name, fmtCount(float64(b.Values)))
		res, err := env.sendWithProgress(ctx, label, plan, b.Values)
		if err != nil {
			return sec, err
		}
		sendS := time.Since(t0).Seconds()
		n, at, _, err := env.waitReadable(ctx, label+": until readable", count, before+res.Sent, b.Stall, b.DrainTimeout)
		if err != nil {
			return sec, err
		}
		use := cpu.Stop()
		readable := n - before
		readS := at.Sub(t0).Seconds()
		acc, read := float64(res.Processed)/sendS, float64(readable)/readS
		if ph.name == PhaseInOrder {
			baseAcc, baseRead = acc, read
		}
		lost := res.Sent - readable
		gen, srv, sat := cpuCells(use, env.Cores)
		if use.GeneratorSaturated(env.Cores) {
			saturated = append(saturated, ph.name)
		}
		ago := func(c int64) string { return (time.Duration(now-c) * time.Second).Round(time.Minute).String() }
		clocks := fmt.Sprintf("%s to %s ago", ago(from), ago(till))
		table.Rows = append(table.Rows, []string{ph.name, clocks, human(float64(b.Values)), human(acc), ratio(acc, baseAcc), secs(readS), human(read), ratio(read, baseRead),
			human(float64(lost)), human(float64(res.Failed)), gen, srv, sat})
		csv.Rows = append(csv.Rows, []string{env.Target.Name, ph.name, fi(int64(b.Items)), fi(b.Values), fi(from), fi(till), fi(res.Sent), fi(res.Processed), fi(res.Failed), fi(res.Errors),
			f(sendS), f(acc), fi(readable), f(readS), f(read), fi(lost), f(acc / baseAcc), f(read / baseRead),
			f(use.Generator), f(use.Server), fmt.Sprint(use.GeneratorSaturated(env.Cores))})
		env.Progress.Logf("backfill %s: %s values acknowledged at %s/s (%s of in order), all readable after %s (%s/s), lost %d, failed %d",
			ph.name, human(float64(res.Processed)), human(acc), ratio(acc, baseAcc), secs(readS), human(read), lost, res.Failed)
		if res.FirstErr != nil {
			sec.Notes = append(sec.Notes, fmt.Sprintf("%s: %d frames failed; first error: %v", ph.name, res.Errors, res.FirstErr))
		}
		if lost != 0 || res.Failed != 0 {
			sec.Notes = append(sec.Notes, fmt.Sprintf("%s: %s values sent were not readable when the wait ended and %s failed: the server dropped or refused late values, or had not stored them after %s.",
				ph.name, human(float64(lost)), human(float64(res.Failed)), secs(readS)))
		}
	}
	sec.CSV = csv
	sec.Tables = append(sec.Tables, table)
	sec.Text = append(sec.Text, fmt.Sprintf(
		"%s float trapper items (%d hosts × %d), %s values per phase (%d rounds of one value per item, a second apart), over %d connections. "+
			"Phase 1 sends the newest clocks in order; phases 2 and 3 send each item's rounds in a seeded random time order (every value older than its item's newest), "+
			"inside the last %s and %s back. The values per item are the same series whatever the order (values.go). "+
			"\"Sender rate\" is values acknowledged / time until the last reply; \"all readable after\" is from the phase's start until history.get countOutput over the phase's clocks returns every value sent. %s",
		human(float64(b.Items)), hosts, b.ItemsPerHost, human(float64(b.Values)), rounds, env.Target.Sender.Conns, b.HeadWindow, b.OldAge, cpuHelp))
	if len(saturated) > 0 {
		sec.Notes = append(sec.Notes, saturationNote(saturated))
	}
	sec.Plots = append(sec.Plots, NamedPlot{File: "backfill.svg", Plot: BackfillPlot([]*CSV{csv})})
	return sec, nil
}

// BackfillPlot draws each phase's readable rate (one point per phase in
// run order) for one or more runs.
func BackfillPlot(csvs []*CSV) Plot {
	p := Plot{Title: "backfill: readable rate by phase (1 in order, 2 random inside, 3 random outside the head window)",
		XLabel: "phase", YLabel: "values/s readable"}
	for ci, c := range csvs {
		s := Series{Color: palette[ci%len(palette)]}
		if len(c.Rows) > 0 {
			s.Name = c.Get(0, "target") + ": readable values/s"
		}
		for i := range c.Rows {
			s.X, s.Y = append(s.X, float64(i+1)), append(s.Y, c.Float(i, "readable_vps"))
		}
		p.Series = append(p.Series, s)
	}
	return p
}

// backfillRatio is a phase's readable rate against in order, NaN if
// either is missing.
func backfillRatio(c *CSV, phase string) float64 {
	return phaseLike(c, "phase", phase, "readable_vs_in_order")
}
