package migrate

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Two sides naming the same objects with different IDs: canonical forms
// are equal, and resolving gives the target's IDs.
func TestCanonicalJoinsOnNames(t *testing.T) {
	src := &side{names: map[string]map[string]string{"host group": {"5": "web"}, "template": {"10001": "ICMP Ping"}, "proxy": {}}}
	tgt := &side{names: map[string]map[string]string{"host group": {"77": "web"}, "template": {"9": "ICMP Ping"}, "proxy": {}},
		ids: map[string]map[string]string{"host group": {"web": "77"}, "template": {"ICMP Ping": "9"}}}
	host := func(group, tpl string, tags string) obj {
		var o obj
		if err := json.Unmarshal([]byte(`{"host":"h","name":"h","status":"0","proxy_hostid":"0","tls_connect":"2","tls_accept":"3",
			"groups":[{"groupid":"`+group+`"}],"parentTemplates":[{"templateid":"`+tpl+`"}],"interfaces":[],
			"macros":[{"macro":"{$S}","type":"1"},{"macro":"{$A}","value":"1","type":"0"}],"tags":`+tags+`}`), &o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	k := hosts()
	a := k.canon(host("5", "10001", `[{"tag":"a","value":"1"},{"tag":"b","value":"2"}]`), src)
	b := k.canon(host("77", "9", `[{"tag":"b","value":"2"},{"tag":"a","value":"1"}]`), tgt)
	if d := differing(a, b); len(d) != 0 {
		t.Errorf("the same host on two sides differs in %v", d)
	}
	if a["tls_connect"] != "1" || a["tls_accept"] != "1" {
		t.Errorf("PSK settings are compared: %v %v", a["tls_connect"], a["tls_accept"])
	}
	r, err := tgt.resolve(a)
	if err != nil {
		t.Fatal(err)
	}
	got := r.(map[string]any)
	if d := cmp.Diff([]any{map[string]any{"groupid": "77"}}, got["groups"]); d != "" {
		t.Errorf("groups (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]any{map[string]any{"templateid": "9"}}, got["templates"]); d != "" {
		t.Errorf("templates (-want +got):\n%s", d)
	}
	// A reference the target lacks is an error naming it.
	delete(tgt.ids["template"], "ICMP Ping")
	if _, err := tgt.resolve(a); err == nil || err.Error() != `template "ICMP Ping" is not on the target` {
		t.Errorf("resolve without the template: %v", err)
	}
	tgt.ids["template"]["ICMP Ping"] = "9"
	// A dangling ID on the source.
	c := k.canon(host("6", "10001", `[]`), src)
	if _, err := tgt.resolve(c); err == nil || err.Error() != "host group 6 it refers to does not exist on the source" {
		t.Errorf("resolve of a dangling group: %v", err)
	}
}

func TestSecretMacrosAndPSK(t *testing.T) {
	req := obj{"tls_connect": "2", "tls_accept": "7", "macros": []any{map[string]any{"macro": "{$S}", "type": "1"}}}
	var noted []string
	secretMacros(req, nil, func(m string) { noted = append(noted, m) })
	dropPSK(req)
	want := obj{"tls_connect": "1", "tls_accept": "5", "macros": []any{map[string]any{"macro": "{$S}", "type": "1", "value": ""}}}
	if d := cmp.Diff(want, req); d != "" {
		t.Errorf("request (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"{$S}"}, noted); d != "" {
		t.Errorf("noted (-want +got):\n%s", d)
	}
}

func TestMatches(t *testing.T) {
	for _, c := range []struct {
		prefix, name string
		want         bool
	}{
		{"", "anything", true},
		{"s5mig", "s5mig-host-1", true},
		{"s5mig", "{$S5MIG_X}", true},
		{"s5mig", "Linux by Zabbix agent", false},
	} {
		if got := matches(c.prefix, c.name); got != c.want {
			t.Errorf("matches(%q, %q) = %v", c.prefix, c.name, got)
		}
	}
}
