package chunkenc

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Compare before and after a change with:
//
//	go test -run '^$' -bench . -count 6 ./internal/history/engine/chunkenc/ | tee new.txt
//	benchstat old.txt new.txt
//
// Each operation encodes or decodes one chunk; the data set is a
// continuous series cut into chunks of n values (about 32K values in all),
// cycled through. bytes/value is the encoded size of the whole data set
// (headers included) over its value count; values/s counts the values of
// the chunks processed per second; SetBytes counts 16 bytes per value (a
// timestamp and a float64 or uint64) so MB/s is the raw throughput.

var benchSizes = []int{120, 1024}

// benchTotal is the number of values per data set.
const benchTotal = 32 * 1024

type benchSet[T any] struct {
	ts     [][]int64
	vals   [][]T
	chunks [][]byte
	size   int // encoded bytes in all
	count  int // values in all
}

func makeSet[T any](n int, tsShape string, gen func(rng *rand.Rand, n int) []T, enc func(ts []int64, vals []T) []byte) *benchSet[T] {
	rng := rand.New(rand.NewPCG(2024, uint64(n)))
	all := gen(rng, benchTotal)
	allTS := genTS(rng, tsShape, baseT, benchTotal)
	s := &benchSet[T]{}
	for i := 0; i+n <= benchTotal; i += n {
		ts, vals := allTS[i:i+n], all[i:i+n]
		c := enc(ts, vals)
		s.ts = append(s.ts, ts)
		s.vals = append(s.vals, vals)
		s.chunks = append(s.chunks, c)
		s.size += len(c)
		s.count += n
	}
	return s
}

func (s *benchSet[T]) report(b *testing.B, n int) {
	b.ReportMetric(float64(s.size)/float64(s.count), "bytes/value")
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "values/s")
}

var floatBenchShapes = []string{"gauge", "load", "counter", "bytes", "constant", "random"}

var floatEncs = []struct {
	name string
	enc  Encoding
}{{"auto", 0}, {"decimal", EncFloatDecimal}, {"xor", EncFloatXOR}}

func floatGen(shape string) func(*rand.Rand, int) []float64 {
	return func(rng *rand.Rand, n int) []float64 { return genFloats(rng, shape, n) }
}

// forEachFloatSet runs fn for every float data set; forced encodings are
// only run on the shapes they fit.
func forEachFloatSet(b *testing.B, fn func(b *testing.B, n int, s *benchSet[float64], enc Encoding)) {
	for _, e := range floatEncs {
		for _, shape := range floatBenchShapes {
			if e.enc == EncFloatDecimal && (shape == "random" || shape == "constant") {
				continue
			}
			if e.enc == EncFloatXOR && shape == "constant" {
				continue
			}
			for _, tsShape := range []string{"sec", "jitter"} {
				for _, n := range benchSizes {
					name := fmt.Sprintf("enc=%s/vals=%s/ts=%s/n=%d", e.name, shape, tsShape, n)
					b.Run(name, func(b *testing.B) {
						enc := e.enc
						s := makeSet(n, tsShape, floatGen(shape), func(ts []int64, v []float64) []byte {
							return encodeFloats(nil, ts, v, enc)
						})
						fn(b, n, s, enc)
					})
				}
			}
		}
	}
}

// BenchmarkEncode measures EncodeFloats (enc=auto) and the single float
// encodings (enc=decimal, enc=xor).
func BenchmarkEncode(b *testing.B) {
	forEachFloatSet(b, func(b *testing.B, n int, s *benchSet[float64], enc Encoding) {
		var buf []byte
		b.ReportAllocs()
		b.SetBytes(int64(16 * n))
		i := 0
		for b.Loop() {
			buf = encodeFloats(buf[:0], s.ts[i], s.vals[i], enc)
			if i++; i == len(s.chunks) {
				i = 0
			}
		}
		s.report(b, n)
	})
}

// BenchmarkDecode measures DecodeFloats on chunks made by the encoder
// named in enc=.
func BenchmarkDecode(b *testing.B) {
	forEachFloatSet(b, func(b *testing.B, n int, s *benchSet[float64], _ Encoding) {
		ts := make([]int64, 0, n)
		vals := make([]float64, 0, n)
		b.ReportAllocs()
		b.SetBytes(int64(16 * n))
		i := 0
		var err error
		for b.Loop() {
			if ts, vals, err = DecodeFloats(ts[:0], vals[:0], s.chunks[i]); err != nil {
				b.Fatal(err)
			}
			if i++; i == len(s.chunks) {
				i = 0
			}
		}
		s.report(b, n)
	})
}

var uintBenchShapes = []string{"counter", "bytes", "constant", "small", "random"}

func forEachUintSet(b *testing.B, fn func(b *testing.B, n int, s *benchSet[uint64])) {
	for _, shape := range uintBenchShapes {
		for _, tsShape := range []string{"sec", "jitter"} {
			for _, n := range benchSizes {
				b.Run(fmt.Sprintf("enc=auto/vals=%s/ts=%s/n=%d", shape, tsShape, n), func(b *testing.B) {
					s := makeSet(n, tsShape, func(rng *rand.Rand, n int) []uint64 { return genUints(rng, shape, n) },
						func(ts []int64, v []uint64) []byte { return EncodeUints(nil, ts, v) })
					fn(b, n, s)
				})
			}
		}
	}
}

func BenchmarkEncodeUints(b *testing.B) {
	forEachUintSet(b, func(b *testing.B, n int, s *benchSet[uint64]) {
		var buf []byte
		b.ReportAllocs()
		b.SetBytes(int64(16 * n))
		i := 0
		for b.Loop() {
			buf = EncodeUints(buf[:0], s.ts[i], s.vals[i])
			if i++; i == len(s.chunks) {
				i = 0
			}
		}
		s.report(b, n)
	})
}

func BenchmarkDecodeUints(b *testing.B) {
	forEachUintSet(b, func(b *testing.B, n int, s *benchSet[uint64]) {
		ts := make([]int64, 0, n)
		vals := make([]uint64, 0, n)
		b.ReportAllocs()
		b.SetBytes(int64(16 * n))
		i := 0
		var err error
		for b.Loop() {
			if ts, vals, err = DecodeUints(ts[:0], vals[:0], s.chunks[i]); err != nil {
				b.Fatal(err)
			}
			if i++; i == len(s.chunks) {
				i = 0
			}
		}
		s.report(b, n)
	})
}

var stringBenchShapes = []string{"status", "lines"}

func forEachStringSet(b *testing.B, fn func(b *testing.B, n int, s *benchSet[string])) {
	for _, shape := range stringBenchShapes {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("enc=auto/vals=%s/ts=jitter/n=%d", shape, n), func(b *testing.B) {
				s := makeSet(n, "jitter", func(rng *rand.Rand, n int) []string { return genStrings(rng, shape, n) },
					func(ts []int64, v []string) []byte { return EncodeStrings(nil, ts, v) })
				fn(b, n, s)
			})
		}
	}
}

func rawStringBytes(vals []string) int {
	total := 0
	for _, s := range vals {
		total += 8 + len(s)
	}
	return total
}

func BenchmarkEncodeStrings(b *testing.B) {
	forEachStringSet(b, func(b *testing.B, n int, s *benchSet[string]) {
		var buf []byte
		b.ReportAllocs()
		b.SetBytes(int64(rawStringBytes(s.vals[0])))
		i := 0
		for b.Loop() {
			buf = EncodeStrings(buf[:0], s.ts[i], s.vals[i])
			if i++; i == len(s.chunks) {
				i = 0
			}
		}
		s.report(b, n)
	})
}

func BenchmarkDecodeStrings(b *testing.B) {
	forEachStringSet(b, func(b *testing.B, n int, s *benchSet[string]) {
		ts := make([]int64, 0, n)
		vals := make([]string, 0, n)
		b.ReportAllocs()
		b.SetBytes(int64(rawStringBytes(s.vals[0])))
		i := 0
		var err error
		for b.Loop() {
			if ts, vals, err = DecodeStrings(ts[:0], vals[:0], s.chunks[i]); err != nil {
				b.Fatal(err)
			}
			if i++; i == len(s.chunks) {
				i = 0
			}
		}
		s.report(b, n)
	})
}

type logRow struct {
	msg  string
	meta LogMeta
}

func forEachLogSet(b *testing.B, fn func(b *testing.B, n int, s *benchSet[logRow])) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("enc=auto/vals=syslog/ts=jitter/n=%d", n), func(b *testing.B) {
			gen := func(rng *rand.Rand, n int) []logRow {
				ts := genTS(rng, "jitter", baseT, n)
				vals, meta := genLogs(rng, n, ts)
				rows := make([]logRow, n)
				for i := range rows {
					rows[i] = logRow{vals[i], meta[i]}
				}
				return rows
			}
			s := makeSet(n, "jitter", gen, func(ts []int64, rows []logRow) []byte {
				vals, meta := splitRows(rows)
				return EncodeLogs(nil, ts, vals, meta)
			})
			fn(b, n, s)
		})
	}
}

func splitRows(rows []logRow) ([]string, []LogMeta) {
	vals := make([]string, len(rows))
	meta := make([]LogMeta, len(rows))
	for i, r := range rows {
		vals[i], meta[i] = r.msg, r.meta
	}
	return vals, meta
}

func BenchmarkEncodeLogs(b *testing.B) {
	forEachLogSet(b, func(b *testing.B, n int, s *benchSet[logRow]) {
		vals := make([][]string, len(s.vals))
		meta := make([][]LogMeta, len(s.vals))
		for i := range s.vals {
			vals[i], meta[i] = splitRows(s.vals[i])
		}
		var buf []byte
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			buf = EncodeLogs(buf[:0], s.ts[i], vals[i], meta[i])
			if i++; i == len(s.chunks) {
				i = 0
			}
		}
		s.report(b, n)
	})
}

func BenchmarkDecodeLogs(b *testing.B) {
	forEachLogSet(b, func(b *testing.B, n int, s *benchSet[logRow]) {
		ts := make([]int64, 0, n)
		vals := make([]string, 0, n)
		meta := make([]LogMeta, 0, n)
		b.ReportAllocs()
		i := 0
		var err error
		for b.Loop() {
			if ts, vals, meta, err = DecodeLogs(ts[:0], vals[:0], meta[:0], s.chunks[i]); err != nil {
				b.Fatal(err)
			}
			if i++; i == len(s.chunks) {
				i = 0
			}
		}
		s.report(b, n)
	})
}

// BenchmarkInspect measures the header-only path used for range pruning.
func BenchmarkInspect(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	chunk := EncodeFloats(nil, genTS(rng, "sec", baseT, 120), genFloats(rng, "gauge", 120))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Inspect(chunk); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeItem decodes a whole item of 2^20 float values (stored
// in chunks of n) per operation, into buffers reused across operations:
// ns/op is the time to read one item's million points.
func BenchmarkDecodeItem(b *testing.B) {
	const total = 1 << 20
	for _, shape := range []string{"gauge", "counter", "bytes"} {
		for _, tsShape := range []string{"sec", "jitter"} {
			for _, n := range benchSizes {
				b.Run(fmt.Sprintf("enc=auto/vals=%s/ts=%s/n=%d", shape, tsShape, n), func(b *testing.B) {
					rng := rand.New(rand.NewPCG(7, uint64(n)))
					vals := genFloats(rng, shape, total)
					ts := genTS(rng, tsShape, baseT, total)
					var chunks [][]byte
					size := 0
					for i := 0; i < total; i += n {
						j := min(i+n, total)
						c := EncodeFloats(nil, ts[i:j], vals[i:j])
						chunks = append(chunks, c)
						size += len(c)
					}
					outTS := make([]int64, 0, total)
					outV := make([]float64, 0, total)
					b.ReportAllocs()
					b.SetBytes(16 * total)
					var err error
					for b.Loop() {
						outTS, outV = outTS[:0], outV[:0]
						for _, c := range chunks {
							if outTS, outV, err = DecodeFloats(outTS, outV, c); err != nil {
								b.Fatal(err)
							}
						}
					}
					if len(outV) != total {
						b.Fatalf("decoded %d values", len(outV))
					}
					b.ReportMetric(float64(size)/total, "bytes/value")
					b.ReportMetric(float64(total)*float64(b.N)/b.Elapsed().Seconds(), "values/s")
				})
			}
		}
	}
}

// go test -run '^$' -bench 'Timestamps' -count 6 ./internal/history/engine/chunkenc/
//
// BenchmarkTimestamps decodes the timestamp stream alone (DecodeTimes, as
// a count does) of agent-like timestamps, 360 per chunk (an hour of a
// 10-second item), in the split mode (mode=split) and not (mode=plain),
// at ms and ns.
func BenchmarkTimestamps(b *testing.B) {
	for _, shape := range []string{"agent-ms", "agent-ns"} {
		for _, split := range []int{splitAlways, splitNever} {
			mode := "plain"
			if split == splitAlways {
				mode = "split"
			}
			b.Run("ts="+shape+"/mode="+mode, func(b *testing.B) {
				rng := rand.New(rand.NewPCG(5, 6))
				const n = 360
				var chunks [][]byte
				size := 0
				for range 16 {
					ts := genTS(rng, shape, baseT, n)
					sc := getScratch()
					c := appendHeader(nil, EncUintConst, ts)
					c = appendTimestampsSplit(c, ts, sc, split)
					c = append(c, 0)
					putScratch(sc)
					chunks = append(chunks, c)
					size += len(c)
				}
				out := make([]int64, 0, n)
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					var err error
					if out, err = DecodeTimes(out[:0], chunks[i%len(chunks)]); err != nil {
						b.Fatal(err)
					}
					i++
				}
				b.ReportMetric(float64(size)/float64(16*n), "bytes/value")
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "values/s")
			})
		}
	}
}
