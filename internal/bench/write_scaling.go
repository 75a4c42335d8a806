package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// WriteScaling is the HistoryGluon method: step the number of monitored
// targets, each with the same ItemsPerTarget items sending one value
// every Interval; after Warmup, count the values with clocks inside a
// Window that are readable right after it (and again after a drain), and
// compare with the ideal targets × items × window / interval.
type WriteScaling struct {
	Targets        []int // steps, ascending
	ItemsPerTarget int
	Interval       time.Duration // whole seconds
	Warmup, Window time.Duration
	// Grace is how long after the window's last round the "written by the
	// window's end" count is taken (default one interval).
	Grace        time.Duration
	DrainTimeout time.Duration // wait for late values after the window
	// OnLine is the fraction of the ideal a step must reach to be "on the
	// line" (default 0.99).
	OnLine float64
	// StopBelow stops stepping once a step writes less than this fraction
	// of the ideal (default 0.5): the server has fallen far behind.
	StopBelow float64
	MaxTime   time.Duration // stop stepping after this much time (0: none)
}

// Name implements Scenario.
func (*WriteScaling) Name() string { return "write-scaling" }

func (w *WriteScaling) defaults() error {
	if len(w.Targets) == 0 {
		w.Targets = []int{10, 20, 50, 100, 200}
	}
	if !slices.IsSorted(w.Targets) || w.Targets[0] <= 0 {
		return errors.New("write-scaling: --steps must be ascending positive target counts")
	}
	if w.ItemsPerTarget <= 0 {
		w.ItemsPerTarget = 100
	}
	if w.Interval <= 0 {
		w.Interval = time.Second
	}
	if w.Interval%time.Second != 0 {
		return errors.New("write-scaling: --interval must be whole seconds (value clocks are seconds)")
	}
	if w.Warmup < 0 {
		w.Warmup = 0
	}
	if w.Window <= 0 {
		w.Window = time.Minute
	}
	if w.Warmup%w.Interval != 0 || w.Window%w.Interval != 0 {
		return errors.New("write-scaling: --warmup and --window must be multiples of --interval")
	}
	if w.Grace <= 0 {
		w.Grace = w.Interval
	}
	if w.DrainTimeout <= 0 {
		w.DrainTimeout = 2 * time.Minute
	}
	if w.OnLine <= 0 {
		w.OnLine = 0.99
	}
	if w.StopBelow <= 0 {
		w.StopBelow = 0.5
	}
	return nil
}

// WriteScalingColumns is the CSV header.
var WriteScalingColumns = []string{"target", "targets", "items", "interval_s", "offered_nvps", "window_s",
	"ideal", "written", "written_ratio", "after_drain", "drain_s", "sent", "processed", "failed", "frame_errors",
	"gen_cpu", "server_cpu", "gen_saturated", "ack_p50_s", "ack_p99_s"}

// Run implements Scenario.
func (w *WriteScaling) Run(ctx context.Context, env *Env) (Section, error) {
	sec := Section{Title: "write-scaling (HistoryGluon method)"}
	if err := w.defaults(); err != nil {
		return sec, err
	}
	maxT := w.Targets[len(w.Targets)-1]
	lay := env.layout("pb-ws-", maxT, w.ItemsPerTarget)
	prov, err := env.provision(ctx, lay)
	if err != nil {
		return sec, err
	}
	defer env.cleanup(prov)
	warm, err := env.warmUp(ctx, "write-scaling", lay.ItemSet(maxT), prov.HostIDs)
	if err != nil {
		return sec, err
	}
	sec.Text = append(sec.Text, warm)
	if w.Window < minStep {
		sec.Notes = append(sec.Notes, shortStepNote("--window", w.Window))
	}
	csv := &CSV{File: "write-scaling.csv", Header: WriteScalingColumns}
	table := Table{Header: []string{"targets", "items", "offered NVPS", "ideal per window", "sent (whole step)", "written by window end", "on the line", "after drain", "drain", "ack p50 / p99", "generator CPU", "server CPU", "generator saturated"}}
	ivl := int64(w.Interval / time.Second)
	warmRounds, winRounds := int64(w.Warmup/w.Interval), int64(w.Window/w.Interval)
	var saturated []string
	start := time.Now()
	knee, kneeSet := 0.0, false
	for _, n := range w.Targets {
		if w.MaxTime > 0 && time.Since(start) > w.MaxTime {
			sec.Notes = append(sec.Notes, fmt.Sprintf("Stopped before %d targets: the scenario's time budget (--max-time %s) was used up.", n, w.MaxTime))
			break
		}
		items := int64(n * w.ItemsPerTarget)
		offered := float64(items) / w.Interval.Seconds()
		rounds := warmRounds + winRounds
		// Clocks are real time: round r carries start+r×interval.
		first := time.Now().Truncate(time.Second).Add(2 * time.Second)
		select {
		case <-time.After(time.Until(first)):
		case <-ctx.Done():
			return sec, ctx.Err()
		}
		base := first.Unix()
		from, till := base+warmRounds*ivl, base+(rounds-1)*ivl
		hostids := prov.HostIDs[:n]
		count := func(ctx context.Context) (int64, error) { return env.API.HistoryCount(ctx, hostids, from, till) }
		before, err := count(ctx)
		if err != nil {
			return sec, err
		}
		ideal := items * winRounds
		cpu := StartCPU(env.Target.ServerCPU)
		plan := env.plan(lay.ItemSet(n), base)
		plan.ClockStep, plan.Rounds, plan.Interval, plan.Duration = ivl, rounds, w.Interval, time.Duration(rounds)*w.Interval+w.Grace
		label := fmt.Sprintf("write-scaling %d targets (%s NVPS offered)", n, fmtCount(offered))
		res, err := env.sendWithProgress(ctx, label, plan, items*rounds)
		if err != nil {
			return sec, err
		}
		// Written by the window's end: counted one grace period after the
		// last round was due.
		end := first.Add(time.Duration(rounds) * w.Interval)
		select {
		case <-time.After(time.Until(end.Add(w.Grace))):
		case <-ctx.Done():
			return sec, ctx.Err()
		}
		atEnd, err := count(ctx)
		if err != nil {
			return sec, err
		}
		written := atEnd - before
		use := cpu.Stop()
		after, at, _, err := env.waitReadable(ctx, label+": drain", count, before+ideal, 10*time.Second, w.DrainTimeout)
		if err != nil {
			return sec, err
		}
		drained := after - before
		drain := math.Max(0, at.Sub(end).Seconds())
		if drained == written {
			drain = 0 // nothing arrived after the window's end
		}
		ratio := float64(written) / float64(ideal)
		gen, srv, sat := cpuCells(use, env.Cores)
		if use.GeneratorSaturated(env.Cores) {
			saturated = append(saturated, fmt.Sprintf("%d targets", n))
		}
		on := "yes"
		if ratio < w.OnLine {
			on = "**no**"
		} else if !kneeSet || offered > knee {
			knee, kneeSet = offered, true
		}
		table.Rows = append(table.Rows, []string{human(float64(n)), human(float64(items)), human(offered), human(float64(ideal)),
			fmt.Sprintf("%s of %s", human(float64(res.Sent)), human(float64(items*rounds))), fmt.Sprintf("%s (%.1f %%)", human(float64(written)), 100*ratio), on, human(float64(drained)), secs(drain), ms(res.ReplyP50.Seconds()) + " / " + ms(res.ReplyP99.Seconds()), gen, srv, sat})
		csv.Rows = append(csv.Rows, []string{env.Target.Name, fi(int64(n)), fi(items), fi(ivl), f(offered), f(w.Window.Seconds()),
			fi(ideal), fi(written), f(ratio), fi(drained), f(drain), fi(res.Sent), fi(res.Processed), fi(res.Failed), fi(res.Errors),
			f(use.Generator), f(use.Server), fmt.Sprint(use.GeneratorSaturated(env.Cores)), f(res.ReplyP50.Seconds()), f(res.ReplyP99.Seconds())})
		env.Progress.Logf("write-scaling %d targets: offered %s NVPS, written %d of %d (%.1f %%) by the window's end, %d after %.0fs drain; generator %s, server %s",
			n, human(offered), written, ideal, 100*ratio, drained, drain, gen, srv)
		if res.FirstErr != nil {
			sec.Notes = append(sec.Notes, fmt.Sprintf("%d targets: %d frames failed; first error: %v", n, res.Errors, res.FirstErr))
		}
		if ratio < w.StopBelow {
			sec.Notes = append(sec.Notes, fmt.Sprintf("Stopped after %d targets: the server wrote only %.0f %% of the ideal in the window (below %.0f %%), it has fallen far behind.", n, 100*ratio, 100*w.StopBelow))
			break
		}
	}
	sec.CSV = csv
	sec.Tables = append(sec.Tables, table)
	sec.Text = append(sec.Text, fmt.Sprintf(
		"Each target has %d float trapper items, each sending one value every %s (clock = the second it is due). "+
			"Per step: %s warm-up, then a %s window; \"written by window end\" counts, with history.get countOutput, the values whose clocks fall in the window, "+
			"%s after its last round; ideal = targets × items × window / interval. \"After drain\" counts again once the count stops growing (at most %s). %s",
		w.ItemsPerTarget, w.Interval, w.Warmup, w.Window, w.Grace, w.DrainTimeout, cpuHelp))
	if kneeSet {
		last := csvFloat(csv, len(csv.Rows)-1, "written_ratio")
		if knee == csvFloat(csv, len(csv.Rows)-1, "offered_nvps") && last >= w.OnLine {
			sec.Text = append(sec.Text, fmt.Sprintf("**Knee: not reached** — every step was on the line (≥ %.0f %% of the ideal); the largest load measured is **%s NVPS**.", 100*w.OnLine, human(knee)))
		} else {
			sec.Text = append(sec.Text, fmt.Sprintf("**Knee: %s NVPS** — the largest offered load still on the line (≥ %.0f %% of the ideal written by the window's end).", human(knee), 100*w.OnLine))
		}
	} else if len(csv.Rows) > 0 {
		sec.Text = append(sec.Text, "**Knee: below the smallest step** — no step was on the line.")
	}
	if len(saturated) > 0 {
		sec.Notes = append(sec.Notes, saturationNote(saturated))
	}
	sec.Plots = append(sec.Plots, NamedPlot{File: "write-scaling.svg", Plot: WriteScalingPlot([]*CSV{csv})})
	return sec, nil
}

func csvFloat(c *CSV, row int, col string) float64 { return c.Float(row, col) }

// WriteScalingPlot draws written values per window against offered load
// for one or more targets' CSVs, with the ideal line.
func WriteScalingPlot(csvs []*CSV) Plot {
	p := Plot{
		Title:  "write-scaling: values written per window vs offered load",
		XLabel: "offered load (values/s = targets × items / interval)",
		YLabel: "values written per window",
	}
	maxX, win := 0.0, 0.0
	for _, c := range csvs {
		s := Series{Name: "written by window end"}
		for i := range c.Rows {
			x, y := c.Float(i, "offered_nvps"), c.Float(i, "written")
			s.X, s.Y = append(s.X, x), append(s.Y, y)
			maxX = math.Max(maxX, x)
			win = c.Float(i, "window_s")
		}
		if len(c.Rows) > 0 {
			s.Name = c.Get(0, "target") + ": " + s.Name
		}
		p.Series = append(p.Series, s)
	}
	for _, c := range csvs {
		if k := knee(c); k > 0 && len(c.Rows) > 0 && k < c.Float(len(c.Rows)-1, "offered_nvps") {
			p.Marks = append(p.Marks, Mark{X: k, Label: "knee " + c.Get(0, "target") + ": " + fmtTick(k) + " NVPS"})
		}
	}
	if maxX > 0 && win > 0 {
		p.Series = append([]Series{{Name: fmt.Sprintf("ideal (offered × %.0f s window)", win), X: []float64{0, maxX}, Y: []float64{0, maxX * win}, Style: StyleIdeal}}, p.Series...)
	}
	return p
}
