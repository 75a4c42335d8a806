package preprocess

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// textRun is the chain as it ran before numbers were carried between
// steps: every step on the previous one's text (Step.apply), the result
// text. The reference TestNumbersAsTexts compares Run with.
func textRun(chain []Step, in Input, st *State) (Output, error) {
	text := in.Text
	for i := range chain {
		s := &chain[i]
		res, err := s.apply(i, text, in, st)
		switch {
		case err == nil:
			text = res
		case errors.Is(err, errDiscard):
			return Output{Discarded: true}, nil
		default:
			out, stop, herr := handle(*s, i, err.Error())
			if stop {
				return out, herr
			}
			text = out.Text
		}
	}
	return Output{Text: text}, nil
}

// TestNumbersAsTexts: the numeric steps hand numbers on instead of their
// texts (runFrom), and the pipeline stores a kept number without its
// text (Output.Number): every result, discard, error and stored value
// must be what the texts made, value after value on the same state, for
// both value types, including numbers whose texts are special (-0, an
// exponent, a float result of an unsigned item, out of range).
func TestNumbersAsTexts(t *testing.T) {
	chains := [][][3]string{ // type, params, handler+params
		{{"1", "8"}, {"20", "1h"}},
		{{"1", "0.5"}, {"19", ""}},
		{{"1", "-1"}, {"19", ""}},
		{{"10", ""}, {"1", "8"}},
		{{"9", ""}, {"19", ""}},
		{{"1", "8"}, {"9", ""}, {"20", "1m"}},
		{{"1", "1e300"}, {"19", ""}},
		{{"1", "1e300", "2"}, {"19", ""}}, // out of range: set value ""
		{{"1", "8"}, {"4", " "}, {"19", ""}},
		{{"1", "2"}, {"1", "0.5"}, {"19", ""}},
		{{"1", "0"}, {"19", ""}},
		{{"13", "0\n100"}, {"1", "3"}},
		{{"1", "3"}, {"13", "0\n100"}, {"19", ""}},
	}
	inputs := []string{"5", "5", "-0", "0", "0", "1.5", "1.5", "1e-7", "123456789012345678901", "18446744073709551615",
		"abc", "1e308", " 7 ", "7.000", "7", "-3", "-3", "2.5e-3", "4", "3", "3", "100"}
	numbers := 0
	for ci, spec := range chains {
		var chain []Step
		for _, p := range spec {
			handler, hp := "0", ""
			if p[2] != "" {
				handler, hp = p[2], ""
			}
			s, err := ParseStep(p[0], p[1], handler, hp)
			if err != nil {
				t.Fatal(err)
			}
			chain = append(chain, s)
		}
		for _, vt := range []history.ValueType{history.Float, history.Uint} {
			t.Run(fmt.Sprintf("chain%d/type%d", ci, vt), func(t *testing.T) {
				var want, got, kept State
				for k, text := range inputs {
					in := Input{Text: text, Time: t0.Add(time.Duration(k) * time.Minute), Type: vt}
					wo, werr := textRun(chain, in, &want)
					o, err := Run(chain, in, &got)
					if fmt.Sprint(werr) != fmt.Sprint(err) || wo.Discarded != o.Discarded || wo.Text != o.Text || o.isNum {
						t.Fatalf("value %d %q: Run = %+v, %v; the texts made %+v, %v", k, text, o, err, wo, werr)
					}
					in.KeepNumber = true
					ko, kerr := Run(chain, in, &kept)
					if fmt.Sprint(werr) != fmt.Sprint(kerr) || wo.Discarded != ko.Discarded || wo.Text != ko.String() {
						t.Fatalf("value %d %q: Run with KeepNumber = %q %+v, %v; the texts made %+v, %v", k, text, ko.String(), ko, kerr, wo, werr)
					}
					var ws, ks history.Sample
					cerr := Convert(vt, []byte(wo.Text), &ws)
					if ko.Number(vt, &ks) {
						numbers++
						if cerr != nil || ws.Type != ks.Type || ws.U != ks.U || math.Float64bits(ws.F) != math.Float64bits(ks.F) {
							t.Fatalf("value %d %q: stored %+v; converting %q stores %+v (%v)", k, text, ks, wo.Text, ws, cerr)
						}
					}
				}
				// The saved states are the same bytes.
				wb, _ := want.AppendBinary(nil)
				kb, _ := kept.AppendBinary(nil)
				if string(wb) != string(kb) {
					t.Fatalf("saved state %x, the texts' %x", kb, wb)
				}
			})
		}
	}
	if numbers < 50 {
		t.Fatalf("%d results stored as numbers: the test no longer covers Output.Number", numbers)
	}
}
