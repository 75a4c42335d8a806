package catalog

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAlertConfigPersists: media types, actions, global scripts and user media survive a
// reopen whole, a failed edit changes nothing, and IDs are not reused
// after a delete.
func TestAlertConfigPersists(t *testing.T) {
	ctx := context.Background()
	c, path := openTemp(t)
	mt := MediaType{Name: "hook", Type: MediaWebhook, Parameters: []MediaParam{{"url", "http://127.0.0.1:1/"}}, Script: "return 'ok'",
		MaxAttempts: 3, AttemptInterval: "10s", Templates: []MessageTemplate{{Recovery: 1, Subject: "Resolved", Message: "{EVENT.NAME}"}}}
	act := Action{Name: "a", Period: "1h", Filter: Filter{Conditions: []Condition{{ConditionType: CondSeverity, Operator: OpGreaterEq, Value: "3"}}},
		Operations: []Operation{{StepFrom: 1, StepTo: 2, Period: "0", MediaTypeID: 1, UserIDs: []uint64{1}}}}
	err := c.EditAlerts(ctx, func(cfg *AlertConfig) error {
		mt.ID = cfg.NextID("mediatype")
		cfg.MediaTypes[mt.ID] = &mt
		act.ID = cfg.NextID("action")
		cfg.Actions[act.ID] = &act
		cfg.Medias[1] = []UserMedia{{ID: cfg.NextID("media"), MediaTypeID: mt.ID, SendTo: []string{"x"}, Severity: 63, Period: "1-7,00:00-24:00"}}
		sc := &GlobalScript{ID: cfg.NextID("script"), Name: "restart", Command: "echo {HOST.HOST}", Scope: 1, HostAccess: 2}
		cfg.Scripts[sc.ID] = sc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("refused")
	if err := c.EditAlerts(ctx, func(cfg *AlertConfig) error { delete(cfg.Actions, act.ID); return boom }); !errors.Is(err, boom) {
		t.Fatalf("failed edit: %v", err)
	}
	if c.AlertConfig().Actions[act.ID] == nil {
		t.Fatal("a failed edit deleted the action")
	}
	want := c.AlertConfig()
	c.Close()
	c2, err := Open(ctx, Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	got := c2.AlertConfig()
	if d := cmp.Diff(want.MediaTypes, got.MediaTypes); d != "" {
		t.Errorf("media types after reopen (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want.Actions, got.Actions); d != "" {
		t.Errorf("actions after reopen (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want.Medias, got.Medias); d != "" {
		t.Errorf("user media after reopen (-want +got):\n%s", d)
	}
	if len(want.Scripts) != 1 {
		t.Fatalf("scripts before reopen: %d, want 1", len(want.Scripts))
	}
	if d := cmp.Diff(want.Scripts, got.Scripts); d != "" {
		t.Errorf("scripts after reopen (-want +got):\n%s", d)
	}
	var again uint64
	err = c2.EditAlerts(ctx, func(cfg *AlertConfig) error {
		delete(cfg.Actions, act.ID)
		again = cfg.NextID("action")
		return nil
	})
	if err != nil || again == act.ID {
		t.Fatalf("next action ID after deleting %d: %d, %v", act.ID, again, err)
	}
}
