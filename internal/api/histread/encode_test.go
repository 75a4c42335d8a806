package histread

import (
	"bufio"
	"bytes"
	"io"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// TestRowEncoderNumeric: the fast path writes exactly what the general
// path writes, for float and unsigned rows of several items, for every
// output the API accepts (extend, subsets, none), including the first
// row's missing comma.
func TestRowEncoderNumeric(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var samples []history.Sample
	for i := range 3000 {
		s := history.Sample{ItemID: uint64(1 + i/700), Clock: 1_600_000_000 + int64(i), NS: r.Int32N(1_000_000_000)}
		switch i % 5 {
		case 0:
			s.NS = r.Int32N(1000) // short ns
		case 1:
			s.Clock = r.Int64N(1_000_000_000) // short clock
		}
		if i%2 == 0 {
			s.Type, s.F = history.Float, math.Round(r.NormFloat64()*1e5)/100
			if i%7 == 0 {
				s.F = r.Float64() * math.Pow10(r.IntN(30)-10) // strconv's path
			}
		} else {
			s.Type, s.U = history.Uint, r.Uint64()>>r.IntN(64)
		}
		samples = append(samples, s)
	}
	outputs := [][]string{nil, {"extend"}, {""}, {"itemid"}, {"clock"}, {"value"}, {"ns"}, {"itemid", "value"}, {"clock", "ns"},
		{"value", "clock"}, {"itemid", "clock", "value", "ns"}, {"ns", "source", "severity"}, {"unknown"}}
	for _, o := range outputs {
		out := fieldsOf(o)
		var fast, ref bytes.Buffer
		fw := bufio.NewWriterSize(&fast, 512) // small: rows cross flushes
		fe, re := newRowEncoder(out), newRowEncoder(out)
		var rb []byte
		for i := range samples {
			fe.write(fw, &samples[i])
			rb = re.appendRow(rb, &samples[i])
		}
		fw.Flush()
		ref.Write(rb)
		if fast.String() != ref.String() {
			t.Fatalf("output %q: fast path differs\n got %.300s\nwant %.300s", o, fast.String(), ref.String())
		}
	}
}

// go test -run '^$' -bench 'RowEncoder' -count 6 ./internal/api/histread/
//
// BenchmarkRowEncoder formats float rows of the realistic shape (two or
// three decimals, a ten-digit clock, a random nanosecond part, a few
// items in turn) with the general path and the fast path, as history.get
// writes them (output extend).
func BenchmarkRowEncoder(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	samples := make([]history.Sample, 4096)
	level := 50.0
	for i := range samples {
		level += r.NormFloat64()
		samples[i] = history.Sample{ItemID: 1000 + uint64(i/100), Clock: 1_700_000_000 + int64(i)*10, NS: r.Int32N(1e9), Type: history.Float, F: math.Round(level*1000) / 1000}
	}
	out := AllFields
	for _, c := range []struct {
		name string
		fn   func(e *rowEncoder, w *bufio.Writer, v *history.Sample)
	}{
		{"general", func(e *rowEncoder, w *bufio.Writer, v *history.Sample) {
			e.buf = e.appendRow(e.buf[:0], v)
			w.Write(e.buf)
		}},
		{"fast", func(e *rowEncoder, w *bufio.Writer, v *history.Sample) { e.write(w, v) }},
	} {
		b.Run("path="+c.name, func(b *testing.B) {
			w := bufio.NewWriterSize(io.Discard, 64<<10)
			e := newRowEncoder(out)
			b.ReportAllocs()
			for b.Loop() {
				for i := range samples {
					c.fn(e, w, &samples[i])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(samples)), "ns/row")
		})
	}
}

// fieldsOf is the fields of an "output" as the API reads it: absent or
// "extend" is every field, "" none, a list the fields it names.
func fieldsOf(output []string) Fields {
	switch {
	case len(output) == 0 || len(output) == 1 && output[0] == "extend":
		return AllFields
	}
	var f Fields
	for _, name := range output {
		f |= FieldNamed(name)
	}
	return f
}
