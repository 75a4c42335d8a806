package preprocess

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
)

func mustStep(t *testing.T, typ, params, handler, hparams string) Step {
	t.Helper()
	s, err := ParseStep(typ, params, handler, hparams)
	if err != nil {
		t.Fatalf("ParseStep(%s, %q, %s, %q): %v", typ, params, handler, hparams, err)
	}
	return s
}

var t0 = time.Unix(1700000000, 0)

// runOne runs a one-step chain on text for an item of type vt.
func runOne(t *testing.T, s Step, vt history.ValueType, text string) (Output, error) {
	t.Helper()
	return Run([]Step{s}, Input{Text: text, Time: t0, Type: vt}, nil)
}

func TestParseStepErrors(t *testing.T) {
	f := func(typ, params, handler, hparams, wantErr string) {
		t.Helper()
		_, err := ParseStep(typ, params, handler, hparams)
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("ParseStep(%s, %q, %s, %q) = %v, want an error containing %q", typ, params, handler, hparams, err, wantErr)
		}
	}
	types := "value must be one of 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27"
	f("0", "", "0", "", `invalid parameter "type": `+types)
	f("28", "", "0", "", types)
	f("x", "", "0", "", types)
	f("1", "abc", "0", "", `invalid parameter "params/1": a numeric value is expected, got "abc"`)
	f("1", "1\n2", "0", "", `a numeric value is expected, got "1`)
	f("13", "1\n2\n3", "0", "", `invalid parameter "params": unexpected parameter "3"`)
	f("5", "a(\n\\1", "0", "", `invalid parameter "params/1": invalid regular expression "a("`)
	f("5", "abc", "0", "", `invalid parameter "params": the parameter "2" is missing`)
	f("6", "x", "0", "", `invalid parameter "params": should be empty`)
	f("2", " ", "1", "", `unexpected parameter "error_handler"`)
	f("1", "2", "4", "", `invalid parameter "error_handler": value must be one of 0, 1, 2, 3`)
	f("1", "2", "3", "", `invalid parameter "error_handler_params": cannot be empty`)
	f("1", "2", "1", "x", `invalid parameter "error_handler_params": should be empty`)
	f("13", "\n", "0", "", `minimum or maximum`)
	f("13", "5\n1", "0", "", `invalid parameter "params/2": the minimum must not be greater`)
	f("20", "0", "0", "", `heartbeat`)
	f("20", "1x", "0", "", `heartbeat`)
	f("24", ";;\n\"\n1", "0", "", `invalid parameter "params/1": the delimiter and the quotation character must be at most one character`)
	f("24", ",\n\"\n2", "0", "", `invalid parameter "params/3": the header flag`)
	f("25", "\nx", "0", "", `search string cannot be empty`)
	f("26", "x", "1", "", `should be empty`)
	f("12", "", "0", "", `unsupported construct in jsonpath`)
	f("16", "$.a[", "0", "", `unsupported construct in jsonpath starting with: "["`)
	f("11", "", "0", "", `cannot be empty`)
	f("21", "return (", "0", "", `invalid parameter "params/1": cannot compile the script`)
	// The fields of the error, for the API's paths.
	_, err := ParseStep("5", "(\nx", "0", "")
	var pe *ParamError
	if !errors.As(err, &pe) || pe.Field != "params" || pe.Param != 1 || !strings.HasPrefix(pe.Msg, "invalid regular expression") {
		t.Fatalf("bad regex: %#v", err)
	}
}

// TestParseStepOneParamKeepsLineFeeds: a one-parameter step's params is
// its whole text; a script's lines are not parameters.
func TestParseStepOneParamKeepsLineFeeds(t *testing.T) {
	js := mustStep(t, "21", "var a = value;\nreturn a + '!';", "0", "")
	if out, err := runOne(t, js, history.Str, "v"); err != nil || out.Text != "v!" {
		t.Fatalf("two-line script: %+v, %v", out, err)
	}
	tr := mustStep(t, "2", "\n ", "0", "")
	if out, err := runOne(t, tr, history.Str, "v \n\n"); err != nil || out.Text != "v" {
		t.Fatalf("right trim of LF and space: %+v, %v", out, err)
	}
}

func TestParseChain(t *testing.T) {
	cu := mustStep(t, "26", "", "1", "")
	m := mustStep(t, "1", "2", "0", "")
	if err := ParseChain([]Step{cu, m}); err != nil {
		t.Fatal(err)
	}
	if err := ParseChain([]Step{m, cu}); err == nil || !strings.Contains(err.Error(), "first step") {
		t.Fatalf("check unsupported second: %v", err)
	}
	d := mustStep(t, "19", "", "0", "")
	if err := ParseChain([]Step{d, mustStep(t, "20", "60", "0", "")}); err == nil {
		t.Fatal("two discard steps accepted")
	}
	if err := ParseChain([]Step{mustStep(t, "9", "", "0", ""), mustStep(t, "10", "", "0", "")}); err == nil {
		t.Fatal("two change steps accepted")
	}
}

// stepCase is one value through a one-step chain: want is the output
// text, or wantErr the exact error message, or discard.
type stepCase struct {
	vt      history.ValueType
	in      string
	want    string
	wantErr string
	discard bool
}

func checkStep(t *testing.T, s Step, cases []stepCase) {
	t.Helper()
	for _, c := range cases {
		out, err := runOne(t, s, c.vt, c.in)
		switch {
		case c.wantErr != "":
			var se *StepError
			if !errors.As(err, &se) || se.Message != c.wantErr {
				t.Errorf("step %d %q on %q: err %v, want %q", s.Type, s.Params, c.in, err, c.wantErr)
			}
		case err != nil:
			t.Errorf("step %d %q on %q: %v", s.Type, s.Params, c.in, err)
		case out.Discarded != c.discard || out.Text != c.want:
			t.Errorf("step %d %q on %q = %+v, want %q discarded=%v", s.Type, s.Params, c.in, out, c.want, c.discard)
		}
	}
}

func TestMultiplier(t *testing.T) {
	checkStep(t, mustStep(t, "1", "8", "0", ""), []stepCase{
		{vt: history.Uint, in: "125", want: "1000"},
		{vt: history.Uint, in: " 2\n", want: "16"},
		{vt: history.Float, in: "1.5", want: "12"},
		{vt: history.Float, in: "-0.25", want: "-2"},
		{vt: history.Uint, in: "3000000000000000000", want: "24000000000000000000"},
		{vt: history.Float, in: "abc", wantErr: `cannot apply multiplier "8" to value "abc" of type "string": cannot convert value to numeric type`},
	})
	checkStep(t, mustStep(t, "1", "0.5", "0", ""), []stepCase{
		{vt: history.Uint, in: "7", want: "3"}, // truncated for an unsigned item
		{vt: history.Float, in: "7", want: "3.5"},
		{vt: history.Uint, in: "1.5", want: "0"},
	})
	checkStep(t, mustStep(t, "1", "1e300", "0", ""), []stepCase{
		{vt: history.Float, in: "1e300", wantErr: `cannot apply multiplier "1e300" to value "1e300" of type "string": the result is out of range`},
	})
}

func TestErrorQuotesBoundedValue(t *testing.T) {
	// 63 ASCII bytes then a 2-byte character: the quote stops before it.
	in := strings.Repeat("x", 63) + "é" + strings.Repeat("y", 100)
	_, err := runOne(t, mustStep(t, "14", "^z", "0", ""), history.Str, in)
	if err == nil || err.Error() != "regular expression validation error with value '"+strings.Repeat("x", 63)+"...'" {
		t.Fatalf("error = %v", err)
	}
}

func TestTrim(t *testing.T) {
	checkStep(t, mustStep(t, "2", `\s\n"`, "0", ""), []stepCase{{vt: history.Str, in: "\" ab \"\n", want: "\" ab"}})
	checkStep(t, mustStep(t, "3", `\s\t`, "0", ""), []stepCase{{vt: history.Str, in: "\t x ", want: "x "}})
	checkStep(t, mustStep(t, "4", "xy", "0", ""), []stepCase{{vt: history.Str, in: "xyaxby", want: "axb"}, {vt: history.Str, in: "xy", want: ""}})
}

func TestRegsub(t *testing.T) {
	// The Zabbix docs' example: "value: (\d+)" with output "\1".
	checkStep(t, mustStep(t, "5", `value: (\d+)`+"\n"+`\1`, "0", ""), []stepCase{
		{vt: history.Uint, in: "the value: 42 today", want: "42"},
		{vt: history.Uint, in: "none", wantErr: `cannot perform regular expression match: pattern does not match, type "string", value "none"`},
	})
	checkStep(t, mustStep(t, "5", `(a)|(b)`+"\n"+`[\0:\1:\2:\x]`, "0", ""), []stepCase{
		{vt: history.Str, in: "b", want: `[b::b:\x]`},
	})
}

func TestToDecimal(t *testing.T) {
	bool2dec := mustStep(t, "6", "", "0", "")
	checkStep(t, bool2dec, []stepCase{
		{vt: history.Uint, in: "TRUE", want: "1"}, {vt: history.Uint, in: " \"running\"\n", want: "1"},
		{vt: history.Uint, in: "Master", want: "1"}, {vt: history.Uint, in: "off", want: "0"},
		{vt: history.Uint, in: "unavailable", want: "0"}, {vt: history.Uint, in: "0.0", want: "0"},
		{vt: history.Uint, in: "-3", want: "1"},
		{vt: history.Uint, in: "maybe", wantErr: `cannot convert value "maybe" of type "string" from boolean format: invalid value format`},
	})
	checkStep(t, mustStep(t, "7", "", "0", ""), []stepCase{
		{vt: history.Uint, in: "777", want: "511"}, {vt: history.Uint, in: "010", want: "8"},
		{vt: history.Uint, in: "8", wantErr: `cannot convert value "8" of type "string" from octal format: invalid value format`},
	})
	checkStep(t, mustStep(t, "8", "", "0", ""), []stepCase{
		{vt: history.Uint, in: "ff", want: "255"}, {vt: history.Uint, in: "1A2b", want: "6699"},
		{vt: history.Uint, in: "01 00\n 00", want: "65536"}, // an SNMP hex string
		{vt: history.Uint, in: "0x10", wantErr: `cannot convert value "0x10" of type "string" from hexadecimal format: invalid value format`},
		{vt: history.Uint, in: "1ffffffffffffffff", wantErr: `cannot convert value "1ffffffffffffffff" of type "string" from hexadecimal format: invalid value format`},
	})
}

func TestValidate(t *testing.T) {
	checkStep(t, mustStep(t, "13", "-10\n10", "0", ""), []stepCase{
		{vt: history.Float, in: "-10", want: "-10"}, {vt: history.Float, in: "10", want: "10"},
		{vt: history.Float, in: "10.01", wantErr: "value is less than -10 or greater than 10"}, // recorded from 6.0.14
		{vt: history.Float, in: "x", wantErr: "cannot convert value to numeric type"},
	})
	checkStep(t, mustStep(t, "13", "\n5", "0", ""), []stepCase{{vt: history.Uint, in: "0", want: "0"}, {vt: history.Uint, in: "6", wantErr: "value is greater than 5"}})
	checkStep(t, mustStep(t, "13", "01\n1e2", "0", ""), []stepCase{{vt: history.Float, in: "0.5", wantErr: "value is less than 01 or greater than 1e2"}})
	checkStep(t, mustStep(t, "13", "5\n", "0", ""), []stepCase{{vt: history.Float, in: "2.5", wantErr: "value is less than 5"}, {vt: history.Float, in: "120", want: "120"}})
	checkStep(t, mustStep(t, "14", "^ok", "0", ""), []stepCase{
		{vt: history.Str, in: "ok then", want: "ok then"},
		{vt: history.Str, in: "not ok", wantErr: "regular expression validation error with value 'not ok'"},
	})
	checkStep(t, mustStep(t, "15", "error", "0", ""), []stepCase{
		{vt: history.Str, in: "fine", want: "fine"},
		{vt: history.Str, in: "an error", wantErr: "regular expression validation error with value 'an error'"},
	})
	checkStep(t, mustStep(t, "18", `ERROR: (.*)`+"\n"+`\1`, "0", ""), []stepCase{
		{vt: history.Str, in: "all good", want: "all good"},
		{vt: history.Str, in: "ERROR: disk full", wantErr: "disk full"},
		{vt: history.Str, in: "ERROR: ", want: "ERROR: "},
	})
}

func TestReplace(t *testing.T) {
	checkStep(t, mustStep(t, "25", `\s`+"\n"+`_`, "0", ""), []stepCase{{vt: history.Str, in: "a b c", want: "a_b_c"}})
	checkStep(t, mustStep(t, "25", `\n`+"\n"+`\\`, "0", ""), []stepCase{{vt: history.Str, in: "a\nb", want: `a\b`}})
	checkStep(t, mustStep(t, "25", "ab\n", "0", ""), []stepCase{{vt: history.Str, in: "xabyab", want: "xy"}})
}

func TestCSVToJSON(t *testing.T) {
	// The Zabbix docs' example, with a header.
	in := "Nr,Item name,Key,Qty\n1,active agent item,agent.hostname,33\n\"2\",\"passive agent item\",\"agent.version\",\"44\"\n3,\"active,passive agent items\",agent.ping,55\n"
	checkStep(t, mustStep(t, "24", ",\n\"\n1", "0", ""), []stepCase{
		{vt: history.Text, in: in, want: `[{"Nr":"1","Item name":"active agent item","Key":"agent.hostname","Qty":"33"},{"Nr":"2","Item name":"passive agent item","Key":"agent.version","Qty":"44"},{"Nr":"3","Item name":"active,passive agent items","Key":"agent.ping","Qty":"55"}]`},
		{vt: history.Text, in: "a,b\n1,2,3", wantErr: "cannot convert CSV to JSON: line 2 has 3 values, the header 2"},
		{vt: history.Text, in: "a\n\"x", wantErr: "cannot convert CSV to JSON: unterminated quoted field at line 2"},
		{vt: history.Text, in: "", want: "[]"},
	})
	checkStep(t, mustStep(t, "24", ";\n'\n0", "0", ""), []stepCase{
		{vt: history.Text, in: "x;'y;''z'''\r\n\r\n\"q\";\n", want: `[{"1":"x","2":"y;'z'"},{"1":"\"q\"","2":""}]`},
		{vt: history.Text, in: "'a\nb'", want: `[{"1":"a\nb"}]`},
	})
}

func TestDelta(t *testing.T) {
	type v struct {
		text    string
		sec     float64
		want    string
		discard bool
	}
	f := func(typ string, vt history.ValueType, vals []v) {
		t.Helper()
		chain := []Step{mustStep(t, typ, "", "0", "")}
		var st State
		for _, x := range vals {
			ts := t0.Add(time.Duration(x.sec * float64(time.Second)))
			out, err := Run(chain, Input{Text: x.text, Time: ts, Type: vt}, &st)
			if err != nil || out.Text != x.want || out.Discarded != x.discard {
				t.Fatalf("step %s %v: %q at %v = %+v, %v; want %q discarded=%v", typ, vt, x.text, x.sec, out, err, x.want, x.discard)
			}
		}
	}
	// Simple change: the first value is discarded, then differences; a
	// smaller value (counter wrap-around or reset) is discarded.
	f("9", history.Uint, []v{{"10", 0, "", true}, {"15", 1, "5", false}, {"15", 2, "0", false}, {"3", 3, "", true}, {"8", 4, "5", false}})
	f("9", history.Float, []v{{"1.5", 0, "", true}, {"2", 1, "0.5", false}, {"1", 2, "", true}})
	// Change per second.
	f("10", history.Uint, []v{{"100", 0, "", true}, {"250", 10, "15", false}, {"260", 13, "3", false}, {"0", 20, "", true}, {"5", 20, "", true}})
	f("10", history.Float, []v{{"0", 0, "", true}, {"1", 0.5, "2", false}, {"2", 0.5, "", true}})
	chain := []Step{mustStep(t, "9", "", "0", "")}
	_, err := Run(chain, Input{Text: "x", Time: t0, Type: history.Uint}, &State{})
	if err == nil || err.Error() != `cannot calculate delta (simple change) for value "x" of type "string": cannot convert value to numeric type` {
		t.Fatalf("delta of text: %v", err)
	}
}

func TestThrottle(t *testing.T) {
	f := func(chain []Step, vals []string, secs []int, kept []bool) {
		t.Helper()
		var st State
		for i, x := range vals {
			out, err := Run(chain, Input{Text: x, Time: t0.Add(time.Duration(secs[i]) * time.Second), Type: history.Str}, &st)
			if err != nil || out.Discarded == kept[i] || (kept[i] && out.Text != x) {
				t.Fatalf("value %d %q at %ds = %+v, %v; want kept=%v", i, x, secs[i], out, err, kept[i])
			}
		}
	}
	f([]Step{mustStep(t, "19", "", "0", "")},
		[]string{"a", "a", "b", "a", "a"}, []int{0, 1, 2, 3, 4}, []bool{true, false, true, true, false})
	// With a heartbeat of 1m: an unchanged value is kept once 60 s have
	// passed since the last kept one.
	f([]Step{mustStep(t, "20", "1m", "0", "")},
		[]string{"a", "a", "a", "a", "b", "b"}, []int{0, 30, 59, 60, 61, 200}, []bool{true, false, false, true, true, true})
}

func TestErrorHandlers(t *testing.T) {
	in := Input{Text: "abc", Time: t0, Type: history.Float}
	mult := func(handler, hp string) []Step {
		return []Step{mustStep(t, "1", "2", handler, hp), mustStep(t, "25", "0\nzero", "0", "")}
	}
	out, err := Run(mult("0", ""), in, nil)
	var se *StepError
	if !errors.As(err, &se) || se.Index != 0 || se.Type != StepMultiplier || !strings.HasPrefix(se.Message, "cannot apply multiplier") {
		t.Fatalf("default handler: %+v, %v", out, err)
	}
	if out, err = Run(mult("1", ""), in, nil); err != nil || !out.Discarded {
		t.Fatalf("discard handler: %+v, %v", out, err)
	}
	// Set value: the custom value goes on to the next step.
	if out, err = Run(mult("2", "0"), in, nil); err != nil || out.Discarded || out.Text != "zero" {
		t.Fatalf("set value handler: %+v, %v", out, err)
	}
	if out, err = Run(mult("3", "bad input"), in, nil); !errors.As(err, &se) || se.Message != "bad input" || se.Index != 0 {
		t.Fatalf("set error handler: %+v, %v", out, err)
	}
	// A handler on the second step.
	chain := []Step{mustStep(t, "4", " ", "0", ""), mustStep(t, "13", "0\n1", "3", "out of range")}
	if _, err = Run(chain, Input{Text: " 5 ", Type: history.Float}, nil); !errors.As(err, &se) || se.Index != 1 || se.Message != "out of range" {
		t.Fatalf("handler on step 2: %v", err)
	}
	// A step's own discard is not a failure: the handler does not run.
	chain = []Step{mustStep(t, "9", "", "2", "7")}
	if out, err = Run(chain, Input{Text: "5", Type: history.Uint}, &State{}); err != nil || !out.Discarded {
		t.Fatalf("first value of simple change with set value handler: %+v, %v", out, err)
	}
}

func TestCheckUnsupported(t *testing.T) {
	failed := Input{Err: "Cannot connect", Time: t0, Type: history.Str}
	f := func(handler, hp string, in Input, want Output, wantErr string) {
		t.Helper()
		chain := []Step{mustStep(t, "26", "", handler, hp), mustStep(t, "2", "!", "0", "")}
		out, err := Run(chain, in, nil)
		if wantErr != "" {
			if err == nil || err.Error() != wantErr {
				t.Fatalf("handler %s on %+v: %+v, %v; want error %q", handler, in, out, err, wantErr)
			}
			return
		}
		if err != nil || out != want {
			t.Fatalf("handler %s on %+v: %+v, %v; want %+v", handler, in, out, err, want)
		}
	}
	f("1", "", failed, Output{Discarded: true}, "")
	f("2", "0!!", failed, Output{Text: "0"}, "") // the custom value goes through the next steps
	f("3", "host down", failed, Output{}, "host down")
	// The default handler (Zabbix 6.0's API accepts it, and the GitLab
	// template uses it) keeps the check's own error.
	f("0", "", failed, Output{}, "Cannot connect")
	f("0", "", Input{Text: "v!", Type: history.Str}, Output{Text: "v"}, "")
	// A supported item's value passes the step untouched.
	f("1", "", Input{Text: "v!", Type: history.Str}, Output{Text: "v"}, "")
	// Without the step, a failed check's error is the chain's error.
	if _, err := Run([]Step{mustStep(t, "2", "!", "0", "")}, failed, nil); err == nil || err.Error() != "Cannot connect" {
		t.Fatalf("no check step: %v", err)
	}
}

// TestHugeInput feeds a 64 KiB text to every step type: none may panic,
// and each either succeeds or fails with a message bounded in size.
func TestHugeInput(t *testing.T) {
	params := map[StepType]string{
		StepMultiplier: "2", StepRTrim: "x", StepLTrim: "x", StepTrim: "x", StepRegsub: "(a+)b\n\\1",
		StepXPath: "/a", StepJSONPath: "$.a", StepValidateRange: "0\n1", StepValidateRegex: "a",
		StepValidateNotRegex: "a", StepErrorFieldJSON: "$.e", StepErrorFieldXML: "/e", StepErrorFieldRegex: "(a+)c\n\\1",
		StepThrottleTimed: "10", StepJavaScript: "return value", StepPrometheusPattern: "m\nvalue\n",
		StepPrometheusToJSON: "m", StepCSVToJSON: ",\n\"\n1", StepStrReplace: "a\nbb",
	}
	huge := strings.Repeat("a\"b,\n", 64<<10/5)
	for typ := StepType(1); typ <= 27; typ++ {
		s, err := ParseStep(strconvU(typ), params[typ], "0", "")
		if typ == StepCheckUnsupported {
			s, err = ParseStep("26", "", "1", "")
		}
		if err != nil {
			t.Fatalf("type %d: %v", typ, err)
		}
		_, err = Run([]Step{s}, Input{Text: huge, Time: t0, Type: history.Text}, &State{})
		if err != nil && len(err.Error()) > 300 {
			t.Errorf("type %d: error message of %d bytes", typ, len(err.Error()))
		}
	}
}

func strconvU(t StepType) string { return string(rune('0'+t/10)) + string(rune('0'+t%10)) }

func TestJSONPathSteps(t *testing.T) {
	checkStep(t, mustStep(t, "12", "$.data[?(@.name == \"cpu\")].value.first()", "0", ""), []stepCase{
		{vt: history.Float, in: `{"data":[{"name":"mem","value":1},{"name":"cpu","value":0.25}]}`, want: "0.25"},
		{vt: history.Float, in: `{"data":[]}`, wantErr: `cannot extract value from json by path "$.data[?(@.name == "cpu")].value.first()": no data matches the specified path`},
		{vt: history.Float, in: `{"data":`, wantErr: `cannot extract value from json by path "$.data[?(@.name == "cpu")].value.first()": cannot parse as a valid JSON object: unexpected end of data at: ''`},
	})
	checkStep(t, mustStep(t, "16", "$.error", "0", ""), []stepCase{
		{vt: history.Text, in: `{"error":"  access denied\n"}`, wantErr: "access denied"},
		{vt: history.Text, in: `{"result":1}`, want: `{"result":1}`},
		{vt: history.Text, in: `{"error":""}`, want: `{"error":""}`},
		{vt: history.Text, in: `not json`, want: `not json`},
	})
}
