package preprocess

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/peregrine-mon/peregrine/internal/history"
)

func TestConvert(t *testing.T) {
	f := func(vt history.ValueType, raw string, want history.Sample) {
		t.Helper()
		var got history.Sample
		if err := Convert(vt, []byte(raw), &got); err != nil {
			t.Fatalf("Convert(%v, %q): %v", vt, raw, err)
		}
		want.Type = vt
		if got != want {
			t.Fatalf("Convert(%v, %q) = %+v, want %+v", vt, raw, got, want)
		}
	}
	f(history.Float, "1.5", history.Sample{F: 1.5})
	f(history.Float, " -1.5e+3\r\n", history.Sample{F: -1500})
	f(history.Float, "+.5", history.Sample{F: 0.5})
	f(history.Float, "7.", history.Sample{F: 7})
	f(history.Float, "1e308", history.Sample{F: 1e308})
	f(history.Uint, "18446744073709551615", history.Sample{U: math.MaxUint64})
	f(history.Uint, "12.000", history.Sample{U: 12})
	f(history.Uint, "+3", history.Sample{U: 3})
	f(history.Uint, "\t42 ", history.Sample{U: 42})
	f(history.Str, "hello", history.Sample{S: "hello"})
	f(history.Str, strings.Repeat("é", 300), history.Sample{S: strings.Repeat("é", 255)})
	f(history.Str, "a\xffb", history.Sample{S: "a?b"})
	f(history.Text, strings.Repeat("x", 70000), history.Sample{S: strings.Repeat("x", 65535)})
	f(history.Log, "line\n", history.Sample{S: "line\n"})
	f(history.Text, "", history.Sample{})
	f(history.Str, "\xff\xfe"+strings.Repeat("é", 254), history.Sample{S: "??" + strings.Repeat("é", 253)})
	f(history.Str, "ab\xe2\x82", history.Sample{S: "ab??"}) // a cut multi-byte character
	f(history.Log, "\xc3", history.Sample{S: "?"})
}

// TestStringCopyIsOneAllocation: a string value that must be repaired or
// cut costs one allocation, never longer than the value's text.
func TestStringCopyIsOneAllocation(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	raw := []byte(strings.Repeat("é", 300) + "\xff")
	var s history.Sample
	if n := testing.AllocsPerRun(50, func() { Convert(history.Str, raw, &s) }); n != 1 {
		t.Fatalf("%v allocations for a cut string, want 1", n)
	}
	if len(s.S) > len(raw) || len(s.S) != 510 {
		t.Fatalf("cut string is %d bytes", len(s.S))
	}
}

func TestConvertRefuses(t *testing.T) {
	f := func(vt history.ValueType, raw string) {
		t.Helper()
		var s history.Sample
		err := Convert(vt, []byte(raw), &s)
		var ce *ConvertError
		if !errors.As(err, &ce) || ce.Type != vt {
			t.Fatalf("Convert(%v, %q) = %v, want a ConvertError", vt, raw, err)
		}
		if len(ce.Value) > 64+3 || !strings.HasPrefix(raw, strings.TrimSuffix(ce.Value, "...")) {
			t.Fatalf("Convert(%v, %q): error quotes %q, want at most the first 64 bytes", vt, raw, ce.Value)
		}
	}
	for _, raw := range []string{"", " ", "nan", "inf", "-inf", "0x10", "1_000", "1e309", "-1e309", "1e", ".", "1.5.5", "1 2", "abc"} {
		f(history.Float, raw)
	}
	for _, raw := range []string{"", "-1", "12.5", "18446744073709551616", "99999999999999999999", "1e3", "0x10", "abc", "."} {
		f(history.Uint, raw)
	}
	f(history.Float, strings.Repeat("9", 1<<20)+"x") // a huge refused value is not copied into the error
	f(history.ValueType(99), "1")
}

// TestConvertNumbersDoNotAllocate: numbers are on every ingest path.
func TestConvertNumbersDoNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	fl, u := []byte(" 12.5e3 "), []byte("18446744073709551615")
	var s history.Sample
	if n := testing.AllocsPerRun(100, func() {
		Convert(history.Float, fl, &s)
		Convert(history.Uint, u, &s)
	}); n != 0 {
		t.Fatalf("%v allocations per float+uint conversion, want 0", n)
	}
}

// TestTruncateCharsMatchesReference compares truncateChars with the
// obvious rune-by-rune version on seeded random byte strings, valid and
// invalid UTF-8 mixed.
func TestTruncateCharsMatchesReference(t *testing.T) {
	ref := func(b []byte, n int) string {
		var out []rune
		for len(b) > 0 && len(out) < n {
			r, w := utf8.DecodeRune(b)
			if r == utf8.RuneError && w <= 1 {
				r = '?'
			}
			out = append(out, r)
			b = b[w:]
		}
		return string(out)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	pieces := []string{"a", "é", "😀", "\xff", "\xe2\x82", "\xc3", "\x00", "€"}
	for i := 0; i < 5000; i++ {
		var b []byte
		for j := rng.IntN(40); j > 0; j-- {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		n := rng.IntN(30) + 1
		if got, want := truncateChars(b, n), ref(b, n); got != want {
			t.Fatalf("truncateChars(%q, %d) = %q, want %q", b, n, got, want)
		}
	}
}
