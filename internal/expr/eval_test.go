package expr

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// TestEvalConcurrent evaluates one Expr from many goroutines (run with
// -race): an Expr is immutable after Parse.
func TestEvalConcurrent(t *testing.T) {
	e, err := Parse(`avg(/h/k,5m)>{$LIMIT} or last(/h/k)<>last(/h/k,#2) or count(/h/k,#3,"gt",1)=3`)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	src := &ringSource{items: map[ItemRef][]history.Sample{{Host: "h", Key: "k"}: {
		{Clock: 1000, Type: history.Float, F: 3},
		{Clock: 990, Type: history.Float, F: 2},
		{Clock: 980, Type: history.Float, F: 2},
	}}}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			// Per-goroutine macros: avg 2.33 > limit for g < 3, and
			// last 3 <> previous 2 makes the whole true for every g.
			limit := fmt.Sprint(g)
			opt := Options{Now: now, Source: src, Macros: MacroLevels{{{Name: "LIMIT", Value: limit}}}}
			for i := 0; i < 200; i++ {
				v := e.Eval(context.Background(), opt)
				if v.Kind != KindNumber || v.Num != 1 {
					errs <- fmt.Errorf("goroutine %d: got %s, want 1", g, v)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestValueString(t *testing.T) {
	f := func(v Value, want string) {
		t.Helper()
		if got := v.String(); got != want {
			t.Fatalf("String() = %q, want %q", got, want)
		}
	}
	f(NumberValue(1), "1")
	f(NumberValue(0.25), "0.25")
	f(NumberValue(-3), "-3")
	f(NumberValue(1e20), "1e+20")
	f(StringValue("abc"), "abc")
	f(ErrorValue("no data"), "unknown(no data)")
}

func TestValueBool(t *testing.T) {
	f := func(v Value, truth, ok bool) {
		t.Helper()
		if gt, gok := v.Bool(); gt != truth || gok != ok {
			t.Fatalf("%s.Bool() = %v, %v; want %v, %v", v, gt, gok, truth, ok)
		}
	}
	f(NumberValue(1), true, true)
	f(NumberValue(0), false, true)
	f(NumberValue(-0.5), true, true)
	f(StringValue("2"), true, true)
	f(StringValue("x"), false, false)
	f(ErrorValue("e"), false, false)
}

func TestEvalWithoutSource(t *testing.T) {
	e, err := Parse("last(/h/k)")
	if err != nil {
		t.Fatal(err)
	}
	v := e.Eval(context.Background(), Options{Now: time.Unix(0, 0)})
	if !v.IsError() || v.Err != "cannot evaluate function last(/h/k): no data source" {
		t.Fatalf("got %s", v)
	}
}
