package api

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestItemTrapHostsAPI: trapper_hosts and allow_traps are stored,
// returned by item.get, updated, and bad values refused in 6.0.14's
// words (recorded with item.create on 6.0.14: the messages below; it
// kept trapper_hosts "300.1.1.1" as a DNS name and "{$FOO}" as a user
// macro, and refused trapper_hosts on an HTTP agent item with
// allow_traps 0).
func TestItemTrapHostsAPI(t *testing.T) {
	f, _, _ := newIfaceFixture(t)
	g := f.ids(t, "hostgroup.create", `{"name":"G"}`, "groupids")[0]
	hid := f.ids(t, "host.create", fmt.Sprintf(`{"host":"th","groups":[{"groupid":%q}]}`, g), "hostids")[0]
	a := f.ids(t, "item.create", fmt.Sprintf(`{"hostid":%q,"name":"a","key_":"a","type":2,"value_type":3,"trapper_hosts":"127.0.0.2, {HOST.CONN},300.1.1.1"}`, hid), "itemids")[0]
	b := f.ids(t, "item.create", fmt.Sprintf(`{"hostid":%q,"name":"b","key_":"b","type":19,"value_type":4,"url":"http://x","delay":"1m","allow_traps":1,"trapper_hosts":"{$FOO}"}`, hid), "itemids")[0]
	c := f.ids(t, "item.create", fmt.Sprintf(`{"hostid":%q,"name":"c","key_":"c","type":2,"value_type":3}`, hid), "itemids")[0]
	f.ids(t, "item.update", fmt.Sprintf(`{"itemid":%q,"trapper_hosts":"10.0.0.0/8"}`, c), "itemids")
	got := f.get(t, "item.get", fmt.Sprintf(`{"hostids":%q,"output":["key_","trapper_hosts","allow_traps"],"sortfield":"key_"}`, hid))
	want := []map[string]any{
		{"itemid": a, "key_": "a", "trapper_hosts": "127.0.0.2, {HOST.CONN},300.1.1.1", "allow_traps": "0"},
		{"itemid": b, "key_": "b", "trapper_hosts": "{$FOO}", "allow_traps": "1"},
		{"itemid": c, "key_": "c", "trapper_hosts": "10.0.0.0/8", "allow_traps": "0"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("item.get (-want +got):\n%s", d)
	}
	// Turning trapping off while the list stays is refused.
	if _, e := f.call(t, "super", "item.update", fmt.Sprintf(`{"itemid":%q,"allow_traps":0}`, b)); e == nil || e.Data != `Incorrect value for field "trapper_hosts": should be empty.` {
		t.Fatalf("allow_traps 0 with a list: %+v", e)
	}
	for _, tc := range []struct{ params, data string }{
		{`"type":2,"trapper_hosts":"127.0.0.0/33"`, `Incorrect value for field "trapper_hosts": invalid address range "127.0.0.0/33".`},
		{`"type":2,"trapper_hosts":"bad_host!"`, `Incorrect value for field "trapper_hosts": invalid address range "bad_host!".`},
		{`"type":2,"trapper_hosts":"{HOST.XYZ}"`, `Incorrect value for field "trapper_hosts": invalid address range "{HOST.XYZ}".`},
		{`"type":2,"trapper_hosts":"127.0.0.1,,::1"`, `Incorrect value for field "trapper_hosts": invalid address range "".`},
		{`"type":2,"trapper_hosts":"{$A}/24"`, `Incorrect value for field "trapper_hosts": invalid address range "{$A}/24".`},
		{`"type":19,"url":"http://x","delay":"1m","allow_traps":0,"trapper_hosts":"127.0.0.2"`, `Incorrect value for field "trapper_hosts": should be empty.`},
		{`"type":19,"url":"http://x","delay":"1m","allow_traps":2`, `Invalid parameter "/allow_traps": value must be one of 0, 1.`},
	} {
		_, e := f.call(t, "super", "item.create", fmt.Sprintf(`{"hostid":%q,"name":"x","key_":"x","value_type":3,%s}`, hid, tc.params))
		if e == nil || e.Code != -32602 || e.Data != tc.data {
			t.Errorf("%s: %+v, want %s", tc.params, e, tc.data)
		}
	}
}
