package api

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMaintenanceAPI(t *testing.T) {
	f := newWriteFixture(t)
	g := f.ids(t, "hostgroup.create", `{"name":"G"}`, "groupids")[0]
	h := f.ids(t, "host.create", `{"host":"h1","groups":[{"groupid":"`+g+`"}]}`, "hostids")[0]
	mid := f.ids(t, "maintenance.create", `{"name":"night","active_since":1700000000,"active_till":1800000030,
		"groups":[{"groupid":"`+g+`"}],"hostids":["`+h+`"],"tags_evaltype":2,
		"timeperiods":[{"timeperiod_type":2,"every":1,"start_time":3600,"period":7200},{"timeperiod_type":0,"start_date":1700000110,"period":600}],
		"tags":[{"tag":"service","value":"db"}]}`, "maintenanceids")[0]
	ms := f.get(t, "maintenance.get", `{"maintenanceids":["`+mid+`"],"selectHosts":["host"],"selectGroups":["name"],"selectTimeperiods":"extend","selectTags":"extend"}`)
	raw, _ := json.Marshal(ms)
	for _, want := range []string{`"name":"night"`, `"active_till":"1800000000"`, `"maintenance_type":"0"`, `"tags_evaltype":"2"`,
		`"host":"h1"`, `"name":"G"`, `"timeperiod_type":"2"`, `"start_time":"3600"`, `"start_date":"1700000100"`, `"operator":"2"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("maintenance.get lacks %s: %s", want, raw)
		}
	}
	if got := f.get(t, "maintenance.get", `{"hostids":["`+h+`"],"output":["name"]}`); len(got) != 1 {
		t.Errorf("by host: %v", got)
	}
	for _, c := range []struct{ params, want string }{
		{`{"name":"night","active_since":1,"active_till":2000,"hostids":["` + h + `"],"timeperiods":[{"period":600,"start_date":1}]}`, `Maintenance "night" already exists.`},
		{`{"name":"x","active_since":1,"active_till":2000,"hostids":["` + h + `"],"maintenance_type":1,"timeperiods":[{"period":600}]}`, `maintenance without data collection (1) is not supported`},
		{`{"name":"x","active_since":1,"active_till":2000,"hostids":["` + h + `"],"timeperiods":[{"timeperiod_type":4,"period":600}]}`, `Invalid parameter "/1/timeperiods/1/timeperiod_type": monthly periods (4) are not supported`},
		{`{"name":"x","active_since":1,"active_till":2000,"timeperiods":[{"period":600}]}`, `At least one host group or host must be selected.`}, // Zabbix 6.0.14's text (recorded)
		{`{"name":"x","active_since":1,"active_till":2000,"groups":[],"hosts":[],"timeperiods":[{"period":600}]}`, `At least one host group or host must be selected.`},
		{`{"name":"x","active_since":3000,"active_till":2000,"hostids":["` + h + `"],"timeperiods":[{"period":600}]}`, `Invalid parameter "/1/active_till": cannot be less than or equal to the value of parameter "/1/active_since".`}, // Zabbix 6.0.14 (recorded)
		{`{"name":"x","active_since":1,"active_till":2000,"hostids":["999"],"timeperiods":[{"period":600}]}`, "No permissions"},
		{`{"name":"x","active_since":1,"active_till":2000,"hostids":["` + h + `"]}`, `the parameter "timeperiods" is missing`},
	} {
		_, e := f.call(t, "super", "maintenance.create", c.params)
		if e == nil || !strings.Contains(e.Data, c.want) {
			t.Errorf("maintenance.create %s: %+v, want %q", c.params, e, c.want)
		}
	}
	f.ok(t, "maintenance.update", `{"maintenanceid":"`+mid+`","name":"night2","timeperiods":[{"timeperiod_type":3,"every":1,"dayofweek":64,"start_time":0,"period":3600}]}`)
	ms = f.get(t, "maintenance.get", `{"selectTimeperiods":"extend","selectHosts":["hostid"]}`)
	raw, _ = json.Marshal(ms)
	if !strings.Contains(string(raw), `"name":"night2"`) || !strings.Contains(string(raw), `"dayofweek":"64"`) || !strings.Contains(string(raw), `"hostid":"`+h+`"`) {
		t.Fatalf("after update: %s", raw)
	}
	f.ok(t, "maintenance.delete", `["`+mid+`"]`)
	if got := f.get(t, "maintenance.get", `{}`); len(got) != 0 {
		t.Fatalf("after delete: %v", got)
	}
}
