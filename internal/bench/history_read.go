package bench

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// HistoryRead is the CW-Zabbix read method: one float item holding the
// largest size's values; for each size, Clients concurrent clients each
// call history.get for the newest size values (sortfield clock DESC,
// limit size) Reps times; latency per call is until the last byte.
type HistoryRead struct {
	Sizes   []int // default 500k, 1M, 2M
	Clients int   // default 1
	Reps    int   // default 5
	// Item, "HOST:KEY", reads an existing item (e.g. filled by the peer's
	// read.sh) instead of creating and filling one.
	Item string
	// FillTimeout bounds the wait until the filled values are readable
	// (default 30 min).
	FillTimeout time.Duration

	prov Provisioned // the created host, deleted at the end unless Env.Keep
}

// Name implements Scenario.
func (*HistoryRead) Name() string { return "history-read" }

// HistoryReadColumns is the CSV header.
var HistoryReadColumns = []string{"target", "rows", "clients", "reps", "calls", "errors", "median_s", "p95_s", "mean_s", "min_s", "max_s",
	"rows_per_s", "calls_per_s", "bytes_per_call", "gen_cpu", "server_cpu", "gen_saturated"}

// Run implements Scenario.
func (h *HistoryRead) Run(ctx context.Context, env *Env) (Section, error) {
	sec := Section{Title: "history-read (CW-Zabbix read method)"}
	if len(h.Sizes) == 0 {
		h.Sizes = []int{500_000, 1_000_000, 2_000_000}
	}
	if h.Clients <= 0 {
		h.Clients = 1
	}
	if h.Reps <= 0 {
		h.Reps = 5
	}
	if h.FillTimeout <= 0 {
		// Zabbix writes one value per item per syncer cycle: ≈2.7k
		// values/s into one item, ≈12 minutes for 2M.
		h.FillTimeout = 30 * time.Minute
	}
	maxN := slices.Max(h.Sizes)
	itemid, fillNote, err := h.prepare(ctx, env, maxN)
	defer env.cleanup(h.prov)
	if err != nil {
		return sec, err
	}
	if fillNote != "" {
		sec.Text = append(sec.Text, fillNote)
	}
	fp, err := readFingerprint(ctx, env.API, itemid, 1000)
	if err != nil {
		return sec, fmt.Errorf("history-read: reading the item's newest values: %w", err)
	}
	sec.Text = append(sec.Text, "Data read: "+fp.String()+".")
	if fp.Distinct < fp.Values/2 || fp.FullPrecision < fp.Values/2 {
		sec.Notes = append(sec.Notes, "The item's newest values are not full-precision random values (fewer than half distinct or with ≥ 12 significant digits): "+
			"this read measures simpler data than agents send, which favours a compressing store. Fill it again (delete host pb-hr-0, or pass another --item).")
	}
	csv := &CSV{File: "history-read.csv", Header: HistoryReadColumns}
	table := Table{Header: []string{"rows per call", "clients", "calls", "errors", "median", "p95", "rows/s (all clients)", "MB per response", "generator CPU", "server CPU", "generator saturated"}}
	var saturated []string
	for _, n := range h.Sizes {
		// One warm-up call, not counted.
		if _, _, err := env.API.HistoryRead(ctx, itemid, n); err != nil {
			return sec, fmt.Errorf("history-read warm-up of %d rows: %w", n, err)
		}
		var lat []float64
		var mu sync.Mutex
		var errs, done int64
		var size int64
		var firstErr error
		total := int64(h.Clients * h.Reps)
		stop := env.Progress.Run(Phase{Label: fmt.Sprintf("history-read %s rows × %d clients", fmtCount(float64(n)), h.Clients), Unit: "calls", Total: total,
			Done: func() int64 { mu.Lock(); defer mu.Unlock(); return done }})
		cpu := StartCPU(env.Target.ServerCPU)
		t0 := time.Now()
		var wg sync.WaitGroup
		for c := 0; c < h.Clients; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := 0; r < h.Reps && ctx.Err() == nil; r++ {
					s := time.Now()
					rows, b, err := env.API.HistoryRead(ctx, itemid, n)
					d := time.Since(s).Seconds()
					if err == nil && rows != int64(n) {
						err = fmt.Errorf("history.get returned %d rows, want %d", rows, n)
					}
					mu.Lock()
					done++
					if err != nil {
						errs++
						if firstErr == nil {
							firstErr = err
						}
					} else {
						lat = append(lat, d)
						size = b
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
		st := latencyStats(lat)
		ok := int64(len(lat))
		gen, srv, sat := cpuCells(use, env.Cores)
		if use.GeneratorSaturated(env.Cores) {
			saturated = append(saturated, fmt.Sprintf("%s rows", human(float64(n))))
		}
		table.Rows = append(table.Rows, []string{human(float64(n)), fmt.Sprint(h.Clients), fmt.Sprint(total), fmt.Sprintf("%d (%.0f %%)", errs, 100*float64(errs)/float64(total)),
			secs(st.median), secs(st.p95), human(float64(ok*int64(n)) / wall), fmt.Sprintf("%.1f", float64(size)/1e6), gen, srv, sat})
		csv.Rows = append(csv.Rows, []string{env.Target.Name, fi(int64(n)), fi(int64(h.Clients)), fi(int64(h.Reps)), fi(total), fi(errs),
			f(st.median), f(st.p95), f(st.mean), f(st.min), f(st.max), f(float64(ok*int64(n)) / wall), f(float64(ok) / wall), fi(size),
			f(use.Generator), f(use.Server), fmt.Sprint(use.GeneratorSaturated(env.Cores))})
		env.Progress.Logf("history-read %d rows × %d clients: median %s, p95 %s, %d errors", n, h.Clients, secs(st.median), secs(st.p95), errs)
		if firstErr != nil {
			sec.Notes = append(sec.Notes, fmt.Sprintf("%s rows: %d of %d calls failed; first error: %v", human(float64(n)), errs, total, firstErr))
		}
	}
	sec.CSV = csv
	sec.Tables = append(sec.Tables, table)
	sec.Text = append(sec.Text, fmt.Sprintf(
		"history.get of one float item's newest N values (`output: extend, sortfield: clock, sortorder: DESC, limit: N`), "+
			"%d concurrent clients × %d calls each after one warm-up call; latency is until the last byte of the response "+
			"(rows are counted in the stream, not decoded). An error is a failed call or a wrong row count. %s", h.Clients, h.Reps, cpuHelp))
	if len(saturated) > 0 {
		sec.Notes = append(sec.Notes, saturationNote(saturated))
	}
	sec.Plots = append(sec.Plots, NamedPlot{File: "history-read.svg", Plot: HistoryReadPlot([]*CSV{csv})})
	return sec, nil
}

// prepare finds or creates the item and fills it to n values.
func (h *HistoryRead) prepare(ctx context.Context, env *Env, n int) (itemid, note string, err error) {
	if h.Item != "" {
		host, key, ok := strings.Cut(h.Item, ":")
		if !ok {
			return "", "", errors.New("history-read: --item must be HOST:KEY")
		}
		var hosts []struct {
			HostID string `json:"hostid"`
		}
		if err := env.API.Call(ctx, "host.get", map[string]any{"filter": map[string]any{"host": []string{host}}, "output": []string{"hostid"}}, &hosts); err != nil {
			return "", "", err
		}
		if len(hosts) != 1 {
			return "", "", fmt.Errorf("history-read: no host %q", host)
		}
		itemid, err = ItemID(ctx, env.API, hosts[0].HostID, key)
		if err != nil {
			return "", "", err
		}
		have, err := env.API.HistoryCountItems(ctx, []string{itemid}, 0, math.MaxInt32)
		if err != nil {
			return "", "", err
		}
		if have < int64(n) {
			return "", "", fmt.Errorf("history-read: item %s has %d values, the largest size needs %d", h.Item, have, n)
		}
		return itemid, fmt.Sprintf("Read from the existing item `%s` (%s values).", h.Item, human(float64(have))), nil
	}
	lay := env.layout("pb-hr-", 1, 1)
	prov, err := env.provision(ctx, lay)
	if err != nil {
		return "", "", err
	}
	h.prov = prov
	itemid, err = ItemID(ctx, env.API, prov.HostIDs[0], lay.Key(0))
	if err != nil {
		return "", "", err
	}
	// The item keeps its history between runs; the probe value of the
	// setup (clock in 2001) is outside the newest n.
	have, err := env.API.HistoryCountItems(ctx, []string{itemid}, probeClock+1000, math.MaxInt32)
	if err != nil {
		return "", "", err
	}
	if have >= int64(n) {
		return itemid, fmt.Sprintf("Item filled by an earlier run (%s values).", human(float64(have))), nil
	}
	// Fill: 1000 values of the one item per frame, one second apart,
	// ending two days ago (before every other scenario's clocks).
	missing := int64(n) - have
	per := 1000
	keys := make([]string, per)
	for i := range keys {
		keys[i] = lay.Key(0)
	}
	base := time.Now().Add(-48*time.Hour).Unix() - missing
	data := env.Data
	data.Gauges = true
	plan := SendPlan{Items: ItemSet{Hosts: []string{lay.HostName(0)}, Keys: keys}, StartClock: base, ClockStep: int64(per), ValueClockStep: 1,
		NS: runNS(), TotalValues: missing, PacketValues: per, Data: data}
	t0 := time.Now()
	res, err := env.sendWithProgress(ctx, fmt.Sprintf("history-read: filling %s values", fmtCount(float64(missing))), plan, missing)
	if err != nil {
		return "", "", err
	}
	if res.Errors > 0 || res.Failed > 0 {
		return "", "", fmt.Errorf("history-read fill: %d frames failed, %d values failed (first error %v)", res.Errors, res.Failed, res.FirstErr)
	}
	count := func(ctx context.Context) (int64, error) {
		return env.API.HistoryCountItems(ctx, []string{itemid}, probeClock+1000, math.MaxInt32)
	}
	got, at, _, err := env.waitReadable(ctx, "history-read: fill readable", count, int64(n), time.Minute, h.FillTimeout)
	if err != nil {
		return "", "", err
	}
	if got < int64(n) {
		return "", "", fmt.Errorf("history-read fill: only %d of %d values readable after %s (the server has not written them; fill a peer with its own tools and pass --item)", got, n, time.Since(t0).Round(time.Second))
	}
	return itemid, fmt.Sprintf("The item was filled through the trapper with %s values (one second apart) in %s; all readable after %s.",
		human(float64(missing)), res.Elapsed.Round(100*time.Millisecond), at.Sub(t0).Round(100*time.Millisecond)), nil
}

type stats struct{ median, p95, mean, min, max float64 }

func latencyStats(v []float64) stats {
	if len(v) == 0 {
		return stats{nanF, nanF, nanF, nanF, nanF}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	q := func(p float64) float64 {
		// Nearest rank.
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return stats{median: med, p95: q(0.95), mean: sum / float64(len(s)), min: s[0], max: s[len(s)-1]}
}

// HistoryReadPlot draws latency against rows per call.
func HistoryReadPlot(csvs []*CSV) Plot {
	p := Plot{
		Title:  "history-read: history.get latency vs rows per call",
		XLabel: "rows per history.get call",
		YLabel: "latency until the last byte (s)",
	}
	for ci, c := range csvs {
		name := ""
		if len(c.Rows) > 0 {
			name = c.Get(0, "target") + ": "
		}
		med, p95 := Series{Name: name + "median"}, Series{Name: name + "p95"}
		for i := range c.Rows {
			x := c.Float(i, "rows")
			med.X, med.Y = append(med.X, x), append(med.Y, c.Float(i, "median_s"))
			p95.X, p95.Y = append(p95.X, x), append(p95.Y, c.Float(i, "p95_s"))
		}
		med.Color, p95.Color, p95.Dashed = palette[ci%len(palette)], palette[ci%len(palette)], true
		p.Series = append(p.Series, med, p95)
	}
	return p
}

// Fingerprint summarises values read back, so that two reports show
// whether both servers were read on the same data: the counts say how
// random and how precise the values are, the digest (FNV-1a of the values
// newest first, each as the shortest decimal of its float64) is equal
// when the values are.
type Fingerprint struct {
	Values, Distinct, FullPrecision int
	Digest                          uint64
}

func (f Fingerprint) String() string {
	return fmt.Sprintf("the newest %d values hold %d distinct values, %d with ≥ 12 significant digits; digest %016x", f.Values, f.Distinct, f.FullPrecision, f.Digest)
}

// readFingerprint reads an item's newest n values and fingerprints them.
func readFingerprint(ctx context.Context, api *APIClient, itemid string, n int) (Fingerprint, error) {
	var rows []struct {
		Value string `json:"value"`
	}
	if err := api.Call(ctx, "history.get", map[string]any{"itemids": []string{itemid}, "history": 0, "output": []string{"value", "clock"},
		"sortfield": "clock", "sortorder": "DESC", "limit": n}, &rows); err != nil {
		return Fingerprint{}, err
	}
	var fp Fingerprint
	h := fnv.New64a()
	seen := map[float64]bool{}
	for _, r := range rows {
		v, err := strconv.ParseFloat(r.Value, 64)
		if err != nil {
			return fp, fmt.Errorf("history.get returned a value that is not a number: %q", r.Value)
		}
		fp.Values++
		if !seen[v] {
			seen[v] = true
			fp.Distinct++
		}
		txt := strconv.FormatFloat(v, 'g', -1, 64)
		if significantDigits(txt) >= 12 {
			fp.FullPrecision++
		}
		h.Write([]byte(txt))
		h.Write([]byte{'\n'})
	}
	fp.Digest = h.Sum64()
	return fp, nil
}

// significantDigits counts the digits of a 'g' formatted number without
// its sign, leading zeros and exponent.
func significantDigits(s string) int {
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimLeft(strings.Replace(strings.TrimPrefix(s, "-"), ".", "", 1), "0")
	return len(s)
}
