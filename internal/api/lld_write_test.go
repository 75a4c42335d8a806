package api

import (
	"encoding/json"
	"testing"
)

// TestAuditTriggerPrototypes: trigger prototypes are audited as 6.0.14
// audits them (recorded from the peer): resource 31, named by the
// description on add and delete; on update the changed members, new
// integers as the request gave them, old values as stored:
// {"triggerprototype.priority":["update",3,"0"],
// "triggerprototype.comments":["update","c2",""],
// "triggerprototype.discover":["update",0,"1"]}.
func TestAuditTriggerPrototypes(t *testing.T) {
	f := newAuditFixture(t)
	var g struct{ GroupIDs []string }
	json.Unmarshal(mustOK(t, f, "hostgroup.create", `{"name":"au-g"}`), &g)
	var tm struct{ TemplateIDs []string }
	json.Unmarshal(mustOK(t, f, "template.create", `{"host":"au-t","groups":[{"groupid":"`+g.GroupIDs[0]+`"}]}`), &tm)
	var r struct{ ItemIDs []string }
	json.Unmarshal(mustOK(t, f, "discoveryrule.create", `{"hostid":"`+tm.TemplateIDs[0]+`","name":"r","key_":"au.disc","type":2}`), &r)
	mustOK(t, f, "itemprototype.create", `{"hostid":"`+tm.TemplateIDs[0]+`","ruleid":"`+r.ItemIDs[0]+`","name":"p","key_":"p[{#A}]","type":2,"value_type":3}`)
	var tp struct{ TriggerIDs []string }
	json.Unmarshal(mustOK(t, f, "triggerprototype.create", `{"description":"t {#A}","expression":"last(/au-t/p[{#A}])>0","discover":1}`), &tp)
	id := tp.TriggerIDs[0]
	mustOK(t, f, "triggerprototype.update", `{"triggerid":"`+id+`","priority":3,"discover":0,"comments":"c2"}`)
	mustOK(t, f, "triggerprototype.delete", `["`+id+`"]`)
	var recs []map[string]string
	json.Unmarshal(mustOK(t, f, "auditlog.get", `{"filter":{"resourcetype":31},"sortfield":"clock","sortorder":"ASC"}`), &recs)
	want := []map[string]string{
		{"action": "0", "resourceid": id, "resourcename": "t {#A}", "details": ""},
		{"action": "1", "resourceid": id, "resourcename": "t {#A}",
			"details": `{"triggerprototype.priority":["update",3,"0"],"triggerprototype.comments":["update","c2",""],"triggerprototype.discover":["update",0,"1"]}`},
		{"action": "2", "resourceid": id, "resourcename": "t {#A}", "details": ""},
	}
	if len(recs) != len(want) {
		t.Fatalf("records: %v", recs)
	}
	for i, w := range want {
		for k, v := range w {
			if recs[i][k] != v {
				t.Errorf("record %d: %s = %q, want %q", i, k, recs[i][k], v)
			}
		}
	}
}
