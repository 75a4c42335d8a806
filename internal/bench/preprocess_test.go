package bench

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// preprocess against an in-process Peregrine: both parts complete (every
// chain value and every dependent's value readable), with the expected
// counts, and the items are gone afterwards.
func TestPreprocessInProcess(t *testing.T) {
	tg, _ := startPeregrine(t)
	env := newEnv(t, tg)
	p := &Preprocess{Items: 2000, ItemsPerHost: 1000, Values: 6000, Masters: 20, Dependents: 5, MasterRounds: 4, Settle: 100 * time.Millisecond}
	sec, err := p.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	c := csvRows(t, sec)
	if len(c.Rows) != 2 {
		t.Fatalf("rows %v (notes %v)", c.Rows, sec.Notes)
	}
	for i, want := range []struct{ part, expected string }{{"chain", "6000"}, {"dependents", "400"}} {
		if c.Get(i, "part") != want.part || c.Get(i, "values_expected") != want.expected || c.Get(i, "complete") != "true" || c.Get(i, "readable") != want.expected {
			t.Errorf("row %d: %v", i, c.Rows[i])
		}
	}
	if env.Data.Gauges {
		t.Error("the run's data setting was left changed")
	}
	var left flexCount
	if err := env.API.Call(context.Background(), "item.get", map[string]any{"countOutput": true, "search": map[string]any{"key_": "bench."}}, &left); err != nil || left != 0 {
		t.Errorf("items left after the run: %d (%v)", left, err)
	}
}

// With --pp-triggers the chain items get that many last() triggers each,
// none of which fires; the run completes and, kept, the triggers are
// there without a problem; not kept, they go with the items.
func TestPreprocessTriggersInProcess(t *testing.T) {
	tg, _ := startPeregrine(t)
	env := newEnv(t, tg)
	env.Keep = true
	p := &Preprocess{Items: 1000, ItemsPerHost: 1000, Triggers: 2, Values: 3000, Settle: 100 * time.Millisecond}
	sec, err := p.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	c := csvRows(t, sec)
	if len(c.Rows) != 1 || c.Get(0, "complete") != "true" || c.Get(0, "readable") != "3000" || !strings.Contains(c.Get(0, "steps"), "2 last() trigger") {
		t.Fatalf("rows %v (notes %v)", c.Rows, sec.Notes)
	}
	ctx := context.Background()
	var triggers, problems flexCount
	if err := env.API.Call(ctx, "trigger.get", map[string]any{"countOutput": true, "search": map[string]any{"description": "pp "}}, &triggers); err != nil || triggers != 2000 {
		t.Errorf("triggers kept: %d (%v), want 2000", triggers, err)
	}
	if err := env.API.Call(ctx, "problem.get", map[string]any{"countOutput": true}, &problems); err != nil || problems != 0 {
		t.Errorf("problems: %d (%v), want none", problems, err)
	}
	env.Keep = false
	if _, err := p.Run(ctx, env); err != nil {
		t.Fatal(err)
	}
	if err := env.API.Call(ctx, "trigger.get", map[string]any{"countOutput": true, "search": map[string]any{"description": "pp "}}, &triggers); err != nil || triggers != 0 {
		t.Errorf("triggers left after a run not kept: %d (%v)", triggers, err)
	}
}

// The master document is valid JSON once unescaped, with one member per
// dependent.
func TestMasterDoc(t *testing.T) {
	var m map[string]float64
	if err := json.Unmarshal([]byte(strings.ReplaceAll(masterDoc(12), `\"`, `"`)), &m); err != nil || len(m) != 12 || m["m0"] != 1000 || m["m11"] != 1407.109 {
		t.Errorf("%v %v", m, err)
	}
}

// A chain size that does not fill hosts is refused.
func TestPreprocessDefaults(t *testing.T) {
	if err := (&Preprocess{Items: 1500, ItemsPerHost: 1000}).defaults(); err == nil || !strings.Contains(err.Error(), "--items") {
		t.Errorf("err %v", err)
	}
	if err := (&Preprocess{Items: 1000, ItemsPerHost: 1000, Triggers: 101}).defaults(); err == nil || !strings.Contains(err.Error(), "--pp-triggers") {
		t.Errorf("err %v", err)
	}
	p := &Preprocess{Masters: 10}
	if err := p.defaults(); err != nil || p.Dependents != 10 || p.MasterRounds != 100 || p.Items != 0 {
		t.Errorf("%+v %v", p, err)
	}
}
