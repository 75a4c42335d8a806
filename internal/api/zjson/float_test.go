package zjson

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// appendRefFloat is AppendFloat without the fast path.
func appendRefFloat(b []byte, f float64) []byte {
	if a := math.Abs(f); a != 0 && (a >= 1e15 || a < 1e-6) {
		return strconv.AppendFloat(b, f, 'g', -1, 64)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}

func refFloat(f float64) string { return string(appendRefFloat(nil, f)) }

func checkFloat(t *testing.T, f float64) {
	t.Helper()
	if got, want := string(AppendFloat([]byte("x"), f)), "x"+refFloat(f); got != want {
		t.Fatalf("AppendFloat(%v (bits %#x)) = %q, want %q", f, math.Float64bits(f), got, want)
	}
}

func TestAppendFloat(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 0.1, 0.2, 0.3, 0.085, 0.0850, 23.45, -23.45,
		1e-6, 1.5e-6, 1e-7, 0.000001, 0.0000015, 999999999, 999999999.999999, 1e9, -1e9, 1e9 - 0.5, 123456.789,
		1e15, 1e16, 12345678901234, 0.1 + 0.2, 1.0 / 3, math.Pi, math.MaxFloat64, math.SmallestNonzeroFloat64,
		9007199254740993, 100, 1000000, -0.000001} {
		checkFloat(t, f)
	}
	r := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 200000; i++ {
		var f float64
		switch i % 4 {
		case 0: // decimals with 0..8 fraction digits
			k := r.IntN(9)
			f = float64(r.Int64N(2e12)-1e12) / math.Pow10(k)
		case 1: // gauges rounded to 2 decimals
			f = math.Round(r.NormFloat64()*1e6) / 100
		case 2: // arbitrary doubles in range
			f = (r.Float64() - 0.5) * math.Pow10(r.IntN(20)-8)
		default: // arbitrary bits
			f = math.Float64frombits(r.Uint64())
			if math.IsNaN(f) || math.IsInf(f, 0) {
				continue
			}
		}
		checkFloat(t, f)
	}
}

// FuzzAppendFloat checks the decimal fast path against strconv for
// any float64 bits.
func FuzzAppendFloat(f *testing.F) {
	for _, v := range []float64{0.085, 23.45, 1e-6, 999999999.5, 0.1 + 0.2} {
		f.Add(math.Float64bits(v))
	}
	f.Fuzz(func(t *testing.T, bits uint64) {
		v := math.Float64frombits(bits)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		checkFloat(t, v)
	})
}

// go test -run '^$' -bench 'AppendFloat' -count 6 ./internal/api/zjson/
func BenchmarkAppendFloat(b *testing.B) {
	v := make([]float64, 4096)
	level := 20.0
	for i := range v {
		level += math.Sin(float64(i)/50) / 20
		v[i] = math.Round(level*100) / 100
	}
	for _, c := range []struct {
		name string
		fn   func([]byte, float64) []byte
	}{
		{"fast", AppendFloat},
		{"strconv", appendRefFloat},
	} {
		b.Run("impl="+c.name+"/vals=gauge2dec", func(b *testing.B) {
			var buf []byte
			b.ReportAllocs()
			for b.Loop() {
				for _, f := range v {
					buf = c.fn(buf[:0], f)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(v)), "ns/value")
		})
	}
}
