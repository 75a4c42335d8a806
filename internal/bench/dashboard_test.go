package bench

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Dashboard against an in-process Peregrine: every refresh of every step
// got each panel's exact row count.
func TestDashboardInProcess(t *testing.T) {
	tg, _ := startPeregrine(t)
	env := newEnv(t, tg)
	db := &Dashboard{Panels: 3, ItemsPerPanel: 4, Range: 10 * time.Minute, Interval: 10 * time.Second, Viewers: []int{1, 2}, Refreshes: 2}
	sec, err := db.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	c := csvRows(t, sec)
	if len(c.Rows) != 2 {
		t.Fatalf("rows %v", c.Rows)
	}
	for i, want := range []string{"2", "4"} {
		// 60 values per item in 10 minutes, 4 items per panel.
		if c.Get(i, "refreshes") != want || c.Get(i, "errors") != "0" || c.Get(i, "rows_per_panel") != "240" || !(c.Float(i, "refresh_median_s") > 0) ||
			!(c.Float(i, "refresh_median_s") >= c.Float(i, "call_median_s")) {
			t.Errorf("row %d: %v (notes %v)", i, c.Rows[i], sec.Notes)
		}
	}
	if txt := strings.Join(sec.Text, " "); !strings.Contains(txt, "Filled 3 panels × 4 items with 60 values each") {
		t.Errorf("text %q", txt)
	}
}

// A wrong row count is an error of the refresh, not a fast one.
func TestDashboardRefreshCountsRows(t *testing.T) {
	tg, _ := startPeregrine(t)
	env := newEnv(t, tg)
	d := &Dashboard{}
	_, lat, err := d.refresh(context.Background(), env.API, [][]string{{"999999"}}, 1, 2, 5)
	if err == nil || !strings.Contains(err.Error(), "returned 0 rows, want 5") || len(lat) != 1 {
		t.Errorf("err %v lat %v", err, lat)
	}
	for _, bad := range []*Dashboard{{Interval: 1500 * time.Millisecond}, {Range: time.Minute, Interval: 7 * time.Second}, {Viewers: []int{1, 0}}} {
		if err := bad.defaults(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}
