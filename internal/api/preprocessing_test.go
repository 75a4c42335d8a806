package api

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// TestPreprocessingTest checks preprocessing.test's answers against the
// shape Zabbix's server gives the frontend: per step "result", "error",
// "action" (the handler that acted) and "failed" (a "set error"
// handler's message); then the final "result" or "error".
func TestPreprocessingTest(t *testing.T) {
	f := newWriteFixture(t)
	check := func(name, params, want string) {
		t.Helper()
		res, e := f.call(t, "admin", "preprocessing.test", params)
		if e != nil {
			t.Fatalf("%s: error %d %s", name, e.Code, e.Data)
		}
		var got, exp any
		if err := json.Unmarshal(res, &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(want), &exp); err != nil {
			t.Fatalf("%s: bad want: %v", name, err)
		}
		if d := cmp.Diff(exp, got); d != "" {
			t.Fatalf("%s: result differs (-want +got):\n%s\ngot %s", name, d, res)
		}
	}
	// Two steps, numbers as strings (the frontend) and as numbers; the
	// final value is converted to the float type.
	check("chain", `{"value":"10","value_type":"0","steps":[
		{"type":"1","params":"2","error_handler":"0","error_handler_params":""},
		{"type":1,"params":"0.25","error_handler":0,"error_handler_params":""}]}`,
		`{"steps":[{"result":"20"},{"result":"5"}],"result":"5"}`)
	// A JSONPath on a JSON value, to an unsigned item.
	check("jsonpath", `{"value":"{\"a\":{\"b\":[1,2,42]}}","value_type":3,"steps":[{"type":"12","params":"$.a.b.max()"}]}`,
		`{"steps":[{"result":"42"}],"result":"42"}`)
	// Handlers: the step's own error stays beside the handler's effect.
	rangeStep := func(h, hp string) string {
		return `{"type":"13","params":"0\n5","error_handler":"` + h + `","error_handler_params":"` + hp + `"}`
	}
	res, e := f.call(t, "admin", "preprocessing.test", `{"value":"10","value_type":"0","steps":[`+rangeStep("0", "")+`]}`)
	if e != nil {
		t.Fatal(e.Data)
	}
	var def struct {
		Steps []map[string]any
		Error string
	}
	if err := json.Unmarshal(res, &def); err != nil {
		t.Fatal(err)
	}
	msg, _ := def.Steps[0]["error"].(string)
	if msg == "" || def.Error != msg || len(def.Steps[0]) != 1 {
		t.Fatalf("default handler: %s", res)
	}
	js := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	check("discard", `{"value":"10","value_type":"0","steps":[`+rangeStep("1", "")+`,{"type":"1","params":"2"}]}`,
		`{"steps":[{"error":`+js(msg)+`,"action":1,"result":null}],"result":null}`)
	check("set value", `{"value":"10","value_type":"0","steps":[`+rangeStep("2", "3")+`,{"type":"1","params":"2"}]}`,
		`{"steps":[{"error":`+js(msg)+`,"action":2,"result":"3"},{"result":"6"}],"result":"6"}`)
	check("set error", `{"value":"10","value_type":"0","steps":[`+rangeStep("3", "too big")+`,{"type":"1","params":"2"}]}`,
		`{"steps":[{"error":`+js(msg)+`,"action":3,"failed":"too big"}],"error":"too big"}`)
	// Simple change with a history value: the history value's run
	// discards (first value), the value's run gives the difference.
	check("history", `{"value":"15","value_type":"3","history":{"value":"10","timestamp":"now-1m"},"steps":[{"type":"9","params":""}]}`,
		`{"steps":[{"result":"5"}],"result":"5"}`)
	check("history change per second", `{"value":"160","value_type":"0","history":{"value":"40","timestamp":"now-2m"},"steps":[{"type":"10","params":""}]}`,
		`{"steps":[{"result":"1"}],"result":"1"}`)
	// Without history the change step discards.
	check("no history", `{"value":"15","value_type":"3","steps":[{"type":"9","params":""}]}`,
		`{"steps":[{"result":null}],"result":null}`)
	// A failure on the history value is reported as "previous".
	check("previous", `{"value":"abc","value_type":"0","history":{"value":"x","timestamp":"now"},"steps":[{"type":"1","params":"2"}]}`,
		`{"previous":true,"steps":[{"error":"cannot apply multiplier \"2\" to value \"x\" of type \"string\": cannot convert value to numeric type"}],"error":"cannot apply multiplier \"2\" to value \"x\" of type \"string\": cannot convert value to numeric type"}`)
	// The final conversion fails for a text that is no number, unless
	// "single" (one step tested alone) skips it.
	check("conversion", `{"value":"a b","value_type":"3","steps":[{"type":"4","params":" "}]}`,
		`{"steps":[{"result":"a b"}],"error":"Value of type \"string\" is not suitable for value type \"Numeric (unsigned)\". Value \"a b\""}`)
	check("single", `{"value":"a b","value_type":"3","single":"true","steps":[{"type":"4","params":" "}]}`,
		`{"steps":[{"result":"a b"}],"result":"a b"}`)
	check("no steps", `{"value":" 7 ","value_type":"3","steps":[]}`, `{"steps":[],"result":"7"}`)
	// A not supported item (state 1): the value is the error; "Check for
	// not supported value" handles it, or Zabbix's message says to add it.
	check("not supported", `{"value":"Cannot connect","value_type":"4","state":1,"steps":[{"type":"26","params":"","error_handler":"2","error_handler_params":"down"},{"type":"25","params":"do\nup"}]}`,
		`{"steps":[{"error":"Cannot connect","action":2,"result":"down"},{"result":"upwn"}],"result":"upwn"}`)
	check("not supported without check", `{"value":"Cannot connect","value_type":"4","state":"1","steps":[{"type":"25","params":"a\nb"}]}`,
		`{"steps":[],"error":"This item is not supported. Please, add a preprocessing step \"Check for not supported value\" to process it."}`)
	// A supported item passes the check step untouched.
	check("supported", `{"value":"v","value_type":"4","steps":[{"type":"26","params":"","error_handler":"1"},{"type":"25","params":"v\nw"}]}`,
		`{"steps":[{"result":"v"},{"result":"w"}],"result":"w"}`)
}

// TestPreprocessingTestScriptBudget: a script that never ends is stopped
// within the request's deadline (here 1 s, so the scripts get 3/4 of it)
// and the test still answers.
func TestPreprocessingTestScriptBudget(t *testing.T) {
	cat := catalogtest.Open(t, catalog.Spec{})
	api := New(Options{Catalog: cat, History: memstore.New(), Timeout: time.Second,
		Auth: &fakeAuth{sessions: map[string]User{"admin": {ID: 2, Username: "admin", Role: RoleAdmin}}}})
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	f := &writeFixture{srv: srv, cat: cat}
	res, e := f.call(t, "admin", "preprocessing.test", `{"value":"1","value_type":"4","history":{"value":"0","timestamp":"now"},"steps":[{"type":"21","params":"while (true) {}"},{"type":"21","params":"for (;;) {}"}]}`)
	if e != nil || !strings.Contains(string(res), "execution timeout") {
		t.Fatalf("endless script: %s, %+v", res, e)
	}
}

func TestPreprocessingTestErrors(t *testing.T) {
	f := newWriteFixture(t)
	bad := func(token, params, want string) {
		t.Helper()
		_, e := f.call(t, token, "preprocessing.test", params)
		if e == nil || e.Data != want {
			t.Fatalf("%s: %+v, want %q", params, e, want)
		}
	}
	// A user of the lowest role may not run steps on the server.
	bad("user", `{"value":"1","value_type":0,"steps":[]}`, `No permissions to call "preprocessing.test".`)
	bad("nobody", `{"value":"1","value_type":0,"steps":[]}`, "Session terminated, re-login, please.")
	bad("admin", `{"value_type":0,"steps":[]}`, `Invalid parameter "/": the parameter "value" is missing.`)
	bad("admin", `{"value":"1","steps":[]}`, `Invalid parameter "/": the parameter "value_type" is missing.`)
	bad("admin", `{"value":"1","value_type":0}`, `Invalid parameter "/": the parameter "steps" is missing.`)
	bad("admin", `{"value":"1","value_type":7,"steps":[]}`, `Invalid parameter "/value_type": value must be one of 0, 1, 2, 3, 4.`)
	bad("admin", `{"value":"1","value_type":0,"steps":[],"valeu":1}`, `Invalid parameter "/": unexpected parameter "valeu".`)
	bad("admin", `{"value":"1","value_type":0,"steps":{}}`, `Invalid parameter "/steps": an array is expected.`)
	bad("admin", `{"value":"1","value_type":0,"steps":[{"type":"1","parms":"2"}]}`, `Invalid parameter "/steps/1": unexpected parameter "parms".`)
	bad("admin", `{"value":"1","value_type":0,"steps":[{"params":"2"}]}`, `Invalid parameter "/steps/1": the parameter "type" is missing.`)
	bad("admin", `{"value":"1","value_type":0,"steps":[{"type":"1","params":"2"},{"type":"30"}]}`,
		`Invalid parameter "/steps/2/type": value must be one of 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27.`)
	bad("admin", `{"value":"1","value_type":0,"steps":[{"type":"5","params":"a"}]}`, `Invalid parameter "/steps/1/params": the parameter "2" is missing.`)
	bad("admin", `{"value":"1","value_type":0,"steps":[{"type":"13","params":"1\n2\n3"}]}`, `Invalid parameter "/steps/1/params": unexpected parameter "3".`)
	bad("admin", `{"value":"1","value_type":0,"steps":[{"type":"5","params":"(\n\\1"}]}`,
		"Invalid parameter \"/steps/1/params/1\": invalid regular expression \"(\": error parsing regexp: missing closing ): `(`.")
	bad("admin", `{"value":"1","value_type":0,"steps":[{"type":"2","params":" ","error_handler":"1"}]}`, `Invalid parameter "/steps/1": unexpected parameter "error_handler".`)
	bad("admin", `{"value":"1","value_type":0,"steps":[{"type":"9","params":""},{"type":"10","params":""}]}`,
		`Invalid parameter "/steps": only one "Simple change" or "Change per second" step is allowed.`)
	bad("admin", `{"value":"1","value_type":0,"history":{"value":"1","timestamp":"yesterday"},"steps":[]}`,
		`Invalid parameter "/history/timestamp": "now" or "now-<time>" (e.g. "now-1m") is expected.`)
	bad("admin", `{"value":"1","value_type":0,"steps":[`+strings.Repeat(`{"type":"6","params":""},`, maxTestSteps)+`{"type":"6","params":""}]}`,
		`Invalid parameter "/steps": 65 steps, more than 64.`)
}
