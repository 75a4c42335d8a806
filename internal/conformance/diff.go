package conformance

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Difference is one place where Peregrine's normalised answer is not the
// golden one.
type Difference struct {
	Case, Step string
	// Path is where in the answer: "result.0.groupid", "error.data";
	// "result" itself when the lengths of lists differ.
	Path      string
	Want, Got string // JSON; "<absent>" for a missing member
}

func (d Difference) String() string {
	return fmt.Sprintf("%s/%s %s: want %s, got %s", d.Case, d.Step, d.Path, clip(d.Want), clip(d.Got))
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

const absent = "<absent>"

// diff lists the differences between want and got (both normalised).
func diff(cs, step, path string, want, got any) []Difference {
	var out []Difference
	add := func(p string, w, g any) {
		out = append(out, Difference{Case: cs, Step: step, Path: p, Want: enc(w), Got: enc(g)})
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			add(path, want, got)
			return out
		}
		keys := map[string]bool{}
		for k := range w {
			keys[k] = true
		}
		for k := range g {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			p := join(path, k)
			wv, wok := w[k]
			gv, gok := g[k]
			switch {
			case !gok:
				out = append(out, Difference{Case: cs, Step: step, Path: p, Want: enc(wv), Got: absent})
			case !wok:
				out = append(out, Difference{Case: cs, Step: step, Path: p, Want: absent, Got: enc(gv)})
			default:
				out = append(out, diff(cs, step, p, wv, gv)...)
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok {
			add(path, want, got)
			return out
		}
		if len(w) != len(g) {
			add(path+".#", len(w), len(g))
		}
		for i := 0; i < len(w) && i < len(g); i++ {
			out = append(out, diff(cs, step, join(path, fmt.Sprint(i)), w[i], g[i])...)
		}
	default:
		if enc(want) != enc(got) {
			add(path, want, got)
		}
	}
	return out
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// enc is the canonical JSON of a normalised value: a number and the same
// number as a string differ, as they do to a client.
func enc(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

// glob matches s against a pattern whose "*" stands for any run of
// characters, dots included.
func glob(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for i, p := range parts[1:] {
		last := i == len(parts)-2
		if last {
			return strings.HasSuffix(s, p)
		}
		j := strings.Index(s, p)
		if j < 0 {
			return false
		}
		s = s[j+len(p):]
	}
	return true
}
