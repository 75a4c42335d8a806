package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// IngestMax finds the highest sustained rate with no loss: offer Rates (or
// StartRate doubling up to MaxRate) for StepDuration each; a step passes
// when every value sent is readable, none failed, and the readable rate
// (values / time from the step's start until all are readable) reaches
// Sustain × the offered rate. Stepping stops at the first failing step.
type IngestMax struct {
	Items        int // default 100,000
	ItemsPerHost int // default 1000
	Rates        []float64
	StartRate    float64 // default 25,000
	MaxRate      float64 // default 3,200,000
	StepDuration time.Duration
	Sustain      float64 // default 0.95
	DrainTimeout time.Duration
}

// Name implements Scenario.
func (*IngestMax) Name() string { return "ingest-max" }

// IngestMaxColumns is the CSV header.
var IngestMaxColumns = []string{"target", "items", "offered_nvps", "step_s", "sent", "processed", "failed", "frame_errors",
	"accepted_nvps", "readable", "readable_s", "readable_nvps", "loss", "pass", "count_call_s", "gen_cpu", "server_cpu", "gen_saturated"}

// Run implements Scenario.
func (m *IngestMax) Run(ctx context.Context, env *Env) (Section, error) {
	sec := Section{Title: "ingest-max (highest sustained rate with no loss)"}
	if m.Items <= 0 {
		m.Items = 100_000
	}
	if m.ItemsPerHost <= 0 {
		m.ItemsPerHost = 1000
	}
	if m.Items%m.ItemsPerHost != 0 {
		return sec, errors.New("ingest-max: --items must be a multiple of --items-per-host")
	}
	if m.StartRate <= 0 {
		m.StartRate = 25_000
	}
	if m.MaxRate <= 0 {
		m.MaxRate = 3_200_000
	}
	rates := m.Rates
	if len(rates) == 0 {
		for r := m.StartRate; r <= m.MaxRate; r *= 2 {
			rates = append(rates, r)
		}
	}
	if m.StepDuration <= 0 {
		m.StepDuration = time.Minute
	}
	if m.Sustain <= 0 {
		m.Sustain = 0.95
	}
	if m.DrainTimeout <= 0 {
		m.DrainTimeout = 2 * time.Minute
	}
	hosts := m.Items / m.ItemsPerHost
	lay := env.layout("pb-im-", hosts, m.ItemsPerHost)
	prov, err := env.provision(ctx, lay)
	if err != nil {
		return sec, err
	}
	defer env.cleanup(prov)
	warm, err := env.warmUp(ctx, "ingest-max", lay.ItemSet(hosts), prov.HostIDs)
	if err != nil {
		return sec, err
	}
	sec.Text = append(sec.Text, warm)
	if m.StepDuration < minStep {
		sec.Notes = append(sec.Notes, shortStepNote("--step", m.StepDuration))
	}
	csv := &CSV{File: "ingest-max.csv", Header: IngestMaxColumns}
	table := Table{Header: []string{"offered NVPS", "accepted NVPS", "readable NVPS", "lost", "failed", "pass", "generator CPU", "server CPU", "generator saturated"}}
	best := -1.0
	var saturated []string
	for _, rate := range rates {
		want := int64(rate * m.StepDuration.Seconds())
		rounds := (want + int64(m.Items) - 1) / int64(m.Items)
		base := env.clockSpan(rounds)
		from, till := base, base+rounds-1
		count := func(ctx context.Context) (int64, error) { return env.API.HistoryCount(ctx, prov.HostIDs, from, till) }
		before, err := count(ctx)
		if err != nil {
			return sec, err
		}
		cpu := StartCPU(env.Target.ServerCPU)
		t0 := time.Now()
		label := fmt.Sprintf("ingest-max %s NVPS offered", fmtCount(rate))
		plan := env.plan(lay.ItemSet(hosts), base)
		plan.TotalValues, plan.Rate, plan.Duration = want, rate, m.StepDuration+m.StepDuration/2
		res, err := env.sendWithProgress(ctx, label, plan, want)
		if err != nil {
			return sec, err
		}
		sendS := time.Since(t0).Seconds()
		n, at, call, err := env.waitReadable(ctx, label+": until readable", count, before+res.Sent, 15*time.Second, m.DrainTimeout)
		if err != nil {
			return sec, err
		}
		use := cpu.Stop()
		readable := n - before
		// The rate is the server's: its count call's own duration is not
		// held against it (the call started after every value was stored
		// at the latest).
		readS := (at.Sub(t0) - call).Seconds()
		readRate := float64(readable) / math.Max(readS, sendS)
		lost := res.Sent - readable
		pass := lost == 0 && res.Failed == 0 && res.Errors == 0 && res.Sent == want && readRate >= m.Sustain*rate
		gen, srv, sat := cpuCells(use, env.Cores)
		if use.GeneratorSaturated(env.Cores) {
			saturated = append(saturated, fmt.Sprintf("%s NVPS", human(rate)))
		}
		passCell := "yes"
		if !pass {
			passCell = "**no**"
		} else {
			best = rate
		}
		table.Rows = append(table.Rows, []string{human(rate), human(float64(res.Processed) / sendS), human(readRate), human(float64(lost)), human(float64(res.Failed)), passCell, gen, srv, sat})
		csv.Rows = append(csv.Rows, []string{env.Target.Name, fi(int64(m.Items)), f(rate), f(m.StepDuration.Seconds()), fi(res.Sent), fi(res.Processed), fi(res.Failed), fi(res.Errors),
			f(float64(res.Processed) / sendS), fi(readable), f(readS), f(readRate), fi(lost), fmt.Sprint(pass), f(call.Seconds()), f(use.Generator), f(use.Server), fmt.Sprint(use.GeneratorSaturated(env.Cores))})
		env.Progress.Logf("ingest-max %s NVPS offered: accepted %s/s, readable %s/s, lost %d, failed %d: pass=%v; generator %s, server %s",
			human(rate), human(float64(res.Processed)/sendS), human(readRate), lost, res.Failed, pass, gen, srv)
		if res.FirstErr != nil {
			sec.Notes = append(sec.Notes, fmt.Sprintf("%s NVPS: %d frames failed; first error: %v", human(rate), res.Errors, res.FirstErr))
		}
		if !pass {
			why := "it lost values"
			switch {
			case res.Sent < want:
				why = fmt.Sprintf("the senders could offer only %s values in the step (%s of the rate)", human(float64(res.Sent)), pct(float64(res.Sent)/float64(want)))
			case lost == 0 && readRate < m.Sustain*rate:
				why = fmt.Sprintf("all values arrived but the readable rate was %s of the offered rate", pct(readRate/rate))
			case res.Failed > 0 || res.Errors > 0:
				why = "values or frames failed"
			}
			sec.Notes = append(sec.Notes, fmt.Sprintf("Stopped at %s NVPS offered: %s.", human(rate), why))
			break
		}
	}
	sec.CSV = csv
	sec.Tables = append(sec.Tables, table)
	sec.Text = append(sec.Text, fmt.Sprintf(
		"%s float trapper items (%d hosts × %d); each step offers a fixed rate for %s (paced over all %d connections), then waits until "+
			"history.get countOutput returns every value sent (the readable rate counts until that count call started). A step passes with 0 lost, 0 failed and a readable rate "+
			"(values / time until all readable) ≥ %.0f %% of the offered rate. %s",
		human(float64(m.Items)), hosts, m.ItemsPerHost, m.StepDuration, env.Target.Sender.Conns, 100*m.Sustain, cpuHelp))
	if best > 0 {
		sec.Text = append(sec.Text, fmt.Sprintf("**Highest sustained rate with 0 loss: %s NVPS** (of the rates offered).", human(best)))
	} else {
		sec.Text = append(sec.Text, "**No step passed.**")
	}
	if len(saturated) > 0 {
		sec.Notes = append(sec.Notes, saturationNote(saturated))
	}
	sec.Plots = append(sec.Plots, NamedPlot{File: "ingest-max.svg", Plot: IngestMaxPlot([]*CSV{csv})})
	return sec, nil
}

// IngestMaxPlot draws readable rate against offered rate with the ideal.
func IngestMaxPlot(csvs []*CSV) Plot {
	p := Plot{Title: "ingest-max: readable rate vs offered rate", XLabel: "offered load (values/s)", YLabel: "values/s readable (sent / time until all readable)"}
	maxX := 0.0
	for _, c := range csvs {
		s := Series{}
		if len(c.Rows) > 0 {
			s.Name = c.Get(0, "target") + ": readable"
		}
		for i := range c.Rows {
			x := c.Float(i, "offered_nvps")
			s.X, s.Y = append(s.X, x), append(s.Y, c.Float(i, "readable_nvps"))
			maxX = math.Max(maxX, x)
		}
		p.Series = append(p.Series, s)
	}
	if maxX > 0 {
		p.Series = append([]Series{{Name: "ideal (readable = offered)", X: []float64{0, maxX}, Y: []float64{0, maxX}, Style: StyleIdeal}}, p.Series...)
	}
	return p
}
