package api

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// TestTriggerDependencies replays against Peregrine what was recorded
// from Zabbix 6.0.14 with a chain TD -> TM2 -> TM (TD depends on TM2,
// which depends on TM): trigger.adddependencies, deletedependencies,
// trigger.update's dependencies and their refusals, each answer as the
// peer gave it, with its trigger IDs replaced by the names below.
func TestTriggerDependencies(t *testing.T) {
	f := newEventFixture(t)
	ids := f.ids(t, "trigger.create", `[{"description":"TM","expression":"last(/web-1/load)>0"},
		{"description":"TM2","expression":"last(/web-1/errors)>0"},
		{"description":"TD","expression":"last(/db-1/load)>0"}]`, "triggerids")
	ids = append(ids, "999999")
	r := strings.NewReplacer("TM2_ID", ids[1], "TM_ID", ids[0], "TD_ID", ids[2], "NONE_ID", ids[3])
	f.ok(t, "trigger.update", r.Replace(`[{"triggerid":"TM2_ID","dependencies":[{"triggerid":"TM_ID"}]},{"triggerid":"TD_ID","dependencies":[{"triggerid":"TM2_ID"}]}]`))

	cases := []struct{ method, params, result, err string }{
		{"trigger.update", `{"triggerid":"TM_ID","dependencies":[{"triggerid":"TM_ID"}]}`, "",
			`-32602 Trigger "TM" cannot depend on the trigger "TM", because a circular linkage ("TM" -> "TM") would occur.`},
		{"trigger.update", `{"triggerid":"TM_ID","dependencies":[{"triggerid":"TD_ID"}]}`, "",
			`-32602 Trigger "TM" cannot depend on the trigger "TD", because a circular linkage ("TD" -> "TM" -> "TM2" -> "TD") would occur.`},
		{"trigger.update", `{"triggerid":"TM2_ID","dependencies":[{"triggerid":"TD_ID"}]}`, "",
			`-32602 Trigger "TM2" cannot depend on the trigger "TD", because a circular linkage ("TD" -> "TM2" -> "TD") would occur.`},
		{"trigger.update", `{"triggerid":"TM_ID","dependencies":[{"triggerid":"NONE_ID"}]}`, "",
			`-32500 No permissions to referred object or it does not exist!`},
		{"trigger.update", `{"triggerid":"TD_ID","dependencies":[{"triggerid":"TM2_ID"},{"triggerid":"TM2_ID"}]}`, "",
			`-32602 Invalid parameter "/1/dependencies/2": value (triggerid)=(TM2_ID) already exists.`},
		{"trigger.adddependencies", `{"triggerid":"TM_ID","dependsOnTriggerid":"TD_ID"}`, "",
			`-32602 Trigger "TM" cannot depend on the trigger "TD", because a circular linkage ("TD" -> "TM" -> "TM2" -> "TD") would occur.`},
		{"trigger.adddependencies", `{"triggerid":"TM_ID","dependsOnTriggerid":"TM_ID"}`, "",
			`-32602 Trigger "TM" cannot depend on the trigger "TM", because a circular linkage ("TM" -> "TM") would occur.`},
		{"trigger.adddependencies", `{"triggerid":"TD_ID","dependsOnTriggerid":"TM2_ID"}`, "",
			`-32602 The dependency of trigger "TD" on trigger "TM2" already exists.`},
		{"trigger.adddependencies", `{"triggerid":"TD_ID","dependsOnTriggerid":"NONE_ID"}`, "",
			`-32500 No permissions to referred object or it does not exist!`},
		{"trigger.adddependencies", `{"triggerid":"NONE_ID","dependsOnTriggerid":"TD_ID"}`, "",
			`-32500 No permissions to referred object or it does not exist!`},
		{"trigger.adddependencies", `{"triggerid":"TD_ID"}`, "",
			`-32602 Invalid parameter "/1": the parameter "dependsOnTriggerid" is missing.`},
		{"trigger.adddependencies", `{"triggerid":"TD_ID","dependsOnTriggerid":"TM_ID","x":1}`, "",
			`-32602 Invalid parameter "/1": unexpected parameter "x".`},
		{"trigger.adddependencies", `[]`, "", `-32602 Invalid parameter "/": cannot be empty.`},
		{"trigger.adddependencies", `[{"triggerid":"TD_ID","dependsOnTriggerid":"TM_ID"},{"triggerid":"TD_ID","dependsOnTriggerid":"TM_ID"}]`, "",
			`-32602 Invalid parameter "/2": value (triggerid, dependsOnTriggerid)=(TD_ID, TM_ID) already exists.`},
		{"trigger.adddependencies", `{"triggerid":"abc","dependsOnTriggerid":"TM_ID"}`, "",
			`-32602 Invalid parameter "/1/triggerid": a number is expected.`},
		{"trigger.deletedependencies", `{"triggerid":"NONE_ID"}`, "", `-32500 No permissions to referred object or it does not exist!`},
		{"trigger.deletedependencies", `[]`, "", `-32602 Invalid parameter "/": cannot be empty.`},
		{"trigger.deletedependencies", `{"triggerid":"TD_ID","x":1}`, "", `-32602 Invalid parameter "/1": unexpected parameter "x".`},
		{"trigger.deletedependencies", `{"triggerid":"TD_ID","dependsOnTriggerid":"TM2_ID"}`, "",
			`-32602 Invalid parameter "/1": unexpected parameter "dependsOnTriggerid".`},
		{"trigger.deletedependencies", `{}`, "", `-32602 Invalid parameter "/": cannot be empty.`},
		{"trigger.deletedependencies", `[{"triggerid":"TD_ID"},{"triggerid":"TD_ID"}]`, "",
			`-32602 Invalid parameter "/2": value (triggerid)=(TD_ID) already exists.`},
		// The changes, as the peer answered them and trigger.get shows them.
		{"trigger.deletedependencies", `{"triggerid":"TD_ID"}`, `{"triggerids":["TD_ID"]}`, ""},
		{"trigger.get", `{"triggerids":["TD_ID"],"output":["triggerid"],"selectDependencies":["description"]}`, `[{"triggerid":"TD_ID","dependencies":[]}]`, ""},
		{"trigger.adddependencies", `[{"triggerid":"TD_ID","dependsOnTriggerid":"TM2_ID"},{"triggerid":"TD_ID","dependsOnTriggerid":"TM_ID"}]`, `{"triggerids":["TD_ID"]}`, ""},
		{"trigger.get", `{"triggerids":["TD_ID"],"output":["triggerid"],"selectDependencies":["description"]}`,
			`[{"triggerid":"TD_ID","dependencies":[{"triggerid":"TM_ID","description":"TM"},{"triggerid":"TM2_ID","description":"TM2"}]}]`, ""},
		{"trigger.get", `{"triggerids":["TD_ID"],"output":["triggerid"],"selectDependencies":"count"}`, `[{"triggerid":"TD_ID"}]`, ""},
		{"trigger.get", `{"triggerids":["TM_ID"],"output":["triggerid"],"selectDependencies":["description"]}`, `[{"triggerid":"TM_ID","dependencies":[]}]`, ""},
	}
	for _, c := range cases {
		params := r.Replace(c.params)
		res, e := f.call(t, "super", c.method, params)
		got := ""
		if e != nil {
			got = strconv.Itoa(e.Code) + " " + e.Data
		}
		if want := r.Replace(c.err); got != want {
			t.Errorf("%s %s: error %q, want %q", c.method, params, got, want)
			continue
		}
		if c.result != "" && !jsonEqual(res, r.Replace(c.result)) {
			t.Errorf("%s %s: %s, want %s", c.method, params, res, r.Replace(c.result))
		}
	}
}

// jsonEqual compares a JSON answer with the one wanted, whatever the
// order of the members.
func jsonEqual(got []byte, want string) bool {
	var a, b any
	if json.Unmarshal(got, &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
		return false
	}
	ga, _ := json.Marshal(a)
	gb, _ := json.Marshal(b)
	return string(ga) == string(gb)
}
