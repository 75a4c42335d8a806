package chunkenc

import (
	"math/rand/v2"
	"testing"
)

func BenchmarkTmpUnpack(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	v := make([]uint64, 1024)
	for i := range v {
		v[i] = zigzag(int64(rng.NormFloat64() * 5))
	}
	p := planInts(v)
	enc := appendIntsMode(nil, v, intPacked, &p.packed)
	b.Logf("w=%d k=%d bits/value=%.2f", p.packed.w, p.packed.k, float64(p.packed.size*8)/1024)
	out := make([]uint64, 1024)
	for b.Loop() {
		r := reader{b: enc}
		if err := decodeInts(&r, "x", out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1024, "ns/value")
}
