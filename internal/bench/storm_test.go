package bench

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Storm against an in-process Peregrine: every trigger fired and every
// problem resolved within the timeout, problem.get at the peak returned
// 1,000 and then all problems, and the triggers are gone afterwards.
func TestStormInProcess(t *testing.T) {
	tg, _ := startPeregrine(t)
	env := newEnv(t, tg)
	st := &Storm{Items: 2000, Timeout: time.Minute, Reps: 2}
	sec, err := st.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	c := csvRows(t, sec)
	if len(c.Rows) != 1 {
		t.Fatalf("rows %v", c.Rows)
	}
	if c.Get(0, "triggers") != "2000" || c.Get(0, "hosts") != "2" || c.Get(0, "fire_reached") != "true" || c.Get(0, "recover_reached") != "true" ||
		c.Get(0, "get_1k_rows") != "1000" || c.Get(0, "get_all_rows") != "2000" || !(c.Float(0, "get_all_median_s") > 0) {
		t.Errorf("row %v (notes %v)", c.Rows[0], sec.Notes)
	}
	if len(sec.Notes) != 0 {
		t.Errorf("notes %v", sec.Notes)
	}
	if txt := strings.Join(sec.Text, " "); !strings.Contains(txt, "one trigger `last(/host/key)>0` each") {
		t.Errorf("text %q", txt)
	}
	var left flexCount
	if err := env.API.Call(context.Background(), "trigger.get", map[string]any{"countOutput": true}, &left); err != nil || left != 0 {
		t.Errorf("triggers left after the run: %d (%v)", left, err)
	}
}

// A size that does not fill hosts of 1,000 is refused before anything is
// created.
func TestStormDefaults(t *testing.T) {
	if err := (&Storm{Items: 1500}).defaults(); err == nil || !strings.Contains(err.Error(), "multiple of 1000") {
		t.Errorf("err %v", err)
	}
	s := &Storm{Items: 300}
	if err := s.defaults(); err != nil || s.Timeout != 5*time.Minute || s.Poll != 50*time.Millisecond {
		t.Errorf("%+v %v", s, err)
	}
}

// Value-to-event latency against an in-process Peregrine: every flip's
// problem is seen once, latencies are positive and ordered, every
// problem is resolved at the end and the triggers are gone afterwards.
func TestTriggerLatencyInProcess(t *testing.T) {
	tg, _ := startPeregrine(t)
	env := newEnv(t, tg)
	tl := &TriggerLatency{Items: 2000, Rate: 4000, Flip: 0.005, Duration: 3 * time.Second, Batch: 500, Timeout: time.Minute}
	sec, err := tl.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	c := csvRows(t, sec)
	if len(c.Rows) != 1 {
		t.Fatalf("rows %v", c.Rows)
	}
	t.Logf("row %v", c.Rows[0])
	sent, seen := c.Float(0, "flips_sent"), c.Float(0, "problems_seen")
	if c.Get(0, "triggers") != "2000" || c.Get(0, "flips_per_s") != "10" || sent < 20 || sent > 40 || seen != sent ||
		!(c.Float(0, "latency_p50_s") >= 0) || !(c.Float(0, "latency_p99_s") >= c.Float(0, "latency_p50_s")) ||
		!(c.Float(0, "latency_max_s") >= c.Float(0, "latency_p99_s")) || c.Get(0, "all_resolved") != "true" || c.Get(0, "frames_failed") != "0" {
		t.Errorf("row %v (notes %v)", c.Rows[0], sec.Notes)
	}
	var left flexCount
	if err := env.API.Call(context.Background(), "trigger.get", map[string]any{"countOutput": true}, &left); err != nil || left != 0 {
		t.Errorf("triggers left after the run: %d (%v)", left, err)
	}
}

// Sizes that cannot run are refused before anything is created.
func TestTriggerLatencyDefaults(t *testing.T) {
	for _, tc := range []struct {
		tl   TriggerLatency
		want string
	}{
		{TriggerLatency{Items: 1500}, "multiple of 1000"},
		{TriggerLatency{Items: 1000, Flip: 0.0001}, "less than one a second"},
		{TriggerLatency{Items: 1000, Flip: 0.1, Duration: time.Minute}, "never reused"},
		{TriggerLatency{Items: 100000, Flip: 0.01, Rate: 1000, Duration: time.Second}, "too little"},
	} {
		if err := tc.tl.defaults(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err %v, want %q", tc.tl, err, tc.want)
		}
	}
	tl := &TriggerLatency{}
	if err := tl.defaults(); err != nil || tl.Items != 1_000_000 || tl.Rate != 500_000 || tl.flips() != 1000 || tl.Poll != 50*time.Millisecond {
		t.Errorf("%+v %v", tl, err)
	}
}
