package chunkenc

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var testSizes = []int{0, 1, 2, 3, 7, 64, 120, 1024}

func floatBits(v []float64) []uint64 {
	b := make([]uint64, len(v))
	for i, x := range v {
		b[i] = math.Float64bits(x)
	}
	return b
}

// checkInspect verifies that the header agrees with the data.
func checkInspect(t *testing.T, chunk []byte, ts []int64) Info {
	t.Helper()
	info, err := Inspect(chunk)
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	want := Info{Encoding: info.Encoding, Count: len(ts)}
	if len(ts) > 0 {
		want.MinT, want.MaxT = ts[0], ts[len(ts)-1]
	}
	if diff := cmp.Diff(want, info); diff != "" {
		t.Fatalf("Inspect mismatch (-want +got):\n%s", diff)
	}
	return info
}

// checkFloats encodes and decodes and compares bit by bit; it returns the
// chunk.
func checkFloats(t *testing.T, ts []int64, vals []float64) []byte {
	t.Helper()
	prefix := []byte("prefix")
	chunk := EncodeFloats(prefix, ts, vals)
	if string(chunk[:len(prefix)]) != "prefix" {
		t.Fatalf("EncodeFloats overwrote dst")
	}
	chunk = chunk[len(prefix):]
	checkInspect(t, chunk, ts)
	gotTS, gotV, err := DecodeFloats([]int64{-1}, []float64{-1}, chunk)
	if err != nil {
		t.Fatalf("DecodeFloats: %v", err)
	}
	if diff := cmp.Diff(append([]int64{-1}, ts...), gotTS); diff != "" {
		t.Fatalf("timestamps differ (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(floatBits(append([]float64{-1}, vals...)), floatBits(gotV)); diff != "" {
		t.Fatalf("value bits differ (-want +got):\n%s", diff)
	}
	return chunk
}

func checkUints(t *testing.T, ts []int64, vals []uint64) []byte {
	t.Helper()
	chunk := EncodeUints(nil, ts, vals)
	checkInspect(t, chunk, ts)
	gotTS, gotV, err := DecodeUints(nil, nil, chunk)
	if err != nil {
		t.Fatalf("DecodeUints: %v", err)
	}
	if diff := cmp.Diff(ts, gotTS, cmpEmpty); diff != "" {
		t.Fatalf("timestamps differ (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(vals, gotV, cmpEmpty); diff != "" {
		t.Fatalf("values differ (-want +got):\n%s", diff)
	}
	return chunk
}

func checkStrings(t *testing.T, ts []int64, vals []string) []byte {
	t.Helper()
	chunk := EncodeStrings(nil, ts, vals)
	checkInspect(t, chunk, ts)
	gotTS, gotV, err := DecodeStrings(nil, nil, chunk)
	if err != nil {
		t.Fatalf("DecodeStrings: %v", err)
	}
	if diff := cmp.Diff(ts, gotTS, cmpEmpty); diff != "" {
		t.Fatalf("timestamps differ (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(vals, gotV, cmpEmpty); diff != "" {
		t.Fatalf("values differ (-want +got):\n%s", diff)
	}
	return chunk
}

func checkLogs(t *testing.T, ts []int64, vals []string, meta []LogMeta) []byte {
	t.Helper()
	chunk := EncodeLogs(nil, ts, vals, meta)
	checkInspect(t, chunk, ts)
	gotTS, gotV, gotM, err := DecodeLogs(nil, nil, nil, chunk)
	if err != nil {
		t.Fatalf("DecodeLogs: %v", err)
	}
	if diff := cmp.Diff(ts, gotTS, cmpEmpty); diff != "" {
		t.Fatalf("timestamps differ (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(vals, gotV, cmpEmpty); diff != "" {
		t.Fatalf("values differ (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(meta, gotM, cmpEmpty); diff != "" {
		t.Fatalf("meta differs (-want +got):\n%s", diff)
	}
	return chunk
}

// cmpEmpty treats nil and empty slices as equal.
var cmpEmpty = cmp.FilterValues(func(x, y any) bool {
	return lenOf(x) == 0 && lenOf(y) == 0
}, cmp.Comparer(func(_, _ any) bool { return true }))

func lenOf(x any) int {
	switch s := x.(type) {
	case []int64:
		return len(s)
	case []uint64:
		return len(s)
	case []string:
		return len(s)
	case []LogMeta:
		return len(s)
	}
	return -1
}

func TestRoundTripFloats(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tsShape := range tsShapes {
		for _, shape := range floatShapes {
			for _, n := range testSizes {
				t.Run(fmt.Sprintf("ts=%s/vals=%s/n=%d", tsShape, shape, n), func(t *testing.T) {
					ts := genTS(rng, tsShape, baseT, n)
					vals := genFloats(rng, shape, max(n, 1))[:n]
					checkFloats(t, ts, vals)
					// Every encoding the encoder can be forced into.
					for _, enc := range []Encoding{EncFloatRaw, EncFloatXOR, EncFloatDecimal, EncFloatRate} {
						chunk := encodeFloats(nil, ts, vals, enc)
						gotTS, gotV, err := DecodeFloats(nil, nil, chunk)
						if err != nil {
							t.Fatalf("forced %v: %v", enc, err)
						}
						if !cmp.Equal(ts, gotTS, cmpEmpty) || !cmp.Equal(floatBits(vals), floatBits(gotV), cmpEmpty) {
							t.Fatalf("forced %v: round trip differs", enc)
						}
					}
				})
			}
		}
	}
}

func TestRoundTripUints(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tsShape := range tsShapes {
		for _, shape := range uintShapes {
			for _, n := range testSizes {
				t.Run(fmt.Sprintf("ts=%s/vals=%s/n=%d", tsShape, shape, n), func(t *testing.T) {
					checkUints(t, genTS(rng, tsShape, baseT, n), genUints(rng, shape, n))
				})
			}
		}
	}
}

func TestRoundTripStrings(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, shape := range stringShapes {
		for _, n := range testSizes {
			t.Run(fmt.Sprintf("vals=%s/n=%d", shape, n), func(t *testing.T) {
				checkStrings(t, genTS(rng, "jitter", baseT, n), genStrings(rng, shape, n))
			})
		}
	}
}

func TestRoundTripLogs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range testSizes {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			ts := genTS(rng, "irregular", baseT, n)
			vals, meta := genLogs(rng, n, ts)
			checkLogs(t, ts, vals, meta)
		})
	}
}

// TestTimestampEdges covers timestamp sequences beyond the contract: the
// format is exact for any int64 sequence.
func TestTimestampEdges(t *testing.T) {
	f := func(name string, ts []int64) {
		t.Run(name, func(t *testing.T) {
			vals := make([]float64, len(ts))
			checkFloats(t, ts, vals)
		})
	}
	f("extremes", []int64{math.MinInt64, -1, 0, 1, math.MaxInt64})
	f("descending", []int64{5, 4, 3, 2, 1})
	f("duplicates", []int64{7, 7, 7, 8, 8})
	f("wrap", []int64{math.MaxInt64, math.MinInt64, math.MaxInt64, math.MinInt64})
	f("pow2", []int64{0, 1 << 62, -1 << 63, 1 << 62})
	f("big grid", []int64{-9e18, -3e18, 3e18, 9e18})
	var ts []int64
	for i := range 100 {
		ts = append(ts, int64(i)*int64(i)*1e9)
	}
	f("quadratic", ts)
}

// TestEncodingChoice checks that the encoder picks the encoding meant for
// each shape of data.
func TestEncodingChoice(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	ts := genTS(rng, "sec", baseT, 120)
	f := func(name string, chunk []byte, want Encoding) {
		t.Helper()
		info, err := Inspect(chunk)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if info.Encoding != want {
			t.Errorf("%s: encoding %v, want %v", name, info.Encoding, want)
		}
	}
	f("float constant", EncodeFloats(nil, ts, genFloats(rng, "constant", 120)), EncFloatConst)
	f("float gauge", EncodeFloats(nil, ts, genFloats(rng, "gauge", 120)), EncFloatDecimal)
	f("float counter", EncodeFloats(nil, ts, genFloats(rng, "counter", 120)), EncFloatDecimal)
	f("float special", EncodeFloats(nil, ts, genFloats(rng, "special", 120)), EncFloatXOR)
	f("float random", EncodeFloats(nil, ts, genFloats(rng, "random", 120)), EncFloatRaw)
	f("uint constant", EncodeUints(nil, ts, genUints(rng, "constant", 120)), EncUintConst)
	f("uint counter", EncodeUints(nil, ts, genUints(rng, "counter", 120)), EncUintDelta)
	f("uint small", EncodeUints(nil, ts, genUints(rng, "small", 120)), EncUintDelta)
	f("string status", EncodeStrings(nil, ts, genStrings(rng, "status", 120)), EncStringDict)
	f("string lines", EncodeStrings(nil, ts, genStrings(rng, "lines", 120)), EncStringZstd)
	f("string tiny", EncodeStrings(nil, ts[:1], []string{"x"}), EncStringRaw)
}

// TestDecimalExponents checks the decimal search on values whose exponent
// is known.
func TestDecimalExponents(t *testing.T) {
	f := func(vals []float64, wantE int, wantOK bool) {
		t.Helper()
		m := make([]uint64, len(vals))
		e, ok := decimalize(vals, m)
		if ok != wantOK || (ok && e != wantE) {
			t.Errorf("decimalize(%v) = %d, %v; want %d, %v", vals, e, ok, wantE, wantOK)
		}
	}
	f([]float64{23.45, 23.5, 23}, -2, true)
	f([]float64{0.1, 0.2, 0.3}, -1, true)
	f([]float64{1500000, 1600000, 0}, 5, true)
	f([]float64{0, 0}, 0, true)
	f([]float64{1, 2, 3}, 0, true)
	f([]float64{1e18, 3e18}, 18, true)
	f([]float64{1e22}, 0, false) // beyond int64 mantissas
	f([]float64{1e-20}, 0, false)
	f([]float64{1.5e-10}, -11, true)
	f([]float64{math.Copysign(0, -1)}, 0, false)
	f([]float64{math.NaN()}, 0, false)
	f([]float64{math.Inf(1)}, 0, false)
	f([]float64{math.Pi}, -15, true) // 3.141592653589793 exactly
	f([]float64{1.2345678901234567e100}, 0, false)
	f([]float64{5e-324}, 0, false)
}

// TestSizes pins the compression on the shapes the targets are about.
func TestSizes(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	f := func(name string, n int, enc func(ts []int64) []byte, maxBytesPerValue float64) {
		t.Helper()
		if n == 120 && strings.HasSuffix(name, "counter") {
			// The counter's noise (σ = 8 per minute) costs about 5.9 bits
			// a value; the header and first values add 0.3 bytes a value
			// to a chunk of 120.
			maxBytesPerValue = 1.1
		}
		ts := genTS(rng, "sec", baseT, n)
		chunk := enc(ts)
		if got := float64(len(chunk)) / float64(n); got > maxBytesPerValue {
			t.Errorf("%s n=%d: %.3f bytes/value, want ≤ %.3f", name, n, got, maxBytesPerValue)
		}
	}
	for _, n := range []int{120, 1024} {
		f("float gauge", n, func(ts []int64) []byte { return EncodeFloats(nil, ts, genFloats(rng, "gauge", n)) }, 2)
		f("float load", n, func(ts []int64) []byte { return EncodeFloats(nil, ts, genFloats(rng, "load", n)) }, 2)
		f("float constant", n, func(ts []int64) []byte { return EncodeFloats(nil, ts, genFloats(rng, "constant", n)) }, 0.35)
		f("float counter", n, func(ts []int64) []byte { return EncodeFloats(nil, ts, genFloats(rng, "counter", n)) }, 1)
		f("uint counter", n, func(ts []int64) []byte { return EncodeUints(nil, ts, genUints(rng, "counter", n)) }, 1)
		f("uint constant", n, func(ts []int64) []byte { return EncodeUints(nil, ts, genUints(rng, "constant", n)) }, 0.35)
		f("string status", n, func(ts []int64) []byte { return EncodeStrings(nil, ts, genStrings(rng, "status", n)) }, 0.75)
	}
}

// TestCorruptPrefixes checks that every strict prefix of a chunk is
// reported as corrupt, and that flipped bytes never panic and either
// decode or wrap ErrCorrupt.
func TestCorruptPrefixes(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, c := range seedChunks(rng) {
		t.Run(c.name, func(t *testing.T) {
			for i := range len(c.chunk) {
				if err := c.decode(c.chunk[:i]); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("prefix of %d of %d bytes: error %v, want ErrCorrupt", i, len(c.chunk), err)
				}
			}
			b := make([]byte, len(c.chunk))
			for range 200 {
				copy(b, c.chunk)
				for range 1 + rng.IntN(3) {
					b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
				}
				if err := c.decode(b); err != nil && !errors.Is(err, ErrCorrupt) {
					t.Fatalf("flipped chunk: error %v does not wrap ErrCorrupt", err)
				}
			}
			if err := c.decode(append(c.chunk[:len(c.chunk):len(c.chunk)], 0)); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("trailing byte: error %v, want ErrCorrupt", err)
			}
		})
	}
}

// TestWrongKind checks that each decoder rejects the other kinds' chunks
// and leaves its output slices as they were.
func TestWrongKind(t *testing.T) {
	ts := []int64{1, 2}
	floats := EncodeFloats(nil, ts, []float64{1, 2})
	uints := EncodeUints(nil, ts, []uint64{1, 2})
	strs := EncodeStrings(nil, ts, []string{"a", "b"})
	logs := EncodeLogs(nil, ts, []string{"a", "b"}, make([]LogMeta, 2))
	for _, c := range []struct {
		name  string
		chunk []byte
	}{{"uints", uints}, {"strings", strs}, {"logs", logs}} {
		gotTS, gotV, err := DecodeFloats([]int64{9}, []float64{9}, c.chunk)
		if !errors.Is(err, ErrCorrupt) || len(gotTS) != 1 || len(gotV) != 1 {
			t.Errorf("DecodeFloats(%s): %v, %d, %d", c.name, err, len(gotTS), len(gotV))
		}
	}
	for _, chunk := range [][]byte{floats, strs, logs} {
		if _, _, err := DecodeUints(nil, nil, chunk); !errors.Is(err, ErrCorrupt) {
			t.Errorf("DecodeUints: %v", err)
		}
	}
	for _, chunk := range [][]byte{floats, uints, logs} {
		if _, _, err := DecodeStrings(nil, nil, chunk); !errors.Is(err, ErrCorrupt) {
			t.Errorf("DecodeStrings: %v", err)
		}
	}
	for _, chunk := range [][]byte{floats, uints, strs} {
		if _, _, _, err := DecodeLogs(nil, nil, nil, chunk); !errors.Is(err, ErrCorrupt) {
			t.Errorf("DecodeLogs: %v", err)
		}
	}
}

// TestHugeCount checks that a header claiming more than MaxCount values is
// refused before anything is allocated for them.
func TestHugeCount(t *testing.T) {
	chunk := []byte{byte(EncFloatConst), 0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0}
	if _, err := Inspect(chunk); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Inspect: %v", err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err := DecodeFloats(nil, nil, chunk)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("DecodeFloats: %v", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<10 {
		t.Errorf("%d bytes allocated for a refused header", got)
	}
}

func TestEncodePanicsOnMisuse(t *testing.T) {
	f := func(name string, fn func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic", name)
			}
		}()
		fn()
	}
	f("lengths", func() { EncodeFloats(nil, []int64{1}, nil) })
	f("meta", func() { EncodeLogs(nil, []int64{1}, []string{""}, nil) })
	f("count", func() { EncodeUints(nil, make([]int64, MaxCount+1), make([]uint64, MaxCount+1)) })
}

func TestBitIO(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	type item struct {
		v uint64
		n uint
	}
	var items []item
	var w bitWriter
	for range 5000 {
		n := uint(rng.IntN(65))
		v := rng.Uint64()
		if n < 64 {
			v &= 1<<n - 1
		}
		items = append(items, item{v, n})
		w.write(v, n)
	}
	b := w.finish()
	r := newBitReader(b)
	for i, it := range items {
		if got := r.read64(it.n); got != it.v {
			t.Fatalf("item %d: read %x, want %x (%d bits)", i, got, it.v, it.n)
		}
	}
	used, ok := r.consumed()
	if !ok || used != len(b) {
		t.Fatalf("consumed %d, %v; want %d", used, ok, len(b))
	}
	r.read(8)
	if _, ok := r.consumed(); ok {
		t.Fatalf("overrun not detected")
	}
}

func TestIntStreamModes(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	f := func(name string, v []uint64) {
		t.Run(name, func(t *testing.T) {
			p := planInts(v)
			for _, mode := range []byte{intPacked, intVarint, intRLE} {
				b := appendIntsMode(nil, v, mode, &p.packed)
				if mode == intPacked && len(b) != p.packed.size {
					t.Errorf("packed size %d, plan said %d", len(b), p.packed.size)
				}
				got := make([]uint64, len(v))
				r := reader{b: b}
				if err := decodeInts(&r, "test", got); err != nil {
					t.Fatalf("mode %d: %v", mode, err)
				}
				if r.off != len(b) {
					t.Fatalf("mode %d: consumed %d of %d", mode, r.off, len(b))
				}
				if diff := cmp.Diff(v, got); diff != "" {
					t.Fatalf("mode %d (-want +got):\n%s", mode, diff)
				}
			}
			if p.sparse.size > 0 {
				b := appendSparse(nil, v, &p.sparse)
				if len(b) != p.sparse.size {
					t.Errorf("sparse size %d, plan said %d", len(b), p.sparse.size)
				}
				got := make([]uint64, len(v))
				r := reader{b: b}
				if err := decodeInts(&r, "test", got); err != nil {
					t.Fatalf("sparse: %v", err)
				}
				if r.off != len(b) || !cmp.Equal(v, got) {
					t.Fatalf("sparse: consumed %d of %d, equal %v", r.off, len(b), cmp.Equal(v, got))
				}
			}
			b := appendInts(nil, v)
			got := make([]uint64, len(v))
			r := reader{b: b}
			if err := decodeInts(&r, "test", got); err != nil || r.off != len(b) || !cmp.Equal(v, got) {
				t.Fatalf("auto mode %d: %v", b[0], err)
			}
		})
	}
	zeros := make([]uint64, 300)
	f("zeros", zeros)
	wide := make([]uint64, 300)
	for i := range wide {
		wide[i] = rng.Uint64()
	}
	f("wide", wide)
	mixed := make([]uint64, 1000)
	for i := range mixed {
		mixed[i] = rng.Uint64() >> (rng.IntN(4) * 20)
		if rng.IntN(3) == 0 {
			mixed[i] = 0
		}
	}
	f("mixed", mixed)
	spread := make([]uint64, 1000)
	for i := range spread {
		spread[i] = rng.Uint64() >> rng.IntN(65)
	}
	f("spread", spread)
	periodic := make([]uint64, 1000)
	for i := range periodic {
		periodic[i] = uint64(i%7) * 1000003
	}
	f("periodic", periodic)
	f("one", []uint64{math.MaxUint64})
	// Sparse: grid residuals of one-second jitter (mostly 1), with an
	// outlier that needs the escape, and values around MaxUint64 (the
	// distance from the base wraps).
	jitter := make([]uint64, 1000)
	for i := range jitter {
		jitter[i] = 1
		if j := rng.IntN(20); j < 2 {
			jitter[i] = uint64(j * 2)
		}
	}
	f("sparse/jitter", jitter)
	outlier := slices.Clone(jitter)
	outlier[500] = math.MaxUint64
	outlier[999] = 1 << 40
	f("sparse/outlier", outlier)
	wrap := make([]uint64, 200)
	for i := range wrap {
		wrap[i] = math.MaxUint64
		if i%17 == 0 {
			wrap[i] = uint64(i)
		}
	}
	f("sparse/wrap", wrap)
}

// TestSparseChosen checks that the stream of one-second jitter, where
// packed mode spends two bits on every element, is written sparse and at
// under one bit per element.
func TestSparseChosen(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	v := make([]uint64, 1000)
	for i := range v {
		v[i] = 1
		if j := rng.IntN(20); j < 2 {
			v[i] = uint64(j * 2)
		}
	}
	b := appendInts(nil, v)
	if b[0] != intSparse {
		t.Fatalf("mode %d, want sparse (%d)", b[0], intSparse)
	}
	if p := planInts(v); len(b) >= p.packed.size || len(b)*8 >= len(v) {
		t.Fatalf("sparse %d bytes for %d elements, packed %d", len(b), len(v), p.packed.size)
	}
}

// TestConcurrent encodes and decodes from several goroutines at once, for
// the race detector to check the pooled scratch buffers and zstd coders.
func TestConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 42))
			for range 20 {
				ts := genTS(rng, "jitter", baseT, 300)
				fv := genFloats(rng, "gauge", 300)
				sv := genStrings(rng, "lines", 300)
				uv := genUints(rng, "bytes", 300)
				_, gotF, err := DecodeFloats(nil, nil, EncodeFloats(nil, ts, fv))
				if err == nil && !cmp.Equal(floatBits(fv), floatBits(gotF)) {
					err = fmt.Errorf("floats differ")
				}
				if err == nil {
					var gotS []string
					_, gotS, err = DecodeStrings(nil, nil, EncodeStrings(nil, ts, sv))
					if err == nil && !cmp.Equal(sv, gotS) {
						err = fmt.Errorf("strings differ")
					}
				}
				if err == nil {
					var gotU []uint64
					_, gotU, err = DecodeUints(nil, nil, EncodeUints(nil, ts, uv))
					if err == nil && !cmp.Equal(uv, gotU) {
						err = fmt.Errorf("uints differ")
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestPackedWidths round-trips the packed mode at every width and at
// lengths around the point where the fast unpack loop hands over to the
// tail loop.
func TestPackedWidths(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	for w := uint(0); w <= 64; w++ {
		for _, n := range []int{1, 2, 3, 7, 8, 9, 15, 16, 17, 64, 65, 200} {
			v := make([]uint64, n)
			for i := range v {
				v[i] = rng.Uint64()
				if w < 64 {
					v[i] &= 1<<w - 1
				}
			}
			p := packedPlan{w: w, size: -1}
			b := appendIntsMode(nil, v, intPacked, &p)
			got := make([]uint64, n)
			r := reader{b: b}
			if err := decodeInts(&r, "test", got); err != nil {
				t.Fatalf("w=%d n=%d: %v", w, n, err)
			}
			if r.off != len(b) || !cmp.Equal(v, got) {
				t.Fatalf("w=%d n=%d: round trip differs (consumed %d of %d)", w, n, r.off, len(b))
			}
		}
	}
}

// TestSplitTimestamps checks that agent-like timestamps (a grid with
// one-second jitter and a random sub-second part) in the split mode are
// smaller than the best single stream, at ms and ns, and that the
// encoder picks it at ms (8 % smaller) but not at ns (3 %, not worth its
// slower decoding).
func TestSplitTimestamps(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, shape := range []string{"agent-ms", "agent-ns", "agent-neg"} {
		t.Run(shape, func(t *testing.T) {
			ts := genTS(rng, shape, baseT, 360)
			sc := getScratch()
			defer putScratch(sc)
			split := appendTimestampsSplit(nil, ts, sc, splitAlways)
			plain := appendTimestampsSplit(nil, ts, sc, splitNever)
			// At ns the sub-second part is 30 of the 32 bits: a few per
			// cent; at ms it is 10 of 12.
			want := 99
			if shape == "agent-ms" {
				want = 93
			}
			if len(split) >= len(plain)*want/100 {
				t.Errorf("split %d bytes, plain %d: want under %d %%", len(split), len(plain), want)
			}
			r := reader{b: split}
			info := Info{Count: len(ts), MinT: ts[0], MaxT: ts[len(ts)-1]}
			got := make([]int64, len(ts))
			if err := decodeTimestamps(&r, &info, got); err != nil {
				t.Fatal(err)
			}
			if r.off != len(split) || !cmp.Equal(ts, got) {
				t.Fatalf("round trip differs (consumed %d of %d)", r.off, len(split))
			}
			full := EncodeUints(nil, ts, make([]uint64, len(ts)))
			if hdr := len(appendHeader(nil, EncUintConst, ts)); (len(full)-hdr-1 == len(split)) != (shape == "agent-ms") {
				t.Errorf("encoder's stream %d bytes, split %d, plain %d: want split only at ms", len(full)-hdr-1, len(split), len(plain))
			}
			if shape == "agent-ms" && float64(len(split))/float64(len(ts)) > 1.45 {
				t.Errorf("%.2f bytes per millisecond timestamp, want ≤ 1.45 (10 bits for the milliseconds and the jitter)", float64(len(split))/float64(len(ts)))
			}
		})
	}
}

// TestUintScaled checks that sizes in pages are stored as scaled deltas,
// smaller than unscaled ones, and read back exactly.
func TestUintScaled(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	ts := genTS(rng, "sec", baseT, 300)
	for _, shape := range []string{"pages", "pagesdod"} {
		v := genUints(rng, shape, 300)
		b := EncodeUints(nil, ts, v)
		if e := encodingOf(b); e != EncUintScaled {
			t.Fatalf("%s: encoding %v, want UintScaled", shape, e)
		}
		_, got, err := DecodeUints(nil, nil, b)
		if err != nil || !cmp.Equal(v, got) {
			t.Fatalf("%s: round trip: %v", shape, err)
		}
		// Unscaled, the same deltas need 12 more bits per change.
		d := make([]uint64, len(v))
		for i := 1; i < len(v); i++ {
			d[i] = v[i] - v[i-1]
		}
		sc := getScratch()
		_, param, _, plan := chooseDeltas(d, sc)
		putScratch(sc)
		if plain := plan.size() + uvarintLen(zigzag(param)); len(b) >= plain {
			t.Errorf("%s: scaled chunk %d bytes, unscaled value stream alone %d", shape, len(b), plain)
		}
	}
}
