package zjson

import (
	"encoding/json"
	"testing"
)

// FuzzAppendString checks the hand-written escaper against
// encoding/json: the output must decode back to the same string (with
// invalid UTF-8 replaced, as encoding/json does).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", `q"uo\te`, "line\nbreak\t\x01", "<&>", "é😀", "\xff\xfe", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := AppendString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q encoded as invalid JSON %s: %v", s, got, err)
		}
		want, _ := json.Marshal(s)
		var wantBack string
		json.Unmarshal(want, &wantBack)
		if back != wantBack {
			t.Fatalf("%q: decodes to %q, encoding/json gives %q", s, back, wantBack)
		}
	})
}
