package api

import (
	"fmt"
	"testing"
)

// TestAuditCorrelation: correlation.create, .update and .delete write
// records of resource 34, as 6.0.14 does. Recorded from 6.0.14 (the
// rules s8corr-pair and s8corr-closenew, then an update of the first):
//
//	add: "correlation.name":["add","s8corr-pair"], "correlation.filter":["add"],
//	     "correlation.filter.conditions[14]":["add"],
//	     "correlation.filter.conditions[14].type":["add","3"], ...oldtag, newtag,
//	     "correlation.operations[8]":["add"] (type 0 is the default: not shown),
//	     "correlation.correlationid":["add","6"]
//	update: resourcename the name before; "correlation.name":["update","new","old"];
//	     a changed condition as one deleted and one added.
//
// 6.0 keys conditions and operations by row IDs its API never shows;
// Peregrine keys them by position from 1, without the ID members (an
// intended difference).
func TestAuditCorrelation(t *testing.T) {
	f := newAuditFixture(t)
	var cr struct {
		CorrelationIDs []string `json:"correlationids"`
	}
	f.rpc(fmt.Sprintf(`{"jsonrpc":"2.0","method":"correlation.create","params":{"name":"c1","filter":{"evaltype":0,
		"conditions":[{"type":3,"oldtag":"pair","newtag":"pair"},{"type":1,"tag":"new"}]},"operations":[{"type":0}]},"auth":%q,"id":1}`, f.sid), &cr)
	if len(cr.CorrelationIDs) != 1 {
		t.Fatal("correlation.create failed")
	}
	id := cr.CorrelationIDs[0]
	f.rpc(fmt.Sprintf(`{"jsonrpc":"2.0","method":"correlation.update","params":{"correlationid":%q,"name":"c2"},"auth":%q,"id":1}`, id, f.sid), nil)
	f.rpc(fmt.Sprintf(`{"jsonrpc":"2.0","method":"correlation.delete","params":[%q],"auth":%q,"id":1}`, id, f.sid), nil)
	var recs []map[string]any
	f.rpc(fmt.Sprintf(`{"jsonrpc":"2.0","method":"auditlog.get","params":{"output":["action","resourcetype","resourcename","details"],
		"filter":{"resourceid":%q,"resourcetype":34},"sortfield":"clock","sortorder":"ASC"},"auth":%q,"id":1}`, id, f.sid), &recs)
	// The conditions in the order correlation.get gives them (by type),
	// their members by name.
	want := []string{
		`map[action:0 details:{"correlation.name":["add","c1"],"correlation.filter":["add"],` +
			`"correlation.filter.conditions[1]":["add"],"correlation.filter.conditions[1].tag":["add","new"],` +
			`"correlation.filter.conditions[1].type":["add","1"],` +
			`"correlation.filter.conditions[2]":["add"],"correlation.filter.conditions[2].newtag":["add","pair"],` +
			`"correlation.filter.conditions[2].oldtag":["add","pair"],"correlation.filter.conditions[2].type":["add","3"],` +
			`"correlation.operations[1]":["add"],"correlation.correlationid":["add","` + id + `"]} resourcename:c1 resourcetype:34]`,
		`map[action:1 details:{"correlation.name":["update","c2","c1"]} resourcename:c1 resourcetype:34]`,
		`map[action:2 details: resourcename:c2 resourcetype:34]`,
	}
	if len(recs) != len(want) {
		t.Fatalf("records %v, want %d", recs, len(want))
	}
	for i := range want {
		if got := fmt.Sprint(recs[i]); got != want[i] {
			t.Errorf("record %d:\n%s\nwant\n%s", i, got, want[i])
		}
	}
}
