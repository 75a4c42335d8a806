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
