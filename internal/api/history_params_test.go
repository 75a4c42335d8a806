package api

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// TestHistoryParamsRefused: history.get refuses unknown parameters and
// mistyped values with the Zabbix API's code (-32602), message and data,
// reporting the problem Zabbix reports first (recorded from Zabbix
// 6.0.14, as is every answer below).
func TestHistoryParamsRefused(t *testing.T) {
	f := newFixture(t, 1000)
	check := func(method, params, wantData string) {
		t.Helper()
		got := f.post(t, `{"jsonrpc":"2.0","method":"`+method+`","params":`+params+`,"id":1,"auth":"ro"}`)
		want := `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params.","data":` + jsonString(wantData) + `},"id":1}`
		if got != want {
			t.Errorf("%s %s\n got %s\nwant %s", method, params, got, want)
		}
	}
	h := func(params, want string) { t.Helper(); check("history.get", params, want) }
	// Unknown parameters: the first sent, before any value is looked at.
	h(`{"xyz":1}`, `Invalid parameter "/": unexpected parameter "xyz".`)
	h(`{"history":0,"zz":1,"aa":2}`, `Invalid parameter "/": unexpected parameter "zz".`)
	h(`{"history":"x","bogus":1}`, `Invalid parameter "/": unexpected parameter "bogus".`)
	h(`{"preservekeys":true}`, `Invalid parameter "/": unexpected parameter "preservekeys".`)
	h(`[1]`, `Invalid parameter "/": unexpected parameter "0".`)
	// history: an integer 0..4, never null.
	h(`{"history":null}`, `Invalid parameter "/history": an integer is expected.`)
	h(`{"history":true}`, `Invalid parameter "/history": an integer is expected.`)
	h(`{"history":1.0}`, `Invalid parameter "/history": an integer is expected.`)
	h(`{"history":"0.5"}`, `Invalid parameter "/history": an integer is expected.`)
	h(`{"history":[0]}`, `Invalid parameter "/history": an integer is expected.`)
	h(`{"history":5}`, `Invalid parameter "/history": value must be one of 0, 1, 2, 3, 4.`)
	h(`{"history":"-1"}`, `Invalid parameter "/history": value must be one of 0, 1, 2, 3, 4.`)
	h(`{"history":4294967296}`, `Invalid parameter "/history": a number is too large.`)
	// Times: 32-bit integers.
	h(`{"time_from":1.5}`, `Invalid parameter "/time_from": an integer is expected.`)
	h(`{"time_from":"yesterday"}`, `Invalid parameter "/time_from": an integer is expected.`)
	h(`{"time_till":true}`, `Invalid parameter "/time_till": an integer is expected.`)
	h(`{"time_from":2147483648}`, `Invalid parameter "/time_from": a number is too large.`)
	// Ids.
	h(`{"itemids":[1,"x"]}`, `Invalid parameter "/itemids/2": a number is expected.`)
	h(`{"itemids":[1.5]}`, `Invalid parameter "/itemids/1": a number is expected.`)
	h(`{"itemids":["99999999999999999999"]}`, `Invalid parameter "/itemids/1": a number is too large.`)
	h(`{"hostids":"h1"}`, `Invalid parameter "/hostids": an array is expected.`)
	h(`{"hostids":true}`, `Invalid parameter "/hostids": an array is expected.`)
	// Sorting and limit.
	h(`{"sortfield":"ns"}`, `Invalid parameter "/sortfield/1": value must be one of "itemid", "clock".`)
	h(`{"sortfield":["clock",5]}`, `Invalid parameter "/sortfield/2": a character string is expected.`)
	h(`{"sortorder":"asc"}`, `Invalid parameter "/sortorder": value must be one of "ASC", "DESC".`)
	h(`{"sortorder":["ASC","up"]}`, `Invalid parameter "/sortorder/2": value must be one of "ASC", "DESC".`)
	h(`{"sortorder":1}`, `Invalid parameter "/sortorder": an array or a character string is expected.`)
	h(`{"sortfield":["clock","clock"]}`, `Invalid parameter "/sortfield/2": value (clock) already exists.`)
	h(`{"output":["clock","clock"]}`, `Invalid parameter "/output/2": value (clock) already exists.`)
	h(`{"limit":0}`, `Invalid parameter "/limit": value must be one of 1-2147483647.`)
	h(`{"limit":"many"}`, `Invalid parameter "/limit": an integer is expected.`)
	h(`{"limit":[1]}`, `Invalid parameter "/limit": an integer is expected.`)
	// Output names depend on the history type.
	h(`{"output":"count"}`, `Invalid parameter "/output": value must be "extend".`)
	h(`{"output":null}`, `Invalid parameter "/output": an array or a character string is expected.`)
	h(`{"history":0,"output":["clock","timestamp"]}`, `Invalid parameter "/output/2": value must be one of "itemid", "clock", "value", "ns".`)
	h(`{"history":2,"output":["min"]}`, `Invalid parameter "/output/1": value must be one of "itemid", "clock", "timestamp", "source", "severity", "value", "logeventid", "ns".`)
	// Booleans are strict; flags are not (a Zabbix "flag" is any non-null).
	h(`{"searchByAny":1}`, `Invalid parameter "/searchByAny": a boolean is expected.`)
	h(`{"searchWildcardsEnabled":"true"}`, `Invalid parameter "/searchWildcardsEnabled": a boolean is expected.`)
	h(`{"editable":null}`, `Invalid parameter "/editable": a boolean is expected.`)
	// filter and search: the fields of the history type.
	h(`{"filter":{"host":"x"}}`, `Invalid parameter "/filter": unexpected parameter "host".`)
	h(`{"history":1,"filter":{"value":"x"}}`, `Invalid parameter "/filter": unexpected parameter "value".`)
	h(`{"history":0,"search":{"value":"1"}}`, `Invalid parameter "/search": should be empty.`)
	h(`{"history":4,"search":{"source":"x"}}`, `Invalid parameter "/search": unexpected parameter "source".`)
	h(`{"filter":"clock"}`, `Invalid parameter "/filter": an array is expected.`)
	h(`{"filter":{"clock":[1000,{"a":1}]}}`, `Invalid parameter "/filter/clock/2": a character string, integer or floating point value is expected.`)
	h(`{"filter":{"clock":true}}`, `Invalid parameter "/filter/clock": an array is expected.`)
	h(`{"history":0,"filter":{"value":1},"downsample":10}`, `Invalid parameter "/downsample": cannot be used with "filter" or "search".`)

	// Peregrine's extension: downsample cannot be combined with filter
	// (Zabbix 6.0 has no downsample).
	h(`{"history":0,"filter":{"value":1},"downsample":10}`, `Invalid parameter "/downsample": cannot be used with "filter" or "search".`)
}

// TestHistoryParamsLenient: what Zabbix 6.0 accepts and Peregrine must
// too (recorded from Zabbix 6.0.14): history.get takes a negative
// time, an object for a list and "nopermissions" (which the API drops
// from every call); trend.get is one of the legacy gets, which ignore
// what they do not know and read values as PHP does.
func TestHistoryParamsLenient(t *testing.T) {
	f := newFixture(t, 1000)
	call := func(method, params string) string {
		t.Helper()
		got := f.post(t, `{"jsonrpc":"2.0","method":"`+method+`","params":`+params+`,"id":1,"auth":"ro"}`)
		var r struct {
			Result json.RawMessage
			Error  *Error
		}
		if err := json.Unmarshal([]byte(got), &r); err != nil || r.Error != nil {
			t.Fatalf("%s %s: %s", method, params, got)
		}
		return string(r.Result)
	}
	f1 := f.id("f1")
	for _, params := range []string{`{"nopermissions":true}`, `{"time_from":-1}`, `{"sortfield":{}}`, `{"itemids":{"a":1}}`,
		`{"sortorder":{"a":"ASC"}}`, `{"sortorder":["ASC","ASC"]}`, `{"output":{"a":"clock"}}`, `{"sortfield":{"a":"clock"}}`} {
		call("history.get", params)
	}
	// A negative time_till selects nothing, an empty list of items too.
	for _, params := range []string{`{"time_till":"-5","history":0}`, `{"itemids":[],"history":0}`, `{"hostids":[],"history":0}`} {
		if got := call("history.get", params); got != "[]" {
			t.Errorf("history.get %s: %s, want []", params, got)
		}
	}
	one := fmt.Sprintf(`"itemids":"%d"`, f1)
	all := call("trend.get", `{`+one+`}`)
	for _, c := range []struct{ params, want string }{
		{`{` + one + `,"bogus":1}`, all},
		{`{` + one + `,"history":0}`, all},
		{`{` + one + `,"sortfield":"clock","sortorder":"DESC"}`, all},
		{`{` + one + `,"time_from":-1}`, all},
		{`{` + one + `,"limit":0}`, all},
		{`{` + one + `,"limit":"abc"}`, all},
		{`{` + one + `,"preservekeys":true,"filter":{"num":1}}`, all},
		{fmt.Sprintf(`{"itemids":["%d","a"]}`, f1), `[]`},
		{`{` + one + `,"time_from":"abc"}`, `[]`},
		{`{` + one + `,"time_till":-1}`, `[]`},
		{`{"itemids":[]}`, `[]`},
		{`{` + one + `,"countOutput":1}`, `"2"`},
		{`{` + one + `,"countOutput":"0","output":["num"]}`, `[{"num":"60"},{"num":"30"}]`},
		{`{` + one + `,"countOutput":true,"limit":1}`, `"2"`},
		{`{` + one + `,"output":["value","clock"]}`, `[{"clock":"3600"},{"clock":"7200"}]`},
		{`{` + one + `,"output":[]}`, `[[],[]]`},
		{`{` + one + `,"output":null}`, `[[],[]]`},
		{`{` + one + `,"output":"xyz"}`, `[[],[]]`},
		{`{` + one + `,"limit":"1","output":["clock"]}`, `[{"clock":"3600"}]`},
	} {
		if got := call("trend.get", c.params); got != c.want {
			t.Errorf("trend.get %s:\n got %s\nwant %s", c.params, got, c.want)
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestHistoryParamsAccepted: everything Zabbix 6.0's history.get accepts
// is served, in the forms Grafana's datasource, pyzabbix and scripts
// send (numbers as strings, one id for a list, nulls for "not given").
func TestHistoryParamsAccepted(t *testing.T) {
	f := newFixture(t, 1000)
	f1, h1 := f.id("f1"), f.cat.Snapshot().Host("h1").ID
	cases := []struct {
		params string
		rows   int
	}{
		// history 3 of every item the user may read: without itemids or
		// hostids Zabbix 6.0 reads them all (recorded from 6.0.14).
		{`[]`, 10},
		{fmt.Sprintf(`{"output":"extend","history":0,"itemids":["%d"],"sortfield":"clock","sortorder":"ASC","time_from":1000,"time_till":1019}`, f1), 10},
		{fmt.Sprintf(`{"history":"0","itemids":%d,"time_from":"1004","time_till":"1010","limit":"2"}`, f1), 2},
		{fmt.Sprintf(`{"history":0,"hostids":[%d],"itemids":null,"limit":null,"time_from":null,"time_till":null,"filter":null,"search":null}`, h1), 20},
		{fmt.Sprintf(`{"history":0,"itemids":"%d","searchByAny":false,"startSearch":true,"excludeSearch":null,"searchWildcardsEnabled":false,"countOutput":false,"editable":false,"filter":[],"search":[]}`, f1), 10},
		{fmt.Sprintf(`{"history":0,"itemids":"%d","sortfield":["itemid","clock"],"sortorder":["DESC","ASC"],"output":["clock","value"]}`, f1), 10},
		{fmt.Sprintf(`{"history":0,"itemids":"%d","search":{}}`, f1), 10},
		{fmt.Sprintf(`{"history":0,"itemids":"%d","filter":{"clock":null}}`, f1), 10},
	}
	for _, c := range cases {
		if got := f.history(t, c.params); len(got) != c.rows {
			t.Errorf("%s: %d rows, want %d", c.params, len(got), c.rows)
		}
	}
	// "editable": the read-only user may change no item, so sees none;
	// the super admin may change all.
	for _, c := range []struct {
		auth string
		rows int
	}{{"ro", 0}, {"tok", 10}} {
		got := f.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","method":"history.get","params":{"history":0,"itemids":"%d","editable":true},"id":1,"auth":"%s"}`, f1, c.auth))
		if n := strings.Count(got, `"itemid"`); n != c.rows {
			t.Errorf("editable as %s: %d rows, want %d: %.200s", c.auth, n, c.rows, got)
		}
	}
	// countOutput is a Zabbix "flag": any non-null value means true.
	got := f.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","method":"history.get","params":{"history":0,"itemids":"%d","countOutput":1},"id":1,"auth":"ro"}`, f1))
	if got != `{"jsonrpc":"2.0","result":"10","id":1}` {
		t.Errorf("countOutput 1: %s", got)
	}
	got = f.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","method":"trend.get","params":{"itemids":"%d","time_from":"0","time_till":null,"output":["itemid","clock","value_avg"],"countOutput":false,"limit":"5"},"id":1,"auth":"ro"}`, f1))
	if !strings.HasPrefix(got, `{"jsonrpc":"2.0","result":[{"itemid":`) {
		t.Errorf("trend.get with every parameter: %s", got)
	}
	// No itemids: every item's trends, as Zabbix 6.0 answers.
	if got := f.post(t, `{"jsonrpc":"2.0","method":"trend.get","params":[],"id":1,"auth":"ro"}`); !strings.HasPrefix(got, `{"jsonrpc":"2.0","result":[{"itemid":`) {
		t.Errorf("trend.get with no parameters: %s", got)
	}
}

// TestHistoryFilterSearch: filter and search select rows as Zabbix's SQL
// does, with limit and countOutput counting the selected rows only.
func TestHistoryFilterSearch(t *testing.T) {
	f := newFixture(t, 1000)
	f1, f2, u1, s1 := f.id("f1"), f.id("f2"), f.id("u1"), f.id("s1")
	// s1 also gets a few distinct strings after its 10 `say "hi"`.
	for i, s := range []string{"alpha", "Beta blocker", "gamma ray", "Alphabet"} {
		f.store.Write(context.Background(), []history.Sample{{ItemID: s1, Clock: 2000 + int64(i), Type: history.Str, S: s}})
	}
	clocks := func(params string) string {
		t.Helper()
		var out []string
		for _, r := range f.history(t, params) {
			out = append(out, r.Clock)
		}
		return strings.Join(out, ",")
	}
	cases := []struct{ params, want string }{
		// f1 holds i+0.5 at clock 1000+2i; f2 holds -i at 1001+2i.
		{fmt.Sprintf(`{"history":0,"itemids":%d,"filter":{"value":3.5}}`, f1), "1006"},
		{fmt.Sprintf(`{"history":0,"itemids":%d,"filter":{"value":["3.50","9.5",7]}}`, f1), "1006,1018"},
		{fmt.Sprintf(`{"history":0,"itemids":[%d,%d],"filter":{"clock":[1000,"1001",1003],"itemid":"%d"}}`, f1, f2, f2), "1001,1003"},
		{fmt.Sprintf(`{"history":0,"itemids":%d,"filter":{"clock":1000,"value":9.5}}`, f1), ""},
		{fmt.Sprintf(`{"history":0,"itemids":%d,"filter":{"clock":1000,"value":9.5},"searchByAny":true}`, f1), "1000,1018"},
		{fmt.Sprintf(`{"history":0,"itemids":%d,"filter":{"clock":"soon"}}`, f1), ""},
		// The limit counts selected rows (the store's own limit would
		// stop at the first two rows, none of them selected).
		{fmt.Sprintf(`{"history":0,"itemids":%d,"filter":{"value":[4.5,5.5,6.5]},"limit":2}`, f1), "1008,1010"},
		{fmt.Sprintf(`{"history":0,"itemids":%d,"filter":{"value":[4.5,5.5,6.5]},"sortorder":"DESC","limit":2}`, f1), "1012,1010"},
		{fmt.Sprintf(`{"history":3,"itemids":%d,"filter":{"value":"18446744073709551615","ns":7,"clock":1004}}`, u1), "1004"},
		{fmt.Sprintf(`{"history":3,"itemids":%d,"filter":{"ns":0}}`, u1), ""},
		// search: case-insensitive substring; startSearch; wildcards over
		// the whole value; excludeSearch.
		{fmt.Sprintf(`{"history":1,"itemids":%d,"search":{"value":"ALPHA"}}`, s1), "2000,2003"},
		{fmt.Sprintf(`{"history":1,"itemids":%d,"search":{"value":["ray","block"]}}`, s1), "2001,2002"},
		{fmt.Sprintf(`{"history":1,"itemids":%d,"search":{"value":"ph"},"startSearch":true}`, s1), ""},
		{fmt.Sprintf(`{"history":1,"itemids":%d,"search":{"value":"al"},"startSearch":true}`, s1), "2000,2003"},
		{fmt.Sprintf(`{"history":1,"itemids":%d,"search":{"value":"a*a"},"searchWildcardsEnabled":true}`, s1), "2000"},
		{fmt.Sprintf(`{"history":1,"itemids":%d,"search":{"value":"*r*"},"searchWildcardsEnabled":true,"startSearch":true}`, s1), "2001,2002"},
		{fmt.Sprintf(`{"history":1,"itemids":%d,"search":{"value":["say","a"]},"excludeSearch":true}`, s1), ""},
		{fmt.Sprintf(`{"history":1,"itemids":%d,"search":{"value":["say","alpha"]},"excludeSearch":true}`, s1), "2001,2002"},
		{fmt.Sprintf(`{"history":1,"itemids":%d,"search":{"value":"a"},"filter":{"clock":[2001,2002,2003,1000]}}`, s1), "1000,2001,2002,2003"},
	}
	for _, c := range cases {
		if got := clocks(c.params); got != c.want {
			t.Errorf("%s\n got clocks %q\nwant %q", c.params, got, c.want)
		}
	}
	got := f.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","method":"history.get","params":{"history":1,"itemids":%d,"search":{"value":"a"},"countOutput":true},"id":1,"auth":"ro"}`, s1))
	if got != `{"jsonrpc":"2.0","result":"14","id":1}` {
		t.Errorf("countOutput with search: %s", got)
	}
}

// TestRowMatcherLog covers the log-only fields, which the API fixture's
// items do not have.
func TestRowMatcherLog(t *testing.T) {
	row := func(src string, sev int32, ev int64) *history.Sample {
		return &history.Sample{Type: history.Log, S: "disk full", Log: &history.LogMeta{Source: src, Severity: sev, EventID: ev, Timestamp: 77}}
	}
	cases := []struct {
		p    rowFilter
		row  *history.Sample
		want bool
	}{
		{rowFilter{Search: map[string][]string{"source": {"APP"}}}, row("MyApp", 1, 2), true},
		{rowFilter{Search: map[string][]string{"source": {"db"}}}, row("MyApp", 1, 2), false},
		{rowFilter{Search: map[string][]string{"source": {"x"}, "value": {"FULL"}}, SearchByAny: true}, row("MyApp", 1, 2), true},
		{rowFilter{Search: map[string][]string{"source": {"x"}, "value": {"FULL"}}}, row("MyApp", 1, 2), false},
		{rowFilter{Filter: map[string][]string{"severity": {"3", "4"}}}, row("a", 4, 2), true},
		{rowFilter{Filter: map[string][]string{"logeventid": {"2"}, "timestamp": {"77"}, "source": {"a"}}}, row("a", 4, 2), true},
		{rowFilter{Filter: map[string][]string{"source": {"A"}}}, row("a", 4, 2), false},
		{rowFilter{Filter: map[string][]string{"severity": {"0"}}}, &history.Sample{Type: history.Log}, true},
	}
	for _, c := range cases {
		if got := newRowMatcher(&c.p).match(c.row); got != c.want {
			t.Errorf("%+v on %+v: %v, want %v", c.p, *c.row.Log, got, c.want)
		}
	}
	if newRowMatcher(&rowFilter{}) != nil {
		t.Error("no filter or search must compile to nil (nothing to pay per row)")
	}
}

func TestGlobMatchHistorySearch(t *testing.T) {
	for _, c := range []struct {
		pattern, s string
		want       bool
	}{
		{"abc", "abc", true}, {"abc", "abcd", false}, {"a*", "abc", true}, {"*c", "abc", true},
		{"a*c", "abc", true}, {"a*c", "ac", true}, {"a*a", "a", false}, {"*", "", true},
		{"a*b*c", "axxbyyc", true}, {"a*b*c", "axxcyyb", false}, {"**", "x", true}, {"a*", "b", false},
	} {
		if got := globMatch(c.pattern, c.s); got != c.want {
			t.Errorf("globMatch(%q, %q) = %v", c.pattern, c.s, got)
		}
	}
}

// FuzzHistoryParams feeds arbitrary JSON to history.get's and trend.get's
// parameter checks: they must not panic, must answer a -32602 error or
// values inside the ranges they promise, and the same input must give
// the same answer twice (no dependence on map order).
func FuzzHistoryParams(f *testing.F) {
	for _, seed := range []string{
		`{}`, `[]`, `[1]`, `{"history":0,"itemids":["1",2],"time_from":"0","time_till":2147483647,"limit":"5"}`,
		`{"history":null}`, `{"time_from":-1}`, `{"xyz":1,"abc":2}`, `{"filter":{"clock":[1,"2"],"value":1.5},"searchByAny":true}`,
		`{"history":1,"search":{"value":["a*b"]},"searchWildcardsEnabled":true,"excludeSearch":1}`,
		`{"output":["itemid","clock"],"sortfield":["clock","itemid"],"sortorder":["DESC"],"countOutput":0}`,
		`{"history":2,"filter":{"source":"x","severity":[1]},"output":"extend","editable":false}`,
		`{"itemids":"99999999999999999999","downsample":10,"output":["min","count"]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return // the envelope decoder refuses it before the method runs
		}
		check := func(err error) {
			if e, ok := err.(*Error); err != nil && (!ok || e.Code != codeParams || !strings.HasPrefix(e.Data, `Invalid parameter "/`)) {
				t.Fatalf("%s: error %v is not a Zabbix parameter error", raw, err)
			}
		}
		var p, p2 historyGetParams
		err, err2 := decodeValidated(raw, &p), decodeValidated(raw, &p2)
		if fmt.Sprint(err) != fmt.Sprint(err2) || (err == nil && fmt.Sprint(p) != fmt.Sprint(p2)) {
			t.Fatalf("%s: two answers: %v / %v", raw, err, err2)
		}
		check(err)
		if err == nil {
			if p.History.Value < 0 || p.History.Value > 4 || (p.Limit.Given() && p.Limit.Value < 1) ||
				(p.TimeFrom.Given() && (p.TimeFrom.Value < -1<<31 || p.TimeFrom.Value > 1<<31-1)) || (p.TimeTill.Given() && (p.TimeTill.Value < -1<<31 || p.TimeTill.Value > 1<<31-1)) {
				t.Fatalf("%s: accepted out of range: %+v", raw, p)
			}
			if m := newRowMatcher(p.rowFilter()); m != nil {
				m.match(&history.Sample{Type: history.Log, S: "x"})
				m.match(&history.Sample{Type: history.Uint, U: 1})
			}
		}
		var tp trendGetParams
		err = decodeValidated(raw, &tp)
		check(err)
		if err == nil && tp.Limit.Given() && tp.Limit.Value < 1 {
			t.Fatalf("%s: trend limit %d accepted", raw, tp.Limit.Value)
		}
	})
}

// TestHistoryCountOutputFlag: history.get's countOutput is a flag, as in
// Zabbix 6.0, whatever the value: every value but false and null counts,
// "x" included (issue 25 asked whether "x" should be refused: 6.0 counts
// it), and the count ignores limit. Recorded from 6.0.14 with
// zcall.sh history.get '{"countOutput":V,"itemids":["28249"],"history":3,"limit":2}'
// (an item with 194 values): "194" for V in "x", "", true, 1, "1",
// "true", 0, "0", [], {}, "false", 2, 1.5, "yes"; the rows for false and
// null. Before the fix a count with a limit was the limit.
func TestHistoryCountOutputFlag(t *testing.T) {
	f := newFixture(t, 1000)
	f1 := f.id("f1") // 10 values
	for _, c := range []struct {
		value string
		count bool
	}{
		{`"x"`, true}, {`""`, true}, {`true`, true}, {`1`, true}, {`"1"`, true}, {`"true"`, true},
		{`0`, true}, {`"0"`, true}, {`[]`, true}, {`{}`, true}, {`"false"`, true}, {`2`, true},
		{`1.5`, true}, {`"yes"`, true}, {`false`, false}, {`null`, false},
	} {
		got := f.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","method":"history.get","params":{"history":0,"itemids":"%d","countOutput":%s,"limit":2},"id":1,"auth":"ro"}`, f1, c.value))
		want := `{"jsonrpc":"2.0","result":"10","id":1}`
		if !c.count {
			want = `{"jsonrpc":"2.0","result":[{"itemid":"`
		}
		if !strings.HasPrefix(got, want) || !c.count && strings.Count(got, `"itemid"`) != 2 {
			t.Errorf("countOutput %s with limit 2: %.200s, want %s", c.value, got, want)
		}
	}
}
