package expr

import (
	"context"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// FuzzParse checks that Parse never panics, that whatever it accepts
// prints (String) to a spelling that parses back to the same spelling,
// and that evaluating it (against a small item of each value type)
// never panics either.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"last(/h/k)>90",
		`avg(/Linux host/system.cpu.load[all,avg1],5m)>{$LOAD:"ctx"} or not 1`,
		`count(//k[a,"b\"c",[d,e]],#3:now-1h,"regexp","^\\d")=0`,
		"trendavg(/h/k,1M:now/M-1y)*1K-.5e-3/2w",
		`find(/h/k,,"like","x") and {$M:regex:"^a"}<>{#LLD}`,
		`avg(avg_foreach(/*/k?[group="G" and tag="t"],5m))+count(last_foreach(//k[*]),"gt",1)`,
		`{{#A}.regsub("(.*)", \1)}=concat("a","b")`,
		"((1))", "-(-1)", "1 andX 2", `"`, "{$", "last(/h/k",
		"forecast(//k,#2,1h,\"polynomial3\",\"avg\")+timeleft(/h/k,1h,9,\"power\")",
		"rate(/h/k,{$M})*mad(/h/k,{$N})/kurtosis(//k,1h)+percentile(/h/k,#3,50)",
		`insert(last(/h/s),1,1e300,"z")+logsource(/h/l,,"^s")+count(/h/s,1h,"regexp","{$S}")`,
		`trendavg(/h/k,1y:now/y-1M)+nodata(/h/k,30s,"strict")+fuzzytime(/h/k,1m)`,
		`histogram_quantile(0.5,bucket_rate_foreach(//k[*],5m,1))+histogram_quantile(0.9,1,2,"+Inf",3)`,
		`sum(last_foreach(/*/k[*]?[group="G" or not (tag="a:b")]))/item_count(/*/k)`,
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
		e.Eval(context.Background(), Options{Now: time.Unix(1000, 0), Source: fuzzSource, Macros: fuzzMacros})
	})
}

var fuzzMacros = MacroLevels{{{Name: "M", Value: "5m"}, {Name: "N", Value: "#2"}, {Name: "S", Value: "abc"}}}

// listingSource is a ringSource that also lists its items for the
// aggregate functions (filters: group "G" holds every item).
type listingSource struct{ *ringSource }

func (l listingSource) Items(_ context.Context, q ItemQuery) ([]ItemRef, error) {
	var f *ItemFilter
	if q.Filter != "" {
		var err error
		if f, err = ParseItemFilter(q.Filter); err != nil {
			return nil, err
		}
	}
	var out []ItemRef
	for ref := range l.items {
		if (q.Host == "*" || q.Host == ref.Host) && MatchKey(q.Key, ref.Key) && (f == nil || f.Match([]string{"G"}, nil)) {
			out = append(out, ref)
		}
	}
	return out, nil
}

// fuzzSource answers h/k and //k with numbers, "s" with strings and "l"
// with log lines; k[...] keys hold histogram buckets.
var fuzzSource = listingSource{&ringSource{items: map[ItemRef][]history.Sample{
	{Host: "h", Key: "k"}:      {{Clock: 1000, Type: history.Float, F: 3}, {Clock: 990, Type: history.Float, F: -1}, {Clock: 700, Type: history.Float, F: 2}},
	{Host: "", Key: "k"}:       {{Clock: 1000, Type: history.Uint, U: 7}, {Clock: 999, Type: history.Uint, U: 7}},
	{Host: "h", Key: "s"}:      {{Clock: 1000, Type: history.Str, S: "x"}, {Clock: 900, Type: history.Str, S: "yy"}},
	{Host: "h", Key: "l"}:      {{Clock: 1000, Type: history.Log, S: "m", Log: &history.LogMeta{Source: "src", Severity: 2, EventID: 5}}},
	{Host: "", Key: "k[1]"}:    {{Clock: 1000, Type: history.Float, F: 5}, {Clock: 900, Type: history.Float, F: 1}},
	{Host: "", Key: "k[+Inf]"}: {{Clock: 1000, Type: history.Float, F: 9}, {Clock: 900, Type: history.Float, F: 2}},
}}}
