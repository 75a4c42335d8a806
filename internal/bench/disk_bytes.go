package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DiskBytes measures the bytes on disk per value of history: Values
// values of the run's data shape sent in order to Items items (the newest
// clocks, a second apart), and the growth of the history's size on disk
// between before the send and after the values are readable and, when
// the target reports head flushes on /metrics (Peregrine's
// peregrine_history_flushes_total), after the next flush: values still
// in a write-ahead log cost more than what a flush leaves.
//
// With a flush counter, "before" is also measured after two flushes, so
// that values of earlier scenarios still in the WAL do not move into
// blocks between the two measurements.
//
// The size comes from DataDir (Peregrine: its data directory; the
// history/ subdirectory is measured, with its wal/, blocks/ and trends/
// listed) or from SizeCmd, a shell command that prints a byte count (the
// Zabbix peer: psql with pg_total_relation_size('history'), table, TOAST
// and indexes). Nothing else may write history meanwhile.
type DiskBytes struct {
	Items        int   // default 10,000
	ItemsPerHost int   // default 1000
	Values       int64 // default 10,000,000
	DataDir      string
	SizeCmd      string
	FlushWait    time.Duration // longest wait for a flush after the values are readable (default 5 min)
	DrainTimeout time.Duration
	Stall        time.Duration
}

// Name implements Scenario.
func (*DiskBytes) Name() string { return "disk-bytes" }

// DiskBytesColumns is the CSV header: one row for the total, one per
// subdirectory when DataDir is measured.
var DiskBytesColumns = []string{"target", "part", "items", "values", "readable", "bytes_before", "bytes_after", "bytes_per_value", "flushed", "data"}

func (d *DiskBytes) defaults() error {
	if d.DataDir == "" && d.SizeCmd == "" {
		return errors.New("disk-bytes: give --data-dir DIR (Peregrine's data directory) or --size-cmd 'CMD' (prints the history's bytes, e.g. psql … pg_total_relation_size('history') on the Zabbix peer)")
	}
	if d.Items <= 0 {
		d.Items = 10_000
	}
	if d.ItemsPerHost <= 0 {
		d.ItemsPerHost = 1000
	}
	if d.Items%d.ItemsPerHost != 0 {
		return errors.New("disk-bytes: --items must be a multiple of --items-per-host")
	}
	if d.Values <= 0 {
		d.Values = 10_000_000
	}
	if d.Values%int64(d.Items) != 0 {
		return fmt.Errorf("disk-bytes: --disk-values %d must be a multiple of --items %d", d.Values, d.Items)
	}
	if d.FlushWait <= 0 {
		d.FlushWait = 5 * time.Minute
	}
	if d.DrainTimeout <= 0 {
		d.DrainTimeout = 10 * time.Minute
	}
	if d.Stall <= 0 {
		d.Stall = time.Minute
	}
	return nil
}

// Run implements Scenario.
func (d *DiskBytes) Run(ctx context.Context, env *Env) (Section, error) {
	sec := Section{Title: "disk-bytes (history bytes on disk per value)"}
	if err := d.defaults(); err != nil {
		return sec, err
	}
	hosts := d.Items / d.ItemsPerHost
	lay := env.layout("pb-dk-", hosts, d.ItemsPerHost)
	prov, err := env.provision(ctx, lay)
	if err != nil {
		return sec, err
	}
	defer env.cleanup(prov)
	metrics := metricsURL(env.Target.APIURL)
	// Values of earlier scenarios may still be in the WAL: a flush now
	// would shrink the history between the two measurements. When the
	// target counts its flushes, "before" is taken after them too.
	settled := ""
	if flushes0, ok := scrapeCounter(ctx, metrics, "peregrine_history_flushes_total"); ok {
		settled = d.waitFlush(ctx, env, metrics, flushes0)
	}
	before, err := d.measure(ctx)
	if err != nil {
		return sec, err
	}
	rounds := d.Values / int64(d.Items)
	from := time.Now().Unix() - 60 - rounds
	till := from + rounds - 1
	count := func(ctx context.Context) (int64, error) { return env.API.HistoryCount(ctx, prov.HostIDs, from, till) }
	have, err := count(ctx)
	if err != nil {
		return sec, err
	}
	plan := env.plan(lay.ItemSet(hosts), from)
	plan.Rounds = rounds
	label := fmt.Sprintf("disk-bytes: %s values", fmtCount(float64(d.Values)))
	res, err := env.sendWithProgress(ctx, label, plan, d.Values)
	if err != nil {
		return sec, err
	}
	n, _, _, err := env.waitReadable(ctx, label+": until readable", count, have+res.Sent, d.Stall, d.DrainTimeout)
	if err != nil {
		return sec, err
	}
	readable := n - have
	// The flush to wait for is one that starts after every value is in:
	// the counter is read now, and two more flushes are awaited, since one
	// may already have been running (its WAL cut before the last values).
	flushed := "no flush counter on " + metrics
	if flushes0, ok := scrapeCounter(ctx, metrics, "peregrine_history_flushes_total"); ok {
		flushed = d.waitFlush(ctx, env, metrics, flushes0)
	}
	after, err := d.measure(ctx)
	if err != nil {
		return sec, err
	}
	csv := &CSV{File: "disk-bytes.csv", Header: DiskBytesColumns}
	table := Table{Header: []string{"part", "bytes before", "bytes after", "growth", "bytes per value"}}
	parts := []string{"total"}
	for p := range after {
		if p != "total" {
			parts = append(parts, p)
		}
	}
	slices.Sort(parts[1:])
	for _, p := range parts {
		grow := after[p] - before[p]
		bpv := float64(grow) / float64(max(readable, 1))
		table.Rows = append(table.Rows, []string{p, human(float64(before[p])), human(float64(after[p])), human(float64(grow)), fmt.Sprintf("%.2f", bpv)})
		csv.Rows = append(csv.Rows, []string{env.Target.Name, p, fi(int64(d.Items)), fi(d.Values), fi(readable), fi(before[p]), fi(after[p]), f(bpv), flushed, string(env.Data.shape())})
	}
	env.Progress.Logf("disk-bytes: %d values readable, history grew %d bytes: %.2f bytes per value (%s)", readable, after["total"]-before["total"], float64(after["total"]-before["total"])/float64(max(readable, 1)), flushed)
	where := "`" + d.SizeCmd + "`"
	if d.DataDir != "" {
		where = "the files under " + historyDir(d.DataDir)
	}
	sec.Text = append(sec.Text, fmt.Sprintf(
		"%s values (%s float items × %d, one a second, the newest clocks, in order) of the run's data (%s); bytes are %s, measured before the send and after every value was readable (%s). "+
			"Bytes per value = growth / values readable.", human(float64(d.Values)), human(float64(d.Items)), rounds, env.Data.shape(), where, flushed))
	if settled != "" && settled != "after a head flush" {
		sec.Notes = append(sec.Notes, "Before the send: "+settled+"; values of earlier runs may have moved out of the WAL between the two measurements.")
	}
	if after["total"] <= before["total"] {
		sec.Notes = append(sec.Notes, "The history did not grow: something else rewrote it between the two measurements (a flush or compaction of earlier data, retention); the figure is meaningless.")
	}
	if readable < res.Sent || res.Failed > 0 || res.Errors > 0 {
		sec.Notes = append(sec.Notes, fmt.Sprintf("Only %s of %s values sent were readable (%d failed, %d frames failed): the figure is per readable value.", human(float64(readable)), human(float64(res.Sent)), res.Failed, res.Errors))
	}
	sec.CSV = csv
	sec.Tables = append(sec.Tables, table)
	return sec, nil
}

// waitFlush waits until the flush counter has grown by two from before,
// at most FlushWait, and says what happened.
func (d *DiskBytes) waitFlush(ctx context.Context, env *Env, metrics string, before float64) string {
	stop := env.Progress.Run(Phase{Label: "disk-bytes: waiting for a head flush (history.flush_interval)"})
	defer stop()
	deadline := time.Now().Add(d.FlushWait)
	for time.Now().Before(deadline) {
		if v, ok := scrapeCounter(ctx, metrics, "peregrine_history_flushes_total"); ok && v >= before+2 {
			return "after a head flush"
		}
		select {
		case <-ctx.Done():
			return "interrupted before a head flush"
		case <-time.After(time.Second):
		}
	}
	return fmt.Sprintf("no head flush within %s: values still in the WAL and head (set history.flush_interval shorter)", d.FlushWait)
}

// historyDir is what --data-dir measures: DIR/history when it exists.
func historyDir(dir string) string {
	h := filepath.Join(dir, "history")
	if st, err := os.Stat(h); err == nil && st.IsDir() {
		return h
	}
	return dir
}

// measure returns the size in bytes: "total", and per subdirectory of
// the history directory.
func (d *DiskBytes) measure(ctx context.Context) (map[string]int64, error) {
	if d.DataDir != "" {
		return dirSizes(historyDir(d.DataDir))
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "sh", "-c", d.SizeCmd).Output()
	if err != nil {
		return nil, fmt.Errorf("disk-bytes: --size-cmd failed: %w", err)
	}
	fields := strings.Fields(string(out))
	if len(fields) == 0 {
		return nil, fmt.Errorf("disk-bytes: --size-cmd printed nothing, want a byte count")
	}
	n, err := strconv.ParseInt(fields[0], 10, 64)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("disk-bytes: --size-cmd printed %q, want a byte count", strings.TrimSpace(string(out)))
	}
	return map[string]int64{"total": n}, nil
}

// dirSizes sums regular files' sizes under dir: "total" and per
// top-level subdirectory (files directly in dir count only in total).
// Files that vanish during the walk (a flush renaming) are skipped.
func dirSizes(dir string) (map[string]int64, error) {
	out := map[string]int64{"total": 0}
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if e.IsDir() {
			if rel != "." && !strings.Contains(rel, string(filepath.Separator)) {
				out[rel+"/"] += 0
			}
			return nil
		}
		info, err := e.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		out["total"] += info.Size()
		if top, _, ok := strings.Cut(rel, string(filepath.Separator)); ok {
			out[top+"/"] += info.Size()
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("disk-bytes: cannot measure %s (check --data-dir): %w", dir, err)
	}
	return out, nil
}

// metricsURL is HOST/metrics of an API URL.
func metricsURL(api string) string {
	u, err := url.Parse(api)
	if err != nil {
		return ""
	}
	u.Path, u.RawQuery = "/metrics", ""
	return u.String()
}

// scrapeCounter reads one unlabelled sample from a Prometheus text page.
func scrapeCounter(ctx context.Context, page, name string) (float64, bool) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, page, nil)
	if err != nil {
		return 0, false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, false
	}
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 8<<20))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return x, err == nil
		}
	}
	return 0, false
}
