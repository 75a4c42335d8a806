package usermacro

import (
	"errors"
	"testing"
)

func TestParseRef(t *testing.T) {
	f := func(in string, want Ref, key string) {
		t.Helper()
		got, err := ParseRef(in)
		if err != nil {
			t.Fatalf("ParseRef(%q): %v", in, err)
		}
		if got != want {
			t.Fatalf("ParseRef(%q) = %+v, want %+v", in, got, want)
		}
		if got.Key() != key {
			t.Fatalf("ParseRef(%q).Key() = %q, want %q", in, got.Key(), key)
		}
		again, err := ParseRef(got.Key())
		if err != nil || again != got {
			t.Fatalf("Key %q of %q does not parse back: %+v %v", got.Key(), in, again, err)
		}
	}
	f("{$A}", Ref{Name: "A"}, "{$A}")
	f("{$CPU.UTIL.CRIT}", Ref{Name: "CPU.UTIL.CRIT"}, "{$CPU.UTIL.CRIT}")
	f("{$A:/tmp}", Ref{Name: "A", HasContext: true, Context: "/tmp"}, `{$A:/tmp}`)
	f(`{$A:"/tmp"}`, Ref{Name: "A", HasContext: true, Context: "/tmp"}, `{$A:/tmp}`)
	f(`{$A:"}"}`, Ref{Name: "A", HasContext: true, Context: "}"}, `{$A:"}"}`)
	f(`{$A: "x y" }`, Ref{Name: "A", HasContext: true, Context: "x y"}, `{$A:x y}`)
	f(`{$A:"a\"}b"}`, Ref{Name: "A", HasContext: true, Context: `a"}b`}, `{$A:"a\"}b"}`)
	f(`{$A:""}`, Ref{Name: "A", HasContext: true}, `{$A:""}`)
	f(`{$A:regex:"^/var/.*$"}`, Ref{Name: "A", HasContext: true, Regex: true, Context: "^/var/.*$"}, `{$A:regex:"^/var/.*$"}`)
	f(`{$A:regex:" x"}`, Ref{Name: "A", HasContext: true, Regex: true, Context: " x"}, `{$A:regex:" x"}`)
}

func TestParseRefErrors(t *testing.T) {
	for _, in := range []string{"", "{A}", "{$}", "{$a}", "{$A", "{$A:x", `{$A:"x}`, `{$A:"x" y}`, "{$A}x", `{$A:regex:x}`, "{$A-B}"} {
		if _, err := ParseRef(in); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseRef(%q) = %v, want ErrSyntax", in, err)
		}
	}
	if _, err := CheckDefinition(`{$A:regex:"("}`); !errors.Is(err, ErrSyntax) {
		t.Errorf("CheckDefinition of a bad regex: %v", err)
	}
	long := "{$" + string(make([]byte, 300)) + "}"
	if _, err := CheckDefinition(long); err == nil {
		t.Error("CheckDefinition accepted 300 characters")
	}
	if _, err := CheckType(2); !errors.Is(err, ErrVault) {
		t.Errorf("CheckType(2) = %v", err)
	}
	if _, err := CheckType(7); err == nil {
		t.Error("CheckType(7) accepted")
	}
}

// FuzzParseRef checks that the reference parser never panics, that what
// it accepts has a canonical spelling that parses back to the same, and
// that ScanRef's length is within the input.
func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"{$A}", `{$A:"x"}`, "{$A:ctx}", `{$A:regex:"^a$"}`, `{$A: "a\"b" }`, "{$A:}", "{$", `{$A:"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, n, err := ScanRef(s)
		if err != nil {
			return
		}
		if n < 3 || n > len(s) {
			t.Fatalf("ScanRef(%q) length %d", s, n)
		}
		if c := r.Context; len(c) > 0 && c[len(c)-1] == '\\' && r.Key()[len(r.Key())-2] == '"' {
			return // no spelling parses back, see Key
		}
		again, err := ParseRef(r.Key())
		if err != nil || again != r {
			t.Fatalf("%q: Key %q parses to %+v, %v; want %+v", s, r.Key(), again, err, r)
		}
	})
}

// TestZabbixReason: the reason Zabbix 6.0's API gives for a macro name
// it refuses (`Invalid parameter "/1/macro": REASON.`), recorded from
// Zabbix 6.0.14's usermacro.create.
func TestZabbixReason(t *testing.T) {
	for in, want := range map[string]string{
		"{$bad":     `incorrect syntax near "bad"`,
		"{$lower}":  `incorrect syntax near "lower}"`,
		"{$":        "unexpected end of macro",
		"{$A":       "unexpected end of macro",
		"{$A:":      "unexpected end of macro",
		`{$A:"x`:    "unexpected end of macro",
		"{":         "unexpected end of macro",
		"{$A}x":     `incorrect syntax near "x"`,
		"A":         `incorrect syntax near "A"`,
		"{A}":       `incorrect syntax near "A}"`,
		"{$A B}":    `incorrect syntax near " B}"`,
		"{$}":       `incorrect syntax near "}"`,
		"{$A:ctx}x": `incorrect syntax near "x"`,
		"{$ä}":      `incorrect syntax near "ä}"`,
		`{$A:"x"y}`: `incorrect syntax near "y}"`,
	} {
		_, err := ParseRef(in)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Fatalf("ParseRef(%q): %v", in, err)
		}
		if got := se.Zabbix(); got != want {
			t.Errorf("ParseRef(%q).Zabbix() = %q, want %q", in, got, want)
		}
	}
}
