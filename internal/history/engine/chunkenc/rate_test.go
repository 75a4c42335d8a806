package chunkenc

import (
	"math"
	"math/rand/v2"
	"testing"
)

// rates returns a counter's change per second over ts as Zabbix computes
// it, times m.
func genRates(rng *rand.Rand, ts []int64, m float64) []float64 {
	vals := make([]float64, len(ts))
	c := uint64(1 << 40)
	for i := 1; i < len(ts); i++ {
		d := uint64(1000 + rng.IntN(1000))
		c += d
		dt := float64(ts[i]/1e9-ts[i-1]/1e9) + float64(ts[i]%1e9-ts[i-1]%1e9)/1e9
		vals[i] = float64(d) / dt * m
	}
	vals[0] = vals[1]
	return vals
}

// TestRateEncoding: change-per-second values over nanosecond timestamps
// take the rate encoding (multiplier 1 and 8), a few values that are not
// rates stay exact as exceptions, and each chunk is far smaller than the
// XOR coding of the same values.
func TestRateEncoding(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 6))
	for _, m := range []float64{1, 8} {
		for _, n := range []int{17, 200, 2048} {
			ts := genTS(rng, "jitter", baseT, n)
			vals := genRates(rng, ts, m)
			if n > 17 {
				vals[n/2] = math.Pi
				vals[n-1] = math.NaN()
			}
			c := EncodeFloats(nil, ts, vals)
			if e := encodingOf(c); e != EncFloatRate {
				t.Errorf("m=%v n=%d: encoding %v, want FloatRate", m, n, e)
			}
			gotTS, got, err := DecodeFloats(nil, nil, c)
			if err != nil {
				t.Fatalf("m=%v n=%d: %v", m, n, err)
			}
			for i := range vals {
				if math.Float64bits(got[i]) != math.Float64bits(vals[i]) || gotTS[i] != ts[i] {
					t.Fatalf("m=%v n=%d: value %d = %v at %d, want %v at %d", m, n, i, got[i], gotTS[i], vals[i], ts[i])
				}
			}
			if x := encodeFloats(nil, ts, vals, EncFloatXOR); n >= 200 && len(c) > len(x)/2 {
				t.Errorf("m=%v n=%d: rate chunk %d bytes, XOR %d", m, n, len(c), len(x))
			}
		}
	}
	// Timestamps cut to milliseconds no longer give the divisor.
	ts := genTS(rng, "jitter", baseT, 200)
	vals := genRates(rng, ts, 1)
	for i := range ts {
		ts[i] -= ts[i] % 1e6
	}
	if e := encodingOf(EncodeFloats(nil, ts, vals)); e == EncFloatRate {
		t.Errorf("millisecond timestamps: encoding %v", e)
	}
}

// go test -run '^$' -bench 'DecodeRate' ./internal/history/engine/chunkenc/
//
// BenchmarkDecodeRate decodes 2,048 change-per-second values stored as
// FloatRate and, for comparison, as XOR.
func BenchmarkDecodeRate(b *testing.B) {
	rng := rand.New(rand.NewPCG(30, 7))
	ts := genTS(rng, "jitter", baseT, 2048)
	vals := genRates(rng, ts, 1)
	for _, enc := range []Encoding{EncFloatRate, EncFloatXOR} {
		c := encodeFloats(nil, ts, vals, enc)
		if encodingOf(c) != enc {
			b.Fatalf("encoded as %v", encodingOf(c))
		}
		b.Run(enc.String(), func(b *testing.B) {
			var t []int64
			var v []float64
			for b.Loop() {
				var err error
				if t, v, err = DecodeFloats(t[:0], v[:0], c); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/2048, "ns/value")
			b.ReportMetric(float64(len(c))/2048, "B/value")
		})
	}
}
