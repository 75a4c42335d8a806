package api

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestItemLogTimeFmtAPI: logtimefmt is stored and returned on items of
// every value type, updated, and refused over 64 characters in 6.0's
// words (recorded from 6.0.14: item.create kept it on a float trapper
// item and a log one; a 70-character one was "Value "x…x" is too long
// for field "logtimefmt" - 70 characters. Allowed length is 64
// characters.").
func TestItemLogTimeFmtAPI(t *testing.T) {
	f, _, _ := newIfaceFixture(t)
	g := f.ids(t, "hostgroup.create", `{"name":"G"}`, "groupids")[0]
	hid := f.ids(t, "host.create", fmt.Sprintf(`{"host":"lt","groups":[{"groupid":%q}]}`, g), "hostids")[0]
	a := f.ids(t, "item.create", fmt.Sprintf(`{"hostid":%q,"name":"a","key_":"a.float","type":2,"value_type":0,"logtimefmt":"yyyyMMdd:hhmmss"}`, hid), "itemids")[0]
	b := f.ids(t, "item.create", fmt.Sprintf(`{"hostid":%q,"name":"b","key_":"b.log","type":2,"value_type":2}`, hid), "itemids")[0]
	f.ids(t, "item.update", fmt.Sprintf(`{"itemid":%q,"logtimefmt":"hh:mm:sszyyyy/MM/dd"}`, b), "itemids")
	got := f.get(t, "item.get", fmt.Sprintf(`{"hostids":%q,"output":["key_","logtimefmt"],"sortfield":"key_"}`, hid))
	want := []map[string]any{{"itemid": a, "key_": "a.float", "logtimefmt": "yyyyMMdd:hhmmss"}, {"itemid": b, "key_": "b.log", "logtimefmt": "hh:mm:sszyyyy/MM/dd"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("item.get (-want +got):\n%s", d)
	}
	long := strings.Repeat("x", 70)
	_, e := f.call(t, "super", "item.create", fmt.Sprintf(`{"hostid":%q,"name":"c","key_":"c.log","type":2,"value_type":2,"logtimefmt":%q}`, hid, long))
	if wantErr := `Value "` + long + `" is too long for field "logtimefmt" - 70 characters. Allowed length is 64 characters.`; e == nil || e.Data != wantErr {
		t.Fatalf("a 70-character logtimefmt: %+v", e)
	}
}
