package lld

import "testing"

// TestSubst: known LLD macros replaced, unknown ones and what only looks
// like one ({#}, {#a}, an unclosed {#X) kept.
func TestSubst(t *testing.T) {
	row := &Row{Macros: map[string]string{"{#FS}": "/", "{#A.B_1}": "x"}}
	for in, want := range map[string]string{
		"Free on {#FS}":        "Free on /",
		"{#FS}{#A.B_1}{#NOPE}": "/x{#NOPE}",
		"{#} {#a} {#FS":        "{#} {#a} {#FS",
		"é {#FS} ü":            "é / ü",
		"no macro":             "no macro",
	} {
		if got := subst(in, row); got != want {
			t.Errorf("subst(%q) = %q, want %q", in, got, want)
		}
	}
}
