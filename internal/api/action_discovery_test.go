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
