package exprsource

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/expr"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
)

// History with Before reads as of a nanosecond: values later in the
// Till second are left out, and a count read that lost values to that
// cut reads again so it still returns Count of them when there are.
func TestHistoryBefore(t *testing.T) {
	ctx := context.Background()
	cat, err := catalog.Open(ctx, catalog.Options{Path: filepath.Join(t.TempDir(), "catalog.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	if _, err := cat.Apply(ctx, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h", Groups: []string{"G"},
		Items: []catalog.ItemSpec{{Key: "k", ValueType: "float"}}}}}); err != nil {
		t.Fatal(err)
	}
	snap := cat.Snapshot()
	id := snap.Lookup("h", "k").ID
	st := memstore.New()
	var ss []history.Sample
	ss = append(ss, history.Sample{ItemID: id, Clock: 9, Type: history.Float, F: 0.5})
	for i := 1; i <= 4; i++ {
		ss = append(ss, history.Sample{ItemID: id, Clock: 10, NS: int32(i * 100), Type: history.Float, F: float64(i)})
	}
	if err := st.Write(ctx, ss); err != nil {
		t.Fatal(err)
	}
	ref := expr.ItemRef{Host: "h", Key: "k"}
	for _, reuse := range []bool{false, true} {
		src := &StoreSource{Store: st, Snap: snap, Reuse: reuse}
		for _, c := range []struct {
			q    expr.HistoryQuery
			want string
		}{
			{expr.HistoryQuery{Count: 2, Till: 10, Before: 10e9 + 250}, "[2 1]"},
			{expr.HistoryQuery{Count: 1, Till: 10, Before: 10e9 + 400}, "[4]"},
			{expr.HistoryQuery{Count: 3, Till: 10, Before: 10e9 + 150}, "[1 0.5]"},
			{expr.HistoryQuery{Count: 2, Till: 10, Before: 10e9 + 50}, "[0.5]"},
			{expr.HistoryQuery{From: 8, Till: 10, Before: 10e9 + 200}, "[2 1 0.5]"},
			{expr.HistoryQuery{Count: 2, Till: 10}, "[4 3]"},                   // no cut
			{expr.HistoryQuery{Count: 2, Till: 10, Before: 11e9 + 5}, "[4 3]"}, // a cut in another second is none
		} {
			out, err := src.History(ctx, ref, c.q)
			if err != nil {
				t.Fatal(err)
			}
			var got []float64
			for _, s := range out {
				got = append(got, s.F)
			}
			if fmt.Sprint(got) != c.want {
				t.Errorf("reuse %v, %+v: %v, want %s", reuse, c.q, got, c.want)
			}
		}
	}
}

// Known answers a count-1 read of its item as of exactly its nanosecond
// without the store (here: a store that holds another value there, to
// tell the answers apart); any other read goes to the store.
func TestHistoryKnown(t *testing.T) {
	ctx := context.Background()
	cat, err := catalog.Open(ctx, catalog.Options{Path: filepath.Join(t.TempDir(), "catalog.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	if _, err := cat.Apply(ctx, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h", Groups: []string{"G"},
		Items: []catalog.ItemSpec{{Key: "k", ValueType: "float"}, {Key: "o", ValueType: "float"}}}}}); err != nil {
		t.Fatal(err)
	}
	snap := cat.Snapshot()
	id, other := snap.Lookup("h", "k").ID, snap.Lookup("h", "o").ID
	st := memstore.New()
	if err := st.Write(ctx, []history.Sample{
		{ItemID: id, Clock: 9, Type: history.Float, F: 1}, {ItemID: id, Clock: 10, NS: 5, Type: history.Float, F: 2},
		{ItemID: other, Clock: 10, NS: 5, Type: history.Float, F: 3}}); err != nil {
		t.Fatal(err)
	}
	known := history.Sample{ItemID: id, Clock: 10, NS: 5, Type: history.Float, F: 42}
	for _, reuse := range []bool{false, true} {
		src := &StoreSource{Store: st, Snap: snap, Reuse: reuse, Known: &known}
		for _, c := range []struct {
			key  string
			q    expr.HistoryQuery
			want string
		}{
			{"k", expr.HistoryQuery{Count: 1, Till: 10, Before: 10e9 + 5}, "[42]"},
			{"k", expr.HistoryQuery{Count: 2, Till: 10, Before: 10e9 + 5}, "[2 1]"}, // not a last()
			{"k", expr.HistoryQuery{Count: 1, Till: 10, Before: 10e9 + 4}, "[1]"},   // another time
			{"k", expr.HistoryQuery{Count: 1, Till: 10}, "[2]"},                     // not as of a nanosecond
			{"o", expr.HistoryQuery{Count: 1, Till: 10, Before: 10e9 + 5}, "[3]"},   // another item
		} {
			out, err := src.History(ctx, expr.ItemRef{Host: "h", Key: c.key}, c.q)
			if err != nil {
				t.Fatal(err)
			}
			var got []float64
			for _, s := range out {
				got = append(got, s.F)
			}
			if fmt.Sprint(got) != c.want {
				t.Errorf("reuse %v, %s %+v: %v, want %s", reuse, c.key, c.q, got, c.want)
			}
		}
	}
}
