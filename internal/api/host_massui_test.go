package api

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestHostUpdateAsMassUpdate: the calls the web UI's host mass update
// makes (as 6.0's popup.massupdate.host makes them: one host.update of
// every host with the groups, templates, tags and macros worked out
// per host, then valuemap.create/update/delete) answered as 6.0.14
// answered the same calls (recorded on the peer, hosts
// s9-hostmass-a/-b, 2026-11-30):
//   - groups [] (what "Remove" of a host's only group leaves): `Host
//     "s9-hostmass-a" cannot be without host group.`;
//   - templates_clear naming a template the host does not link ("Unlink"
//     with "Clear when unlinking" of a template some hosts lack): done;
//   - inventory fields for a host whose inventory is disabled: `Inventory
//     disabled for host "s9-hostmass-b".`; inventory [] there: done;
//   - macros: stored ones given as {hostmacroid, macro} keep their value
//     and type (a secret too), a changed one takes its new value, type and
//     description, a new one is added; the same macro twice: `Invalid
//     parameter "/1/macros/2": value (macro)=({$N}) already exists.`;
//   - valuemap.create of a name the host has: `Value map "s9vm" already
//     exists.`, a mapping type 9: `Invalid parameter
//     "/1/mappings/1/type": value must be one of 0, 1, 2, 3, 4, 5.`, a
//     name of 65 characters: `Invalid parameter "/1/name": value is too
//     long.`, a mapping of type 1 (at least) with value "abc": `Invalid
//     parameter "/1/mappings/1/value": a floating point value is
//     expected.` (type "x": `Invalid parameter "/1/mappings/1/type": an
//     integer is expected.`, which Peregrine words without the element's
//     index, "/1/mappings/type": a difference docs/api.md lists);
//   - ipmi_username of 17 characters: `Value "uuuuuuuuuuuuuuuuu" is too
//     long for field "ipmi_username" - 17 characters. Allowed length is
//     16 characters.`; host "<script>": `Incorrect characters used for
//     host name "<script>".`.
func TestHostUpdateAsMassUpdate(t *testing.T) {
	f := newPermFixture(t)
	a, b := f.host("web-1"), f.host("db-1")
	linux := f.group("Linux")
	var made struct{ TemplateIDs []string }
	f.mustDo(f.root, "template.create", fmt.Sprintf(`{"host":"mu-t1","groups":[{"groupid":"%d"}]}`, linux), &made)
	f.mustDo(f.root, "host.update", fmt.Sprintf(`{"hostid":"%d","macros":[{"macro":"{$S}","value":"sec","type":1},{"macro":"{$T}","value":"t"}],"inventory_mode":0}`, a), nil)
	f.mustDo(f.root, "host.update", fmt.Sprintf(`{"hostid":"%d","inventory_mode":-1}`, b), nil)
	var hs []struct {
		Macros []struct{ HostMacroID, Macro string }
	}
	f.mustDo(f.root, "host.get", fmt.Sprintf(`{"hostids":["%d"],"output":["hostid"],"selectMacros":["hostmacroid","macro"]}`, a), &hs)
	ids := map[string]string{}
	for _, m := range hs[0].Macros {
		ids[m.Macro] = m.HostMacroID
	}
	for _, tc := range []struct{ method, params, data string }{
		{"host.update", fmt.Sprintf(`[{"hostid":"%d","groups":[]}]`, a), `Host "web-1" cannot be without host group.`},
		{"host.update", fmt.Sprintf(`[{"hostid":"%d","templates":[],"templates_clear":[{"templateid":"%s"}]}]`, a, made.TemplateIDs[0]), ""},
		{"host.update", fmt.Sprintf(`[{"hostid":"%d","inventory":{"os":"x"}}]`, b), `Inventory disabled for host "db-1".`},
		{"host.update", fmt.Sprintf(`[{"hostid":"%d","inventory":[]}]`, b), ""},
		{"host.update", fmt.Sprintf(`[{"hostid":"%d","macros":[{"macro":"{$N}","value":"n"},{"macro":"{$N}","value":"m"}]}]`, b),
			`Invalid parameter "/1/macros/2": value (macro)=({$N}) already exists.`},
		{"host.update", fmt.Sprintf(`[{"hostid":"%d","macros":[{"hostmacroid":"%s","macro":"{$S}"},{"hostmacroid":"%s","macro":"{$T}","value":"t2","type":0,"description":"d"},`+
			`{"macro":"{$N}","value":"n","type":0,"description":""}]},{"hostid":"%d","macros":[{"macro":"{$N}","value":"n","type":0,"description":""}]}]`, a, ids["{$S}"], ids["{$T}"], b), ""},
		{"valuemap.create", fmt.Sprintf(`[{"hostid":"%d","name":"s9vm","mappings":[{"value":"1","newvalue":"Up"}]}]`, a), ""},
		{"valuemap.create", fmt.Sprintf(`[{"hostid":"%d","name":"s9vm","mappings":[{"value":"1","newvalue":"Up"}]}]`, a), `Value map "s9vm" already exists.`},
		{"valuemap.create", fmt.Sprintf(`[{"hostid":"%d","name":"<script>x</script>","mappings":[{"type":9,"value":"1","newvalue":"Up"}]}]`, a),
			`Invalid parameter "/1/mappings/1/type": value must be one of 0, 1, 2, 3, 4, 5.`},
		{"valuemap.create", fmt.Sprintf(`[{"hostid":"%d","name":"%s","mappings":[{"value":"1","newvalue":"Up"}]}]`, a, strings.Repeat("v", 65)), `Invalid parameter "/1/name": value is too long.`},
		{"valuemap.create", fmt.Sprintf(`[{"hostid":"%d","name":"s9t","mappings":[{"type":1,"value":"abc","newvalue":"Up"}]}]`, a),
			`Invalid parameter "/1/mappings/1/value": a floating point value is expected.`},
		{"host.update", fmt.Sprintf(`[{"hostid":"%d","ipmi_username":"%s"}]`, a, strings.Repeat("u", 17)),
			`Value "uuuuuuuuuuuuuuuuu" is too long for field "ipmi_username" - 17 characters. Allowed length is 16 characters.`},
		{"host.update", fmt.Sprintf(`[{"hostid":"%d","host":"<script>"}]`, a), `Incorrect characters used for host name "<script>".`},
	} {
		_, e := f.do(f.root, tc.method, tc.params)
		got := ""
		if e != nil {
			got = e.Data
		}
		if got != tc.data {
			t.Errorf("%s %s: %q, want %q", tc.method, tc.params, got, tc.data)
		}
	}
	// What the macros are after the update, as 6.0.14 had them: {$N} n,
	// {$S} the secret "sec" kept, {$T} t2 with its description.
	snap := f.cat.Snapshot()
	var got []string
	for _, m := range snap.Macros(a) {
		got = append(got, fmt.Sprintf("%s|%s|%d|%s", m.Macro, m.Value, m.Type, m.Description))
	}
	want := []string{"{$S}|sec|1|", "{$T}|t2|0|d", "{$N}|n|0|"}
	if js, _ := json.Marshal(got); len(got) != 3 || !sameSet(got, want) {
		t.Errorf("macros of web-1: %s, want %q", js, want)
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, x := range a {
		m[x]++
	}
	for _, x := range b {
		m[x]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return true
}
