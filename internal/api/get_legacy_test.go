package api

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/trigger"
)

// TestLegacyGetsAsZabbix replays testdata/legacy_gets.golden: requests to
// the get methods with the answers Zabbix 6.0.14 gave them, recorded
// from the peer of issue 24 after creating there, through its API, the
// objects this test creates here the same way (the recorder sent each
// request and wrote its answer with the IDs replaced by the names
// below). Each answer here must be the peer's, but for the intended
// differences, which are taken out of both before comparing:
//
//   - the fields Peregrine adds (triggers' attempt, max_check_attempts
//     and state_type; items' retry_delay and timestamp_precision);
//   - a host group's uuid (6.0 makes one for export; Peregrine keeps
//     none) and an item's timeout (6.0 gives "3s" to an item that sets
//     none, Peregrine "" for its poller's default), masked as "*";
//   - a trigger's expression, which 6.0 writes with its function IDs
//     ("{32764}>5") where Peregrine, which keeps none, writes it
//     expanded (as 6.0 does with expandExpression);
//   - what the peer's and the fixture's runs cannot share: times
//     (clock, ns, lastchange, the trend's values from the values sent)
//     and the acknowledgements the peer's event got while being
//     recorded, masked as "*".
func TestLegacyGetsAsZabbix(t *testing.T) {
	f := newEventFixture(t)
	ids := legacyGetObjects(t, f)
	rev := map[string]map[string]string{} // key → Peregrine ID → @name@
	for key, names := range map[string][]string{
		"groupid": {"gid", "gid2"}, "hostid": {"h1", "h2"}, "itemid": {"gg.float", "gg.uint", "gg.text", "gg.two", "agent"},
		"triggerid": {"t1"}, "objectid": {"t1"}, "interfaceid": {"if1"}, "valuemapid": {"vm"}, "hostmacroid": {"m1", "m2"},
		"globalmacroid": {"gm1"}, "maintenanceid": {"mt1"}, "eventid": {"ev1"},
	} {
		rev[key] = map[string]string{}
		for _, n := range names {
			rev[key][ids[n]] = "@" + n + "@"
		}
	}
	pk := map[string]string{"hostgroup.get": "groupid", "host.get": "hostid", "item.get": "itemid", "trigger.get": "triggerid",
		"problem.get": "eventid", "event.get": "eventid", "usermacro.get": "hostmacroid", "maintenance.get": "maintenanceid",
		"hostinterface.get": "interfaceid"}
	file, err := os.Open("testdata/legacy_gets.golden")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.SplitN(line, "\t", 4)
		ordered, method, params, want := parts[0] == "=", parts[1], parts[2], parts[3]
		req := params
		for name, v := range ids {
			req = strings.ReplaceAll(req, "@"+name+"@", v)
		}
		res, e := f.call(t, "super", method, req)
		var got any
		if e != nil {
			got = map[string]any{"code": float64(e.Code), "data": e.Data}
		} else if err := json.Unmarshal(res, &got); err != nil {
			t.Fatalf("%s %s: %s: %v", method, params, res, err)
		}
		got = legacyNormalize(got, "", rev, pk[method], true, ordered)
		var w any
		if err := json.Unmarshal([]byte(want), &w); err != nil {
			t.Fatalf("golden %s %s: %v", method, params, err)
		}
		w = legacyNormalize(w, "", nil, "", true, ordered)
		if d := cmp.Diff(w, got); d != "" {
			t.Errorf("%s %s (-zabbix +peregrine):\n%s", method, params, d)
		}
		n++
	}
	if err := sc.Err(); err != nil || n < 100 {
		t.Fatalf("%d cases read (%v)", n, err)
	}
}

// legacyPeregrineOnly are the fields Peregrine adds to Zabbix's objects.
var legacyPeregrineOnly = map[string]bool{"attempt": true, "max_check_attempts": true, "state_type": true,
	"retry_delay": true, "timestamp_precision": true}

// legacyMasked are the fields whose values are masked (see above).
var legacyMasked = map[string]bool{"uuid": true, "timeout": true, "expression": true, "clock": true, "ns": true,
	"lastchange": true, "lastvalue": true, "num": true, "value_min": true, "value_avg": true, "value_max": true}

// legacyNormalize replaces IDs by their names (rev, by the member's key;
// the keys of a preservekeys answer by pk), masks and drops the intended
// differences, and sorts lists unless ordered (the top list only).
func legacyNormalize(v any, key string, rev map[string]map[string]string, pk string, top, ordered bool) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = legacyNormalize(e, key, rev, "", false, false)
		}
		if !(top && ordered) {
			sort.Slice(out, func(i, j int) bool {
				a, _ := json.Marshal(out[i])
				b, _ := json.Marshal(out[j])
				return string(a) < string(b)
			})
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if legacyPeregrineOnly[k] {
				continue
			}
			if k == "acknowledges" {
				out[k] = "*"
				continue
			}
			if top && pk != "" && rev != nil {
				if name, ok := rev[pk][k]; ok {
					k = name
				}
				out[k] = legacyNormalize(e, "", rev, "", false, false)
				continue
			}
			out[k] = legacyNormalize(e, k, rev, "", false, false)
		}
		return out
	case string:
		if legacyMasked[key] {
			return "*"
		}
		if name, ok := rev[key][x]; ok {
			return name
		}
	}
	return v
}

// legacyGetObjects creates, through the API, the objects the peer's
// answers were recorded with (the same calls, in the same order), and
// returns their IDs by name.
func legacyGetObjects(t *testing.T, f *eventFixture) map[string]string {
	ids := map[string]string{}
	one := func(name, method, params, member string) {
		t.Helper()
		for n, v := range ids {
			params = strings.ReplaceAll(params, "@"+n+"@", v)
		}
		ids[name] = f.ids(t, method, params, member)[0]
	}
	one("gid", "hostgroup.create", `{"name":"gg-group"}`, "groupids")
	one("gid2", "hostgroup.create", `{"name":"gg-empty"}`, "groupids")
	one("h1", "host.create", `{"host":"gg-h1","name":"gg host one","description":"gg description","groups":[{"groupid":"@gid@"}],
		"interfaces":[{"type":1,"main":1,"useip":1,"ip":"127.0.0.1","dns":"","port":"10050"}],
		"tags":[{"tag":"env","value":"prod"},{"tag":"role","value":"db"}],"macros":[{"macro":"{$GG}","value":"1"}]}`, "hostids")
	one("h2", "host.create", `{"host":"gg-h2","groups":[{"groupid":"@gid@"}],"tags":[{"tag":"env","value":"test"}],"status":1}`, "hostids")
	for _, it := range []struct{ key, vt, units string }{{"gg.float", "0", ""}, {"gg.uint", "3", "B"}, {"gg.text", "4", ""}} {
		one(it.key, "item.create", `{"hostid":"@h1@","name":"gg item `+it.key+`","key_":"`+it.key+`","type":2,"value_type":`+it.vt+`,"delay":"0","units":"`+it.units+`"}`, "itemids")
	}
	one("gg.two", "item.create", `{"hostid":"@h2@","name":"gg item two","key_":"gg.two","type":2,"value_type":3,"delay":"0","tags":[{"tag":"comp","value":"cpu"}]}`, "itemids")
	one("t1", "trigger.create", `{"description":"gg trigger {HOST.NAME}","expression":"last(/gg-h1/gg.uint)>5","priority":3,"tags":[{"tag":"scope","value":"gg"}]}`, "triggerids")
	ids["if1"] = f.get(t, "hostinterface.get", `{"hostids":"`+ids["h1"]+`"}`)[0]["interfaceid"].(string)
	one("agent", "item.create", `{"hostid":"@h1@","name":"gg agent","key_":"agent.ping","type":0,"value_type":3,"interfaceid":"@if1@","delay":"1m",
		"preprocessing":[{"type":1,"params":"2","error_handler":0,"error_handler_params":""}]}`, "itemids")
	one("vm", "valuemap.create", `{"hostid":"@h1@","name":"gg vm","mappings":[{"value":"1","newvalue":"up"}]}`, "valuemapids")
	f.ok(t, "item.update", `{"itemid":"`+ids["agent"]+`","valuemapid":"`+ids["vm"]+`"}`)
	ids["m1"] = f.get(t, "usermacro.get", `{"hostids":"`+ids["h1"]+`"}`)[0]["hostmacroid"].(string)
	one("m2", "usermacro.create", `{"hostid":"@h1@","macro":"{$GG2}","value":"x","type":1,"description":"sec"}`, "hostmacroids")
	one("gm1", "usermacro.createglobal", `{"macro":"{$GGGLOBAL}","value":"v"}`, "globalmacroids")
	one("mt1", "maintenance.create", `{"name":"gg-maint","active_since":1700000000,"active_till":1900000000,"hostids":["@h1@"],"groupids":["@gid2@"],
		"timeperiods":[{"timeperiod_type":0,"start_date":1700000000,"period":3600}],"tags":[{"tag":"scope","operator":2,"value":"gg"}]}`, "maintenanceids")
	// The value the peer was sent (6 > 5): the trigger's problem.
	var tid uint64
	fmt.Sscan(ids["t1"], &tid)
	f.feed(trigger.Result{TriggerID: tid, Value: trigger.Problem, Clock: 1700003600})
	ids["ev1"] = f.get(t, "problem.get", `{"objectids":"`+ids["t1"]+`"}`)[0]["eventid"].(string)
	return ids
}
