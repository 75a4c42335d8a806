package itemkey_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/zbx/itemkey"
)

type P = itemkey.Param

func u(v string) P     { return P{Value: v} }
func q(v string) P     { return P{Value: v, Quoted: true} }
func arr(elems ...P) P { return P{Array: elems} }
func key(name string, p ...P) itemkey.Key {
	return itemkey.Key{Name: name, Params: p}
}

func TestParse(t *testing.T) {
	f := func(s string, want itemkey.Key, canonical string) {
		t.Helper()
		got, err := itemkey.Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q): %v", s, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("Parse(%q) (-want +got):\n%s", s, diff)
		}
		if got.String() != canonical {
			t.Fatalf("Parse(%q).String() = %q, want %q", s, got.String(), canonical)
		}
		again, err := itemkey.Parse(canonical)
		if err != nil || !cmp.Equal(again, got) {
			t.Fatalf("canonical form %q parses to %+v, %v; want %+v", canonical, again, err, got)
		}
	}
	// From the spec (§6).
	f("agent.ping", itemkey.Key{Name: "agent.ping"}, "agent.ping")
	f("system.cpu.load[all,avg1]", key("system.cpu.load", u("all"), u("avg1")), "system.cpu.load[all,avg1]")
	f("vfs.fs.size[/,pfree]", key("vfs.fs.size", u("/"), u("pfree")), "vfs.fs.size[/,pfree]")
	f("net.tcp.service[tcp,,80]", key("net.tcp.service", u("tcp"), u(""), u("80")), "net.tcp.service[tcp,,80]")
	f(`log["/var/log/a b.log","err"]`, key("log", q("/var/log/a b.log"), q("err")), `log["/var/log/a b.log","err"]`)
	f("key[a,[b,c],d]", key("key", u("a"), arr(u("b"), u("c")), u("d")), "key[a,[b,c],d]")
	f("name[]", key("name", u("")), "name[]")
	f("web.page.get[localhost,,80]", key("web.page.get", u("localhost"), u(""), u("80")), "web.page.get[localhost,,80]")

	// Name characters.
	f("A-z_0.9", itemkey.Key{Name: "A-z_0.9"}, "A-z_0.9")
	f("-", itemkey.Key{Name: "-"}, "-")

	// Spaces: skipped before a parameter, kept after an unquoted one,
	// allowed between a closing quote or bracket and the separator.
	f("k[ a,  b ,c  ]", key("k", u("a"), u("b "), u("c  ")), "k[a,b ,c  ]")
	f(`k[ "a" , "b"  ]`, key("k", q("a"), q("b")), `k["a","b"]`)
	f("k[ ]", key("k", u("")), "k[]")
	f("k[,]", key("k", u(""), u("")), "k[,]")
	f("k[ [a] , b]", key("k", arr(u("a")), u("b")), "k[[a],b]")
	f("k[[ a , b ]]", key("k", arr(u("a "), u("b "))), "k[[a ,b ]]")

	// Quoting and escapes: \" is the only escape.
	f(`k["a\"b"]`, key("k", q(`a"b`)), `k["a\"b"]`)
	f(`k["a\\b"]`, key("k", q(`a\\b`)), `k["a\\b"]`)
	f(`k["a\b"]`, key("k", q(`a\b`)), `k["a\b"]`)
	f(`k["a\\"b"]`, key("k", q(`a\"b`)), `k["a\\"b"]`)
	f(`k["",""]`, key("k", q(""), q("")), `k["",""]`)
	f(`k["a,b]c"]`, key("k", q("a,b]c")), `k["a,b]c"]`)
	f(`k[" lead"]`, key("k", q(" lead")), `k[" lead"]`)
	f(`k["[x]"]`, key("k", q("[x]")), `k["[x]"]`)
	f(`k[a"b"]`, key("k", u(`a"b"`)), `k[a"b"]`)       // " is special only at the start
	f(`k[a\]`, key("k", u(`a\`)), `k[a\]`)             // a backslash unquoted
	f(`k[a[b]`, key("k", u("a[b")), `k[a[b]`)          // [ is special only at the start
	f(`k[[a[b]]`, key("k", arr(u("a[b"))), `k[[a[b]]`) // ...also in an array
	f(`k[["x,y",z]]`, key("k", arr(q("x,y"), u("z"))), `k[["x,y",z]]`)
	f(`k[[]]`, key("k", arr(u(""))), `k[[]]`)
	f("k[é,日本]", key("k", u("é"), u("日本")), "k[é,日本]")
	f("k[{$MACRO},{#LLD}]", key("k", u("{$MACRO}"), u("{#LLD}")), "k[{$MACRO},{#LLD}]")
	f("k[\t]", key("k", u("\t")), "k[\t]") // only spaces are skipped

	// The maximum length is in characters.
	long := "k[" + strings.Repeat("x", itemkey.MaxKeyLen-3) + "]"
	f(long, key("k", u(strings.Repeat("x", itemkey.MaxKeyLen-3))), long)
	longUTF8 := "k[" + strings.Repeat("é", itemkey.MaxKeyLen-3) + "]" // 2048 characters, 4093 bytes
	f(longUTF8, key("k", u(strings.Repeat("é", itemkey.MaxKeyLen-3))), longUTF8)
}

func TestParseErrors(t *testing.T) {
	f := func(s string, wantPos int, wantMsg string) {
		t.Helper()
		k, err := itemkey.Parse(s)
		if err == nil {
			t.Fatalf("Parse(%q) = %+v, want an error", s, k)
		}
		if !errors.Is(err, itemkey.ErrInvalidKey) {
			t.Fatalf("Parse(%q): %v does not wrap ErrInvalidKey", s, err)
		}
		var se *itemkey.SyntaxError
		if !errors.As(err, &se) || se.Pos != wantPos || !strings.Contains(err.Error(), wantMsg) {
			t.Fatalf("Parse(%q): %q, want %q at position %d", s, err, wantMsg, wantPos)
		}
		if !strings.HasPrefix(err.Error(), "invalid item key ") {
			t.Fatalf("Parse(%q): message %q", s, err)
		}
	}
	f("", 0, "empty key")
	f("[a]", 0, "empty key name")
	f("a b", 1, `invalid character " " in key name`)
	f("kéy", 1, `invalid character "é" in key name`)
	f("k\xffy", 1, `invalid character "\xff"`)
	f("key[a", 5, "unterminated parameter list")
	f("x[a", 3, `invalid item key "x[a": unterminated parameter list at position 3`)
	f("key[", 4, "unterminated parameter list")
	f("key[a,", 6, "unterminated parameter list")
	f("key[a]b", 6, `unexpected "b" after the closing bracket`)
	f("key[a]]", 6, `unexpected "]" after the closing bracket`)
	f("key[a] ", 6, `unexpected " " after the closing bracket`)
	f(`key["a"b]`, 7, `unexpected "b" after a quoted parameter`)
	f(`key["a" b]`, 8, `unexpected "b" after a quoted parameter`)
	f(`key["a`, 4, "unterminated quoted parameter")
	f(`key["a\"]`, 4, "unterminated quoted parameter")
	f(`key["a"`, 7, "unterminated parameter list")
	f("key[[a,[b]]]", 7, "nested array parameters are not allowed")
	f("key[[a]b]", 7, `unexpected "b" after an array parameter`)
	f("key[[a", 6, "unterminated array parameter")
	f("key[[a]", 7, "unterminated parameter list")
	f("日本[a", 0, `invalid character "日" in key name`)
	f("k[日本", 4, "unterminated parameter list") // positions count characters, not bytes
	f(strings.Repeat("k", itemkey.MaxKeyLen+1), itemkey.MaxKeyLen, "2049 characters long, more than the maximum 2048")
	f("k["+strings.Repeat("é", itemkey.MaxKeyLen-2)+"]", itemkey.MaxKeyLen, "2049 characters")
}

func TestErrorMessageIsShort(t *testing.T) {
	_, err := itemkey.Parse(strings.Repeat("é", 5000))
	if err == nil || len(err.Error()) > 200 || !utf8.ValidString(err.Error()) {
		t.Fatalf("error for a 5000-character key: %q", err)
	}
}

func TestString(t *testing.T) {
	f := func(k itemkey.Key, want string) {
		t.Helper()
		if got := k.String(); got != want {
			t.Fatalf("%+v.String() = %q, want %q", k, got, want)
		}
	}
	// Built by hand: quoting is added where needed.
	f(itemkey.Key{Name: "k", Params: []P{}}, "k")
	f(key("k", u("a,b"), u("x]"), u(" s"), u(`"q`), u("[a"), u(`a"b`)), `k["a,b","x]"," s","\"q","[a",a"b]`)
	f(key("k", arr(u("a,b"), q("c"))), `k[["a,b","c"]]`)
	f(key("k", q(`ends\`)), `k[ends\]`) // Quoted dropped: "ends\" would not parse
	f(key("k", arr(arr(u("x")))), `k[[]]`)
}

func TestMapValues(t *testing.T) {
	k, err := itemkey.Parse(`log[{$F},"{$A}",[{$A},b]]`)
	if err != nil {
		t.Fatal(err)
	}
	k.MapValues(func(v string) string {
		return map[string]string{"{$F}": "/var/log/a b.log", "{$A}": "x,y", "b": "b"}[v]
	})
	// A value with a comma is quoted; a quoted one stays quoted.
	if got, want := k.String(), `log[/var/log/a b.log,"x,y",["x,y",b]]`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// TestZabbixReason: the reason Zabbix 6.0's API gives for a key it
// refuses (`Invalid key "K" for item ...: REASON.`), recorded from Zabbix
// 6.0.14's item.create.
func TestZabbixReason(t *testing.T) {
	for key, want := range map[string]string{
		"":             "key is empty",
		"a[b":          "unexpected end of key",
		`a["b]`:        "unexpected end of key",
		`a["b\"]`:      "unexpected end of key",
		"a[b,[c]":      "unexpected end of key",
		"a[[b],c":      "unexpected end of key",
		"a b":          `incorrect syntax near " b"`,
		"a[b]c":        `incorrect syntax near "c"`,
		"[a]":          `incorrect syntax near "[a]"`,
		"a]":           `incorrect syntax near "]"`,
		"a[b]]":        `incorrect syntax near "]"`,
		"ä":            `incorrect syntax near "ä"`,
		`a["b"c]`:      `incorrect syntax near "c]"`,
		"a[b][c]":      `incorrect syntax near "[c]"`,
		"a,b":          `incorrect syntax near ",b"`,
		"a[[b,[c]]]":   `incorrect syntax near "[b,[c]]]"`,
		"a[b,[c,[d]]]": `incorrect syntax near "[c,[d]]]"`,
		`a["b" c]`:     `incorrect syntax near "c]"`,
		"a[b, [c] d]":  `incorrect syntax near "d]"`,
	} {
		_, err := itemkey.Parse(key)
		var se *itemkey.SyntaxError
		if !errors.As(err, &se) {
			t.Fatalf("Parse(%q): %v", key, err)
		}
		if got := se.Zabbix(); got != want {
			t.Errorf("Parse(%q).Zabbix() = %q, want %q", key, got, want)
		}
	}
}
