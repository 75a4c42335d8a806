package trigger

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// BenchmarkCorrelate: each op is one Process of one PROBLEM result of a
// multiple-problem-events trigger tagged svc=x, with open=N other open
// problems in the store (tags svc=v0..v999, env=prod) and:
//
//   - rules=none: no correlation rule (the cost correlation must not add);
//   - rules=pair: an event tag pair svc/svc rule closing old events, so
//     each new problem closes the previous one (found by the tag index
//     among the N others);
//   - rules=closenew: a new event tag rule closing the new event;
//   - rules=notlike: an old tag value "not like v" rule, true of the old
//     problems whose svc does not contain v (only the trigger's own):
//     the one kind that lists all N open problems.
//
// The time per op should not grow with open for none, pair and closenew.
//
//	go test -run '^$' -bench BenchmarkCorrelate -benchtime 2000x -count 6 ./internal/trigger/
func BenchmarkCorrelate(b *testing.B) {
	for _, open := range []int{1_000, 100_000} {
		for _, rules := range []string{"none", "pair", "closenew", "notlike"} {
			b.Run(fmt.Sprintf("open=%d/rules=%s", open, rules), func(b *testing.B) {
				benchCorrelate(b, open, rules)
			})
		}
	}
}

func benchCorrelate(b *testing.B, open int, rules string) {
	dir := b.TempDir()
	cat, err := catalog.Open(context.Background(), catalog.Options{Path: filepath.Join(dir, "catalog.db"), ExprRefs: ItemRefs})
	if err != nil {
		b.Fatal(err)
	}
	defer cat.Close()
	if _, err := cat.Apply(context.Background(), catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h", Groups: []string{"G"},
		Items: []catalog.ItemSpec{{Key: "a"}}}}}); err != nil {
		b.Fatal(err)
	}
	var tid uint64
	if _, err := cat.Edit(context.Background(), func(ed *catalog.Edit) error {
		ids, err := ed.CreateTriggers([]catalog.TriggerFields{{Description: "t", Expression: "last(/h/a)>1", Enabled: true, Multiple: true,
			Tags: []catalog.Tag{{Tag: "svc", Value: "x"}, {Tag: "new", Value: "1"}}}})
		tid = ids[0]
		return err
	}); err != nil {
		b.Fatal(err)
	}
	var r *catalog.Correlation
	switch rules {
	case "pair":
		r = &catalog.Correlation{Conditions: []catalog.CorrCondition{{Type: catalog.CorrTagPair, OldTag: "svc", NewTag: "svc", FormulaID: "A"},
			{Type: catalog.CorrNewTag, Tag: "new", FormulaID: "B"}}, Operations: []int{catalog.CorrCloseOld}}
	case "closenew":
		r = &catalog.Correlation{Conditions: []catalog.CorrCondition{{Type: catalog.CorrNewTag, Tag: "new", FormulaID: "A"}},
			Operations: []int{catalog.CorrCloseNew}}
	case "notlike":
		r = &catalog.Correlation{Conditions: []catalog.CorrCondition{{Type: catalog.CorrOldTagValue, Tag: "svc", Value: "v", Operator: 3, FormulaID: "A"},
			{Type: catalog.CorrNewTag, Tag: "new", FormulaID: "B"}}, Operations: []int{catalog.CorrCloseOld}}
	}
	if r != nil {
		r.ID, r.Name = 1, "r"
		if err := cat.EditAlerts(context.Background(), func(cfg *catalog.AlertConfig) error {
			cfg.Correlations = map[uint64]*catalog.Correlation{1: r}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	st, err := event.Open(event.Options{Dir: filepath.Join(dir, "events"), Sync: wal.SyncNever})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	// The other open problems, of triggers not in the catalog (a
	// correlation finding them cannot close them, so their number stays).
	for i := 0; i < open; i += 10_000 {
		var bt event.Batch
		for j := i; j < min(open, i+10_000); j++ {
			bt.Events = append(bt.Events, event.Event{ObjectID: 1_000_000 + uint64(j), Clock: 1, Value: event.ValueProblem,
				Tags: []event.Tag{{Tag: "svc", Value: fmt.Sprintf("v%d", j%1000)}, {Tag: "env", Value: "prod"}}})
		}
		if err := st.Commit(&bt); err != nil {
			b.Fatal(err)
		}
	}
	m, err := New(Options{Store: st, Correlations: cat.AlertConfig})
	if err != nil {
		b.Fatal(err)
	}
	snap := cat.Snapshot()
	rs := []Result{{TriggerID: tid, Value: Problem, Clock: 9}}
	// A first problem, outside the timing: it builds the tag index.
	if _, err := m.Process(snap, rs); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		rs[0].Clock = int64(10 + i)
		if _, err := m.Process(snap, rs); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if rules == "pair" || rules == "notlike" {
		if n := len(st.OpenProblemsOf(tid)); n != 1 {
			b.Fatalf("%d open problems of the trigger, want 1 (each closing the one before)", n)
		}
	}
}
