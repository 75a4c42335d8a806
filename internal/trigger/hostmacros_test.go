package trigger

import (
	"context"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/history"
)

// TestEvaluatorUserMacrosOverSeveralHosts: a trigger over two hosts
// expands each item function's parameters with the user macros of that
// function's host, and the expression's constants over both hosts, their
// own macros before their templates' (Zabbix 6.0), where Peregrine used
// the first host's scope for everything.
func TestEvaluatorUserMacrosOverSeveralHosts(t *testing.T) {
	e := newEvalEnv(t, 0)
	ctx := context.Background()
	spec, err := catalog.ParseSpec([]byte(`
macros:
  - {macro: '{$MAX}', value: '100'}
  - {macro: '{$ONLY.GLOBAL}', value: '1000'}
templates:
  - template: T1
    macros:
      - {macro: '{$MAX}', value: '50'}
      - {macro: '{$T1}', value: '20'}
hosts:
  - host: h1
    groups: [G]
    items: [{key: a}, {key: b}]
    templates: [{name: T1}]
    macros:
      - {macro: '{$NTH}', value: '#1'}
  - host: h2
    groups: [G]
    items: [{key: a}]
    macros:
      - {macro: '{$NTH}', value: '#2'}
      - {macro: '{$MAX}', value: '10'}
`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.cat.Apply(ctx, spec); err != nil {
		t.Fatal(err)
	}
	// Parameters: h1's {$NTH} is the newest value, h2's the one before.
	params := e.trigger(catalog.TriggerFields{Description: "params", Expression: "last(/h1/a,{$NTH})=1 and last(/h2/a,{$NTH})=7"})
	// Constants over both hosts: h2's own {$MAX} (10) before h1's
	// template's (50) and global (100).
	constant := e.trigger(catalog.TriggerFields{Description: "constant", Expression: "last(/h1/b)+last(/h2/a,#1)*0>{$MAX}"})
	// A macro only h1's template defines, and one only global defines.
	deeper := e.trigger(catalog.TriggerFields{Description: "deeper", Expression: "last(/h1/b)>{$T1} and last(/h2/a)<{$ONLY.GLOBAL}"})

	e.commitOn("h1", "a", t0, 5, 1) // #1 = 1; #2 would be 5
	e.commitOn("h2", "a", t0, 7, 9) // #2 = 7; #1 would be 9
	e.commitOn("h1", "b", t0, 30)   // > 10 (h2's {$MAX}); not > 50 (h1's template's)
	e.ev.Drain(ctx)
	for _, c := range []struct {
		name string
		id   uint64
	}{{"params", params}, {"constant", constant}, {"deeper", deeper}} {
		if rt := e.m.Runtime(c.id); rt.Value != event.ValueProblem || rt.Error != "" {
			t.Errorf("%s: runtime %+v, want PROBLEM", c.name, rt)
		}
	}
	if hs := e.cat.Snapshot().Trigger(params).HostIDs; len(hs) != 2 {
		t.Fatalf("trigger over hosts %v, want two", hs)
	}
}

// commitOn stores values of host's key and calls the commit hook.
func (e *evalEnv) commitOn(host, key string, clock int64, vals ...float64) {
	e.t.Helper()
	id := e.cat.Snapshot().Lookup(host, key).ID
	var ss []history.Sample
	for i, v := range vals {
		ss = append(ss, history.Sample{ItemID: id, Clock: clock, NS: int32(i), Type: history.Float, F: v})
	}
	if err := e.hist.Write(context.Background(), ss); err != nil {
		e.t.Fatal(err)
	}
	e.ev.Commit(0, ss)
}
