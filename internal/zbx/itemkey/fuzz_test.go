package itemkey_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/zbx/itemkey"
)

// seedKeys are valid and invalid keys; the fixtures' passive requests
// (agent.ping, system.cpu.load[all,avg1], ...) are among them.
var seedKeys = []string{
	"agent.ping", "agent.version", "system.cpu.load[all,avg1]", "system.cpu.load[bogus,,x]",
	"no.such.key[a]", "vfs.fs.size[/,pfree]", "net.tcp.service[tcp,,80]",
	`log["/var/log/a b.log","err"]`, "key[a,[b,c],d]", "name[]", "web.page.get[localhost,,80]",
	`k["a\"b"]`, `k["a\\"b",[ "x" ,y ] , z ]`, `k[[]]`, "k[é,日本]",
	"", "[a]", "a b", "key[a", "key[a]b", `key["a"b]`, "key[[a,[b]]]", "kéy",
	`{"request":"passive checks","data":[{"key":"agent.ping","timeout":3}]}`,
}

// FuzzParse checks that Parse never panics, that every error wraps
// ErrInvalidKey with a position inside the key, and that a valid key's
// String form parses back to the same Key and is a fixed point.
//
//	go test -run '^$' -fuzz '^FuzzParse$' -fuzztime 30s ./internal/zbx/itemkey/
func FuzzParse(f *testing.F) {
	for _, s := range seedKeys {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := itemkey.Parse(s)
		if err != nil {
			var se *itemkey.SyntaxError
			if !errors.Is(err, itemkey.ErrInvalidKey) || !errors.As(err, &se) {
				t.Fatalf("Parse(%q): %v is not a SyntaxError wrapping ErrInvalidKey", s, err)
			}
			if se.Pos < 0 || se.Pos > utf8.RuneCountInString(s) {
				t.Fatalf("Parse(%q): position %d outside the key", s, se.Pos)
			}
			return
		}
		if k.Name == "" || !strings.HasPrefix(s, k.Name) {
			t.Fatalf("Parse(%q): name %q", s, k.Name)
		}
		out := k.String()
		k2, err := itemkey.Parse(out)
		if err != nil {
			t.Fatalf("Parse(%q).String() = %q does not parse: %v", s, out, err)
		}
		if !reflect.DeepEqual(k, k2) { // cheaper than cmp on the fuzzing path
			t.Fatalf("Parse(%q) and Parse(%q) differ (-first +second):\n%s", s, out, cmp.Diff(k, k2))
		}
		if out2 := k2.String(); out2 != out {
			t.Fatalf("String is not a fixed point: %q then %q", out, out2)
		}
		if len(out) > len(s) {
			t.Fatalf("canonical form %q is longer than the input %q", out, s)
		}
	})
}

// go test -run '^$' -bench Parse -benchmem -count 6 ./internal/zbx/itemkey/
func BenchmarkParse(b *testing.B) {
	cases := map[string][]string{
		"simple": {"agent.ping", "system.uptime", "agent.version"},
		"params": {"system.cpu.load[all,avg1]", "vfs.fs.size[/,pfree]", "net.tcp.service[tcp,,80]", "net.if.in[eth0,bytes]"},
		"quoted": {`log["/var/log/a b.log","err"]`, `logrt["/var/log/app.*\\.log","ERROR \"x\"",,,skip]`, `key[a,[b,c,"d,e"],f]`},
	}
	for _, name := range []string{"simple", "params", "quoted"} {
		keys := cases[name]
		n := 0
		for _, k := range keys {
			n += len(k)
		}
		b.Run("keys="+name, func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			iters := 0
			for b.Loop() {
				for _, k := range keys {
					if _, err := itemkey.Parse(k); err != nil {
						b.Fatal(err)
					}
				}
				iters++
			}
			b.ReportMetric(float64(iters*len(keys))/b.Elapsed().Seconds(), "keys/s")
		})
	}
}
