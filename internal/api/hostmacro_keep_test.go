package api

import (
	"fmt"
	"testing"
)

// TestHostUpdateKeepsSecretMacro: host.update (and template.update) with
// a stored macro named by its hostmacroid and no value keeps the stored
// value and type, as 6.0's frontend saves a secret macro it never read
// (recorded from 6.0.14: the secret stays, host.get shows no value); a
// macro of another host named so is refused as before, and a new macro
// without a value too.
func TestHostUpdateKeepsSecretMacro(t *testing.T) {
	f := newPermFixture(t)
	g := f.group("Linux")
	var created struct {
		HostIDs []string `json:"hostids"`
	}
	f.mustDo(f.root, "host.create", fmt.Sprintf(`{"host":"km","groups":[{"groupid":"%d"}],"macros":[{"macro":"{$A}","value":"1"},{"macro":"{$S}","value":"sec","type":1}]}`, g), &created)
	hid := created.HostIDs[0]
	var ms []struct{ HostMacroID, Macro, Value, Type string }
	read := func() map[string]string {
		ms = nil
		f.mustDo(f.root, "usermacro.get", fmt.Sprintf(`{"hostids":[%q],"output":["hostmacroid","macro","value","type"]}`, hid), &ms)
		out := map[string]string{}
		for _, m := range ms {
			out[m.Macro] = m.Type + ":" + m.Value
		}
		return out
	}
	read()
	ids := map[string]string{}
	for _, m := range ms {
		ids[m.Macro] = m.HostMacroID
	}
	f.mustDo(f.root, "host.update", fmt.Sprintf(`{"hostid":%q,"macros":[{"hostmacroid":%q,"macro":"{$A}","value":"2","type":0},{"hostmacroid":%q,"macro":"{$S}"}]}`, hid, ids["{$A}"], ids["{$S}"]), nil)
	if got := read(); got["{$A}"] != "0:2" || got["{$S}"] != "1:" || len(got) != 2 {
		t.Fatalf("after the update: %v", got)
	}
	snap := f.cat.Snapshot()
	for _, m := range snap.Macros(snap.Host("km").ID) {
		if m.Macro == "{$S}" && (m.Value != "sec" || m.Type != 1) {
			t.Errorf("stored secret changed: type %d, same value %v", m.Type, m.Value == "sec")
		}
	}
	if _, e := f.do(f.root, "host.update", fmt.Sprintf(`{"hostid":%q,"macros":[{"macro":"{$N}"}]}`, hid)); e == nil || e.Data != `Invalid parameter "/1/macros/1": the parameter "value" is missing.` {
		t.Errorf("a new macro without a value: %+v", e)
	}
}
