package api

import (
	"encoding/json"
	"testing"
)

// TestRenameShowsInExpressions: after host.update renames a host and
// item.update changes a key, trigger.get (with expandExpression) and
// triggerprototype.get give the new names, and the trigger can be cloned
// from what trigger.get gave. Recorded from 6.0.14 (host s8apifix-h1,
// renamed -h2 then -h3, key s8a.k1 changed to s8a.k2 then s8a.k3, the
// item prototype's s8a.p[{#A}] to s8a.q[{#A}]):
// "last(/s8apifix-h3/s8a.k3)>5 and min(/s8apifix-h3/s8a.k3,5m)>1",
// recovery "last(/s8apifix-h3/s8a.k3)<2", the prototype
// "last(/s8apifix-h3/s8a.q[{#A}])>0 and last(/s8apifix-h3/s8a.k3)>0";
// a calculated item's formula keeps the old names there.
func TestRenameShowsInExpressions(t *testing.T) {
	f := newAuditFixture(t)
	var g struct{ GroupIDs []string }
	json.Unmarshal(mustOK(t, f, "hostgroup.create", `{"name":"rn-g"}`), &g)
	var h struct{ HostIDs []string }
	json.Unmarshal(mustOK(t, f, "host.create", `{"host":"clone-src","groups":[{"groupid":"`+g.GroupIDs[0]+`"}]}`), &h)
	hid := h.HostIDs[0]
	var it struct{ ItemIDs []string }
	json.Unmarshal(mustOK(t, f, "item.create", `{"hostid":"`+hid+`","name":"i","key_":"k1","type":2,"value_type":3}`), &it)
	var r struct{ ItemIDs []string }
	json.Unmarshal(mustOK(t, f, "discoveryrule.create", `{"hostid":"`+hid+`","name":"r","key_":"disc","type":2}`), &r)
	var ip struct{ ItemIDs []string }
	json.Unmarshal(mustOK(t, f, "itemprototype.create", `{"hostid":"`+hid+`","ruleid":"`+r.ItemIDs[0]+`","name":"p","key_":"p[{#A}]","type":2,"value_type":3}`), &ip)
	var tr struct{ TriggerIDs []string }
	json.Unmarshal(mustOK(t, f, "trigger.create", `{"description":"t","expression":"last(/clone-src/k1)>5 and min(/clone-src/k1,5m)>1","recovery_mode":1,"recovery_expression":"last(/clone-src/k1)<2"}`), &tr)
	mustOK(t, f, "triggerprototype.create", `{"description":"tp {#A}","expression":"last(/clone-src/p[{#A}])>0 and last(/clone-src/k1)>0"}`)
	mustOK(t, f, "host.update", `{"hostid":"`+hid+`","host":"renamed"}`)
	mustOK(t, f, "item.update", `{"itemid":"`+it.ItemIDs[0]+`","key_":"k3"}`)
	mustOK(t, f, "itemprototype.update", `{"itemid":"`+ip.ItemIDs[0]+`","key_":"q[{#A}]"}`)
	var got []struct {
		Expression         string
		RecoveryExpression string `json:"recovery_expression"`
	}
	json.Unmarshal(mustOK(t, f, "trigger.get", `{"triggerids":["`+tr.TriggerIDs[0]+`"],"output":["expression","recovery_expression"],"expandExpression":true}`), &got)
	if len(got) != 1 || got[0].Expression != "last(/renamed/k3)>5 and min(/renamed/k3,5m)>1" || got[0].RecoveryExpression != "last(/renamed/k3)<2" {
		t.Fatalf("trigger.get after the renames: %+v", got)
	}
	var protos []struct{ Expression string }
	json.Unmarshal(mustOK(t, f, "triggerprototype.get", `{"discoveryids":["`+r.ItemIDs[0]+`"],"output":["expression"],"expandExpression":true}`), &protos)
	if len(protos) != 1 || protos[0].Expression != "last(/renamed/q[{#A}])>0 and last(/renamed/k3)>0" {
		t.Fatalf("triggerprototype.get after the renames: %+v", protos)
	}
	mustOK(t, f, "trigger.create", `{"description":"clone","expression":"`+got[0].Expression+`","recovery_mode":1,"recovery_expression":"`+got[0].RecoveryExpression+`"}`)
}
