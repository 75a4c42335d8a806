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

// TestAuditHostPrototypes: host prototypes are audited as 6.0.14 audits
// them (recorded from the peer, resource 37): on add the request's
// members with each nested row and its ID, then the name (defaulted to
// the technical one), uuid, flags 2 and the ID; on update the changed
// members as strings, a replaced tag one row deleted and one added,
// deletes first; named by the technical name; a delete without details.
// The peer's rows have database IDs where Peregrine numbers them.
//
//	add:    {"hostprototype.host":["add","{#HN}"],"hostprototype.ruleid":["add","193013"],
//	         "hostprototype.groupLinks[227]":["add"],"hostprototype.groupLinks[227].groupid":["add","314"],
//	         "hostprototype.groupLinks[227].group_prototypeid":["add","227"],"hostprototype.tags[3723]":["add"],
//	         "hostprototype.tags[3723].tag":["add","a"],"hostprototype.tags[3723].value":["add","b"],
//	         "hostprototype.tags[3723].hosttagid":["add","3723"],"hostprototype.macros[8916]":["add"],
//	         "hostprototype.macros[8916].macro":["add","{$M}"],"hostprototype.macros[8916].value":["add","1"],
//	         "hostprototype.macros[8916].hostmacroid":["add","8916"],"hostprototype.name":["add","{#HN}"],
//	         "hostprototype.uuid":["add","13d8…"],"hostprototype.flags":["add","2"],"hostprototype.hostid":["add","15525"]}
//	update: {"hostprototype.tags[3723]":["delete"],"hostprototype.tags[3724]":["add"],
//	         "hostprototype.name":["update","n {#HN}","{#HN}"],"hostprototype.status":["update","1","0"],
//	         "hostprototype.tags[3724].tag":["add","a"],"hostprototype.tags[3724].value":["add","c"],
//	         "hostprototype.tags[3724].hosttagid":["add","3724"]}
func TestAuditHostPrototypes(t *testing.T) {
	f := newAuditFixture(t)
	var g struct{ GroupIDs []string }
	json.Unmarshal(mustOK(t, f, "hostgroup.create", `{"name":"au-g"}`), &g)
	var tm struct{ TemplateIDs []string }
	json.Unmarshal(mustOK(t, f, "template.create", `{"host":"au-t","groups":[{"groupid":"`+g.GroupIDs[0]+`"}]}`), &tm)
	var r struct{ ItemIDs []string }
	json.Unmarshal(mustOK(t, f, "discoveryrule.create", `{"hostid":"`+tm.TemplateIDs[0]+`","name":"r","key_":"au.disc","type":2}`), &r)
	var hp struct{ HostIDs []string }
	json.Unmarshal(mustOK(t, f, "hostprototype.create", `{"host":"{#HN}","ruleid":"`+r.ItemIDs[0]+`","groupLinks":[{"groupid":"`+g.GroupIDs[0]+
		`"}],"tags":[{"tag":"a","value":"b"}],"macros":[{"macro":"{$M}","value":"1"}]}`), &hp)
	id := hp.HostIDs[0]
	var stored []struct{ UUID string }
	json.Unmarshal(mustOK(t, f, "hostprototype.get", `{"hostids":["`+id+`"],"output":["uuid"]}`), &stored)
	if len(stored) != 1 {
		t.Fatalf("host prototype %s not read back", id)
	}
	mustOK(t, f, "hostprototype.update", `{"hostid":"`+id+`","name":"n {#HN}","status":1,"tags":[{"tag":"a","value":"c"}]}`)
	mustOK(t, f, "hostprototype.delete", `["`+id+`"]`)
	var recs []map[string]string
	json.Unmarshal(mustOK(t, f, "auditlog.get", `{"filter":{"resourcetype":37},"sortfield":"clock","sortorder":"ASC"}`), &recs)
	want := []map[string]string{
		{"action": "0", "resourceid": id, "resourcename": "{#HN}", "details": `{"hostprototype.host":["add","{#HN}"],"hostprototype.ruleid":["add","` + r.ItemIDs[0] + `"],` +
			`"hostprototype.groupLinks[1]":["add"],"hostprototype.groupLinks[1].groupid":["add","` + g.GroupIDs[0] + `"],` +
			`"hostprototype.groupLinks[1].group_prototypeid":["add","1"],"hostprototype.tags[1]":["add"],` +
			`"hostprototype.tags[1].tag":["add","a"],"hostprototype.tags[1].value":["add","b"],"hostprototype.tags[1].hosttagid":["add","1"],` +
			`"hostprototype.macros[1]":["add"],"hostprototype.macros[1].macro":["add","{$M}"],"hostprototype.macros[1].value":["add","1"],` +
			`"hostprototype.macros[1].hostmacroid":["add","1"],"hostprototype.name":["add","{#HN}"],"hostprototype.uuid":["add","` + stored[0].UUID + `"],` +
			`"hostprototype.flags":["add","2"],"hostprototype.hostid":["add","` + id + `"]}`},
		{"action": "1", "resourceid": id, "resourcename": "{#HN}", "details": `{"hostprototype.tags[1]":["delete"],"hostprototype.tags[2]":["add"],` +
			`"hostprototype.name":["update","n {#HN}","{#HN}"],"hostprototype.status":["update","1","0"],` +
			`"hostprototype.tags[2].tag":["add","a"],"hostprototype.tags[2].value":["add","c"],"hostprototype.tags[2].hosttagid":["add","2"]}`},
		{"action": "2", "resourceid": id, "resourcename": "{#HN}", "details": ""},
	}
	if len(recs) != len(want) {
		t.Fatalf("records: %v", recs)
	}
	for i, w := range want {
		for k, v := range w {
			if recs[i][k] != v {
				t.Errorf("record %d: %s = %q\nwant %q", i, k, recs[i][k], v)
			}
		}
	}
}

// TestAuditHostPrototypeCopies: a template's host prototype changed
// writes a record for its copy on a linked host too, after its own
// (recorded from 6.0.14, audit_copies.go): on add the copy's rule and
// template first, its group link naming the template's row; on update
// the template's details; on delete none.
func TestAuditHostPrototypeCopies(t *testing.T) {
	f := newAuditFixture(t)
	var g struct{ GroupIDs []string }
	json.Unmarshal(mustOK(t, f, "hostgroup.create", `{"name":"au-g"}`), &g)
	var tm struct{ TemplateIDs []string }
	json.Unmarshal(mustOK(t, f, "template.create", `{"host":"au-t","groups":[{"groupid":"`+g.GroupIDs[0]+`"}]}`), &tm)
	var r struct{ ItemIDs []string }
	json.Unmarshal(mustOK(t, f, "discoveryrule.create", `{"hostid":"`+tm.TemplateIDs[0]+`","name":"r","key_":"au.disc","type":2}`), &r)
	var h struct{ HostIDs []string }
	json.Unmarshal(mustOK(t, f, "host.create", `{"host":"au-h","groups":[{"groupid":"`+g.GroupIDs[0]+`"}],"templates":[{"templateid":"`+tm.TemplateIDs[0]+`"}]}`), &h)
	var hr []struct{ ItemID string }
	json.Unmarshal(mustOK(t, f, "discoveryrule.get", `{"hostids":["`+h.HostIDs[0]+`"],"output":["itemid"]}`), &hr)
	var hp struct{ HostIDs []string }
	json.Unmarshal(mustOK(t, f, "hostprototype.create", `{"host":"{#HN}","ruleid":"`+r.ItemIDs[0]+`","groupLinks":[{"groupid":"`+g.GroupIDs[0]+`"}]}`), &hp)
	var cp []struct{ HostID string }
	json.Unmarshal(mustOK(t, f, "hostprototype.get", `{"discoveryids":["`+hr[0].ItemID+`"],"output":["hostid"]}`), &cp)
	if len(hr) != 1 || len(cp) != 1 {
		t.Fatalf("the host's rule %v, its host prototypes %v", hr, cp)
	}
	id, cid := hp.HostIDs[0], cp[0].HostID
	mustOK(t, f, "hostprototype.update", `{"hostid":"`+id+`","status":1}`)
	mustOK(t, f, "hostprototype.delete", `["`+id+`"]`)
	var recs []map[string]string
	json.Unmarshal(mustOK(t, f, "auditlog.get", `{"filter":{"resourcetype":37},"sortfield":"clock","sortorder":"ASC"}`), &recs)
	upd := `{"hostprototype.status":["update","1","0"]}`
	want := []map[string]string{
		{"action": "0", "resourceid": id},
		{"action": "0", "resourceid": cid, "resourcename": "{#HN}", "details": `{"hostprototype.ruleid":["add","` + hr[0].ItemID + `"],` +
			`"hostprototype.templateid":["add","` + id + `"],"hostprototype.host":["add","{#HN}"],"hostprototype.groupLinks[1]":["add"],` +
			`"hostprototype.groupLinks[1].groupid":["add","` + g.GroupIDs[0] + `"],"hostprototype.groupLinks[1].templateid":["add","1"],` +
			`"hostprototype.groupLinks[1].group_prototypeid":["add","1"],"hostprototype.name":["add","{#HN}"],"hostprototype.flags":["add","2"],` +
			`"hostprototype.hostid":["add","` + cid + `"]}`},
		{"action": "1", "resourceid": id, "details": upd},
		{"action": "1", "resourceid": cid, "details": upd},
		{"action": "2", "resourceid": id, "details": ""},
		{"action": "2", "resourceid": cid, "resourcename": "{#HN}", "details": ""},
	}
	if len(recs) != len(want) {
		t.Fatalf("records: %v", recs)
	}
	for i, w := range want {
		for k, v := range w {
			if recs[i][k] != v {
				t.Errorf("record %d: %s = %q\nwant %q", i, k, recs[i][k], v)
			}
		}
	}
}
