package expr

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// sampleSource answers every item with one sample.
type sampleSource history.Sample

func (s sampleSource) History(context.Context, ItemRef, HistoryQuery) ([]history.Sample, error) {
	return []history.Sample{history.Sample(s)}, nil
}

func (sampleSource) Trends(context.Context, ItemRef, int64, int64) ([]history.Trend, error) {
	return nil, nil
}

// TestCompareLast: an expression of the form last(/h/k) OP N evaluates,
// through LastComparison.Eval, to what Eval makes of it when last() reads the
// same value, for every comparison, both numeric types and text, values
// within Zabbix's epsilon of the threshold included; other forms are
// not taken.
func TestCompareLast(t *testing.T) {
	forms := []string{"last(/h/k)>10", "last(/h/k)>=10", "last(/h/k)<10", "last(/h/k)<=10", "last(/h/k)=10", "last(/h/k)<>10",
		"last(//k)>1e15", "last(/{HOST.HOST}/k[a,\"b\"])=0", "last(/h/k)>5m", "last(/h/k)=0.1"}
	values := []history.Sample{
		{Type: history.Float, F: 10}, {Type: history.Float, F: 10.0000000001}, {Type: history.Float, F: 9.99}, {Type: history.Float, F: math.Copysign(0, -1)},
		{Type: history.Float, F: math.MaxFloat64}, {Type: history.Float, F: 0.1}, {Type: history.Float, F: 300},
		{Type: history.Uint, U: 10}, {Type: history.Uint, U: math.MaxUint64}, {Type: history.Uint, U: 0},
		{Type: history.Str, S: "10"}, {Type: history.Text, S: "abc"}, {Type: history.Log, S: " 10 "},
	}
	now := time.Unix(1_700_000_000, 5)
	for _, f := range forms {
		e, err := Parse(f)
		if err != nil {
			t.Fatal(err)
		}
		l, ok := e.LastComparison()
		if !ok {
			t.Fatalf("%s: not taken as last() compared with a number", f)
		}
		for _, v := range values {
			v.Clock, v.NS = now.Unix(), int32(now.Nanosecond())
			want := e.Eval(context.Background(), Options{Now: now, Source: sampleSource(v)})
			if got := l.Eval(&v); got != want {
				t.Errorf("%s with %+v: LastComparison.Eval = %+v, Eval = %+v", f, v, got, want)
			}
		}
	}
	for _, f := range []string{"last(/h/k,#2)>1", "last(/h/k)>{$X}", "10<last(/h/k)", "(last(/h/k)>1)", "last(/h/k)+1>1",
		"last(/h/k)>-1", "min(/h/k,5m)>1", "last(/h/k)>1 and last(/h/k)<5", "last(/h/k)=\"a\""} {
		e, err := Parse(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := e.LastComparison(); ok {
			t.Errorf("%s taken as last(/host/key) compared with a number", f)
		}
	}
}
