package expr

import (
	"strings"
	"testing"
)

func TestItemFilter(t *testing.T) {
	groups := []string{"Linux servers", "DB"}
	tags := []FilterTag{{"env", "prod"}, {"component", "cpu"}}
	f := func(filter string, want bool) {
		t.Helper()
		flt, err := ParseItemFilter(filter)
		if err != nil {
			t.Fatalf("ParseItemFilter(%q): %v", filter, err)
		}
		if got := flt.Match(groups, tags); got != want {
			t.Fatalf("%q matched %v, want %v", filter, got, want)
		}
	}
	f(`group="DB"`, true)
	f(`group="Web"`, false)
	f(`group<>"Web"`, true)
	f(`group = "Linux servers"`, true)
	f(`tag="env"`, true)
	f(`tag="env:prod"`, true)
	f(`tag="env:test"`, false)
	f(`tag<>"env:test"`, true)
	f(`group="DB" and tag="component:cpu"`, true)
	f(`group="Web" or tag="component:cpu"`, true)
	f(`not group="DB"`, false)
	f(`group="Web" or group="DB" and tag="x"`, false)
	f(`(group="Web" or group="DB") and not tag="x"`, true)
	f(`group="a\"b"`, false)

	bad := func(filter, msg string) {
		t.Helper()
		_, err := ParseItemFilter(filter)
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Fatalf("ParseItemFilter(%q) = %v, want an error with %q", filter, err, msg)
		}
	}
	bad(``, "expected group, tag")
	bad(`host="x"`, "expected group, tag")
	bad(`group`, "expected = or <>")
	bad(`group=DB`, "quoted string")
	bad(`group="DB`, "unterminated string")
	bad(`(group="DB"`, `expected ")"`)
	bad(`group="DB" group="x"`, "unexpected")
	bad(`groupx="DB"`, "expected group, tag")
	bad(strings.Repeat("(", 300)+`group="a"`+strings.Repeat(")", 300), "nested deeper")

	flt, _ := ParseItemFilter(`group="a"`)
	if flt.UsesTags() {
		t.Fatal("a group filter reports tags")
	}
	flt, _ = ParseItemFilter(`group="a" or not tag="b"`)
	if !flt.UsesTags() {
		t.Fatal("a tag filter does not report tags")
	}
}
