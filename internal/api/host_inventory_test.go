package api

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestHostInventory: host.create/update/get of inventory_mode and
// inventory with 6.0.14's rules and errors (recorded from 6.0.14).
func TestHostInventory(t *testing.T) {
	f := newPermFixture(t)
	g := f.group("Linux")
	create := func(extra string) (string, *rpcError) {
		res, e := f.do(f.root, "host.create", fmt.Sprintf(`{"host":"inv-%d","groups":[{"groupid":"%d"}]%s}`, len(extra), g, extra))
		return string(res), e
	}
	for _, c := range []struct{ extra, want string }{
		{`,"inventory":{"foo":"x"},"inventory_mode":0`, `Incorrect inventory field "foo".`},
		{`,"inventory":{"os":"x"},"inventory_mode":-1`, `Cannot set inventory fields for disabled inventory.`},
		{`,"inventory":{"os":"` + strings.Repeat("a", 129) + `"},"inventory_mode":0`, `Value "` + strings.Repeat("a", 129) + `" is too long for field "os" - 129 characters. Allowed length is 128 characters.`},
		{`,"inventory_mode":5`, `Incorrect value for field "inventory_mode": value must be one of -1, 0, 1.`},
	} {
		if _, e := create(c.extra); e == nil || e.Data != c.want {
			t.Errorf("%s: %+v, want %q", c.extra, e, c.want)
		}
	}
	// Fields without a mode: manual.
	res, e := create(`,"inventory":{"os":"x"}`)
	if e != nil {
		t.Fatal(e.Data)
	}
	var created struct {
		HostIDs []string `json:"hostids"`
	}
	if err := json.Unmarshal([]byte(res), &created); err != nil || len(created.HostIDs) != 1 {
		t.Fatalf("host.create: %s (%v)", res, err)
	}
	type inv struct {
		Host      string `json:"host"`
		Mode      string `json:"inventory_mode"`
		Inventory any    `json:"inventory"`
	}
	get := func(host string) inv {
		var out []inv
		f.mustDo(f.root, "host.get", fmt.Sprintf(`{"output":["host","inventory_mode"],"selectInventory":["os","location"],"filter":{"host":%q}}`, host), &out)
		if len(out) != 1 {
			t.Fatalf("host.get %s: %+v", host, out)
		}
		return out[0]
	}
	host := "inv-" + fmt.Sprint(len(`,"inventory":{"os":"x"}`))
	if got := get(host); got.Mode != "0" || fmt.Sprint(got.Inventory) != "map[location: os:x]" {
		t.Errorf("created: %+v", got)
	}
	hid := created.HostIDs[0]
	update := func(params string) *rpcError {
		_, e := f.do(f.root, "host.update", fmt.Sprintf(`{"hostid":%q%s}`, hid, params))
		return e
	}
	// Update changes the fields given and keeps the others.
	if e := update(`,"inventory":{"location":"r2"}`); e != nil {
		t.Fatal(e.Data)
	}
	if got := get(host); fmt.Sprint(got.Inventory) != "map[location:r2 os:x]" {
		t.Errorf("updated: %+v", got)
	}
	// Disabled: the fields go, and setting one is refused.
	if e := update(`,"inventory_mode":-1`); e != nil {
		t.Fatal(e.Data)
	}
	if got := get(host); got.Mode != "-1" || fmt.Sprint(got.Inventory) != "[]" {
		t.Errorf("disabled: %+v", got)
	}
	if e := update(`,"inventory":{"os":"x"}`); e == nil || e.Data != fmt.Sprintf(`Inventory disabled for host "%s".`, host) {
		t.Errorf("fields of a disabled inventory: %+v", e)
	}
	if e := update(`,"inventory_mode":1,"inventory":{"os":5}`); e != nil {
		t.Fatal(e.Data)
	}
	if got := get(host); got.Mode != "1" || fmt.Sprint(got.Inventory) != "map[location: os:5]" {
		t.Errorf("automatic: %+v", got)
	}
}
