package expr

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseString(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		e, err := Parse(in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		if got := e.String(); got != want {
			t.Fatalf("Parse(%q).String() = %q, want %q", in, got, want)
		}
		again, err := Parse(e.String())
		if err != nil || again.String() != want {
			t.Fatalf("Parse(String()) of %q: %v %q", in, err, again)
		}
	}
	f("1", "1")
	f(" 1 + 2 * 3 ", "1+2*3")
	f("last(/h/k)>90", "last(/h/k)>90")
	f("avg( /Linux host/system.cpu.load[all,avg1] , 5m )>{$LOAD}", "avg(/Linux host/system.cpu.load[all,avg1],5m)>{$LOAD}")
	f("last(//vfs.fs.size[\"/\", pused],#2:now-1d)", "last(//vfs.fs.size[\"/\", pused],#2:now-1d)")
	f("count(/h/k,5m,\"regexp\",\"^a\\\\d\\\"\")", "count(/h/k,5m,\"regexp\",\"^a\\\\d\\\"\")")
	f("find(/h/k,,\"like\",\"x\")", "find(/h/k,,\"like\",\"x\")")
	f("not last(/h/k)=0 and (1 or 0)", "not last(/h/k)=0 and (1 or 0)")
	f("1 - -1", "1- -1")
	f("{$M:\"ctx\"}+{$N:regex:\"^a\"}+{$O:plain}", "{$M:\"ctx\"}+{$N:regex:\"^a\"}+{$O:plain}")
	f("last(/{HOST.HOST}/k[{#IF}])", "last(/{HOST.HOST}/k[{#IF}])")
	f("trendavg(/h/k,1h:now/h)", "trendavg(/h/k,1h:now/h)")
	f("avg(avg_foreach(/*/k?[group=\"G\" and tag=\"a:b\"],5m))", "avg(avg_foreach(/*/k?[group=\"G\" and tag=\"a:b\"],5m))")
	f("now()", "now()")
	f("bucket_percentile(//k[*,\"{#V}\"],5m,50)", "bucket_percentile(//k[*,\"{#V}\"],5m,50)")
	f("length(last(/h/k))>0", "length(last(/h/k))>0")
	f("{{#NAME}.regsub(\"(.*)\", \\1)}=1", "{{#NAME}.regsub(\"(.*)\", \\1)}=1")
}

// TestParsePrecedence checks Zabbix's operator table by the shape of the
// tree, printed with explicit grouping.
func TestParsePrecedence(t *testing.T) {
	var group func(n Node) string
	group = func(n Node) string {
		switch n := n.(type) {
		case *Binary:
			return "(" + group(n.L) + " " + n.Op + " " + group(n.R) + ")"
		case *Unary:
			return "(" + n.Op + " " + group(n.X) + ")"
		case *Paren:
			return group(n.X)
		}
		var b strings.Builder
		n.appendTo(&b)
		return b.String()
	}
	f := func(in, want string) {
		t.Helper()
		e, err := Parse(in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		if got := group(e.Root()); got != want {
			t.Fatalf("%q grouped as %s, want %s", in, got, want)
		}
	}
	f("1+2*3", "(1 + (2 * 3))")
	f("1-2-3", "((1 - 2) - 3)")
	f("8/4/2", "((8 / 4) / 2)")
	f("-2*3", "((- 2) * 3)")
	f("not 1=0", "((not 1) = 0)")
	f("1<2=1", "((1 < 2) = 1)")
	f("1=1 and 2<>3 or 0", "(((1 = 1) and (2 <> 3)) or 0)")
	f("0 or 1 and 0", "(0 or (1 and 0))")
	f("1+2>=3-1", "((1 + 2) >= (3 - 1))")
	f("(1+2)*3", "((1 + 2) * 3)")
}

func TestParseNumbers(t *testing.T) {
	f := func(in string, want float64) {
		t.Helper()
		e, err := Parse(in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		n, ok := e.Root().(*Number)
		if !ok || n.Val != want {
			t.Fatalf("Parse(%q) = %#v, want number %v", in, e.Root(), want)
		}
	}
	f("10", 10)
	f("1.5", 1.5)
	f(".5", 0.5)
	f("1e3", 1000)
	f("2.5E-1", 0.25)
	f("1K", 1024)
	f("2M", 2<<20)
	f("1G", 1<<30)
	f("1T", 1<<40)
	f("30s", 30)
	f("5m", 300)
	f("2h", 7200)
	f("1d", 86400)
	f("1w", 604800)
}

func TestParseErrors(t *testing.T) {
	f := func(in string, pos int, msg string) {
		t.Helper()
		_, err := Parse(in)
		pe, ok := err.(*ParseError)
		if !ok {
			t.Fatalf("Parse(%q) = %v, want a *ParseError", in, err)
		}
		if pe.Pos != pos || !strings.Contains(pe.Error(), msg) {
			t.Fatalf("Parse(%q) error %q at %d, want %q at %d", in, pe.Error(), pe.Pos, msg, pos)
		}
		if pos < len(in) && !strings.Contains(pe.Error(), "incorrect expression starting from") {
			t.Fatalf("Parse(%q) error %q lacks Zabbix's wording", in, pe.Error())
		}
	}
	f("", 0, "unexpected end of expression")
	f("1+", 2, "unexpected end of expression")
	f("1 2", 2, `unexpected "2"`)
	f("(1", 2, `expected ")"`)
	f("1)", 1, `unexpected ")"`)
	f("5mm", 0, "invalid number suffix")
	f("1 * / 2", 4, `unexpected operator "/"`)
	f(`"abc`, 0, "unterminated string")
	f("{$}", 0, "empty user macro name")
	f("{$A", 0, "unterminated user macro")
	f("foo(1)", 0, "unknown function foo()")
	f("last(1)", 0, "needs an item query")
	f("abs(/h/k)", 0, "does not take an item query")
	f("avg(/h/k)", 0, "needs a period")
	f("last(/h/k,#1,2)", 0, "wrong number of parameters for last(): 0 to 1")
	f("last(/h/k,5m)", 0, "only a number of values")
	f("nodata(/h/k,#3)", 0, "does not accept a number of values")
	f("avg(/h/k,#0)", 9, "invalid number of values")
	f("avg(/h/k,5m:then)", 9, "time shift must start with \"now\"")
	f("avg(/h/k,5x)", 9, "invalid time period")
	f("last(/h/k[a,b)", 8, "unterminated key parameters")
	f("last(/h)", 7, "invalid host name")
	f("last(/h/)", 8, "empty item key")
	f("last(/*/k)", 0, "wildcards and filters are for aggregate functions")
	f("last(/h/k", 9, `expected ")"`)
	f("last (/h/k)", 0, "neither a function call nor an operator")
	f("1 andx 2", 2, "neither a function call nor an operator")
	f("1 andX 2", 2, "unknown word")
	f("1 & 2", 2, "unexpected character")
	f(strings.Repeat("(", 300)+"1"+strings.Repeat(")", 300), 200, "nested deeper")
}

func TestItemRefs(t *testing.T) {
	e, err := Parse(`last(/A/k1)>avg(/A/k1,5m) or count(//k2[x,"y"],#3)=0 or last(/{HOST.HOST}/k3)=1 or last(/A/k1,#2)=1`)
	if err != nil {
		t.Fatal(err)
	}
	want := []ItemRef{{"A", "k1"}, {"", `k2[x,"y"]`}, {"{HOST.HOST}", "k3"}}
	if diff := cmp.Diff(want, e.ItemRefs()); diff != "" {
		t.Fatalf("ItemRefs (-want +got):\n%s", diff)
	}
}

func TestTimeBased(t *testing.T) {
	f := func(in string, want bool) {
		t.Helper()
		e, err := Parse(in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		if e.TimeBased() != want {
			t.Fatalf("Parse(%q).TimeBased() = %v, want %v", in, !want, want)
		}
	}
	f("last(/h/k)>90", false)
	f("avg(/h/k,5m)>1", false)
	f("nodata(/h/k,5m)=1", true)
	f("last(/h/k)>0 and time()>080000", true)
	f("abs(dayofweek()-now())", true)
	f(`count(/h/k,#3,"eq","now")>0`, false)
	f("trendavg(/h/k,1h:now/h)>trendavg(/h/k,1h:now/h-1d)", true)
}

func TestMatchKey(t *testing.T) {
	f := func(pattern, key string, want bool) {
		t.Helper()
		if got := MatchKey(pattern, key); got != want {
			t.Fatalf("MatchKey(%q, %q) = %v, want %v", pattern, key, got, want)
		}
	}
	f("k", "k", true)
	f("k", "k2", false)
	f("*", "anything[a,b]", true)
	f("k[*]", "k[1]", true)
	f("k[*]", "k[]", true)
	f("k[*]", "k", false)
	f("k[*]", "k[1,2]", false)
	f("k[*,free]", `k["/var",free]`, true)
	f(`k["/",*]`, "k[/,total]", true)
	f("k[*,free]", "k[/,total]", false)
	f(`k["a,b",*]`, `k["a,b",x]`, true)
	f(`k[a, *]`, `k[ a ,y]`, true)
	f(`k["a\"b"]`, `k["a\"b"]`, true)
	f("k[[a,b],*]", "k[[a,b],c]", true)
	f("k[", "k[", false)
	f(`k["x]`, `k["x]`, false)
}

func TestAggregates(t *testing.T) {
	f := func(in string, want bool) {
		t.Helper()
		e, err := Parse(in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		if e.Aggregates() != want {
			t.Fatalf("Parse(%q).Aggregates() = %v, want %v", in, !want, want)
		}
	}
	f("avg(/h/k,5m)>1 and sum(1,2)>2", false)
	f("sum(last_foreach(/*/k))>1", true)
	f("1+item_count(//k[*])", true)
	f("bucket_percentile(//k[*],5m,50)", true)
}

// TestZabbixReason: the reason Zabbix 6.0's API gives for an expression
// it refuses (`Invalid parameter "/1/expression": REASON.`), recorded
// from Zabbix 6.0.14's trigger.create (with a host and key of its own):
// syntax errors from where its parser stopped (a function call from its
// start), then its validator's.
func TestZabbixReason(t *testing.T) {
	for in, want := range map[string]string{
		"last((/h/k)>1":                     `incorrect expression starting from "last((/h/k)>1"`,
		"last(/h/k)>":                       `incorrect expression starting from ""`,
		"last(/h/k)>>1":                     `incorrect expression starting from ">1"`,
		"last(/h/k":                         `incorrect expression starting from "last(/h/k"`,
		"last(/h/k))":                       `incorrect expression starting from ")"`,
		"last(/h/k,#x)>1":                   `incorrect expression starting from "last(/h/k,#x)>1"`,
		"foo":                               `incorrect expression starting from "foo"`,
		"(last(/h/k)>1":                     `incorrect expression starting from ""`,
		`last(/h/k)="a`:                     `incorrect expression starting from ""a"`,
		"last(/h)>1":                        `incorrect expression starting from "last(/h)>1"`,
		"last(h/k)>1":                       `incorrect expression starting from "last(h/k)>1"`,
		"last(/h/k)>1x":                     `incorrect expression starting from "x"`,
		"last(/h/k)>1.5e":                   `incorrect expression starting from "e"`,
		"last(/*/k)>1":                      `incorrect expression starting from "last(/*/k)>1"`,
		"last(/h/k,abc)>1":                  `incorrect expression starting from "last(/h/k,abc)>1"`,
		"abs(last(/h/k,#x))>1":              `incorrect expression starting from "abs(last(/h/k,#x))>1"`,
		"last(/h/k)>1 and abs(":             `incorrect expression starting from "abs("`,
		"nosuch(1)>":                        `incorrect expression starting from ""`,
		"nosuchfunc(/h/k)>1":                `unknown function "nosuchfunc"`,
		"abs(nosuch(1))>1":                  `unknown function "nosuch"`,
		"last(/h/k)>1 or nosuch(1) or f(2)": `unknown function "nosuch"`,
		"last(/h/k,1,2,3)>1":                `invalid number of parameters in function "last"`,
		"abs()>1":                           `invalid number of parameters in function "abs"`,
		"avg(/h/k)>1":                       `mandatory parameter is missing in function "avg"`,
		"avg(/h/k,)>1":                      `invalid second parameter in function "avg"`,
		"nodata(/h/k,#5)=1":                 `invalid second parameter in function "nodata"`,
		"last(/h/k,#0)>1":                   `invalid second parameter in function "last"`,
		"abs(/h/k)>1":                       `incorrect usage of function "abs"`,
		"last(1)>1":                         `incorrect usage of function "last"`,
	} {
		_, err := Parse(in)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		if got := pe.Zabbix(); got != want {
			t.Errorf("Parse(%q).Zabbix() = %q, want %q", in, got, want)
		}
	}
}

// TestFunctions: the history function calls of an expression in
// Zabbix 6.0's stored form (recorded from 6.0.14: last(/h/k) is
// function "last", parameter "$").
func TestFunctions(t *testing.T) {
	e, err := Parse(`last(/h/cf.alpha)>100 or avg(/h/k[a,"b c"],5m)>count(//k2,#3,"like","x") and date()>0`)
	if err != nil {
		t.Fatal(err)
	}
	want := []FuncUse{
		{Name: "last", Item: ItemRef{Host: "h", Key: "cf.alpha"}, Params: "$"},
		{Name: "avg", Item: ItemRef{Host: "h", Key: `k[a,"b c"]`}, Params: "$,5m"},
		{Name: "count", Item: ItemRef{Key: "k2"}, Params: `$,#3,"like","x"`},
	}
	if got := e.Functions(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Functions() = %+v, want %+v", got, want)
	}
}
