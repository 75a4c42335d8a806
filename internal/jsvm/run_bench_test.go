package jsvm

import (
	"context"
	"strconv"
	"testing"
)

// go test -run '^$' -bench 'Run' -count 6 ./internal/jsvm/
//
// BenchmarkRun is one preprocessing script run on a short value, what
// a JavaScript step costs per value: in this process (runner=local), and
// in a worker process (runner=pool: the round trip through the pipes
// on top, the script cached in the worker). One run at a time.
func BenchmarkRun(b *testing.B) {
	const script = "var o = JSON.parse(value); return o.a * 2 + o.b.length;"
	prog, err := Compile(script)
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"local", "pool"} {
		b.Run("runner="+name, func(b *testing.B) {
			var r Runner = &Local{}
			if name == "pool" {
				r = newPool(b, PoolOptions{Workers: 1})
			}
			ctx := context.Background()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				j := &Job{Kind: Preprocessing, Script: script, Program: prog, Value: `{"a":` + strconv.Itoa(i) + `,"b":"xyz"}`}
				res, err := r.Run(ctx, j)
				if err != nil || res.Value != strconv.Itoa(2*i+3) {
					b.Fatalf("%+v, %v", res, err)
				}
				i++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
		})
	}
}
