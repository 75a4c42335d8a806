package api

import (
	"context"
	"fmt"
	"testing"
)

// Import makes the test trapper a HistoryImporter: it records the values
// as Push does.
func (p *recordingPusher) Import(ctx context.Context, vs []PushValue) ([]PushResult, error) {
	return p.Push(ctx, vs)
}

// TestHistoryImport: only a super admin may import; itemid and clock are
// required, ns optional, and each value reaches the trapper with its own
// clock.
func TestHistoryImport(t *testing.T) {
	f := newPermFixture(t)
	f.usergroup("Writers", map[string]int{"Linux": 3, "DB": 3}, "writer")
	w := f.login("writer")
	one := fmt.Sprintf(`[{"itemid":"%d","value":"1.5","clock":1700000000,"ns":7}]`, f.item("web-1"))
	if _, e := f.do(w, "history.import", one); e == nil {
		t.Error("an admin (not super admin) imported history")
	}
	if len(f.push.got) != 0 {
		t.Fatalf("a refused request reached the trapper: %+v", f.push.got)
	}
	for _, c := range []struct{ params, want string }{
		{`[{"value":1,"clock":1}]`, `Invalid parameter "/1/itemid": a positive id is expected.`},
		{fmt.Sprintf(`[{"itemid":"%d","value":1}]`, f.item("web-1")), `Invalid parameter "/1/clock": a clock of 0 or greater is expected.`},
		{fmt.Sprintf(`[{"itemid":"%d","value":1,"clock":1,"ns":1000000000}]`, f.item("web-1")), `Invalid parameter "/1/ns": value must be 0..999999999.`},
		{fmt.Sprintf(`[{"itemid":"%d","clock":1}]`, f.item("web-1")), `Invalid parameter "/1": the parameter "value" is missing.`},
		{fmt.Sprintf(`[{"itemid":"%d","value":{},"clock":1}]`, f.item("web-1")), `Invalid parameter "/1/value": a character string or number is expected.`},
	} {
		if _, e := f.do(f.root, "history.import", c.params); e == nil || e.Data != c.want {
			t.Errorf("%s: got %+v, want %q", c.params, e, c.want)
		}
	}
	var res struct {
		Data []map[string]string `json:"data"`
	}
	f.mustDo(f.root, "history.import", fmt.Sprintf(`[{"itemid":"%d","value":"1.5","clock":1700000000,"ns":7},{"itemid":"999999","value":2,"clock":1700000001}]`, f.item("web-1")), &res)
	if len(res.Data) != 2 || res.Data[0]["itemid"] != fmt.Sprint(f.item("web-1")) || res.Data[1]["error"] == "" {
		t.Errorf("results: %v", res.Data)
	}
	if len(f.push.got) != 2 || f.push.got[0].Clock != 1700000000 || f.push.got[0].NS != 7 || string(f.push.got[0].Value) != "1.5" || f.push.got[1].NS != 0 {
		t.Errorf("reached the trapper: %+v", f.push.got)
	}
}
