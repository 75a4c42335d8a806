package api

import (
	"encoding/json"
	"testing"
)

// TestAuditDRule: drule.create, .update and .delete are recorded as
// 6.0.14 records them (recorded from the peer's auditlog for the
// conformance case discovery: resource type 23; no details on add and
// delete; on update the changed fields, named by the rule's name before
// the update; a replaced list of checks is not in the details).
func TestAuditDRule(t *testing.T) {
	f := newAuditFixture(t)
	var r struct{ DRuleIDs []string }
	json.Unmarshal(mustOK(t, f, "drule.create", `{"name":"cf-dr-one","iprange":"127.0.0.60","delay":"1","status":1,"dchecks":[{"type":"8","ports":"10050"}]}`), &r)
	mustOK(t, f, "drule.update", `{"druleid":"`+r.DRuleIDs[0]+`","name":"cf-dr-one-renamed","iprange":"127.0.0.61-62","delay":"10m","dchecks":[{"type":"12"},{"type":"8","ports":"22"}]}`)
	mustOK(t, f, "drule.delete", `["`+r.DRuleIDs[0]+`"]`)
	var recs []map[string]string
	json.Unmarshal(mustOK(t, f, "auditlog.get", `{"filter":{"resourcetype":23},"sortfield":"clock","sortorder":"ASC"}`), &recs)
	if len(recs) != 3 {
		t.Fatalf("records: %v", recs)
	}
	want := []struct{ action, name, details string }{
		{"0", "cf-dr-one", ""},
		{"1", "cf-dr-one", `{"drule.name":["update","cf-dr-one-renamed","cf-dr-one"],"drule.iprange":["update","127.0.0.61-62","127.0.0.60"],"drule.delay":["update","10m","1"]}`},
		{"2", "cf-dr-one-renamed", ""},
	}
	for i, w := range want {
		r := recs[i]
		if r["action"] != w.action || r["resourcename"] != w.name || r["details"] != w.details {
			t.Errorf("record %d: %v\nwant action %s, name %s, details %s", i, r, w.action, w.name, w.details)
		}
	}
}
