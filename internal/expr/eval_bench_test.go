package expr

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// ringSource is an in-memory Source as a trigger evaluator would keep
// per item: values newest first, answered by sub-slicing (no copy).
type ringSource struct {
	items map[ItemRef][]history.Sample // newest first
}

func (r *ringSource) History(_ context.Context, item ItemRef, q HistoryQuery) ([]history.Sample, error) {
	s := r.items[item]
	// First value at or before Till.
	i := sort.Search(len(s), func(i int) bool { return s[i].Clock <= q.Till })
	s = s[i:]
	if q.Count > 0 {
		return s[:min(q.Count, len(s))], nil
	}
	j := sort.Search(len(s), func(i int) bool { return s[i].Clock <= q.From })
	return s[:j], nil
}

func (r *ringSource) Trends(context.Context, ItemRef, int64, int64) ([]history.Trend, error) {
	return nil, nil
}

// BenchmarkEval evaluates typical trigger expressions against an item
// with one value every 10 s for an hour (fixed data).
//
//	go test -run '^$' -bench BenchmarkEval -benchmem -count 6 ./internal/expr/
func BenchmarkEval(b *testing.B) {
	const n = 360
	now := time.Unix(1_700_000_000, 0)
	samples := make([]history.Sample, n)
	for i := range samples {
		samples[i] = history.Sample{Clock: now.Unix() - int64(i*10), Type: history.Float, F: float64(50 + i%40)}
	}
	src := &ringSource{items: map[ItemRef][]history.Sample{{Host: "h", Key: "system.cpu.util"}: samples}}
	for _, bc := range []struct{ name, expr string }{
		{"last", "last(/h/system.cpu.util)>90"},
		{"avg5m", "avg(/h/system.cpu.util,5m)>{$CPU.UTIL.CRIT}"},
		{"min5m_and_last", "min(/h/system.cpu.util,5m)>80 and last(/h/system.cpu.util)<>last(/h/system.cpu.util,#2)"},
		{"count1h", `count(/h/system.cpu.util,1h,"gt",85)>10`},
	} {
		e, err := Parse(bc.expr)
		if err != nil {
			b.Fatal(err)
		}
		opt := Options{Now: now, Source: src, Macros: MacroLevels{{{Name: "CPU.UTIL.CRIT", Value: "90"}}}}
		if v := e.Eval(context.Background(), opt); v.IsError() {
			b.Fatalf("%s: %s", bc.expr, v)
		}
		b.Run("expr="+bc.name, func(b *testing.B) {
			b.ReportAllocs()
			ctx := context.Background()
			for b.Loop() {
				e.Eval(ctx, opt)
			}
		})
	}
}

// BenchmarkParse parses a typical template trigger expression.
//
//	go test -run '^$' -bench BenchmarkParse -benchmem -count 6 ./internal/expr/
func BenchmarkParse(b *testing.B) {
	const s = `avg(/Linux by Zabbix agent/system.cpu.util,5m)>{$CPU.UTIL.CRIT} and last(/Linux by Zabbix agent/vfs.fs.size["/",pused],#1:now-1h)<>0`
	b.ReportAllocs()
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if _, err := Parse(s); err != nil {
			b.Fatal(err)
		}
	}
}
