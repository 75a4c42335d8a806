package api

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// lldFixtureYAML is a template with a trapper discovery rule, an item
// prototype and a trigger prototype, linked to host "h".
const lldFixtureYAML = `zabbix_export:
  version: '6.0'
  groups:
    - name: g
  templates:
    - template: t
      name: t
      groups:
        - name: g
      items:
        - name: plain
          key: lld.plain
          type: TRAP
      discovery_rules:
        - name: rule
          key: lld.disc
          type: TRAP
          lifetime: 1h
          item_prototypes:
            - name: 'p {#X}'
              key: 'lld.p[{#X}]'
              type: TRAP
              trigger_prototypes:
                - expression: 'last(/t/lld.p[{#X}])>1'
                  name: 'tp {#X}'
`

// newLLDFixture is a write fixture holding lldFixtureYAML with the
// host's rule having discovered "a" and "b".
func newLLDFixture(t *testing.T) (f *writeFixture, rule *catalog.Item) {
	t.Helper()
	f = newWriteFixture(t)
	spec, err := catalog.ParseSpec([]byte(lldFixtureYAML))
	if err != nil {
		t.Fatal(err)
	}
	spec.Hosts = []catalog.HostSpec{{Host: "h", Groups: []string{"g"}, Templates: []catalog.TemplateRef{{Name: "t"}}}}
	if _, err := f.cat.Apply(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	rule = f.cat.Snapshot().Lookup("h", "lld.disc")
	if rule == nil || rule.Ext().LLD == nil || len(rule.Ext().LLD.ItemPrototypes) != 1 {
		t.Fatalf("rule not copied to h: %+v", rule)
	}
	proto := rule.Ext().LLD.ItemPrototypes[0]
	res := &catalog.DiscoveryResult{RuleID: rule.ID, Now: 1000, Lifetime: 3600}
	for _, x := range []string{"a", "b"} {
		is := proto.Item
		is.Key, is.Name = "lld.p["+x+"]", "p "+x
		res.Items = append(res.Items, catalog.DiscoveredItem{ProtoID: proto.ID, Item: is})
		tp := rule.Ext().LLD.TriggerPrototypes[0]
		tf := tp.Fields
		tf.Description, tf.Expression, tf.UUID = "tp "+x, "last(/h/lld.p["+x+"])>1", ""
		res.Triggers = append(res.Triggers, catalog.DiscoveredTrigger{ProtoID: tp.ID, Fields: tf})
	}
	if _, err := f.cat.Edit(context.Background(), func(e *catalog.Edit) error {
		_, err := e.ApplyDiscovery(res)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return f, f.cat.Snapshot().Lookup("h", "lld.disc")
}

func (f *writeFixture) must(t *testing.T, method, params string) json.RawMessage {
	t.Helper()
	res, e := f.call(t, "super", method, params)
	if e != nil {
		t.Fatalf("%s %s: %+v", method, params, e)
	}
	return res
}

// TestItemGetLeavesOutRules: item.get, host.get's and template.get's
// selectItems see flags 0 and 4 only; filter.flags selects the rules;
// item.update refuses rules, and a discovered item's members but its
// status, item.delete rules (recorded from 6.0.14 on a host with a
// trapper rule, a prototype and two discovered items).
func TestItemGetLeavesOutRules(t *testing.T) {
	f, rule := newLLDFixture(t)
	s := f.cat.Snapshot()
	h := s.Host("h")
	pa := s.Lookup("h", "lld.p[a]")
	if pa == nil || pa.Discovery == nil {
		t.Fatalf("lld.p[a] not discovered: %+v", pa)
	}
	hid := fmt.Sprint(h.ID)
	keys := func(raw json.RawMessage) string {
		var l []struct {
			Key   string `json:"key_"`
			Flags string
		}
		if err := json.Unmarshal(raw, &l); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		var out []string
		for _, o := range l {
			out = append(out, o.Key+":"+o.Flags)
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct{ params, want string }{
		{`{"hostids":"` + hid + `","output":["key_","flags"],"sortfield":"key_"}`, "lld.p[a]:4 lld.p[b]:4 lld.plain:0"},
		{`{"hostids":"` + hid + `","output":["key_","flags"],"filter":{"flags":1}}`, "lld.disc:1"},
		{`{"hostids":"` + hid + `","output":["key_","flags"],"filter":{"flags":[2,4]},"sortfield":"key_"}`, "lld.p[a]:4 lld.p[b]:4"},
		{`{"itemids":["` + fmt.Sprint(rule.ID) + `"],"output":["key_","flags"]}`, ""},
		{`{"templated":true,"output":["key_","flags"]}`, "lld.plain:0"},
	} {
		if got := keys(f.must(t, "item.get", c.params)); got != c.want {
			t.Errorf("item.get %s: %q, want %q", c.params, got, c.want)
		}
	}
	if got := string(f.must(t, "item.get", `{"hostids":"`+hid+`","countOutput":true}`)); got != `"3"` {
		t.Errorf("countOutput: %s", got)
	}
	var hs []struct{ Items string }
	json.Unmarshal(f.must(t, "host.get", `{"hostids":"`+hid+`","output":["hostid"],"selectItems":"count"}`), &hs)
	if len(hs) != 1 || hs[0].Items != "3" {
		t.Errorf("host.get selectItems count: %+v", hs)
	}
	var ts []struct{ Items []any }
	json.Unmarshal(f.must(t, "template.get", `{"output":["hostid"],"selectItems":["key_"]}`), &ts)
	if len(ts) != 1 || len(ts[0].Items) != 1 {
		t.Errorf("template.get selectItems: %+v", ts)
	}
	// discovered item's rule and discovery (recorded from 6.0.14).
	raw := f.must(t, "item.get", fmt.Sprintf(`{"itemids":"%d","output":["itemid"],"selectDiscoveryRule":["name"],"selectItemDiscovery":["ts_delete","key_","parent_itemid"]}`, pa.ID))
	want := fmt.Sprintf(`[{"discoveryRule":{"itemid":"%d","name":"rule"},"itemDiscovery":{"key_":"lld.p[{#X}]","parent_itemid":"%d","ts_delete":"0"},"itemid":"%d"}]`,
		rule.ID, pa.Discovery.ProtoID, pa.ID)
	if string(raw) != want {
		t.Errorf("selects of a discovered item:\n got %s\nwant %s", raw, want)
	}
	raw = f.must(t, "item.get", fmt.Sprintf(`{"itemids":"%d","output":["itemid"],"selectDiscoveryRule":"extend","selectItemDiscovery":"extend"}`, pa.ID))
	var full []struct {
		DiscoveryRule map[string]any
		ItemDiscovery map[string]any
	}
	if err := json.Unmarshal(raw, &full); err != nil || len(full) != 1 || full[0].DiscoveryRule["lifetime"] != "1h" ||
		full[0].DiscoveryRule["flags"] != "1" || full[0].DiscoveryRule["discover"] != "0" || full[0].DiscoveryRule["lastvalue"] != nil {
		t.Errorf("selectDiscoveryRule extend: %s", raw)
	}
	plain := s.Lookup("h", "lld.plain")
	if got := string(f.must(t, "item.get", fmt.Sprintf(`{"itemids":"%d","output":["itemid"],"selectDiscoveryRule":"extend","selectItemDiscovery":"extend"}`, plain.ID))); got != fmt.Sprintf(`[{"discoveryRule":[],"itemDiscovery":[],"itemid":"%d"}]`, plain.ID) {
		t.Errorf("selects of a plain item: %s", got)
	}
	const noPerm = "No permissions to referred object or it does not exist!"
	for _, c := range []struct{ method, params string }{
		{"item.update", fmt.Sprintf(`{"itemid":"%d","name":"x"}`, rule.ID)},
		{"item.delete", fmt.Sprintf(`["%d"]`, rule.ID)},
	} {
		if _, e := f.call(t, "super", c.method, c.params); e == nil || e.Data != noPerm {
			t.Errorf("%s %s: %+v", c.method, c.params, e)
		}
	}
	f.must(t, "item.update", fmt.Sprintf(`{"itemid":"%d","status":1}`, pa.ID))
	if _, e := f.call(t, "super", "item.update", fmt.Sprintf(`{"itemid":"%d","status":0,"name":"x"}`, pa.ID)); e == nil ||
		e.Code != -32500 || e.Data != `Cannot update "name" for a discovered item "x".` {
		t.Errorf("item.update name of a discovered item: %+v", e)
	}
	f.must(t, "item.delete", fmt.Sprintf(`["%d"]`, pa.ID))
}

// TestLLDGets: discoveryrule.get with its selects, itemprototype.get,
// triggerprototype.get, host.get's selectDiscoveries, in the shapes
// recorded from 6.0.14 (a trapper rule with lifetime 1h, one item and
// one trigger prototype).
func TestLLDGets(t *testing.T) {
	f, rule := newLLDFixture(t)
	rid := fmt.Sprint(rule.ID)
	pid := fmt.Sprint(rule.Ext().LLD.ItemPrototypes[0].ID)
	tid := fmt.Sprint(rule.Ext().LLD.TriggerPrototypes[0].ID)
	hid := fmt.Sprint(rule.HostID)
	check := func(method, params, want string) {
		t.Helper()
		if got := string(f.must(t, method, params)); got != want {
			t.Errorf("%s %s:\n got %s\nwant %s", method, params, got, want)
		}
	}
	check("discoveryrule.get", `{"itemids":"`+rid+`","output":["key_","lifetime","flags","state","error"],"selectFilter":"extend","selectLLDMacroPaths":"extend","selectOverrides":"extend","selectItems":["key_"],"selectTriggers":["description"],"selectHostPrototypes":["host"],"selectHosts":["host"]}`,
		`[{"error":"","filter":{"conditions":[],"eval_formula":"","evaltype":"0","formula":""},"flags":"1","hostPrototypes":[],"hosts":[{"host":"h","hostid":"`+hid+`"}],"itemid":"`+rid+`","items":[{"itemid":"`+pid+`","key_":"lld.p[{#X}]"}],"key_":"lld.disc","lifetime":"1h","lld_macro_paths":[],"overrides":[],"state":"0","triggers":[{"description":"tp {#X}","triggerid":"`+tid+`"}]}]`)
	check("discoveryrule.get", `{"hostids":"`+hid+`","countOutput":true}`, `"1"`)
	check("discoveryrule.get", `{"templated":true,"output":["key_","templateid"]}`, fmt.Sprintf(`[{"itemid":"%d","key_":"lld.disc","templateid":"0"}]`, rule.TemplateID))
	check("itemprototype.get", `{"discoveryids":"`+rid+`","output":["key_","flags","discover","lifetime"],"selectDiscoveryRule":["name"],"selectTriggers":["description"],"selectHosts":["host"],"selectTags":"extend"}`,
		`[{"discover":"0","discoveryRule":{"itemid":"`+rid+`","name":"rule"},"flags":"2","hosts":[{"host":"h","hostid":"`+hid+`"}],"itemid":"`+pid+`","key_":"lld.p[{#X}]","lifetime":"30d","tags":[],"triggers":[{"description":"tp {#X}","triggerid":"`+tid+`"}]}]`)
	check("triggerprototype.get", `{"discoveryids":"`+rid+`","output":["description","flags","discover"],"selectDiscoveryRule":["name"],"selectHosts":["host"]}`,
		`[{"description":"tp {#X}","discover":"0","discoveryRule":{"itemid":"`+rid+`","name":"rule"},"flags":"2","hosts":[{"host":"h","hostid":"`+hid+`"}],"triggerid":"`+tid+`"}]`)
	check("host.get", `{"hostids":"`+hid+`","output":["hostid"],"selectItems":"count","selectDiscoveries":"count"}`, `[{"discoveries":"1","hostid":"`+hid+`","items":"3"}]`)
	check("host.get", `{"hostids":"`+hid+`","output":["hostid"],"selectDiscoveries":["key_","lifetime"]}`, `[{"discoveries":[{"itemid":"`+rid+`","key_":"lld.disc","lifetime":"1h"}],"hostid":"`+hid+`"}]`)
	check("template.get", `{"output":["host"],"selectDiscoveries":"count"}`, fmt.Sprintf(`[{"discoveries":"1","host":"t","templateid":"%d"}]`, f.cat.Snapshot().TemplateByName("t").ID))
	// A discovered trigger has flags 4.
	n := 0
	for i := range f.cat.Snapshot().Triggers() {
		tr := &f.cat.Snapshot().Triggers()[i]
		n++
		if tr.Discovery != nil && triggerFlags(tr) != "4" {
			t.Errorf("discovered trigger %d: flags %s", tr.ID, triggerFlags(tr))
		}
	}
	if n != 2 {
		t.Errorf("%d triggers, want the 2 discovered", n)
	}
}

// TestLLDFilterObject: eval_formula as 6.0.14 gives it (recorded: and
// "A and B"; and/or over two macros "A and B").
func TestLLDFilterObject(t *testing.T) {
	f := catalog.LLDFilter{EvalType: catalog.EvalAnd, Conditions: []catalog.LLDCondition{
		{Macro: "{#X}", Value: "^[ab]$", Operator: 8, FormulaID: "A"}, {Macro: "{#Y}", Operator: 13, FormulaID: "B"}}}
	if got := lldEvalFormula(f); got != "A and B" {
		t.Errorf("and: %q", got)
	}
	f.EvalType = catalog.EvalAndOr
	f.Conditions = append(f.Conditions, catalog.LLDCondition{Macro: "{#X}", Value: "c", Operator: 8, FormulaID: "C"})
	if got := lldEvalFormula(f); got != "(A or C) and B" {
		t.Errorf("and/or: %q", got)
	}
}
