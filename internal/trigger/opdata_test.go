package trigger

import (
	"context"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// TestOpdataValueMaps: {ITEM.VALUE}/{ITEM.LASTVALUE} in operational data
// and in the event name show through the item's value map ("Up (1)"), by
// the item's place in the expression, as the Zabbix 6.0 server writes
// them (opdata.go has the recording); a value no mapping matches and an
// item without a map show plain.
func TestOpdataValueMaps(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	spec, err := catalog.ParseSpec([]byte(`
hosts:
  - host: h1
    groups: [G]
    valuemaps:
      - name: Link
        mappings:
          - {value: '1', newvalue: Up}
          - {value: '2', newvalue: Down}
    items:
      - {key: a, valuemap: {name: Link}}
      - {key: b}
`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.cat.Apply(ctx, spec); err != nil {
		t.Fatal(err)
	}
	snap := e.cat.Snapshot()
	a, b := snap.Lookup("h1", "a").ID, snap.Lookup("h1", "b").ID
	// b comes first in the expression: {ITEM.VALUE1} is b's, {ITEM.VALUE2} a's.
	id := e.trigger(catalog.TriggerFields{
		Description: "a is {ITEM.VALUE2}", Expression: "last(/h1/b)>5 or last(/h1/a)<>1",
		Opdata: "link {ITEM.LASTVALUE2}, b {ITEM.VALUE1}, first {ITEM.VALUE}",
	})
	f := func(vals []string, want string) {
		t.Helper()
		if _, err := e.m.Process(e.cat.Snapshot(), []Result{{TriggerID: id, Value: Problem, Clock: 50, ItemValues: vals, ItemIDs: []uint64{b, a}}}); err != nil {
			t.Fatal(err)
		}
		open := e.store.OpenProblemsOf(id)
		if len(open) != 1 {
			t.Fatalf("values %q: open problems %+v", vals, open)
		}
		// The name shows a's value as the opdata's "link" part does.
		wantName := "a is " + strings.TrimPrefix(strings.Split(want, ",")[0], "link ")
		if open[0].Opdata != want || open[0].Name != wantName {
			t.Errorf("values %q: name %q, opdata %q, want name %q, opdata %q", vals, open[0].Name, open[0].Opdata, wantName, want)
		}
		if _, err := e.m.Process(e.cat.Snapshot(), []Result{{TriggerID: id, Value: OK, Clock: 60}}); err != nil {
			t.Fatal(err)
		}
	}
	f([]string{"7", "2"}, "link Down (2), b 7, first 7")
	f([]string{"1", "1"}, "link Up (1), b 1, first 1")
	f([]string{"9", "3"}, "link 3, b 9, first 9") // no mapping for 3
	// With units, opdata shows the mapped value's units inside the
	// parentheses, the name does not (recorded: "Up (1 B)", "Up (1)").
	if _, err := e.cat.Edit(ctx, func(ed *catalog.Edit) error {
		u := "B"
		return ed.UpdateItems([]catalog.ItemUpdate{{ID: a, Units: &u}})
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.Process(e.cat.Snapshot(), []Result{{TriggerID: id, Value: Problem, Clock: 70, ItemValues: []string{"7", "1"}, ItemIDs: []uint64{b, a}}}); err != nil {
		t.Fatal(err)
	}
	if open := e.store.OpenProblemsOf(id); len(open) != 1 || open[0].Name != "a is Up (1)" || open[0].Opdata != "link Up (1 B), b 7, first 7" {
		t.Errorf("with units: %+v", open)
	}
	if _, err := e.m.Process(e.cat.Snapshot(), []Result{{TriggerID: id, Value: OK, Clock: 80}}); err != nil {
		t.Fatal(err)
	}
	f([]string{"9", "UNKNOWN"}, "link UNKNOWN, b 9, first 9")
}

// TestEvaluatorOpdataValueMap: the evaluator passes the items of the
// expression with their values, so a problem it raises shows its
// operational data through the value map.
func TestEvaluatorOpdataValueMap(t *testing.T) {
	e := newEvalEnv(t, 0)
	spec, err := catalog.ParseSpec([]byte(`
hosts:
  - host: h1
    groups: [G]
    valuemaps:
      - name: State
        mappings: [{value: '0', newvalue: Stopped}, {type: DEFAULT, newvalue: Other}]
    items: [{key: a, valuemap: {name: State}}, {key: b}]
`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.cat.Apply(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	id := e.trigger(catalog.TriggerFields{Description: "a stopped", Expression: "last(/h1/a)=0", Opdata: "state {ITEM.LASTVALUE}"})
	e.commit("a", t0, 0)
	e.ev.Drain(context.Background())
	open := e.open(id)
	if len(open) != 1 || open[0].Opdata != "state Stopped (0)" {
		t.Fatalf("open problems: %+v, want one with opdata %q", open, "state Stopped (0)")
	}
}
