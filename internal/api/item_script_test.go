package api

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// TestItemScript: script items (type 21) through item.create,
// item.update and item.get, with Zabbix 6.0's answers (recorded from
// 6.0.14 on the peer): params, timeout (1-60 s) and parameters are
// checked before the members every item has; parameters come back as
// 6.0 returns them, [] for items without.
func TestItemScript(t *testing.T) {
	f := newWriteFixture(t)
	g := f.ids(t, "hostgroup.create", `{"name":"G"}`, "groupids")[0]
	h := f.ids(t, "host.create", fmt.Sprintf(`{"host":"s","groups":[{"groupid":"%s"}]}`, g), "hostids")[0]
	item := func(key, extra string) string {
		return fmt.Sprintf(`{"name":"n","key_":%q,"hostid":"%s","type":21,"value_type":4,"delay":"10s"%s}`, key, h, extra)
	}
	id := f.ids(t, "item.create", item("s.ok", `,"params":"return value","timeout":"3s","parameters":[{"name":"a","value":"41"},{"name":"m","value":"{$M}"}]`), "itemids")[0]
	trap := f.ids(t, "item.create", fmt.Sprintf(`{"name":"t","key_":"t","hostid":"%s","type":2,"value_type":4,"parameters":[{"name":"","value":""}]}`, h), "itemids")[0]
	params := func(id string) any {
		t.Helper()
		items := f.get(t, "item.get", fmt.Sprintf(`{"itemids":"%s","output":["parameters","timeout","params"]}`, id))
		if len(items) != 1 {
			t.Fatalf("item.get: %v", items)
		}
		return items[0]["parameters"]
	}
	want := []any{map[string]any{"name": "a", "value": "41"}, map[string]any{"name": "m", "value": "{$M}"}}
	if got := params(id); !reflect.DeepEqual(got, want) {
		t.Errorf("parameters %v, want %v", got, want)
	}
	// A trapper item's are not kept (6.0 keeps them unchecked).
	if got := params(trap); !reflect.DeepEqual(got, []any{}) {
		t.Errorf("trapper's parameters %v, want []", got)
	}
	f.ok(t, "item.update", fmt.Sprintf(`{"itemid":"%s","parameters":[{"name":"b","value":""}]}`, id))
	if got := params(id); !reflect.DeepEqual(got, []any{map[string]any{"name": "b", "value": ""}}) {
		t.Errorf("updated parameters %v", got)
	}
	f.ok(t, "item.update", fmt.Sprintf(`{"itemid":"%s","timeout":"1m"}`, id))
	if got := params(id); len(got.([]any)) != 1 {
		t.Errorf("parameters after a timeout update: %v", got)
	}
	// White space is a script (its checks fail), a user macro a timeout.
	f.ids(t, "item.create", item("s.ws", `,"params":"  ","timeout":"{$T}"`), "itemids")
	f.ids(t, "item.create", item("s.num", `,"params":"x","timeout":"30","parameters":[]`), "itemids")

	bad := `,"params":"x","timeout":"5s","parameters":`
	for _, c := range []struct{ method, params, want string }{
		{"item.create", item("s.v", ``), `Invalid parameter "/1": the parameter "params" is missing.`},
		{"item.create", item("s.v[", ``), `Invalid parameter "/1": the parameter "params" is missing.`},
		{"item.create", item("s.v", `,"delay":"0"`), `Invalid parameter "/1": the parameter "params" is missing.`},
		{"item.create", item("s.v", `,"value_type":9`), `Invalid parameter "/1": the parameter "params" is missing.`},
		{"item.create", item("s.v", `,"params":""`), `Invalid parameter "/1/params": cannot be empty.`},
		{"item.create", item("s.v", `,"params":"","timeout":"61s"`), `Invalid parameter "/1/params": cannot be empty.`},
		{"item.create", item("s.v", `,"params":"x"`), `Invalid parameter "/1": the parameter "timeout" is missing.`},
		{"item.create", item("s.v", `,"params":"x","parameters":[{"name":""}]`), `Invalid parameter "/1": the parameter "timeout" is missing.`},
		{"item.create", item("s.v", `,"params":"x","timeout":"0s"`), `Invalid parameter "/1/timeout": value must be one of 1-60.`},
		{"item.create", item("s.v", `,"params":"x","timeout":"61s"`), `Invalid parameter "/1/timeout": value must be one of 1-60.`},
		{"item.create", item("s.v", `,"params":"x","timeout":"2m"`), `Invalid parameter "/1/timeout": value must be one of 1-60.`},
		{"item.create", item("s.v", `,"params":"x","timeout":"61s","parameters":[{"name":"","value":""}]`), `Invalid parameter "/1/timeout": value must be one of 1-60.`},
		{"item.create", item("s.v", `,"params":"x","timeout":""`), `Invalid parameter "/1/timeout": cannot be empty.`},
		{"item.create", item("s.v", `,"params":"x","timeout":"abc"`), `Invalid parameter "/1/timeout": a time unit is expected.`},
		{"item.create", item("s.v", `,"params":"x","timeout":"1.5s"`), `Invalid parameter "/1/timeout": a time unit is expected.`},
		{"item.create", item("s.v", `,"params":"x","timeout":null`), `Invalid parameter "/1/timeout": a character string is expected.`},
		{"item.create", item("s.v", bad+`[{"name":"","value":"x"}]`), `Invalid parameter "/1/parameters/1/name": cannot be empty.`},
		{"item.create", item("s.v", bad+`[{"name":"a","value":"x"},{"name":"a","value":"y"}]`), `Invalid parameter "/1/parameters/2": value (name)=(a) already exists.`},
		{"item.create", item("s.v", bad+`[{"value":"x"}]`), `Invalid parameter "/1/parameters/1": the parameter "name" is missing.`},
		{"item.create", item("s.v", bad+`[{"name":"a"}]`), `Invalid parameter "/1/parameters/1": the parameter "value" is missing.`},
		{"item.create", item("s.v", bad+`[{"name":"a","value":"x","extra":1}]`), `Invalid parameter "/1/parameters/1": unexpected parameter "extra".`},
		{"item.create", item("s.v", bad+`"x"`), `Invalid parameter "/1/parameters": an array is expected.`},
		{"item.create", item("s.v", bad+`null`), `Invalid parameter "/1/parameters": an array is expected.`},
		// 6.0 answers an object with an HTTP 500; Peregrine as for a string.
		{"item.create", item("s.v", bad+`{"name":"a","value":"x"}`), `Invalid parameter "/1/parameters": an array is expected.`},
		{"item.create", item("s.v", bad+`["x"]`), `Invalid parameter "/1/parameters/1": an array is expected.`},
		{"item.create", item("s.v", bad+`[null]`), `Invalid parameter "/1/parameters/1": an array is expected.`},
		{"item.create", item("s.v", bad+`[[]]`), `Invalid parameter "/1/parameters/1": the parameter "name" is missing.`},
		{"item.create", item("s.v", bad+`[{"name":1,"value":2}]`), `Invalid parameter "/1/parameters/1/name": a character string is expected.`},
		{"item.create", item("s.v", bad+`[{"name":"a","value":null}]`), `Invalid parameter "/1/parameters/1/value": a character string is expected.`},
		{"item.create", item("s.v", bad+`[{"name":"`+strings.Repeat("n", 256)+`","value":"x"}]`), `Invalid parameter "/1/parameters/1/name": value is too long.`},
		{"item.create", item("s.v", bad+`[{"name":"a","value":"`+strings.Repeat("v", 2049)+`"}]`), `Invalid parameter "/1/parameters/1/value": value is too long.`},
		{"item.create", `{"name":"n","key_":"k","hostid":"999999","type":21,"value_type":4,"delay":"10s"}`, "No permissions to referred object or it does not exist!"},
		{"item.create", fmt.Sprintf(`{"name":"n","key_":"k","hostid":"%s","type":21,"value_type":4,"params":"x","timeout":"5s"}`, h), "Incorrect arguments passed to function."},
		{"item.update", fmt.Sprintf(`{"itemid":"%s","params":""}`, id), `Invalid parameter "/1/params": cannot be empty.`},
		{"item.update", fmt.Sprintf(`{"itemid":"%s","params":"","timeout":"99s","key_":"x["}`, id), `Invalid parameter "/1/params": cannot be empty.`},
		{"item.update", fmt.Sprintf(`{"itemid":"%s","timeout":"61s"}`, id), `Invalid parameter "/1/timeout": value must be one of 1-60.`},
		{"item.update", fmt.Sprintf(`{"itemid":"%s","timeout":"0"}`, id), `Invalid parameter "/1/timeout": value must be one of 1-60.`},
		{"item.update", fmt.Sprintf(`{"itemid":"%s","parameters":[{"name":"a","value":"1"},{"name":"a","value":"2"}]}`, id), `Invalid parameter "/1/parameters/2": value (name)=(a) already exists.`},
		{"item.update", fmt.Sprintf(`{"itemid":"%s","key_":"x[","parameters":[{"name":""}]}`, id), `Invalid parameter "/1/parameters/1/name": cannot be empty.`},
		{"item.update", fmt.Sprintf(`{"itemid":"%s","parameters":"x"}`, id), `Invalid parameter "/1/parameters": an array is expected.`},
		{"item.update", fmt.Sprintf(`{"itemid":"%s","type":21}`, trap), `Invalid parameter "/1": the parameter "params" is missing.`},
		{"item.update", fmt.Sprintf(`{"itemid":"%s","type":21,"params":"return 1"}`, trap), `Invalid parameter "/1": the parameter "timeout" is missing.`},
	} {
		_, e := f.call(t, "super", c.method, c.params)
		if e == nil || e.Code != -32602 || e.Data != c.want {
			t.Errorf("%s %.200s: %+v, want %q", c.method, c.params, e, c.want)
		}
	}
	// A type change to trapper drops the parameters, as 6.0 does.
	f.ok(t, "item.update", fmt.Sprintf(`{"itemid":"%s","type":2}`, id))
	if got := params(id); !reflect.DeepEqual(got, []any{}) {
		t.Errorf("parameters after becoming a trapper item: %v", got)
	}
	// "Check now" takes script items (6.0 does).
	if !checkNowType(catalog.Script) {
		t.Error("task.create refuses script items")
	}
}
