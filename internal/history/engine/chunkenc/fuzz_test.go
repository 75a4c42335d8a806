package chunkenc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/historytest"
)

// Run one target for a while with, for example:
//
//	go test -run '^$' -fuzz '^FuzzDecodeFloats$' -fuzztime 60s ./internal/history/engine/chunkenc/

type seedChunk struct {
	name   string
	chunk  []byte
	decode func([]byte) error
}

func decodeFloatsErr(b []byte) error     { _, _, err := DecodeFloats(nil, nil, b); return err }
func decodeUintsErr(b []byte) error      { _, _, err := DecodeUints(nil, nil, b); return err }
func decodeStringsErr(b []byte) error    { _, _, err := DecodeStrings(nil, nil, b); return err }
func decodeLogsErr(b []byte) error       { _, _, _, err := DecodeLogs(nil, nil, nil, b); return err }
func encodingOf(b []byte) Encoding       { i, _ := Inspect(b); return i.Encoding }
func seedName(b []byte, s string) string { return encodingOf(b).String() + "/" + s }

// seedChunks returns small chunks of every encoding and mode, the seeds of
// the fuzz targets and the input of TestCorruptPrefixes.
func seedChunks(rng *rand.Rand) []seedChunk {
	var out []seedChunk
	add := func(name string, chunk []byte, decode func([]byte) error) {
		out = append(out, seedChunk{seedName(chunk, name), chunk, decode})
	}
	for _, n := range []int{1, 2, 5, 70} {
		for _, shape := range []string{"gauge", "counter", "constant", "special", "random", "stepped"} {
			ts := genTS(rng, []string{"sec", "jitter", "gaps", "irregular"}[n%4], baseT, n)
			add(shape, EncodeFloats(nil, ts, genFloats(rng, shape, n)), decodeFloatsErr)
		}
		ts := genTS(rng, "jitter", baseT, n)
		add("xor", encodeFloats(nil, ts, genFloats(rng, "gauge", n), EncFloatXOR), decodeFloatsErr)
		for _, shape := range []string{"counter", "constant", "small", "nearmax", "pages", "pagesdod"} {
			add(shape, EncodeUints(nil, ts, genUints(rng, shape, n)), decodeUintsErr)
		}
		for _, shape := range []string{"status", "lines", "utf8"} {
			add(shape, EncodeStrings(nil, ts, genStrings(rng, shape, n)), decodeStringsErr)
		}
		vals, meta := genLogs(rng, n, ts)
		add("logs", EncodeLogs(nil, ts, vals, meta), decodeLogsErr)
	}
	// Split timestamps with sparse seconds.
	for _, shape := range []string{"agent-ms", "agent-neg"} {
		ts := genTS(rng, shape, baseT, 200)
		add("split "+shape, EncodeUints(nil, ts, genUints(rng, "small", 200)), decodeUintsErr)
	}
	// Large enough for the zstd int stream mode.
	ts := genTS(rng, "irregular", baseT, 400)
	add("zstd ints", EncodeUints(nil, ts, genUints(rng, "bytes", 400)), decodeUintsErr)
	add("empty", EncodeFloats(nil, nil, nil), decodeFloatsErr)
	return append(out, corpusSeeds()...)
}

// corpusSeeds are chunks of values recorded from real agents and snmpd
// (historytest's corpus): the first 200 values of the first item of each
// class.
func corpusSeeds() []seedChunk {
	items, err := historytest.CorpusRecorded()
	if err != nil {
		panic(err)
	}
	var out []seedChunk
	seen := map[string]bool{}
	for _, it := range items {
		if seen[it.Class] {
			continue
		}
		seen[it.Class] = true
		ss := it.Samples[:min(200, len(it.Samples))]
		ts := make([]int64, len(ss))
		for i, s := range ss {
			ts[i] = s.Clock*1e9 + int64(s.NS)
		}
		var c []byte
		var dec func([]byte) error
		switch ss[0].Type {
		case history.Float:
			vals := make([]float64, len(ss))
			for i, s := range ss {
				vals[i] = s.F
			}
			c, dec = EncodeFloats(nil, ts, vals), decodeFloatsErr
		case history.Uint:
			vals := make([]uint64, len(ss))
			for i, s := range ss {
				vals[i] = s.U
			}
			c, dec = EncodeUints(nil, ts, vals), decodeUintsErr
		case history.Log:
			vals := make([]string, len(ss))
			meta := make([]LogMeta, len(ss))
			for i, s := range ss {
				vals[i] = s.S
			}
			c, dec = EncodeLogs(nil, ts, vals, meta), decodeLogsErr
		default:
			vals := make([]string, len(ss))
			for i, s := range ss {
				vals[i] = s.S
			}
			c, dec = EncodeStrings(nil, ts, vals), decodeStringsErr
		}
		out = append(out, seedChunk{seedName(c, "corpus "+it.Class), c, dec})
	}
	return out
}

// checkAlloc fails if fn allocates more than a corrupt chunk may make a
// decoder allocate: MaxCount values of the widest type plus two zstd
// blocks. Gigabytes are the failure this guards against.
func checkAlloc(t *testing.T, fn func()) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	const limit = 64*MaxCount + 2*MaxZstdBytes
	if got := after.TotalAlloc - before.TotalAlloc; got > limit {
		t.Fatalf("decoding allocated %d bytes, limit %d", got, limit)
	}
}

func addSeeds(f *testing.F, want func(Encoding) bool) {
	rng := rand.New(rand.NewPCG(99, 100))
	for _, c := range seedChunks(rng) {
		if want(encodingOf(c.chunk)) {
			f.Add(c.chunk)
		}
	}
}

func checkDecodeErr(t *testing.T, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, ErrCorrupt) {
		t.Fatalf("error %v does not wrap ErrCorrupt", err)
	}
}

// checkDecoded checks a successful decode against Inspect.
// checkTimes runs DecodeTimes on every input (it must not panic or
// over-allocate) and, where the full decode succeeded, wants the same
// timestamps from it.
func checkTimes(t *testing.T, b []byte, fullErr error, full []int64) {
	t.Helper()
	var ts []int64
	var err error
	checkAlloc(t, func() { ts, err = DecodeTimes(nil, b) })
	checkDecodeErr(t, err)
	if fullErr != nil {
		return
	}
	if err != nil {
		t.Fatalf("full decode succeeds, DecodeTimes fails: %v", err)
	}
	if !slices.Equal(ts, full) {
		t.Fatalf("DecodeTimes gives %d timestamps unlike the full decode's %d", len(ts), len(full))
	}
}

func checkDecoded(t *testing.T, b []byte, ts []int64) {
	t.Helper()
	info, err := Inspect(b)
	if err != nil {
		t.Fatalf("decoded but Inspect fails: %v", err)
	}
	if info.Count != len(ts) || (len(ts) > 0 && (info.MinT != ts[0] || info.MaxT != ts[len(ts)-1])) {
		t.Fatalf("Inspect %+v disagrees with %d decoded timestamps", info, len(ts))
	}
}

func FuzzDecodeFloats(f *testing.F) {
	addSeeds(f, func(e Encoding) bool { return e>>4 == 0 })
	f.Fuzz(func(t *testing.T, b []byte) {
		var ts []int64
		var vals []float64
		var err error
		checkAlloc(t, func() { ts, vals, err = DecodeFloats(nil, nil, b) })
		checkTimes(t, b, err, ts)
		checkDecodeErr(t, err)
		if err != nil {
			return
		}
		checkDecoded(t, b, ts)
		checkFloats(t, ts, vals)
	})
}

func FuzzDecodeUints(f *testing.F) {
	addSeeds(f, func(e Encoding) bool { return e>>4 == 1 })
	f.Fuzz(func(t *testing.T, b []byte) {
		var ts []int64
		var vals []uint64
		var err error
		checkAlloc(t, func() { ts, vals, err = DecodeUints(nil, nil, b) })
		checkTimes(t, b, err, ts)
		checkDecodeErr(t, err)
		if err != nil {
			return
		}
		checkDecoded(t, b, ts)
		checkUints(t, ts, vals)
	})
}

func FuzzDecodeStrings(f *testing.F) {
	addSeeds(f, func(e Encoding) bool { return e>>4 == 2 })
	f.Fuzz(func(t *testing.T, b []byte) {
		var ts []int64
		var vals []string
		var err error
		checkAlloc(t, func() { ts, vals, err = DecodeStrings(nil, nil, b) })
		checkTimes(t, b, err, ts)
		checkDecodeErr(t, err)
		if err != nil {
			return
		}
		checkDecoded(t, b, ts)
		checkStrings(t, ts, vals)
	})
}

func FuzzDecodeLogs(f *testing.F) {
	addSeeds(f, func(e Encoding) bool { return e>>4 == 3 })
	f.Fuzz(func(t *testing.T, b []byte) {
		var ts []int64
		var vals []string
		var meta []LogMeta
		var err error
		checkAlloc(t, func() { ts, vals, meta, err = DecodeLogs(nil, nil, nil, b) })
		checkTimes(t, b, err, ts)
		checkDecodeErr(t, err)
		if err != nil {
			return
		}
		checkDecoded(t, b, ts)
		checkLogs(t, ts, vals, meta)
	})
}

func FuzzInspect(f *testing.F) {
	addSeeds(f, func(Encoding) bool { return true })
	f.Fuzz(func(t *testing.T, b []byte) {
		info, err := Inspect(b)
		checkDecodeErr(t, err)
		if err == nil && (!info.Encoding.Valid() || info.Count < 0 || info.Count > MaxCount) {
			t.Fatalf("Inspect accepted %+v", info)
		}
	})
}

// fuzzSeries turns fuzz bytes into a series: a flags byte, then 16-byte
// records of a value's 8 bytes and a timestamp delta's 8 bytes. Flag bit 0
// shrinks deltas to a one-minute grid with jitter, bit 1 turns values into
// 2-decimal gauges, so that every encoding gets exercised.
func fuzzSeries(data []byte) ([]int64, []uint64, byte) {
	if len(data) == 0 {
		return nil, nil, 0
	}
	flags := data[0]
	data = data[1:]
	n := len(data) / 16
	ts := make([]int64, n)
	vals := make([]uint64, n)
	t := baseT
	for i := range n {
		rec := data[16*i:]
		vals[i] = binary.LittleEndian.Uint64(rec)
		d := int64(binary.LittleEndian.Uint64(rec[8:]))
		if flags&1 != 0 {
			d = minute + d%1000
		}
		t += d
		ts[i] = t
	}
	return ts, vals, flags
}

func FuzzRoundTripFloats(f *testing.F) {
	f.Add([]byte{0})
	f.Add(bytes.Repeat([]byte{3, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 0}, 20))
	f.Add(append([]byte{1}, bytes.Repeat([]byte{0, 0, 0, 0, 0, 0, 0xf8, 0x7f, 9, 9, 9, 9, 9, 9, 9, 9}, 3)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		ts, raw, flags := fuzzSeries(data)
		vals := make([]float64, len(raw))
		for i, u := range raw {
			vals[i] = math.Float64frombits(u)
			if flags&2 != 0 {
				vals[i] = float64(int16(u)) / 100
			}
		}
		checkFloats(t, ts, vals)
		for _, enc := range []Encoding{EncFloatXOR, EncFloatDecimal, EncFloatRaw, EncFloatRate} {
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

func FuzzRoundTripUints(f *testing.F) {
	f.Add([]byte{0})
	f.Add(bytes.Repeat([]byte{1, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 0}, 20))
	f.Fuzz(func(t *testing.T, data []byte) {
		ts, vals, flags := fuzzSeries(data)
		if flags&2 != 0 {
			for i := range vals {
				vals[i] = uint64(i)*1000 + vals[i]%16
			}
		}
		checkUints(t, ts, vals)
	})
}

func FuzzRoundTripStrings(f *testing.F) {
	f.Add([]byte("a\x00b\x00\x00c"), int64(60e9))
	f.Add([]byte("\x00\x00\x00"), int64(1))
	f.Fuzz(func(t *testing.T, data []byte, step int64) {
		vals := []string{}
		if len(data) > 0 {
			for s := range bytes.SplitSeq(data, []byte{0}) {
				vals = append(vals, string(s))
			}
		}
		ts := make([]int64, len(vals))
		for i := range ts {
			ts[i] = baseT + int64(i)*step
		}
		checkStrings(t, ts, vals)
		meta := make([]LogMeta, len(vals))
		for i := range meta {
			meta[i] = LogMeta{Timestamp: step * int64(i), Source: vals[len(vals)-1-i], Severity: int32(step), EventID: -step}
		}
		checkLogs(t, ts, vals, meta)
	})
}
