package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stormCSV is a storm.csv of recorded rows.
func stormCSV(rows ...string) *CSV {
	c := &CSV{File: "storm.csv", Header: StormColumns}
	for _, r := range rows {
		c.Rows = append(c.Rows, strings.Split(r, ","))
	}
	return c
}

// TestCompareStorm builds the storm side-by-side table from the rows the
// 10,000 and 100,000 storms recorded on 2026-11-23
// (bench/reports/2026-11-23-storm-*/storm.csv), the table BENCHMARKS.md
// had written by hand, plus a 50,000 storm whose Zabbix run did not see
// all problems in time.
func TestCompareStorm(t *testing.T) {
	set := [][3]string{{"conns", "8", "8"}}
	a := writeRun(t, set, stormCSV(
		"peregrine,10000,10,0.390596912,0.485184836,true,0.20418333,0.720499436,true,0.011233258,1000,0.190335247,10000,0.87056017,0.17885277256209098",
		"peregrine,50000,50,0.2094,0.4631,true,0.2382,0.4327,true,0.0035,1000,0.1356,50000,1.9,0.88",
		"peregrine,100000,100,0.9407,3.19,true,0.6076,1.54,true,0.0095,1000,0.2084,100000,5.7,0.64"))
	b := writeRun(t, set, stormCSV(
		"zabbix,10000,10,0.106587211,1.6563040839999998,true,0.086233907,2.21144826,true,0.264636836,1000,2.401977459,10000,29.718622253,0.42298368188656404",
		"zabbix,50000,50,0.1696,300,false,0.2887,300,false,0,0,0,0,69,0.66",
		"zabbix,100000,100,0.423427843,14.363947026,true,0.832422576,16.467882952,true,0.610567805,1000,6.055487261,100000,211.083020073,0.8717724012914843"))
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
		"## storm side by side",
		"| triggers | server | trigger.create of all | send all 1s | all problems visible | send all 0s | all resolved | problem.get 1,000 | problem.get all open | server CPU |",
		"| 10,000 | peregrine | 870.6 ms | 390.6 ms | 485.2 ms | 204.2 ms | 720.5 ms | 11.2 ms | 190.3 ms | 18 % |",
		"| 10,000 | zabbix | 29.72 s | 106.6 ms | 1.66 s | 86.2 ms | 2.21 s | 264.6 ms | 2.40 s | 42 % |",
		"| 10,000 | ratio zabbix / peregrine | 34× | 0.27× | 3.41× | 0.42× | 3.07× | 24× | 13× |  |",
		// A count never reached: the wait is shown as such, and neither it
		// nor the problem.get at a peak that never came makes a ratio.
		"| 50,000 | zabbix | 69.00 s | 169.6 ms | **not reached** (gave up after 300 s) | 288.7 ms | **not reached** (gave up after 300 s) | — | — | 66 % |",
		"| 50,000 | ratio zabbix / peregrine | 36× | 0.81× | — | 1.21× | — | — | — |  |",
		"zabbix with 50,000 triggers did not reach its problem count",
		"| 100,000 | zabbix | 211 s | 423.4 ms | 14.36 s | 832.4 ms | 16.47 s | 610.6 ms | 6.06 s | 87 % |",
		"| 100,000 | ratio zabbix / peregrine | 37× | 0.45× | 4.50× | 1.37× | 11× | 64× | 29× |  |",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("compare report lacks %q:\n%s", want, md)
		}
	}
	// The headline ratios (compare --old-a/--old-b): visible and
	// resolved, B / A; none for the count not reached.
	got := map[string]string{}
	for _, h := range headlines(a, b) {
		got[h.figure] = ratioOrDash(h, true)
	}
	for fig, want := range map[string]string{
		"storm 10,000 triggers: all problems visible, B / A": "3.41×",
		"storm 100,000 triggers: all resolved, B / A":        "11×",
		"storm 50,000 triggers: all problems visible, B / A": "—",
	} {
		if got[fig] != want {
			t.Errorf("headline %q = %q, want %q (all: %v)", fig, got[fig], want, got)
		}
	}
}
