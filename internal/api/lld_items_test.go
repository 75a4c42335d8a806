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
	if rule == nil || rule.LLD == nil || len(rule.LLD.ItemPrototypes) != 1 {
		t.Fatalf("rule not copied to h: %+v", rule)
	}
	proto := rule.LLD.ItemPrototypes[0]
	res := &catalog.DiscoveryResult{RuleID: rule.ID, Now: 1000, Lifetime: 3600}
	for _, x := range []string{"a", "b"} {
		is := proto.Item
		is.Key, is.Name = "lld.p["+x+"]", "p "+x
		res.Items = append(res.Items, catalog.DiscoveredItem{ProtoID: proto.ID, Item: is})
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
// item.update refuses rules and discovered items, item.delete rules
// (recorded from 6.0.14 on a host with a trapper rule, a prototype and
// two discovered items).
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
		{"item.update", fmt.Sprintf(`{"itemid":"%d","status":1}`, pa.ID)},
		{"item.delete", fmt.Sprintf(`["%d"]`, rule.ID)},
	} {
		if _, e := f.call(t, "super", c.method, c.params); e == nil || e.Data != noPerm {
			t.Errorf("%s %s: %+v", c.method, c.params, e)
		}
	}
	f.must(t, "item.delete", fmt.Sprintf(`["%d"]`, pa.ID))
}
