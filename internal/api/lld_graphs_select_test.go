package api

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestDiscoveryRuleSelectGraphs: discoveryrule.get's selectGraphs gives
// the rule's graph prototypes, as a count or objects (recorded from
// 6.0.14: {"itemid":"…","graphs":"1"} and
// {"graphs":[{"graphid":"…","name":"uitpl g {#X}"}]} for a rule with
// one graph prototype).
func TestDiscoveryRuleSelectGraphs(t *testing.T) {
	f := newAuditFixture(t)
	var g struct{ GroupIDs []string }
	json.Unmarshal(mustOK(t, f, "hostgroup.create", `{"name":"sg-g"}`), &g)
	var tm struct{ TemplateIDs []string }
	json.Unmarshal(mustOK(t, f, "template.create", `{"host":"sg-t","groups":[{"groupid":"`+g.GroupIDs[0]+`"}]}`), &tm)
	var r struct{ ItemIDs []string }
	json.Unmarshal(mustOK(t, f, "discoveryrule.create", `{"hostid":"`+tm.TemplateIDs[0]+`","name":"r","key_":"sg.disc","type":2}`), &r)
	var ip struct{ ItemIDs []string }
	json.Unmarshal(mustOK(t, f, "itemprototype.create", `{"hostid":"`+tm.TemplateIDs[0]+`","ruleid":"`+r.ItemIDs[0]+`","name":"p","key_":"p[{#X}]","type":2,"value_type":3}`), &ip)
	var gp struct{ GraphIDs []string }
	json.Unmarshal(mustOK(t, f, "graphprototype.create", `{"name":"g {#X}","width":900,"height":200,"gitems":[{"itemid":"`+ip.ItemIDs[0]+`","color":"00AA00"}]}`), &gp)
	same := func(a, b string) bool {
		var x, y any
		return json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
	}
	rule := `"itemids":["` + r.ItemIDs[0] + `"],"output":["itemid"]`
	if got, want := string(mustOK(t, f, "discoveryrule.get", `{`+rule+`,"selectGraphs":"count"}`)), `[{"itemid":"`+r.ItemIDs[0]+`","graphs":"1"}]`; !same(got, want) {
		t.Errorf("selectGraphs count: %s, want %s", got, want)
	}
	if got, want := string(mustOK(t, f, "discoveryrule.get", `{`+rule+`,"selectGraphs":["graphid","name"]}`)),
		`[{"itemid":"`+r.ItemIDs[0]+`","graphs":[{"graphid":"`+gp.GraphIDs[0]+`","name":"g {#X}"}]}]`; !same(got, want) {
		t.Errorf("selectGraphs list: %s, want %s", got, want)
	}
}
