package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// UIDashboard is the operators' wall: Viewers browsers each showing one
// 12-widget dashboard that refreshes every Every, for Duration. Each
// viewer is a logged-in web session of the target's own frontend
// (Peregrine's UI, or Zabbix 6.0's PHP frontend) and sends, per widget
// and refresh, the one request that frontend's page sends (uidash_web.go:
// plain HTTP mimicking each widget's refresh call, not a browser: no
// rendering is measured). It reports each widget type's request
// latency (median, p99) and the server's CPU (the target's processes:
// with --cpu-ports, its database too) against the same before the
// viewers start.
//
// The dashboard is made by the scenario through the API (dashboard.create,
// the same fields on both servers), on Hosts hosts of ItemsPerHost float
// trapper items filled with an hour of values (one a minute) and one
// trigger per item, a sixth of them of each severity, all firing: classic
// graph, item value, plain text, problems, problems by severity, problem
// hosts, host availability, trigger overview, top hosts (host name and
// an item's value, top 10), data overview, SLA report (a daily SLA over
// one service made for it) and clock, every widget's rf_rate set to
// Every: the same twelve types on both, each drawn by both frontends.
// Everything is deleted at the end (unless --keep).
type UIDashboard struct {
	Viewers      int           // default 16
	Every        time.Duration // refresh period, a whole number of seconds 6.0 offers (default 10 s)
	Duration     time.Duration // measured time (default 60 s)
	Hosts        int           // default 4
	ItemsPerHost int           // default 6
	Prefix       string        // host, dashboard and trigger name prefix (default "pb-uidash-")
}

// Name implements Scenario.
func (*UIDashboard) Name() string { return "ui-dashboard" }

// UIDashboardColumns is the CSV header: one row per request label.
var UIDashboardColumns = []string{"target", "viewers", "every_s", "widget", "requests", "errors", "median_s", "p99_s", "max_s", "server_cpu", "server_cpu_idle"}

func (d *UIDashboard) defaults() error {
	if d.Viewers <= 0 {
		d.Viewers = 16
	}
	if d.Every <= 0 {
		d.Every = 10 * time.Second
	}
	if !slices.Contains([]time.Duration{10, 30, 60, 120, 600, 900}, d.Every/time.Second) || d.Every%time.Second != 0 {
		return errors.New("ui-dashboard: --ui-every must be a refresh interval Zabbix 6.0 offers: 10s, 30s, 1m, 2m, 10m or 15m")
	}
	if d.Duration <= 0 {
		d.Duration = time.Minute
	}
	if d.Hosts <= 0 {
		d.Hosts = 4
	}
	if d.ItemsPerHost < 5 {
		d.ItemsPerHost = 6
	}
	if d.Prefix == "" {
		d.Prefix = "pb-uidash-"
	}
	return nil
}

// Run implements Scenario.
func (d *UIDashboard) Run(ctx context.Context, env *Env) (Section, error) {
	sec := Section{Title: "ui-dashboard (viewers of a 12-widget dashboard refreshing)"}
	if err := d.defaults(); err != nil {
		return sec, err
	}
	u, err := url.Parse(env.Target.APIURL)
	if err != nil {
		return sec, err
	}
	base := u.Scheme + "://" + u.Host
	version, err := env.API.Version(ctx)
	if err != nil {
		return sec, err
	}
	// Zabbix's frontend answers on the API's host with index.php; the
	// target's name says which frontend unless it is neither.
	zabbix := env.Target.Name != "peregrine"

	lay := env.layout(d.Prefix, d.Hosts, d.ItemsPerHost)
	prov, err := env.provision(ctx, lay)
	if err != nil {
		return sec, err
	}
	defer env.cleanup(prov)
	ids, err := ItemIDsByHost(ctx, env.API, prov.HostIDs, lay)
	if err != nil {
		return sec, err
	}
	// One trigger per item, every one firing on any value; severities
	// in turn.
	var trigs []map[string]any
	for h := range d.Hosts {
		for j := range d.ItemsPerHost {
			trigs = append(trigs, map[string]any{"description": fmt.Sprintf("%sproblem %d on {HOST.HOST}", d.Prefix, j),
				"expression": fmt.Sprintf("last(/%s/%s)<>-12345.678", lay.HostName(h), lay.Key(j)), "priority": (h*d.ItemsPerHost + j) % 6})
		}
	}
	if err := env.API.Call(ctx, "trigger.create", trigs, nil); err != nil {
		return sec, fmt.Errorf("ui-dashboard triggers: %w", err)
	}
	// An hour of values, one a minute, ending a minute ago; sent again
	// (the last minute) until the triggers have fired: Zabbix evaluates
	// a new trigger only once its configuration cache has it.
	from := time.Now().Unix() - 60 - 3600
	plan := env.plan(lay.ItemSet(d.Hosts), from)
	plan.ClockStep, plan.Rounds = 60, 60
	total := int64(60 * d.Hosts * d.ItemsPerHost)
	if _, err := env.sendWithProgress(ctx, "ui-dashboard: an hour of values", plan, total); err != nil {
		return sec, err
	}
	want := int64(d.Hosts * d.ItemsPerHost)
	deadline := time.Now().Add(3 * time.Minute)
	for {
		n, err := env.API.ProblemCount(ctx, prov.HostIDs)
		if err != nil {
			return sec, err
		}
		if n >= want {
			break
		}
		if time.Now().After(deadline) {
			return sec, fmt.Errorf("ui-dashboard: %d of %d problems open 3 min after the values", n, want)
		}
		again := env.plan(lay.ItemSet(d.Hosts), time.Now().Unix()-30)
		again.Rounds = 1
		if _, err := env.Target.Sender.Send(ctx, again, nil); err != nil {
			return sec, err
		}
		time.Sleep(5 * time.Second)
	}

	slaid, dropSLA, err := d.createSLA(ctx, env)
	if !env.Keep {
		defer func() {
			c, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			dropSLA(c)
		}()
	}
	if err != nil {
		return sec, err
	}
	dashboardid, widgets, err := d.createDashboard(ctx, env, prov, ids, lay, slaid)
	if err != nil {
		return sec, err
	}
	defer func() {
		if !env.Keep {
			c, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := env.API.Call(c, "dashboard.delete", []string{dashboardid}, nil); err != nil {
				env.Progress.Logf("cleanup: cannot delete dashboard %s: %v", dashboardid, err)
			}
		}
	}()

	// The viewers log in and open the dashboard; each widget is drawn
	// once (Peregrine's item widgets read their value type then).
	sessions := make([]*webSession, d.Viewers)
	for i := range sessions {
		if sessions[i], err = newWebSession(ctx, base, zabbix, env.Target.User, env.Target.Password, dashboardid); err != nil {
			return sec, fmt.Errorf("viewer %d: %w", i, err)
		}
		for _, w := range widgets {
			if _, err := sessions[i].refresh(ctx, dashboardid, w); err != nil {
				return sec, fmt.Errorf("viewer %d, first draw: %w", i, err)
			}
		}
	}
	sc := frontendCPU(env.Target)
	idle := StartCPU(sc)
	sleepCtx(ctx, min(10*time.Second, d.Every))
	idleUse := idle.Stop()

	var mu sync.Mutex
	lat := map[string][]float64{}
	errs := map[string]int{}
	var firstErr error
	var refreshes int64
	stop := env.Progress.Run(Phase{Label: fmt.Sprintf("ui-dashboard: %d viewers × %d widgets every %s for %s", d.Viewers, len(widgets), d.Every, d.Duration),
		Unit: "refreshes", Done: func() int64 { mu.Lock(); defer mu.Unlock(); return refreshes }})
	cpu := StartCPU(sc)
	end := time.Now().Add(d.Duration)
	var wg sync.WaitGroup
	for i, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Viewers opened the dashboard at different moments: spread
			// evenly over one period.
			next := time.Now().Add(time.Duration(i) * d.Every / time.Duration(d.Viewers))
			for {
				if sleepCtx(ctx, time.Until(next)) != nil || time.Now().After(end) {
					return
				}
				next = next.Add(d.Every)
				// Each widget refreshes on its own timer: all at once.
				var ww sync.WaitGroup
				for _, w := range widgets {
					ww.Add(1)
					go func() {
						defer ww.Done()
						got, err := s.refresh(ctx, dashboardid, w)
						mu.Lock()
						defer mu.Unlock()
						if err != nil {
							errs[w.Type]++
							if firstErr == nil {
								firstErr = err
							}
							return
						}
						for k, v := range got {
							lat[k] = append(lat[k], v.Seconds())
						}
					}()
				}
				ww.Wait()
				mu.Lock()
				refreshes++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	use := cpu.Stop()
	stop()
	if ctx.Err() != nil {
		return sec, ctx.Err()
	}

	labels := make([]string, 0, len(lat)+len(errs))
	for k := range lat {
		labels = append(labels, k)
	}
	for k := range errs {
		if _, ok := lat[k]; !ok {
			labels = append(labels, k)
		}
	}
	sort.Strings(labels)
	csv := &CSV{File: "ui-dashboard.csv", Header: UIDashboardColumns}
	table := Table{Header: []string{"widget request", "requests", "errors", "median", "p99", "max"}}
	var all []float64
	for _, k := range labels {
		v := lat[k]
		all = append(all, v...)
		st := latencyStats(v)
		p99 := quantile(v, 0.99)
		table.Rows = append(table.Rows, []string{k, strconv.Itoa(len(v)), strconv.Itoa(errs[k]), ms(st.median), ms(p99), ms(st.max)})
		csv.Rows = append(csv.Rows, []string{env.Target.Name, fi(int64(d.Viewers)), f(d.Every.Seconds()), k, fi(int64(len(v))), fi(int64(errs[k])),
			f(st.median), f(p99), f(st.max), f(use.Server), f(idleUse.Server)})
	}
	st := latencyStats(all)
	table.Rows = append(table.Rows, []string{"**all**", strconv.Itoa(len(all)), "", ms(st.median), ms(quantile(all, 0.99)), ms(st.max)})
	srv, srvIdle := "not measured", "not measured"
	if use.Measured {
		srv, srvIdle = fmt.Sprintf("%.1f %%", 100*use.Server), fmt.Sprintf("%.1f %%", 100*idleUse.Server)
	}
	perRefresh := 0
	for _, w := range widgets {
		if zabbix || peregrineWidgetCalls(w, time.Now()) != nil {
			perRefresh++
		}
	}
	sec.Text = append(sec.Text, fmt.Sprintf(
		"%s (API %s): %d viewers, each its own web session, refreshing a dashboard of %d widgets every %s for %s (spread evenly over one period; at most %d connections a viewer, as a browser). "+
			"A refresh is %d requests a viewer (%s), nothing else reloaded. Server CPU over the run: %s of one core (%s before the viewers started; processes: %s). Generator CPU %.0f %%.",
		env.Target.Name, version, d.Viewers, len(widgets), d.Every, d.Duration, browserConns, perRefresh, requestShape(zabbix),
		srv, srvIdle, sc.Describe(), 100*use.Generator))
	sec.Tables = append(sec.Tables, table)
	sec.CSV = csv
	if firstErr != nil {
		sec.Notes = append(sec.Notes, fmt.Sprintf("errors: first: %v", firstErr))
	}
	env.Progress.Logf("ui-dashboard: %d requests, median %s, p99 %s; server CPU %s (idle %s)", len(all), ms(st.median), ms(quantile(all, 0.99)), srv, srvIdle)
	return sec, nil
}

// frontendCPU is the processes whose CPU is the frontend's: the target's
// (its API port's, and --cpu-ports', a database) but not a Zabbix
// server's own (its trapper's, unless it also serves the API, as
// Peregrine does), with the children they reaped: PostgreSQL's backend
// per PHP request lives shorter than a sample.
func frontendCPU(t *Target) ServerCPU {
	port := func(hostport string) int {
		_, p, _ := net.SplitHostPort(hostport)
		n, _ := strconv.Atoi(p)
		return n
	}
	api := 80
	if u, err := url.Parse(t.APIURL); err == nil && u.Port() != "" {
		api, _ = strconv.Atoi(u.Port())
	}
	apiPIDs, trapperPIDs := ListeningPIDs(api), ListeningPIDs(port(t.Trapper))
	sc := ServerCPU{Self: t.ServerCPU.Self, Reaped: true}
	for _, p := range t.ServerCPU.PIDs {
		if !slices.Contains(trapperPIDs, p) || slices.Contains(apiPIDs, p) {
			sc.PIDs = append(sc.PIDs, p)
		}
	}
	return sc
}

func requestShape(zabbix bool) string {
	if zabbix {
		return "POST zabbix.php?action=widget.<type>.view each, and a classic graph's chart image"
	}
	return "POST /ui/api each, a JSON-RPC call or batch; the clock and the URL widgets send none"
}

// createDashboard makes the measured dashboard and reads it back.
func (d *UIDashboard) createDashboard(ctx context.Context, env *Env, prov Provisioned, ids map[string][]string, lay Layout, slaid string) (string, []widget, error) {
	rf := map[string]any{"type": 0, "name": "rf_rate", "value": strconv.Itoa(int(d.Every / time.Second))}
	item := func(h, j int) map[string]any {
		return map[string]any{"type": 4, "name": "itemid", "value": ids[prov.HostIDs[h%len(prov.HostIDs)]][j]}
	}
	group := map[string]any{"type": 2, "name": "groupids", "value": prov.GroupID}
	specs := []struct {
		typ    string
		fields []map[string]any
	}{
		{"graph", []map[string]any{{"type": 0, "name": "source_type", "value": "1"}, item(0, 0)}},
		{"item", []map[string]any{item(1, 2)}},
		{"plaintext", []map[string]any{{"type": 4, "name": "itemids", "value": ids[prov.HostIDs[0]][4]}, {"type": 0, "name": "show_lines", "value": "10"}}},
		{"problems", []map[string]any{group, {"type": 0, "name": "show", "value": "3"}, {"type": 0, "name": "show_lines", "value": "25"}}},
		{"problemsbysv", []map[string]any{group}},
		{"problemhosts", []map[string]any{group}},
		{"hostavail", []map[string]any{group}},
		{"trigover", []map[string]any{group, {"type": 0, "name": "show", "value": "3"}}},
		{"tophosts", []map[string]any{group, {"type": 1, "name": "columns.name.0", "value": "Host"}, {"type": 0, "name": "columns.data.0", "value": "2"},
			{"type": 1, "name": "columns.name.1", "value": lay.Key(1)}, {"type": 0, "name": "columns.data.1", "value": "1"},
			{"type": 1, "name": "columns.item.1", "value": lay.Key(1)}, {"type": 0, "name": "column", "value": "1"}, {"type": 0, "name": "count", "value": "10"}}},
		{"dataover", []map[string]any{group}},
		{"slareport", []map[string]any{{"type": 10, "name": "slaid", "value": slaid}, {"type": 0, "name": "show_periods", "value": "7"}}},
		{"clock", nil},
	}
	var ws []map[string]any
	for i, s := range specs {
		ws = append(ws, map[string]any{"type": s.typ, "name": "", "x": (i % 3) * 8, "y": (i / 3) * 4, "width": 8, "height": 4, "view_mode": 0,
			"fields": append(s.fields, rf)})
	}
	var created struct {
		IDs []string `json:"dashboardids"`
	}
	if err := env.API.Call(ctx, "dashboard.create", map[string]any{"name": d.Prefix + "dashboard", "display_period": 30, "auto_start": 1,
		"pages": []map[string]any{{"widgets": ws}}}, &created); err != nil {
		return "", nil, fmt.Errorf("ui-dashboard: dashboard.create: %w", err)
	}
	if len(created.IDs) != 1 {
		return "", nil, errors.New("ui-dashboard: dashboard.create returned no id")
	}
	var got []struct {
		Pages []struct {
			Widgets []widget `json:"widgets"`
		} `json:"pages"`
	}
	if err := env.API.Call(ctx, "dashboard.get", map[string]any{"dashboardids": created.IDs, "output": "extend", "selectPages": "extend"}, &got); err != nil {
		return created.IDs[0], nil, err
	}
	if len(got) != 1 || len(got[0].Pages) != 1 || len(got[0].Pages[0].Widgets) != len(specs) {
		return created.IDs[0], nil, fmt.Errorf("ui-dashboard: dashboard %s does not read back with its %d widgets", created.IDs[0], len(specs))
	}
	return created.IDs[0], got[0].Pages[0].Widgets, nil
}

// createSLA makes the SLA report widget's SLA: daily, 99.9 %, over one
// service tagged for it. It returns the SLA's id and the function that
// deletes what it made (also after an error).
func (d *UIDashboard) createSLA(ctx context.Context, env *Env) (string, func(context.Context), error) {
	tag := map[string]any{"tag": strings.TrimSuffix(d.Prefix, "-"), "value": "sla"}
	var svc struct {
		IDs []string `json:"serviceids"`
	}
	if err := env.API.Call(ctx, "service.create", map[string]any{"name": d.Prefix + "service", "algorithm": 1, "sortorder": 0,
		"tags": []any{tag}}, &svc); err != nil || len(svc.IDs) != 1 {
		return "", func(context.Context) {}, fmt.Errorf("ui-dashboard: service.create: %v (ids %v)", err, svc.IDs)
	}
	var sla struct {
		IDs []string `json:"slaids"`
	}
	err := env.API.Call(ctx, "sla.create", map[string]any{"name": d.Prefix + "sla", "period": 0, "slo": "99.9", "timezone": "UTC",
		"effective_date": time.Now().Unix() - 7*86400, "service_tags": []any{tag}}, &sla)
	if err == nil && len(sla.IDs) != 1 {
		err = errors.New("no id")
	}
	drop := func(c context.Context) {
		if err == nil {
			if e := env.API.Call(c, "sla.delete", sla.IDs, nil); e != nil {
				env.Progress.Logf("cleanup: cannot delete SLA %v: %v", sla.IDs, e)
			}
		}
		if e := env.API.Call(c, "service.delete", svc.IDs, nil); e != nil {
			env.Progress.Logf("cleanup: cannot delete service %v: %v", svc.IDs, e)
		}
	}
	if err != nil {
		return "", drop, fmt.Errorf("ui-dashboard: sla.create: %w", err)
	}
	return sla.IDs[0], drop, nil
}

func ms(s float64) string {
	if s != s {
		return "—"
	}
	return fmt.Sprintf("%.1f ms", 1000*s)
}
