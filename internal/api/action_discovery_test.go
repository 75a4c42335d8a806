package api

import (
	"context"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// The default discovery action ("Auto discovery. Linux servers.", whose
// esc_period is "0" as 6.0.14's own is) takes an update of its status,
// as 6.0.14's does (recorded: action.update {"actionid":"2","status":"1"}
// answers {"actionids":["2"]}): a discovery action's esc_period, which it
// does not take, is not checked.
func TestActionUpdateDiscoveryDefault(t *testing.T) {
	f := newAuditFixture(t)
	if _, err := f.api.opts.Catalog.(interface {
		EnsureDefaults(context.Context) (catalog.DefaultsAdded, error)
	}).EnsureDefaults(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := string(mustOK(t, f, "action.get", `{"output":["actionid","esc_period"],"filter":{"eventsource":1}}`))
	if !strings.Contains(got, `"actionid":"2"`) || !strings.Contains(got, `"esc_period":"0"`) {
		t.Skipf("no default discovery action with esc_period 0: %s", got)
	}
	// (This catalog lacks the action's template, which the update checks
	// next: the esc_period check is what this test is about.)
	if _, e := f.callAs(f.sid, "action.update", `{"actionid":"2","status":"0"}`); e != nil && strings.Contains(e.Data, "esc_period") {
		t.Errorf("action.update: %s", e.Data)
	}
}

// A trigger action's esc_period is any time unit from 60 s to 7 days:
// "2d" (beyond one day, the most an item's interval may be) is taken,
// "8d" is out of range and "abc" no time unit, in 6.0.14's words.
func TestActionEscPeriodRange(t *testing.T) {
	f := newAuditFixture(t)
	mustOK(t, f, "action.create", `{"name":"esc 2d","eventsource":0,"esc_period":"2d","operations":[{"operationtype":0,"opmessage_usr":[{"userid":"1"}],"opmessage":{"default_msg":1}}]}`)
	for _, c := range []struct{ period, want string }{
		{"8d", `Invalid parameter "/1/esc_period": value must be one of 60-604800.`},
		{"abc", `Invalid parameter "/1/esc_period": a time unit is expected.`},
	} {
		_, e := f.callAs(f.sid, "action.create", `{"name":"esc `+c.period+`","eventsource":0,"esc_period":"`+c.period+`","operations":[{"operationtype":0,"opmessage_usr":[{"userid":"1"}],"opmessage":{"default_msg":1}}]}`)
		if e == nil || e.Data != c.want {
			t.Errorf("esc_period %s: %+v, want %s", c.period, e, c.want)
		}
	}
}
