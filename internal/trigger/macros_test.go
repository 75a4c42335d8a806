package trigger

import (
	"context"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
)

// TestEvaluatorUserMacros evaluates triggers whose thresholds are user
// macros of the host, of a linked template and global, with contexts;
// a macro changed through the catalog counts at the next evaluation
// (no restart); a secret macro in the name is masked.
func TestEvaluatorUserMacros(t *testing.T) {
	e := newEvalEnv(t, 0)
	ctx := context.Background()
	spec, err := catalog.ParseSpec([]byte(`
macros:
  - {macro: '{$CRIT}', value: '100'}
  - {macro: '{$LOW:"b"}', value: '5'}
templates:
  - template: T
    macros:
      - {macro: '{$WARN}', value: '20'}
      - {macro: '{$LOW}', value: '1'}
      - {macro: '{$LOW:regex:"^a"}', value: '3'}
hosts:
  - host: h1
    groups: [G]
    items: [{key: a}, {key: b}]
    templates: [{name: T}]
    macros:
      - {macro: '{$CRIT}', value: '50'}
      - {macro: '{$TOKEN}', value: hunter2, type: SECRET_TEXT}
`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.cat.Apply(ctx, spec); err != nil {
		t.Fatal(err)
	}
	crit := e.trigger(catalog.TriggerFields{Description: "a over {$CRIT} ({$TOKEN})", Expression: "last(/h1/a)>{$CRIT}"})
	warn := e.trigger(catalog.TriggerFields{Description: "a over {$WARN}", Expression: "last(/h1/a)>{$WARN}"})
	lowA := e.trigger(catalog.TriggerFields{Description: "a low", Expression: `last(/h1/a)<{$LOW:"a1"}`})
	lowB := e.trigger(catalog.TriggerFields{Description: "b low", Expression: `last(/h1/b)<{$LOW:"b"}`})
	undef := e.trigger(catalog.TriggerFields{Description: "undefined", Expression: "last(/h1/a)>{$NOPE}"})

	e.commit("a", t0, 60) // > host's 50 (over global 100), > template's 20
	e.commit("b", t0, 4)  // < global's {$LOW:"b"} 5 (exact context beats the template's regex and default)
	e.ev.Drain(ctx)
	for _, c := range []struct {
		id   uint64
		want uint8
	}{{crit, event.ValueProblem}, {warn, event.ValueProblem}, {lowA, event.ValueOK}, {lowB, event.ValueProblem}} {
		if rt := e.m.Runtime(c.id); rt.Value != c.want {
			t.Errorf("trigger %d: runtime %+v, want value %d", c.id, rt, c.want)
		}
	}
	if rt := e.m.Runtime(undef); rt.State != 1 || rt.Error == "" {
		t.Errorf("undefined macro: runtime %+v, want unknown with an error", rt)
	}
	if open := e.open(crit); len(open) != 1 || open[0].Name != "a over 50 (******)" {
		t.Fatalf("crit problems %+v: want the name with the host's value and the secret masked", open)
	}
	e.commit("a", t0+1, 2) // < regex context ^a (3) for {$LOW:"a1"}
	e.ev.Drain(ctx)
	if rt := e.m.Runtime(lowA); rt.Value != event.ValueProblem {
		t.Errorf("regex context: runtime %+v", rt)
	}

	// Raise the host's threshold through the catalog: the next value is
	// evaluated against it.
	h := e.cat.Snapshot().Host("h1").ID
	if _, err := e.cat.Edit(ctx, func(ed *catalog.Edit) error {
		_, err := ed.SetMacros(h, []catalog.MacroFields{{Macro: "{$CRIT}", Value: "70"}}, "macros")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	e.commit("a", t0+2, 60)
	e.ev.Drain(ctx)
	if rt := e.m.Runtime(crit); rt.Value != event.ValueOK {
		t.Fatalf("after {$CRIT}=70, 60 still a problem: %+v", rt)
	}
}

// TestResolverQuotedContext: a user macro whose quoted context holds
// '}' is expanded whole in a name.
func TestResolverQuotedContext(t *testing.T) {
	e := newEnv(t)
	h := e.cat.Snapshot().Host("h1").ID
	if _, err := e.cat.Edit(context.Background(), func(ed *catalog.Edit) error {
		_, err := ed.SetMacros(h, []catalog.MacroFields{{Macro: `{$T:"a}b"}`, Value: "30"}, {Macro: "{$T}", Value: "10"}}, "macros")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	snap := e.cat.Snapshot()
	tr := &catalog.Trigger{ID: 1, HostIDs: []uint64{h}}
	got := MacroResolver{}.Expand(`over {$T:"a}b"} and {$T} on {HOST.HOST}, {$NONE} kept`, &MacroContext{Trigger: tr, Snapshot: snap})
	if want := "over 30 and 10 on h1, {$NONE} kept"; got != want {
		t.Fatalf("Expand = %q, want %q", got, want)
	}
}
