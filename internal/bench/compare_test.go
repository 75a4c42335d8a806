package bench

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// writeRun writes a report directory holding csvs and settings.
func writeRun(t *testing.T, settings [][3]string, csvs ...*CSV) string {
	t.Helper()
	dir := t.TempDir()
	for _, c := range csvs {
		if err := c.Write(filepath.Join(dir, c.File)); err != nil {
			t.Fatal(err)
		}
	}
	if settings != nil {
		if err := settingsCSV(settings).Write(filepath.Join(dir, settingsFile)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte("| command | `peregrine bench x` |\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func backfillCSV(target string, rates ...string) *CSV {
	c := &CSV{File: "backfill.csv", Header: BackfillColumns}
	for i, ph := range []string{PhaseInOrder, PhaseInsideHead, PhaseOutside} {
		row := make([]string, len(BackfillColumns))
		row[0], row[1] = target, ph
		row[c.Col("readable_vps")] = rates[i]
		row[c.Col("readable_vs_in_order")] = f(parseF(rates[i]) / parseF(rates[0]))
		row[c.Col("loss")] = "0"
		c.Rows = append(c.Rows, row)
	}
	return c
}

func parseF(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}

func TestCompareNewScenarios(t *testing.T) {
	dk := func(target string, bpv string) *CSV {
		return &CSV{File: "disk-bytes.csv", Header: DiskBytesColumns, Rows: [][]string{
			{target, "total", "10000", "1000000", "1000000", "0", "1", bpv, "after a head flush", "realistic"},
			{target, "wal/", "10000", "1000000", "1000000", "0", "1", "0.1", "after a head flush", "realistic"}}}
	}
	db := func(target, med string) *CSV {
		c := &CSV{File: "dashboard.csv", Header: DashboardColumns}
		row := make([]string, len(DashboardColumns))
		row[0], row[1], row[2], row[5], row[c.Col("refresh_median_s")], row[c.Col("errors")] = target, "4", "20", "3600", med, "0"
		c.Rows = append(c.Rows, row)
		return c
	}
	set := [][3]string{{"conns", "8", "8"}, {"data", "realistic", "realistic"}}
	a := writeRun(t, set, backfillCSV("peregrine", "1000000", "500000", "250000"), dk("peregrine", "3.5"), db("peregrine", "0.05"))
	b := writeRun(t, set, backfillCSV("zabbix", "50000", "50000", "50000"), dk("zabbix", "70"), db("zabbix", "1.5"))
	rep, err := Compare(a, b)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := rep.Write(out); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, want := range []string{
		"| settings that differ between the runs | none: same connections",
		"| random, inside head window | 500,000 | 50,000 | 10× | 0.50× | 1.00× |",
		"| random, outside head window | 250,000 | 50,000 | 5.00× | 0.25× | 1.00× |",
		"| bytes on disk per value | 3.50 | 70.00 | 20× |",
		"| 4 | 50.0 ms | 1.50 s | 30× |",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("compare report lacks %q:\n%s", want, md)
		}
	}
	checkSVG(t, filepath.Join(out, "backfill.svg"), "phase", "")
	checkSVG(t, filepath.Join(out, "dashboard.svg"), "dashboards refreshing at once", "")

	// An old report without settings.csv is named as such.
	old := writeRun(t, nil, backfillCSV("peregrine", "1", "1", "1"))
	if got := settingsDiff(old, b); !strings.Contains(got, "run A recorded no settings.csv") {
		t.Errorf("settingsDiff = %q", got)
	}
}

func readCSVOf(target string, medians map[string]string) *CSV {
	c := &CSV{File: "history-read.csv", Header: HistoryReadColumns}
	for _, rows := range []string{"1000000", "2000000"} {
		row := make([]string, len(HistoryReadColumns))
		row[0], row[1], row[c.Col("median_s")], row[c.Col("errors")] = target, rows, medians[rows], "0"
		c.Rows = append(c.Rows, row)
	}
	return c
}

// compare --old-a/--old-b: each headline ratio of the new pair beside
// the earlier pair's, and a ratio that shrank is called so.
func TestCompareAgainstEarlierRuns(t *testing.T) {
	oldA := writeRun(t, nil, readCSVOf("peregrine", map[string]string{"1000000": "0.2", "2000000": "0.4"}), backfillCSV("peregrine", "100", "50", "50"))
	oldB := writeRun(t, nil, readCSVOf("zabbix", map[string]string{"1000000": "3", "2000000": "6"}))
	set := [][3]string{{"data", "realistic", "realistic"}}
	newA := writeRun(t, set, readCSVOf("peregrine", map[string]string{"1000000": "0.3", "2000000": "0.4"}), backfillCSV("peregrine", "100", "50", "50"))
	newB := writeRun(t, set, readCSVOf("zabbix", map[string]string{"1000000": "3", "2000000": "6.1"}), backfillCSV("zabbix", "10", "10", "10"))
	out := t.TempDir()
	var so, se strings.Builder
	if code := Main([]string{"compare", "--report", out, "--old-a", oldA, "--old-b", oldB, newA, newB}, &so, &se, "test"); code != 0 {
		t.Fatalf("exit %d: %s", code, se.String())
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, want := range []string{
		"## Ratios: these runs against the earlier ones",
		"| history-read 1,000,000 rows: median latency, B / A | 15× | 10× | **shrank** (0.67× of the earlier ratio) |",
		"| history-read 2,000,000 rows: median latency, B / A | 15× | 15× | about the same (±5 %) |",
		"| backfill in order: readable values/s, A / B | — | 10× | not measured earlier |",
		"1 ratio(s) shrank against the earlier runs",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if code := Main([]string{"compare", "--report", out, "--old-a", oldA, newA, newB}, &so, &se, "test"); code != 2 || !strings.Contains(se.String(), "--old-a EARLIER_A --old-b EARLIER_B") {
		t.Errorf("--old-a alone: exit %d, %q", code, se.String())
	}
}

func wsCSV(target string, ratios ...string) *CSV {
	c := &CSV{File: "write-scaling.csv", Header: WriteScalingColumns}
	for i, r := range ratios {
		row := make([]string, len(WriteScalingColumns))
		row[0], row[c.Col("offered_nvps")], row[c.Col("written_ratio")] = target, fi(int64(10000*(i+1))), r
		c.Rows = append(c.Rows, row)
	}
	return c
}

// A write-scaling run that never left the line has a lower bound for a
// knee: its ratio is marked and not called shrunk or grown.
func TestCompareKneeBound(t *testing.T) {
	a := writeRun(t, nil, wsCSV("peregrine", "1", "1", "1"))
	b := writeRun(t, nil, wsCSV("zabbix", "1", "0.5"))
	hs := headlines(a, b)
	if len(hs) != 1 || hs[0].bound != "≥ " || hs[0].ratio != 3 {
		t.Fatalf("headlines %+v", hs)
	}
	sec := ratioChangeSection(a, b, a, b)
	if got := sec.Tables[0].Rows[0]; got[2] != "≥ 3.00×" || !strings.Contains(got[3], "not comparable") {
		t.Errorf("row %q", got)
	}
}

// write-scaling's side by side carries the acknowledge latency of both
// runs when both recorded it, and leaves it out against an older CSV.
func TestCompareWriteScalingAck(t *testing.T) {
	a, b := wsCSV("embedded", "1"), wsCSV("ha", "1")
	a.Rows[0][a.Col("ack_p50_s")], a.Rows[0][a.Col("ack_p99_s")] = "0.002", "0.01"
	b.Rows[0][b.Col("ack_p50_s")], b.Rows[0][b.Col("ack_p99_s")] = "0.03", "0.2"
	tb := compareWriteScaling(a, b).Tables[0]
	if got := tb.Rows[0][len(tb.Rows[0])-2:]; got[0] != "2.0 ms / 10.0 ms" || got[1] != "30.0 ms / 200.0 ms" || tb.Header[len(tb.Header)-1] != "ha ack p50 / p99" {
		t.Errorf("ack cells %q, header %q", got, tb.Header)
	}
	old := &CSV{File: a.File, Header: WriteScalingColumns[:len(WriteScalingColumns)-2], Rows: [][]string{a.Rows[0][:len(WriteScalingColumns)-2]}}
	if tb := compareWriteScaling(old, b).Tables[0]; len(tb.Header) != 5 || len(tb.Rows[0]) != 5 {
		t.Errorf("against an older CSV: %q %q", tb.Header, tb.Rows[0])
	}
}
