package record

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// floatBits compares floats bit for bit, so NaN payloads and -0 count.
var floatBits = cmp.Comparer(func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) })

// randomSample returns a sample of type vt with only the fields meaningful
// for vt set, which is exactly what DecodeSamples reproduces.
func randomSample(r *rand.Rand, vt history.ValueType) history.Sample {
	s := history.Sample{Type: vt}
	switch r.IntN(4) {
	case 0:
		s.ItemID = r.Uint64()
	default:
		s.ItemID = r.Uint64N(1 << 20)
	}
	switch r.IntN(5) {
	case 0:
		s.Clock = int64(r.Uint64()) // anything, including negative
	default:
		s.Clock = 1_790_000_000 + r.Int64N(3600)
	}
	switch r.IntN(5) {
	case 0:
		s.NS = int32(r.Uint32()) // out of the documented range, still kept
	default:
		s.NS = r.Int32N(1_000_000_000)
	}
	str := func(max int) string {
		b := make([]byte, r.IntN(max+1))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return string(b)
	}
	switch vt {
	case history.Float:
		switch r.IntN(6) {
		case 0:
			s.F = math.NaN()
		case 1:
			s.F = math.Inf(-1)
		case 2:
			s.F = math.Copysign(0, -1)
		default:
			s.F = r.NormFloat64() * 1e6
		}
	case history.Uint:
		s.U = r.Uint64() >> r.IntN(64)
	case history.Str:
		s.S = str(255)
	case history.Text:
		s.S = str(2000)
	case history.Log:
		s.S = str(300)
		if r.IntN(3) > 0 {
			s.Log = &history.LogMeta{
				Timestamp: int64(r.Uint64()),
				Source:    str(64),
				Severity:  int32(r.Uint32()),
				EventID:   int64(r.Uint64()),
			}
		}
	}
	return s
}

func randomBatch(r *rand.Rand, n int, types ...history.ValueType) []history.Sample {
	out := make([]history.Sample, n)
	for i := range out {
		out[i] = randomSample(r, types[r.IntN(len(types))])
	}
	return out
}

var allTypes = []history.ValueType{history.Float, history.Str, history.Log, history.Uint, history.Text}

func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := range 500 {
		n := r.IntN(50)
		if iter%50 == 0 {
			n = 2000
		}
		in := randomBatch(r, n, allTypes...)
		prefix := []byte("junk")
		enc := AppendSamples(prefix, in)
		if !bytes.Equal(enc[:4], prefix) {
			t.Fatalf("AppendSamples clobbered dst prefix: %q", enc[:4])
		}
		enc = enc[4:]
		if typ, err := Type(enc); err != nil || typ != TypeSamples {
			t.Fatalf("Type = %d, %v; want %d", typ, err, TypeSamples)
		}
		// Decode after an existing element, then reuse src to prove strings were copied.
		head := history.Sample{ItemID: 7, Type: history.Uint, U: 9}
		out, err := DecodeSamples([]history.Sample{head}, enc)
		if err != nil {
			t.Fatalf("iteration %d: DecodeSamples: %v", iter, err)
		}
		clear(enc)
		want := append([]history.Sample{head}, in...)
		if diff := cmp.Diff(want, out, floatBits); diff != "" {
			t.Fatalf("iteration %d: round trip mismatch (-want +got):\n%s", iter, diff)
		}
	}
}

func TestRoundTripDropsMeaninglessFields(t *testing.T) {
	in := []history.Sample{
		{ItemID: 1, Clock: 5, Type: history.Float, F: 1.5, U: 7, S: "x", Log: &history.LogMeta{EventID: 3}},
		{ItemID: 2, Clock: 6, Type: history.Uint, F: 1.5, U: 7, S: "x"},
		{ItemID: 3, Clock: 7, Type: history.Text, F: 1.5, U: 7, S: "x", Log: &history.LogMeta{EventID: 3}},
	}
	want := []history.Sample{
		{ItemID: 1, Clock: 5, Type: history.Float, F: 1.5},
		{ItemID: 2, Clock: 6, Type: history.Uint, U: 7},
		{ItemID: 3, Clock: 7, Type: history.Text, S: "x"},
	}
	got, err := DecodeSamples(nil, AppendSamples(nil, in))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestAppendSamplesInvalidTypePanics(t *testing.T) {
	defer func() {
		r := recover()
		if s, ok := r.(string); !ok || !strings.HasPrefix(s, "BUG:") {
			t.Fatalf("recover() = %v; want a BUG: panic", r)
		}
	}()
	AppendSamples(nil, []history.Sample{{ItemID: 1, Type: 9}})
}

func TestDecodeSamplesCorrupt(t *testing.T) {
	valid := AppendSamples(nil, []history.Sample{
		{ItemID: 1, Clock: 10, NS: 5, Type: history.Float, F: 2},
		{ItemID: 2, Clock: 11, Type: history.Log, S: "line", Log: &history.LogMeta{Source: "src", Severity: 3}},
	})
	f := func(name string, src []byte, wantMsg string) {
		t.Helper()
		prefix := []history.Sample{{ItemID: 99}}
		got, err := DecodeSamples(prefix, src)
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: DecodeSamples(%x) error = %v; want ErrCorrupt", name, src, err)
		}
		if !strings.Contains(err.Error(), wantMsg) {
			t.Fatalf("%s: error %q does not mention %q", name, err, wantMsg)
		}
		if diff := cmp.Diff(prefix, got); diff != "" {
			t.Fatalf("%s: dst changed on error (-want +got):\n%s", name, diff)
		}
	}
	f("empty", nil, "empty record")
	f("wrong type", []byte{2, 0}, "record type 2")
	f("no count", []byte{TypeSamples}, "bad sample count")
	f("huge count", []byte{TypeSamples, 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 1, 1, 1, 1}, "cannot fit")
	f("trailing", append(append([]byte{}, valid...), 0), "trailing bytes")
	f("bad value type", []byte{TypeSamples, 1, 1, 1, 1, 7, 0, 0, 0, 0, 0, 0, 0, 0}, "unknown value type byte 0x07")
	f("meta flag on float", []byte{TypeSamples, 1, 1, 1, 1, 0x80, 0, 0, 0, 0, 0, 0, 0, 0}, "unknown value type byte 0x80")
	f("ns out of range", []byte{TypeSamples, 1, 1, 1, 0x80, 0x80, 0x80, 0x80, 0x10, 3, 1}, "ns 4294967296")
	f("severity out of range", append([]byte{TypeSamples, 1, 1, 1, 1, 0x82, 0, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x10}, 0), "severity")
	f("string past end", []byte{TypeSamples, 1, 1, 1, 1, 1, 9, 'a'}, "truncated or malformed Character value")
	f("overlong varint", []byte{TypeSamples, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 1, 1, 3, 1}, "truncated sample header")
	// Every proper prefix of a valid record is corrupt.
	for i := range len(valid) {
		f("prefix", valid[:i], "")
	}
}

// FuzzDecodeSamples feeds arbitrary payloads to DecodeSamples: it must not
// panic, must leave dst alone on error, and whatever it accepts must
// survive a re-encode/decode round trip unchanged.
//
//	go test -run '^$' -fuzz '^FuzzDecodeSamples$' -fuzztime 30s ./internal/history/record/
func FuzzDecodeSamples(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	f.Add([]byte{})
	f.Add(AppendSamples(nil, nil))
	for _, vt := range allTypes {
		f.Add(AppendSamples(nil, randomBatch(r, 3, vt)))
	}
	f.Add(AppendSamples(nil, randomBatch(r, 20, allTypes...)))
	f.Fuzz(func(t *testing.T, src []byte) {
		prefix := []history.Sample{{ItemID: 1}}
		got, err := DecodeSamples(prefix, src)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			if len(got) != 1 || got[0].ItemID != 1 {
				t.Fatalf("dst changed on error: %v", got)
			}
			return
		}
		if len(got) > 1+len(src)/minSampleSize {
			t.Fatalf("decoded %d samples from %d bytes", len(got)-1, len(src))
		}
		again, err := DecodeSamples(nil, AppendSamples(nil, got[1:]))
		if err != nil {
			t.Fatalf("re-encoded samples do not decode: %v", err)
		}
		if diff := cmp.Diff(got[1:], again, floatBits, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("re-encode round trip mismatch (-first +second):\n%s", diff)
		}
	})
}
