package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Dashboard is the Grafana dashboard pattern: a dashboard of Panels
// panels, each graphing ItemsPerPanel items over the last Range. Opening
// or refreshing it issues one history.get per panel (its items, the
// range, ascending: what Grafana's Zabbix data source sends), all at
// once; the refresh is done when the last panel has its data. Each step
// runs Viewers dashboards refreshing concurrently, Refreshes times each.
//
// Each panel is one host's items (pb-db-P, keys bench.item.0..), filled
// through the trapper with one realistic value per item every Interval
// over the range, ending a minute before the measurement.
type Dashboard struct {
	Panels        int           // default 20
	ItemsPerPanel int           // default 10
	Range         time.Duration // default 1h
	Interval      time.Duration // fill: one value per item per Interval (default 10 s)
	Viewers       []int         // concurrent dashboards per step (default 1, 4, 16)
	Refreshes     int           // per viewer per step (default 10)
	FillTimeout   time.Duration
}

// Name implements Scenario.
func (*Dashboard) Name() string { return "dashboard" }

// DashboardColumns is the CSV header.
var DashboardColumns = []string{"target", "viewers", "panels", "items_per_panel", "range_s", "rows_per_panel", "refreshes", "errors",
	"refresh_median_s", "refresh_p95_s", "call_median_s", "call_p95_s", "refreshes_per_s", "rows_per_s", "gen_cpu", "server_cpu", "gen_saturated"}

func (d *Dashboard) defaults() error {
	if d.Panels <= 0 {
		d.Panels = 20
	}
	if d.ItemsPerPanel <= 0 {
		d.ItemsPerPanel = 10
	}
	if d.Range <= 0 {
		d.Range = time.Hour
	}
	if d.Interval <= 0 {
		d.Interval = 10 * time.Second
	}
	if d.Interval%time.Second != 0 || d.Range%d.Interval != 0 {
		return errors.New("dashboard: --fill-interval must be whole seconds and divide --range")
	}
	if len(d.Viewers) == 0 {
		d.Viewers = []int{1, 4, 16}
	}
	if slices.ContainsFunc(d.Viewers, func(v int) bool { return v <= 0 }) {
		return errors.New("dashboard: --viewers must be positive counts")
	}
	if d.Refreshes <= 0 {
		d.Refreshes = 10
	}
	if d.FillTimeout <= 0 {
		d.FillTimeout = 10 * time.Minute
	}
	return nil
}

// Run implements Scenario.
func (d *Dashboard) Run(ctx context.Context, env *Env) (Section, error) {
	sec := Section{Title: "dashboard (Grafana: many items over a short range, panels at once)"}
	if err := d.defaults(); err != nil {
		return sec, err
	}
	lay := env.layout("pb-db-", d.Panels, d.ItemsPerPanel)
	prov, err := env.provision(ctx, lay)
	if err != nil {
		return sec, err
	}
	defer env.cleanup(prov)
	ids, err := ItemIDsByHost(ctx, env.API, prov.HostIDs, lay)
	if err != nil {
		return sec, err
	}
	// Fill: one value per item per interval over the range, ending a
	// minute ago (the newest data, as a dashboard shows it).
	ivl := int64(d.Interval / time.Second)
	perItem := int64(d.Range / d.Interval)
	from := time.Now().Unix() - 60 - perItem*ivl
	till := from + (perItem-1)*ivl
	total := perItem * int64(d.Panels*d.ItemsPerPanel)
	count := func(ctx context.Context) (int64, error) { return env.API.HistoryCount(ctx, prov.HostIDs, from, till) }
	plan := env.plan(lay.ItemSet(d.Panels), from)
	plan.ClockStep, plan.Rounds = ivl, perItem
	t0 := time.Now()
	res, err := env.sendWithProgress(ctx, fmt.Sprintf("dashboard: filling %s values", fmtCount(float64(total))), plan, total)
	if err != nil {
		return sec, err
	}
	if res.Errors > 0 || res.Failed > 0 {
		return sec, fmt.Errorf("dashboard fill: %d frames failed, %d values failed (first error %v)", res.Errors, res.Failed, res.FirstErr)
	}
	got, at, _, err := env.waitReadable(ctx, "dashboard: fill readable", count, total, time.Minute, d.FillTimeout)
	if err != nil {
		return sec, err
	}
	if got < total {
		return sec, fmt.Errorf("dashboard fill: only %d of %d values readable after %s", got, total, time.Since(t0).Round(time.Second))
	}
	sec.Text = append(sec.Text, fmt.Sprintf("Filled %d panels × %d items with %d values each (one every %s over %s) through the trapper: %s values, all readable after %s.",
		d.Panels, d.ItemsPerPanel, perItem, d.Interval, d.Range, human(float64(total)), at.Sub(t0).Round(100*time.Millisecond)))
	panels := make([][]string, d.Panels)
	for p := range panels {
		panels[p] = ids[prov.HostIDs[p]]
	}
	wantRows := perItem * int64(d.ItemsPerPanel)

	csv := &CSV{File: "dashboard.csv", Header: DashboardColumns}
	table := Table{Header: []string{"dashboards at once", "refreshes", "errors", "refresh median", "refresh p95", "panel call median", "panel call p95", "refreshes/s", "rows/s", "generator CPU", "server CPU", "generator saturated"}}
	var saturated []string
	for _, v := range d.Viewers {
		// One refresh, not counted: the first read of the step.
		if _, _, err := d.refresh(ctx, env.API, panels, from, till, wantRows); err != nil {
			return sec, fmt.Errorf("dashboard warm-up refresh: %w", err)
		}
		var mu sync.Mutex
		var refreshLat, callLat []float64
		var errs, done int64
		var firstErr error
		totalRefreshes := int64(v * d.Refreshes)
		stop := env.Progress.Run(Phase{Label: fmt.Sprintf("dashboard %d viewers × %d panels", v, d.Panels), Unit: "refreshes", Total: totalRefreshes,
			Done: func() int64 { mu.Lock(); defer mu.Unlock(); return done }})
		cpu := StartCPU(env.Target.ServerCPU)
		t0 := time.Now()
		var wg sync.WaitGroup
		for range v {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := 0; r < d.Refreshes && ctx.Err() == nil; r++ {
					lat, calls, err := d.refresh(ctx, env.API, panels, from, till, wantRows)
					mu.Lock()
					done++
					callLat = append(callLat, calls...)
					if err != nil {
						errs++
						if firstErr == nil {
							firstErr = err
						}
					} else {
						refreshLat = append(refreshLat, lat)
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		wall := time.Since(t0).Seconds()
		use := cpu.Stop()
		stop()
		if ctx.Err() != nil {
			return sec, ctx.Err()
		}
		rs, cs := latencyStats(refreshLat), latencyStats(callLat)
		ok := float64(len(refreshLat))
		rowsPerS := ok * float64(wantRows*int64(d.Panels)) / wall
		gen, srv, sat := cpuCells(use, env.Cores)
		if use.GeneratorSaturated(env.Cores) {
			saturated = append(saturated, fmt.Sprintf("%d viewers", v))
		}
		table.Rows = append(table.Rows, []string{fmt.Sprint(v), fmt.Sprint(totalRefreshes), fmt.Sprintf("%d (%.0f %%)", errs, 100*float64(errs)/float64(totalRefreshes)),
			secs(rs.median), secs(rs.p95), secs(cs.median), secs(cs.p95), fmt.Sprintf("%.1f", ok/wall), human(rowsPerS), gen, srv, sat})
		csv.Rows = append(csv.Rows, []string{env.Target.Name, fi(int64(v)), fi(int64(d.Panels)), fi(int64(d.ItemsPerPanel)), f(d.Range.Seconds()), fi(wantRows),
			fi(totalRefreshes), fi(errs), f(rs.median), f(rs.p95), f(cs.median), f(cs.p95), f(ok / wall), f(rowsPerS),
			f(use.Generator), f(use.Server), fmt.Sprint(use.GeneratorSaturated(env.Cores))})
		env.Progress.Logf("dashboard %d viewers: refresh median %s, p95 %s; panel call median %s; %d errors", v, secs(rs.median), secs(rs.p95), secs(cs.median), errs)
		if firstErr != nil {
			sec.Notes = append(sec.Notes, fmt.Sprintf("%d viewers: %d of %d refreshes failed; first error: %v", v, errs, totalRefreshes, firstErr))
		}
	}
	sec.CSV = csv
	sec.Tables = append(sec.Tables, table)
	sec.Text = append(sec.Text, fmt.Sprintf(
		"A dashboard of %d panels, each one history.get of %d float items over the last %s (`output: extend, time_from, time_till, sortfield: clock, sortorder: ASC`, %d rows per panel), "+
			"issued all at once; a refresh ends when the last panel's response has its last byte. Each step runs N dashboards refreshing concurrently, %d refreshes each, after one unmeasured refresh. "+
			"An error is a failed call or a wrong row count. %s", d.Panels, d.ItemsPerPanel, d.Range, wantRows, d.Refreshes, cpuHelp))
	if len(saturated) > 0 {
		sec.Notes = append(sec.Notes, saturationNote(saturated))
	}
	sec.Plots = append(sec.Plots, NamedPlot{File: "dashboard.svg", Plot: DashboardPlot([]*CSV{csv})})
	return sec, nil
}

// refresh issues every panel's call at once and returns the time until
// the last one ended and each call's latency.
func (d *Dashboard) refresh(ctx context.Context, api *APIClient, panels [][]string, from, till, wantRows int64) (float64, []float64, error) {
	lat := make([]float64, len(panels))
	errs := make([]error, len(panels))
	t0 := time.Now()
	var wg sync.WaitGroup
	for p, ids := range panels {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := time.Now()
			rows, _, err := api.HistoryRange(ctx, ids, from, till)
			lat[p] = time.Since(s).Seconds()
			if err == nil && rows != wantRows {
				err = fmt.Errorf("panel %d: history.get returned %d rows, want %d", p, rows, wantRows)
			}
			errs[p] = err
		}()
	}
	wg.Wait()
	return time.Since(t0).Seconds(), lat, errors.Join(errs...)
}

// DashboardPlot draws refresh latency against concurrent dashboards.
func DashboardPlot(csvs []*CSV) Plot {
	p := Plot{Title: "dashboard: refresh latency vs dashboards refreshing at once", XLabel: "dashboards refreshing at once", YLabel: "time until every panel has its data (s)"}
	for ci, c := range csvs {
		name := ""
		if len(c.Rows) > 0 {
			name = c.Get(0, "target") + ": "
		}
		med, p95 := Series{Name: name + "median"}, Series{Name: name + "p95"}
		for i := range c.Rows {
			x := c.Float(i, "viewers")
			med.X, med.Y = append(med.X, x), append(med.Y, c.Float(i, "refresh_median_s"))
			p95.X, p95.Y = append(p95.X, x), append(p95.Y, c.Float(i, "refresh_p95_s"))
		}
		med.Color, p95.Color, p95.Dashed = palette[ci%len(palette)], palette[ci%len(palette)], true
		p.Series = append(p.Series, med, p95)
	}
	return p
}
