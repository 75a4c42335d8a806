package api

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestItemPreprocessingRoundTrip: item.create and item.update take
// preprocessing, master_itemid and params; item.get returns them, the
// steps only under selectPreprocessing, every member a string as Zabbix
// returns it.
func TestItemPreprocessingRoundTrip(t *testing.T) {
	f := newWriteFixture(t)
	gid := f.ids(t, "hostgroup.create", `{"name":"G"}`, "groupids")[0]
	hid := f.ids(t, "host.create", `{"host":"h","groups":[{"groupid":"`+gid+`"}]}`, "hostids")[0]
	master := f.ids(t, "item.create", `{"hostid":"`+hid+`","name":"stats","key_":"stats","type":2,"value_type":4}`, "itemids")[0]
	ids := f.ids(t, "item.create", `[
		{"hostid":"`+hid+`","name":"req","key_":"req","type":18,"value_type":0,"master_itemid":"`+master+`","preprocessing":[
			{"type":"12","params":"$.requests","error_handler":"0","error_handler_params":""},
			{"type":10,"params":"","error_handler":1},
			{"type":"21","params":"var v = Number(value);\r\nreturn v * 8;","error_handler":"2","error_handler_params":"-1"}]},
		{"hostid":"`+hid+`","name":"twice","key_":"twice","type":15,"value_type":0,"delay":"1m","params":"last(//req)*2"}]`, "itemids")
	dep, calc := ids[0], ids[1]

	get := func(params string) []map[string]any { return f.get(t, "item.get", params) }
	want := []any{
		map[string]any{"type": "12", "params": "$.requests", "error_handler": "0", "error_handler_params": ""},
		map[string]any{"type": "10", "params": "", "error_handler": "1", "error_handler_params": ""},
		// CRLF becomes LF, as Zabbix's API stores it.
		map[string]any{"type": "21", "params": "var v = Number(value);\nreturn v * 8;", "error_handler": "2", "error_handler_params": "-1"},
	}
	got := get(`{"itemids":"` + dep + `","output":["master_itemid","params"],"selectPreprocessing":"extend"}`)
	if len(got) != 1 || got[0]["master_itemid"] != master || got[0]["params"] != "" {
		t.Fatalf("dependent item: %v", got)
	}
	if d := cmp.Diff(want, got[0]["preprocessing"]); d != "" {
		t.Fatalf("preprocessing (-want +got):\n%s", d)
	}
	// Without selectPreprocessing there is no preprocessing member, even
	// with output extend.
	if got := get(`{"itemids":"` + dep + `"}`); got[0]["preprocessing"] != nil || got[0]["master_itemid"] != master {
		t.Fatalf("item.get without selectPreprocessing: %v", got[0])
	}
	// A subset of the step fields.
	got = get(`{"itemids":"` + dep + `","output":["itemid"],"selectPreprocessing":["type","error_handler"]}`)
	if d := cmp.Diff([]any{
		map[string]any{"type": "12", "error_handler": "0"}, map[string]any{"type": "10", "error_handler": "1"},
		map[string]any{"type": "21", "error_handler": "2"},
	}, got[0]["preprocessing"]); d != "" {
		t.Fatalf("selectPreprocessing subset (-want +got):\n%s", d)
	}
	// An item without steps has an empty list; the calculated item its
	// formula, and no master.
	got = get(`{"itemids":"` + calc + `","output":["params","master_itemid"],"selectPreprocessing":"extend"}`)
	if d := cmp.Diff([]map[string]any{{"itemid": calc, "params": "last(//req)*2", "master_itemid": "0", "preprocessing": []any{}}}, got); d != "" {
		t.Fatalf("calculated item (-want +got):\n%s", d)
	}

	// item.update replaces the steps, keeps them when absent, removes them
	// with an empty list.
	f.ok(t, "item.update", `{"itemid":"`+dep+`","preprocessing":[{"type":"1","params":"0.5"}]}`)
	got = get(`{"itemids":"` + dep + `","output":["itemid"],"selectPreprocessing":"extend"}`)
	if d := cmp.Diff([]any{map[string]any{"type": "1", "params": "0.5", "error_handler": "0", "error_handler_params": ""}}, got[0]["preprocessing"]); d != "" {
		t.Fatalf("after update (-want +got):\n%s", d)
	}
	f.ok(t, "item.update", `{"itemid":"`+dep+`","name":"renamed"}`)
	if got := get(`{"itemids":"` + dep + `","selectPreprocessing":"extend"}`); len(got[0]["preprocessing"].([]any)) != 1 {
		t.Fatalf("an update without preprocessing changed the steps: %v", got[0]["preprocessing"])
	}
	f.ok(t, "item.update", `{"itemid":"`+dep+`","preprocessing":[]}`)
	if got := get(`{"itemids":"` + dep + `","selectPreprocessing":"extend"}`); len(got[0]["preprocessing"].([]any)) != 0 {
		t.Fatalf("an empty list kept the steps: %v", got[0]["preprocessing"])
	}
	f.ok(t, "item.update", `{"itemid":"`+calc+`","params":"last(//req)*4"}`)
	if got := get(`{"itemids":"` + calc + `","output":["params"]}`); got[0]["params"] != "last(//req)*4" {
		t.Fatalf("formula after update: %v", got)
	}
	// An item returned by item.get goes back through item.update as is.
	raw := f.ok(t, "item.get", `{"itemids":"`+calc+`","output":["itemid","master_itemid","params"],"selectPreprocessing":"extend"}`)
	var back []json.RawMessage
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	f.ok(t, "item.update", string(back[0]))
}

// TestItemPreprocessingErrors pins Zabbix's messages for bad steps,
// dependent items and calculated items.
func TestItemPreprocessingErrors(t *testing.T) {
	f := newWriteFixture(t)
	gid := f.ids(t, "hostgroup.create", `{"name":"G"}`, "groupids")[0]
	hid := f.ids(t, "host.create", `{"host":"h","groups":[{"groupid":"`+gid+`"}]}`, "hostids")[0]
	other := f.ids(t, "host.create", `{"host":"other","groups":[{"groupid":"`+gid+`"}]}`, "hostids")[0]
	item := func(host, key, rest string) string {
		return `{"hostid":"` + host + `","name":"` + key + `","key_":"` + key + `","value_type":0,` + rest + `}`
	}
	root := f.ids(t, "item.create", item(hid, "root", `"type":2`), "itemids")[0]
	l1 := f.ids(t, "item.create", item(hid, "l1", `"type":18,"master_itemid":"`+root+`"`), "itemids")[0]
	l2 := f.ids(t, "item.create", item(hid, "l2", `"type":18,"master_itemid":"`+l1+`"`), "itemids")[0]
	l3 := f.ids(t, "item.create", item(hid, "l3", `"type":18,"master_itemid":"`+l2+`"`), "itemids")[0]
	otherItem := f.ids(t, "item.create", item(other, "x", `"type":2`), "itemids")[0]
	steps := func(s string) string { return item(hid, "new", `"type":2,"preprocessing":[`+s+`]`) }
	types := "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27"
	for _, c := range []struct{ method, params, want string }{
		// Steps.
		{"item.create", steps(`{"type":"30","params":""}`), `Invalid parameter "/1/preprocessing/1/type": value must be one of ` + types + `.`},
		{"item.create", steps(`{"type":"1","params":"2"},{"type":"5","params":"a"}`), `Invalid parameter "/1/preprocessing/2/params": the parameter "2" is missing.`},
		{"item.create", steps(`{"type":"13","params":"1\n2\n3"}`), `Invalid parameter "/1/preprocessing/1/params": unexpected parameter "3".`},
		{"item.create", steps(`{"type":"14","params":"a(b"}`), "Invalid parameter \"/1/preprocessing/1/params/1\": invalid regular expression \"a(b\": error parsing regexp: missing closing ): `a(b`."},
		{"item.create", steps(`{"type":"4","params":" ","error_handler":"1"}`), `Invalid parameter "/1/preprocessing/1": unexpected parameter "error_handler".`},
		{"item.create", steps(`{"type":"1","params":"2","error_handler":"5"}`), `Invalid parameter "/1/preprocessing/1/error_handler": value must be one of 0, 1, 2, 3.`},
		{"item.create", steps(`{"type":"1","params":"2","error_handler":"3"}`), `Invalid parameter "/1/preprocessing/1/error_handler_params": cannot be empty.`},
		{"item.create", steps(`{"type":"19","params":""},{"type":"20","params":"1h"}`), `Invalid parameter "/1/preprocessing": only one "Discard unchanged" or "Discard unchanged with heartbeat" step is allowed.`},
		{"item.create", steps(`{"type":"12","params":"$.a","sortorder":1}`), `Invalid parameter "/1/preprocessing/1": unexpected parameter "sortorder".`},
		{"item.create", item(hid, "new", `"type":2,"preprocessing":{"type":"1"}`), `Invalid parameter "/1/preprocessing": an array is expected.`},
		{"item.update", `{"itemid":"` + root + `","preprocessing":[{"type":"12","params":"$["}]}`, `Invalid parameter "/1/preprocessing/1/params/1": unsupported construct in jsonpath starting with: "[".`},
		// Dependent items.
		{"item.create", item(hid, "new", `"type":18`), `Invalid parameter "/1": the parameter "master_itemid" is missing.`},
		{"item.create", item(hid, "new", `"type":2,"master_itemid":"`+root+`"`), `Invalid parameter "/1": unexpected parameter "master_itemid".`},
		{"item.create", item(hid, "new", `"type":18,"master_itemid":"`+otherItem+`"`), `Incorrect value for field "master_itemid": hostid of dependent item and master item should match.`},
		{"item.create", item(hid, "new", `"type":18,"master_itemid":"999999"`), `No permissions to referred object or it does not exist!`},
		{"item.create", item(hid, "new", `"type":18,"master_itemid":"`+l3+`"`), `Incorrect value for field "master_itemid": maximum number of dependency levels reached.`},
		{"item.update", `{"itemid":"` + l1 + `","master_itemid":"` + l2 + `"}`, `Incorrect value for field "master_itemid": circular item dependency is not allowed.`},
		{"item.update", `{"itemid":"` + root + `","type":18}`, `Invalid parameter "/1": the parameter "master_itemid" is missing.`},
		// Calculated items.
		{"item.create", item(hid, "new", `"type":15,"delay":"1m"`), `Invalid parameter "/1": the parameter "params" is missing.`},
		{"item.create", item(hid, "new", `"type":15,"delay":"1m","params":""`), `Invalid parameter "/1/params": cannot be empty.`},
	} {
		before := f.cat.Snapshot().Version()
		_, e := f.call(t, "super", c.method, c.params)
		if e == nil || e.Data != c.want {
			t.Errorf("%s %s: %+v, want %q", c.method, c.params, e, c.want)
		}
		if v := f.cat.Snapshot().Version(); v != before {
			t.Errorf("%s %s: a failed call changed the catalog", c.method, c.params)
		}
	}
}
