package migrate

import (
	"encoding/json"
	"strings"
	"testing"
)

// A one-host export's contents: the host's own items, rules, web
// scenarios and value maps and the document's triggers and graphs, in a
// form that does not depend on the export's date or the host's
// properties; own is false for a host with value maps only.
func TestHostParts(t *testing.T) {
	doc := func(date, name, items string) string {
		return `{"zabbix_export":{"version":"6.0","date":"` + date + `","hosts":[{"host":"h","name":"` + name + `",
			"items":` + items + `,"valuemaps":[{"name":"m"}]}],"triggers":[{"name":"t","expression":"last(/h/a)>1 and last(/h/b)>1"}]}}`
	}
	a, what, own, err := hostParts(doc("2026-01-01T00:00:00Z", "one", `[{"key":"a","triggers":[{"name":"x"}]},{"key":"b"}]`))
	if err != nil || !own {
		t.Fatalf("%v, own %v", err, own)
	}
	if got := strings.Join(what, ", "); got != "2 items, 1 valuemaps, 1 triggers, 1 item triggers" {
		t.Errorf("what: %s", got)
	}
	b, _, _, _ := hostParts(doc("2026-02-02T00:00:00Z", "two", `[{"key":"a","triggers":[{"name":"x"}]},{"key":"b"}]`))
	if a != b {
		t.Errorf("the date or the host's name changed the contents:\n%s\n%s", a, b)
	}
	c, _, _, _ := hostParts(doc("2026-01-01T00:00:00Z", "one", `[{"key":"a"},{"key":"b"}]`))
	if a == c {
		t.Error("an item's trigger did not change the contents")
	}
	if _, _, own, _ := hostParts(`{"zabbix_export":{"hosts":[{"host":"h","items":[],"valuemaps":[{"name":"m"}]}]}}`); own {
		t.Error("a host with value maps only has contents of its own")
	}
	if _, _, _, err := hostParts("not json"); err == nil {
		t.Error("a broken export was taken")
	}
}

// An action's trigger condition joins on the trigger's hosts and
// description; a name two target triggers share is refused.
func TestTriggerConditionJoinsOnNames(t *testing.T) {
	src := &side{names: map[string]map[string]string{triggerKind: {"76": "h: CPU high"}, "media type": {}}, ids: map[string]map[string]string{}}
	tgt := &side{names: map[string]map[string]string{triggerKind: {"9": "h: CPU high", "10": "h: twice", "11": "h: twice"}},
		ids: map[string]map[string]string{triggerKind: {"h: CPU high": "9", "h: twice": ""}}}
	var a obj
	_ = json.Unmarshal([]byte(`{"name":"a","eventsource":"0","filter":{"evaltype":"0","conditions":[{"conditiontype":"2","operator":"0","value":"76"}]}}`), &a)
	c := actions().canon(a, src)
	r, err := tgt.resolve(c)
	if err != nil {
		t.Fatal(err)
	}
	got := r.(map[string]any)["filter"].(map[string]any)["conditions"].([]any)[0].(map[string]any)["value"]
	if got != "9" {
		t.Errorf("condition value %v, want the target's trigger 9", got)
	}
	src.names[triggerKind]["76"] = "h: twice"
	if _, err := tgt.resolve(actions().canon(a, src)); err == nil || !strings.Contains(err.Error(), "not unique") {
		t.Errorf("an ambiguous trigger: %v", err)
	}
	if why := actions().skip(a); why != "" {
		t.Errorf("a trigger condition is skipped: %s", why)
	}
}

// A discovery action's operations are copied without the escalation and
// condition members 6.0's get returns and its create refuses; a trigger
// action's recovery operations likewise, its operations with them.
func TestDiscoveryActionNoEscalation(t *testing.T) {
	s := &side{names: map[string]map[string]string{"template": {"1": "T"}}}
	var a obj
	_ = json.Unmarshal([]byte(`{"name":"d","eventsource":"1","operations":[{"operationtype":"6","esc_period":"0","esc_step_from":"1","esc_step_to":"1","optemplate":[{"templateid":"1"}]}]}`), &a)
	d := actions().canon(a, s)
	for _, k := range []string{"esc_period", "recovery_operations", "update_operations", "pause_suppressed"} {
		if _, ok := d[k]; ok {
			t.Errorf("a discovery action has %s: %v", k, d)
		}
	}
	op := d["operations"].([]any)[0].(obj)
	for _, k := range []string{"esc_period", "esc_step_from", "esc_step_to", "evaltype"} {
		if _, ok := op[k]; ok {
			t.Errorf("%s copied: %v", k, op)
		}
	}
	if op["optemplate"] == nil {
		t.Errorf("the operation lost its template: %v", op)
	}
	_ = json.Unmarshal([]byte(`{"name":"t","eventsource":"0","operations":[{"operationtype":"0","esc_period":"0","evaltype":"0"}],
		"recovery_operations":[{"operationtype":"11","esc_period":"0","evaltype":"0"}]}`), &a)
	c := actions().canon(a, s)
	if op := c["operations"].([]any)[0].(obj); op["esc_period"] == nil || op["evaltype"] == nil {
		t.Errorf("a trigger action's operation lost its escalation: %v", op)
	}
	if op := c["recovery_operations"].([]any)[0].(obj); op["esc_period"] != nil || op["evaltype"] != nil {
		t.Errorf("a recovery operation kept escalation members: %v", op)
	}
}
