package external

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseOutput feeds arbitrary plugin output to the parser: it must
// not panic, its result must encode as JSON (no NaN or infinity gets
// through), the text is one line, and the perfdata it found, written
// back in the canonical form, parses to the same entries.
func FuzzParseOutput(f *testing.F) {
	f.Add("OK - fine | time=0.001s;1;2;0;10 'a b'=3%;;;; x=U")
	f.Add("CRITICAL\nlong 1\nlong 2 | load1=0,5;;~:10 ''''=1\nmore=2c")
	f.Add("| =1 'unterminated=3 v=1e5 w=-.5MB;@1:2")
	f.Fuzz(func(t *testing.T, out string) {
		text, _, perf, bad := ParseOutput(out)
		if strings.ContainsRune(text, '\n') {
			t.Fatalf("text %q has a newline", text)
		}
		if bad < 0 {
			t.Fatalf("bad %d", bad)
		}
		first, err := json.Marshal(perf)
		if err != nil {
			t.Fatalf("perfdata does not encode: %v", err)
		}
		again, bad2 := ParsePerfdata(render(perf))
		if bad2 != 0 {
			t.Fatalf("canonical form %q has %d bad entries", render(perf), bad2)
		}
		if second, _ := json.Marshal(again); !bytes.Equal(first, second) {
			t.Fatalf("round trip through %q:\n%s\n%s", render(perf), first, second)
		}
	})
}

// render writes perfdata in the canonical form of spec §9.
func render(perf map[string]Perfdata) string {
	labels := make([]string, 0, len(perf))
	for l := range perf {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	num := func(v *float64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatFloat(*v, 'f', -1, 64)
	}
	var b strings.Builder
	for _, l := range labels {
		p := perf[l]
		b.WriteString("'" + strings.ReplaceAll(l, "'", "''") + "'=")
		if p.Value == nil {
			b.WriteString("U")
		} else {
			b.WriteString(num(p.Value) + p.UOM)
		}
		b.WriteString(";" + p.Warn + ";" + p.Crit + ";" + num(p.Min) + ";" + num(p.Max) + " ")
	}
	return b.String()
}
