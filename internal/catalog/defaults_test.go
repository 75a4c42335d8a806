package catalog

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/usermacro"
)

// TestEnsureDefaultsFresh: a new catalog gets Zabbix 6.0.14's default
// objects with their IDs (recorded from the peer, defaults/*.json), and
// new objects the IDs after them, as on a fresh Zabbix.
func TestEnsureDefaultsFresh(t *testing.T) {
	c, path := openTemp(t)
	ctx := context.Background()
	d, err := c.EnsureDefaults(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.HostGroups) != 18 || len(d.MediaTypes) != 34 || len(d.Actions) != 5 || len(d.Scripts) != 3 {
		t.Fatalf("added %d groups, %d media types, %d actions, %d scripts", len(d.HostGroups), len(d.MediaTypes), len(d.Actions), len(d.Scripts))
	}
	if len(d.GlobalMacros) != 1 || d.GlobalMacros[0] != "{$SNMP_COMMUNITY}" {
		t.Errorf("global macros added: %v, want {$SNMP_COMMUNITY} (a fresh 6.0.14 has it, value public)", d.GlobalMacros)
	}
	snap := c.Snapshot()
	if v, ok := snap.UserMacros(0).Resolve(usermacro.Ref{Name: "SNMP_COMMUNITY"}); !ok || v.Value != "public" {
		t.Errorf("{$SNMP_COMMUNITY}: %+v %v", v, ok)
	}
	for id, name := range map[uint64]string{1: "Templates", 2: "Linux servers", 4: "Zabbix servers", 5: "Discovered hosts",
		6: "Virtual machines", 7: "Hypervisors", 8: "Templates/Modules", 19: "Templates/Cloud"} {
		if g := snap.GroupByID(id); g == nil || g.Name != name {
			t.Errorf("group %d: %+v, want %q", id, g, name)
		}
	}
	cfg := c.AlertConfig()
	for id, name := range map[uint64]string{1: "Email", 3: "SMS", 4: "Email (HTML)", 9: "Slack", 16: "Telegram", 7: "PagerDuty",
		6: "Opsgenie", 14: "MS Teams", 10: "Discord", 5: "Mattermost", 12: "Jira", 35: "OTRS CE"} {
		if m := cfg.MediaTypes[id]; m == nil || m.Name != name {
			t.Errorf("media type %d: %+v, want %q", id, m, name)
		}
	}
	slack := cfg.MediaTypes[9]
	if slack.Type != MediaWebhook || len(slack.Parameters) != 27 || len(slack.Script) != 13726 || slack.ProcessTags != 1 {
		t.Errorf("Slack: type %d, %d parameters, %d bytes of script, tags %d", slack.Type, len(slack.Parameters), len(slack.Script), slack.ProcessTags)
	}
	if jira := cfg.MediaTypes[12]; jira.ShowEventMenu != 1 || jira.EventMenuURL != "{EVENT.TAGS.__zbx_jira_issuelink}" {
		t.Errorf("Jira's event menu: %d %q", jira.ShowEventMenu, jira.EventMenuURL)
	}
	if sms := cfg.MediaTypes[3]; sms.Type != MediaSMS || sms.GSMModem != "/dev/ttyS0" {
		t.Errorf("SMS: %+v", sms)
	}
	a := cfg.Actions[3]
	if a == nil || a.Name != "Report problems to Zabbix administrators" || a.Status != 1 || a.Period != "1h" ||
		len(a.Operations) != 1 || !cmp.Equal(a.Operations[0].GroupIDs, []uint64{7}) || a.Operations[0].DefaultMsg != 1 ||
		len(a.RecoveryOperations) != 1 || a.RecoveryOperations[0].OperationType != OpNotifyAllRecovery {
		t.Errorf("action 3: %+v", a)
	}
	if sc := cfg.Scripts[3]; sc == nil || sc.Name != "Detect operating system" || sc.UserGroupID != 7 || sc.Command != "sudo /usr/bin/nmap -O {HOST.CONN}" {
		t.Errorf("script 3: %+v", sc)
	}
	var ids []uint64
	_, err = c.Edit(ctx, func(e *Edit) error {
		var err error
		ids, err = e.CreateGroups([]string{"mine"})
		return err
	})
	if err != nil || ids[0] != 20 {
		t.Fatalf("next group: %v, %v", ids, err)
	}
	err = c.EditAlerts(ctx, func(cfg *AlertConfig) error {
		ids = []uint64{cfg.NextID("mediatype"), cfg.NextID("action"), cfg.NextID("script")}
		return nil
	})
	if err != nil || !cmp.Equal(ids, []uint64{36, 7, 4}) {
		t.Fatalf("next media type, action, script: %v, %v", ids, err)
	}
	// Once: a deleted default stays deleted after a restart.
	if err := c.EditAlerts(ctx, func(cfg *AlertConfig) error { delete(cfg.MediaTypes, 9); return nil }); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c, err = Open(ctx, Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if d, err := c.EnsureDefaults(ctx); err != nil || len(d.HostGroups)+len(d.MediaTypes)+len(d.Actions)+len(d.Scripts) != 0 {
		t.Fatalf("second EnsureDefaults: %+v, %v", d, err)
	}
	if c.AlertConfig().MediaTypes[9] != nil || c.AlertConfig().MediaTypes[16] == nil {
		t.Error("after reopen: Slack came back or Telegram is gone")
	}
}

// TestEnsureDefaultsExisting: a catalog with objects of its own gets
// the defaults missing by name; IDs already handed out are not reused.
func TestEnsureDefaultsExisting(t *testing.T) {
	c, _ := openTemp(t)
	ctx := context.Background()
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "srv", Groups: []string{"Zabbix servers"}}}})
	err := c.EditAlerts(ctx, func(cfg *AlertConfig) error {
		id := cfg.NextID("mediatype")
		cfg.MediaTypes[id] = &MediaType{ID: id, Name: "Email", Type: MediaEmail, SMTPServer: "mail.local"}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.EnsureDefaults(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.HostGroups) != 17 || len(d.MediaTypes) != 33 {
		t.Fatalf("added %d groups and %d media types, want 17 and 33", len(d.HostGroups), len(d.MediaTypes))
	}
	snap := c.Snapshot()
	if g := snap.Group("Zabbix servers"); g == nil || g.ID != 1 {
		t.Errorf("the user's Zabbix servers: %+v", g)
	}
	if g := snap.Group("Linux servers"); g == nil || g.ID != 2 {
		t.Errorf("Linux servers: %+v (2 was never handed out)", g)
	}
	if g := snap.Group("Templates"); g == nil || g.ID != 20 {
		t.Errorf("Templates: %+v (1 is taken: after the defaults)", g)
	}
	cfg := c.AlertConfig()
	if m := cfg.MediaTypes[1]; m.SMTPServer != "mail.local" {
		t.Errorf("the user's Email changed: %+v", m)
	}
	if m := cfg.MediaTypes[4]; m == nil || m.Name != "Email (HTML)" {
		t.Errorf("media type 4: %+v", m)
	}
}

// TestFirstHostID: a fresh catalog's first host gets 10084, "Zabbix
// server"'s ID on a fresh Zabbix 6.0.14, and the next one 10085; a
// catalog that had hosts before its defaults were added keeps counting
// from its own IDs.
func TestFirstHostID(t *testing.T) {
	ctx := context.Background()
	c, _ := openTemp(t)
	if _, err := c.EnsureDefaults(ctx); err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	mustEdit(t, c, func(e *Edit) (err error) {
		ids, err = e.CreateHosts([]NewHost{{Host: "first", GroupIDs: []uint64{4}}, {Host: "second", GroupIDs: []uint64{4}}})
		return err
	})
	if ids[0] != FirstHostID || ids[1] != FirstHostID+1 {
		t.Fatalf("host IDs in a fresh catalog: %v, want 10084, 10085", ids)
	}

	old, path := openTemp(t)
	mustEdit(t, old, func(e *Edit) (err error) {
		g, err := e.CreateGroups([]string{"G"})
		if err != nil {
			return err
		}
		ids, err = e.CreateHosts([]NewHost{{Host: "early", GroupIDs: g}})
		return err
	})
	execAll(t, path, "DELETE FROM catalog_defaults")
	if _, err := old.EnsureDefaults(ctx); err != nil {
		t.Fatal(err)
	}
	var later []uint64
	mustEdit(t, old, func(e *Edit) (err error) {
		later, err = e.CreateHosts([]NewHost{{Host: "later", GroupIDs: []uint64{4}}})
		return err
	})
	if ids[0] >= FirstHostID || later[0] != ids[0]+1 {
		t.Fatalf("host IDs of a catalog with hosts before its defaults: %v then %v", ids, later)
	}
}
