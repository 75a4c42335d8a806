package bench

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

func compareMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("report", "", "directory of the side-by-side report (required)")
	oldA := fs.String("old-a", "", "an earlier run of A: with --old-b, the headline ratios of the earlier pair are put beside the new ones")
	oldB := fs.String("old-b", "", "an earlier run of B (with --old-a)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *out == "" || fs.NArg() != 2 || (*oldA == "") != (*oldB == "") {
		fmt.Fprint(stderr, "usage: peregrine bench compare --report DIR [--old-a EARLIER_A --old-b EARLIER_B] REPORT_DIR_A REPORT_DIR_B\n")
		return 2
	}
	rep, err := Compare(fs.Arg(0), fs.Arg(1))
	if err == nil && *oldA != "" {
		rep.Sections = append(rep.Sections, ratioChangeSection(fs.Arg(0), fs.Arg(1), *oldA, *oldB))
	}
	if err == nil {
		err = rep.Write(*out)
	}
	if err != nil {
		fmt.Fprintf(stderr, "peregrine bench compare: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "report: %s\n", filepath.Join(*out, "report.md"))
	return 0
}

// Compare builds a side-by-side report of two report directories: for
// each scenario CSV present in both, a table joining their rows by step
// with the ratio A/B of the main figures, and the two runs in one plot.
// Each run's header (command, machine, time) is quoted so that both can
// be repeated.
func Compare(dirA, dirB string) (*Report, error) {
	rep := &Report{Title: "peregrine bench: side by side"}
	for i, d := range []string{dirA, dirB} {
		cmd, when := headerFields(filepath.Join(d, "report.md"))
		rep.Header = append(rep.Header, [2]string{fmt.Sprintf("run %c (%s)", 'A'+i, filepath.Base(d)), fmt.Sprintf("%s, %s", cmd, when)})
	}
	rep.Header = append(rep.Header, [2]string{"settings that differ between the runs", settingsDiff(dirA, dirB)})
	found := false
	for _, sc := range comparers {
		a, errA := ReadCSV(filepath.Join(dirA, sc.file))
		b, errB := ReadCSV(filepath.Join(dirB, sc.file))
		if errA != nil || errB != nil {
			continue
		}
		found = true
		rep.Sections = append(rep.Sections, sc.build(a, b))
	}
	if !found {
		return nil, errors.New("the two directories have no scenario CSV in common")
	}
	return rep, nil
}

// headerFields pulls the command and start time out of a report.md.
func headerFields(path string) (cmd, when string) {
	f, err := os.Open(path)
	if err != nil {
		return "(no report.md)", ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "| command | "); ok {
			cmd = strings.TrimSuffix(v, " |")
		}
		if v, ok := strings.CutPrefix(line, "| started / ended (UTC) | "); ok {
			when = strings.TrimSuffix(v, " |")
		}
	}
	return cmd, when
}

type comparer struct {
	file  string
	build func(a, b *CSV) Section
}

var comparers = []comparer{
	{"write-scaling.csv", compareWriteScaling},
	{"sender-flood.csv", compareSenderFlood},
	{"history-read.csv", compareHistoryRead},
	{"ingest-max.csv", compareIngestMax},
	{"backfill.csv", compareBackfill},
	{"dashboard.csv", compareDashboard},
	{"disk-bytes.csv", compareDiskBytes},
	{"storm.csv", compareStorm}, // compare_storm.go
}

func name(c *CSV) string {
	if len(c.Rows) == 0 {
		return "?"
	}
	return c.Get(0, "target")
}

// rowBy finds the row whose key column equals v.
func rowBy(c *CSV, col string, v float64) int {
	for i := range c.Rows {
		if c.Float(i, col) == v {
			return i
		}
	}
	return -1
}

// keys is the union of a key column's values, ascending.
func keys(a, b *CSV, col string) []float64 {
	var out []float64
	seen := map[float64]bool{}
	for _, c := range []*CSV{a, b} {
		for i := range c.Rows {
			v := c.Float(i, col)
			if !seen[v] && !math.IsNaN(v) {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	slices.Sort(out)
	return out
}

// cell reads a value for a key, NaN when that run has no such row.
func cell(c *CSV, keyCol string, key float64, col string) float64 {
	i := rowBy(c, keyCol, key)
	if i < 0 {
		return nanF
	}
	return c.Float(i, col)
}

func compareWriteScaling(a, b *CSV) Section {
	na, nb := name(a), name(b)
	sec := Section{Title: "write-scaling side by side"}
	t := Table{Header: []string{"offered NVPS", na + " written / ideal", nb + " written / ideal", na + " server CPU", nb + " server CPU"}}
	// The acknowledge latency, when both runs recorded it (newer CSVs).
	acks := a.Col("ack_p50_s") >= 0 && b.Col("ack_p50_s") >= 0
	if acks {
		t.Header = append(t.Header, na+" ack p50 / p99", nb+" ack p50 / p99")
	}
	ack := func(c *CSV, k float64) string {
		return ms(cell(c, "offered_nvps", k, "ack_p50_s")) + " / " + ms(cell(c, "offered_nvps", k, "ack_p99_s"))
	}
	for _, k := range keys(a, b, "offered_nvps") {
		row := []string{human(k), stopped(cell(a, "offered_nvps", k, "written_ratio")), stopped(cell(b, "offered_nvps", k, "written_ratio")),
			pctCPU(cell(a, "offered_nvps", k, "server_cpu")), pctCPU(cell(b, "offered_nvps", k, "server_cpu"))}
		if acks {
			row = append(row, ack(a, k), ack(b, k))
		}
		t.Rows = append(t.Rows, row)
	}
	ka, kb := knee(a), knee(b)
	sec.Tables = append(sec.Tables, t)
	r := ratio(ka, kb)
	if kneeReached(a, ka) != kneeReached(b, kb) && r != "—" {
		// One side never left the line: its knee is only a lower bound.
		if kneeReached(b, kb) {
			r = "≥ " + r
		} else {
			r = "≤ " + r
		}
	}
	sec.Text = append(sec.Text, fmt.Sprintf("Knee (largest offered load with ≥ 99 %% of the ideal written by the window's end): %s %s NVPS, %s %s NVPS — ratio %s.",
		na, kneeText(a, ka), nb, kneeText(b, kb), r))
	sec.Plots = append(sec.Plots, NamedPlot{File: "write-scaling.svg", Plot: WriteScalingPlot([]*CSV{a, b})})
	return sec
}

func knee(c *CSV) float64 {
	k := 0.0
	for i := range c.Rows {
		if c.Float(i, "written_ratio") >= 0.99 {
			k = math.Max(k, c.Float(i, "offered_nvps"))
		}
	}
	return k
}

// kneeReached says whether the run left the line at a step it measured.
func kneeReached(c *CSV, k float64) bool {
	return len(c.Rows) > 0 && c.Float(len(c.Rows)-1, "offered_nvps") != k
}

func kneeText(c *CSV, k float64) string {
	if k == 0 {
		return "below the smallest step"
	}
	last := len(c.Rows) - 1
	if c.Float(last, "offered_nvps") == k {
		return "≥ " + human(k) + " (not reached)"
	}
	return human(k)
}

func stopped(v float64) string {
	if math.IsNaN(v) {
		return "not run (stopped earlier)"
	}
	return pct(v)
}

func pctCPU(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.0f %%", 100*v)
}

func compareSenderFlood(a, b *CSV) Section {
	na, nb := name(a), name(b)
	sec := Section{Title: "sender-flood side by side"}
	t := Table{Header: []string{"values sent", na + " sender completion", nb + " sender completion", na + " all readable after", nb + " all readable after",
		"readable values/s " + na + " / " + nb, "ratio", na + " loss", nb + " loss"}}
	for _, k := range keys(a, b, "values") {
		ra, rb := cell(a, "values", k, "readable_vps"), cell(b, "values", k, "readable_vps")
		t.Rows = append(t.Rows, []string{human(k),
			secs(cell(a, "values", k, "send_s")), secs(cell(b, "values", k, "send_s")),
			readCell(a, k), readCell(b, k),
			human(ra) + " / " + human(rb), ratio(ra, rb),
			lossCell(cell(a, "values", k, "loss_rate")), lossCell(cell(b, "values", k, "loss_rate"))})
	}
	sec.Tables = append(sec.Tables, t)
	sec.Plots = append(sec.Plots, NamedPlot{File: "sender-flood.svg", Plot: SenderFloodPlot([]*CSV{a, b})})
	return sec
}

func readCell(c *CSV, k float64) string {
	i := rowBy(c, "values", k)
	if i < 0 {
		return "not run"
	}
	s := secs(c.Float(i, "readable_s"))
	if c.Get(i, "complete") != "true" {
		s = "incomplete at " + s
	}
	return s
}

func lossCell(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.4f %%", 100*v)
}

func compareHistoryRead(a, b *CSV) Section {
	na, nb := name(a), name(b)
	sec := Section{Title: "history-read side by side"}
	t := Table{Header: []string{"rows per call", na + " median", nb + " median", "ratio " + nb + " / " + na, na + " p95", nb + " p95", na + " errors", nb + " errors"}}
	for _, k := range keys(a, b, "rows") {
		ma, mb := cell(a, "rows", k, "median_s"), cell(b, "rows", k, "median_s")
		t.Rows = append(t.Rows, []string{human(k), secs(ma), secs(mb), ratio(mb, ma),
			secs(cell(a, "rows", k, "p95_s")), secs(cell(b, "rows", k, "p95_s")),
			human(cell(a, "rows", k, "errors")), human(cell(b, "rows", k, "errors"))})
	}
	sec.Tables = append(sec.Tables, t)
	sec.Text = append(sec.Text, "The ratio is how many times longer the second run's median call took (higher: the first is faster).")
	sec.Plots = append(sec.Plots, NamedPlot{File: "history-read.svg", Plot: HistoryReadPlot([]*CSV{a, b})})
	return sec
}

func compareIngestMax(a, b *CSV) Section {
	na, nb := name(a), name(b)
	sec := Section{Title: "ingest-max side by side"}
	t := Table{Header: []string{"offered NVPS", na + " readable NVPS", na + " pass", nb + " readable NVPS", nb + " pass"}}
	for _, k := range keys(a, b, "offered_nvps") {
		t.Rows = append(t.Rows, []string{human(k), human(cell(a, "offered_nvps", k, "readable_nvps")), passCell(a, k),
			human(cell(b, "offered_nvps", k, "readable_nvps")), passCell(b, k)})
	}
	ba, bb := bestPass(a), bestPass(b)
	sec.Tables = append(sec.Tables, t)
	sec.Text = append(sec.Text, fmt.Sprintf("Highest sustained rate with 0 loss: %s %s NVPS, %s %s NVPS — ratio %s.", na, human(ba), nb, human(bb), ratio(ba, bb)))
	sec.Plots = append(sec.Plots, NamedPlot{File: "ingest-max.svg", Plot: IngestMaxPlot([]*CSV{a, b})})
	return sec
}

func passCell(c *CSV, k float64) string {
	i := rowBy(c, "offered_nvps", k)
	if i < 0 {
		return "not run"
	}
	return c.Get(i, "pass")
}

func bestPass(c *CSV) float64 {
	b := 0.0
	for i := range c.Rows {
		if c.Get(i, "pass") == "true" {
			b = math.Max(b, c.Float(i, "offered_nvps"))
		}
	}
	return b
}

// settingsDiff names the measurement settings two runs did not share:
// a ratio between runs with different connections, frame sizes, data or
// step lengths is not a comparison of the servers alone.
func settingsDiff(dirA, dirB string) string {
	var runs [2]map[string]string
	var missing []string
	for i, d := range []string{dirA, dirB} {
		c, err := ReadCSV(filepath.Join(d, settingsFile))
		if err != nil {
			missing = append(missing, fmt.Sprintf("run %c", 'A'+i))
			continue
		}
		runs[i] = map[string]string{}
		for r := range c.Rows {
			runs[i][c.Get(r, "flag")] = c.Get(r, "value")
		}
	}
	if len(missing) > 0 {
		return strings.Join(missing, " and ") + " recorded no " + settingsFile + " (made before the harness recorded its settings: constant data, settings only in the command line)"
	}
	var names []string
	for k := range runs[0] {
		names = append(names, k)
	}
	for k := range runs[1] {
		if _, ok := runs[0][k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	var d []string
	for _, k := range names {
		if a, b := runs[0][k], runs[1][k]; a != b {
			d = append(d, fmt.Sprintf("**--%s: A %s, B %s**", k, orNone(a), orNone(b)))
		}
	}
	if len(d) == 0 {
		return "none: same connections, frame size, data, seed and step lengths"
	}
	return strings.Join(d, "; ")
}

func orNone(s string) string {
	if s == "" {
		return "(not set)"
	}
	return s
}

func compareBackfill(a, b *CSV) Section {
	na, nb := name(a), name(b)
	sec := Section{Title: "backfill side by side"}
	t := Table{Header: []string{"phase", na + " readable values/s", nb + " readable values/s", "ratio", na + " vs in order", nb + " vs in order", na + " lost", nb + " lost"}}
	for _, ph := range []string{PhaseInOrder, PhaseInsideHead, PhaseOutside} {
		ra, rb := phaseCell(a, ph, "readable_vps"), phaseCell(b, ph, "readable_vps")
		t.Rows = append(t.Rows, []string{ph, human(ra), human(rb), ratio(ra, rb),
			ratioCell(backfillRatio(a, ph)), ratioCell(backfillRatio(b, ph)),
			human(phaseCell(a, ph, "loss")), human(phaseCell(b, ph, "loss"))})
	}
	sec.Tables = append(sec.Tables, t)
	sec.Text = append(sec.Text, "\"vs in order\" is the phase's readable rate over the same run's in-order rate (1.00×: late values cost nothing extra).")
	sec.Plots = append(sec.Plots, NamedPlot{File: "backfill.svg", Plot: BackfillPlot([]*CSV{a, b})})
	return sec
}

func phaseCell(c *CSV, phase, col string) float64 { return phaseLike(c, "phase", phase, col) }

func ratioCell(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.2f×", v)
}

func compareDashboard(a, b *CSV) Section {
	na, nb := name(a), name(b)
	sec := Section{Title: "dashboard side by side"}
	t := Table{Header: []string{"dashboards at once", na + " refresh median", nb + " refresh median", "ratio " + nb + " / " + na, na + " p95", nb + " p95", na + " errors", nb + " errors"}}
	for _, k := range keys(a, b, "viewers") {
		ma, mb := cell(a, "viewers", k, "refresh_median_s"), cell(b, "viewers", k, "refresh_median_s")
		t.Rows = append(t.Rows, []string{human(k), secs(ma), secs(mb), ratio(mb, ma),
			secs(cell(a, "viewers", k, "refresh_p95_s")), secs(cell(b, "viewers", k, "refresh_p95_s")),
			human(cell(a, "viewers", k, "errors")), human(cell(b, "viewers", k, "errors"))})
	}
	sec.Tables = append(sec.Tables, t)
	if len(a.Rows) > 0 && len(b.Rows) > 0 && (a.Get(0, "panels") != b.Get(0, "panels") || a.Get(0, "rows_per_panel") != b.Get(0, "rows_per_panel")) {
		sec.Notes = append(sec.Notes, fmt.Sprintf("The dashboards differ: %s has %s panels of %s rows, %s %s of %s.", na, a.Get(0, "panels"), a.Get(0, "rows_per_panel"), nb, b.Get(0, "panels"), b.Get(0, "rows_per_panel")))
	}
	sec.Text = append(sec.Text, "The ratio is how many times longer the second run's median refresh took (higher: the first is faster).")
	sec.Plots = append(sec.Plots, NamedPlot{File: "dashboard.svg", Plot: DashboardPlot([]*CSV{a, b})})
	return sec
}

func compareDiskBytes(a, b *CSV) Section {
	na, nb := name(a), name(b)
	sec := Section{Title: "disk-bytes side by side"}
	ba, bb := phaseLike(a, "part", "total", "bytes_per_value"), phaseLike(b, "part", "total", "bytes_per_value")
	t := Table{Header: []string{"", na, nb, "ratio " + nb + " / " + na}}
	t.Rows = append(t.Rows, []string{"bytes on disk per value", fmt.Sprintf("%.2f", ba), fmt.Sprintf("%.2f", bb), ratio(bb, ba)})
	t.Rows = append(t.Rows, []string{"values readable", human(phaseLike(a, "part", "total", "readable")), human(phaseLike(b, "part", "total", "readable")), ""})
	t.Rows = append(t.Rows, []string{"data", firstWith(a, "part", "total", "data"), firstWith(b, "part", "total", "data"), ""})
	t.Rows = append(t.Rows, []string{"measured", firstWith(a, "part", "total", "flushed"), firstWith(b, "part", "total", "flushed"), ""})
	sec.Tables = append(sec.Tables, t)
	return sec
}

func phaseLike(c *CSV, keyCol, key, col string) float64 {
	for i := range c.Rows {
		if c.Get(i, keyCol) == key {
			return c.Float(i, col)
		}
	}
	return nanF
}

func firstWith(c *CSV, keyCol, key, col string) string {
	for i := range c.Rows {
		if c.Get(i, keyCol) == key {
			return c.Get(i, col)
		}
	}
	return "—"
}
