package api

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestValueMapMethods runs valuemap.create/get/update/delete and item
// valuemapid through the API: the 6.0 shapes, the item's link, the
// errors Zabbix gives, and a deleted map leaving its item without one.
func TestValueMapMethods(t *testing.T) {
	f := newWriteFixture(t)
	g := f.ids(t, "hostgroup.create", `{"name":"G"}`, "groupids")[0]
	h := f.ids(t, "host.create", fmt.Sprintf(`[{"host":"a","groups":[{"groupid":"%s"}]},{"host":"b","groups":[{"groupid":"%s"}]}]`, g, g), "hostids")
	item := f.ids(t, "item.create", fmt.Sprintf(`{"hostid":"%s","key_":"state","name":"State","type":2,"value_type":3}`, h[0]), "itemids")[0]
	vm := f.ids(t, "valuemap.create", fmt.Sprintf(`{"hostid":"%s","name":"Service state","mappings":[
		{"value":"0","newvalue":"Down"},{"type":"0","value":"1","newvalue":"Up"},{"type":5,"newvalue":"Unknown"}]}`, h[0]), "valuemapids")[0]
	f.ok(t, "item.update", fmt.Sprintf(`{"itemid":"%s","valuemapid":"%s"}`, item, vm))

	var maps []struct {
		ValueMapID, HostID, Name string
		Mappings                 []struct{ Type, Value, NewValue string }
	}
	if err := json.Unmarshal(f.ok(t, "valuemap.get", fmt.Sprintf(`{"output":"extend","selectMappings":"extend","hostids":["%s"]}`, h[0])), &maps); err != nil {
		t.Fatal(err)
	}
	if len(maps) != 1 || maps[0].ValueMapID != vm || maps[0].HostID != h[0] || maps[0].Name != "Service state" ||
		len(maps[0].Mappings) != 3 || maps[0].Mappings[1].NewValue != "Up" || maps[0].Mappings[2].Type != "5" {
		t.Fatalf("valuemap.get: %+v", maps)
	}
	itemMap := func() string {
		var items []struct{ ValueMapID string }
		json.Unmarshal(f.ok(t, "item.get", fmt.Sprintf(`{"output":["valuemapid"],"itemids":["%s"]}`, item)), &items)
		if len(items) != 1 {
			t.Fatalf("item.get: %+v", items)
		}
		return items[0].ValueMapID
	}
	if got := itemMap(); got != vm {
		t.Fatalf("item valuemapid %s, want %s", got, vm)
	}

	bad := func(token, method, params, want string) {
		t.Helper()
		_, e := f.call(t, token, method, params)
		if e == nil || !strings.Contains(e.Data, want) {
			t.Errorf("%s %s: %+v, want an error containing %q", method, params, e, want)
		}
	}
	bad("super", "valuemap.create", fmt.Sprintf(`{"hostid":"%s","name":"x"}`, h[0]), `"/1": the parameter "mappings" is missing`)
	bad("super", "valuemap.create", fmt.Sprintf(`{"hostid":"%s","name":"x","mappings":[{"type":7,"value":"1","newvalue":"a"}]}`, h[0]), `"/1/mappings/1/type"`)
	bad("super", "valuemap.create", fmt.Sprintf(`{"hostid":"%s","name":"Service state","mappings":[{"value":"1","newvalue":"a"}]}`, h[0]), `already exists`)
	bad("super", "valuemap.create", fmt.Sprintf(`{"hostid":"%s","name":"r","mappings":[{"type":3,"value":"a-b","newvalue":"a"}]}`, h[0]), `"/1/mappings/1/value"`)
	bad("user", "valuemap.create", fmt.Sprintf(`{"hostid":"%s","name":"y","mappings":[{"value":"1","newvalue":"a"}]}`, h[0]), "No permissions")
	other := f.ids(t, "valuemap.create", fmt.Sprintf(`{"hostid":"%s","name":"Other","mappings":[{"value":"1","newvalue":"a"}]}`, h[1]), "valuemapids")[0]
	bad("super", "item.update", fmt.Sprintf(`{"itemid":"%s","valuemapid":"%s"}`, item, other), `"/1/valuemapid"`)

	f.ok(t, "valuemap.update", fmt.Sprintf(`{"valuemapid":"%s","name":"State"}`, vm))
	if err := json.Unmarshal(f.ok(t, "valuemap.get", fmt.Sprintf(`{"output":"extend","selectMappings":"extend","valuemapids":"%s"}`, vm)), &maps); err != nil || maps[0].Name != "State" || len(maps[0].Mappings) != 3 {
		t.Fatalf("after a rename: %+v (%v)", maps, err)
	}
	f.ok(t, "valuemap.delete", fmt.Sprintf(`["%s"]`, vm))
	if got := itemMap(); got != "0" {
		t.Errorf("item valuemapid %s after its map was deleted, want 0", got)
	}
	if err := json.Unmarshal(f.ok(t, "valuemap.get", `{"output":"extend"}`), &maps); err != nil || len(maps) != 1 || maps[0].ValueMapID != other {
		t.Errorf("after delete: %+v", maps)
	}
}
