package pipeline

import (
	"testing"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
)

// Committed values are counted per value type (zabbix[wcache,values,
// <type>]), and the shards' work shows as busy time.
func TestValuesCommittedByType(t *testing.T) {
	p := start(t, Options{Shards: 2, Store: memstore.New()})
	var v []history.Sample
	add := func(typ history.ValueType, n int) {
		for i := 0; i < n; i++ {
			s := history.Sample{ItemID: uint64(len(v) + 1), Clock: 1000, Type: typ}
			switch typ {
			case history.Float:
				s.F = 1.5
			case history.Uint:
				s.U = 3
			default:
				s.S = "x"
			}
			v = append(v, s)
		}
	}
	add(history.Float, 5)
	add(history.Uint, 4)
	add(history.Str, 3)
	add(history.Text, 2)
	add(history.Log, 1)
	if err := p.Submit(v, NewTicket()); err != nil {
		t.Fatal(err)
	}
	got := p.ValuesCommitted()
	want := [history.Text + 1]uint64{history.Float: 5, history.Uint: 4, history.Str: 3, history.Text: 2, history.Log: 1}
	if got != want {
		t.Fatalf("ValuesCommitted() = %v; want %v", got, want)
	}
	// Two shards of two goroutines each (preprocessing, commit).
	if p.Busy().Nanos() <= 0 || p.Busy().Goroutines != 4 {
		t.Fatalf("busy %d ns over %d goroutines after a commit; want > 0 over 4", p.Busy().Nanos(), p.Busy().Goroutines)
	}
}
