package expr

import "testing"

// FuzzParse checks that Parse never panics and that whatever it accepts
// prints (String) to a spelling that parses back to the same spelling.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"last(/h/k)>90",
		`avg(/Linux host/system.cpu.load[all,avg1],5m)>{$LOAD:"ctx"} or not 1`,
		`count(//k[a,"b\"c",[d,e]],#3:now-1h,"regexp","^\\d")=0`,
		"trendavg(/h/k,1M:now/M-1y)*1K-.5e-3/2w",
		`find(/h/k,,"like","x") and {$M:regex:"^a"}<>{#LLD}`,
		`avg_foreach(/*/k?[group="G" and tag="t"],5m)`,
		`{{#A}.regsub("(.*)", \1)}=concat("a","b")`,
		"((1))", "-(-1)", "1 andX 2", `"`, "{$", "last(/h/k",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Parse(s)
		if err != nil {
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("Parse(%q) error %T is not a *ParseError", s, err)
			}
			_ = err.Error()
			return
		}
		out := e.String()
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(%q) accepted, but its String %q is refused: %v", s, out, err)
		}
		if again.String() != out {
			t.Fatalf("String not stable: %q -> %q -> %q", s, out, again.String())
		}
		_ = e.ItemRefs()
	})
}
