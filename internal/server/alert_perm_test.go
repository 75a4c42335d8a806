package server

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// TestAlertRecipientPermissions: an action messages two user groups;
// the member of the group with read permission on the problem host's
// group gets the message, the member of the group that can read another
// host group only is skipped, and the skip is counted in /metrics.
func TestAlertRecipientPermissions(t *testing.T) {
	hook := newHookListener(t)
	cfg := testConfig(t, catalog.Spec{})
	cfg.Alerts.RateLimit = 0
	s, _ := runServer(t, cfg)
	admin := adminLogin(t, s)
	var g, other struct{ GroupIDs []string }
	admin.ok("hostgroup.create", map[string]any{"name": "Web"}, &g)
	admin.ok("hostgroup.create", map[string]any{"name": "Databases"}, &other)
	var h struct{ HostIDs []string }
	admin.ok("host.create", map[string]any{"host": "web-1", "groups": []map[string]string{{"groupid": g.GroupIDs[0]}}}, &h)
	admin.ok("item.create", map[string]any{"name": "Load", "key_": "load", "hostid": h.HostIDs[0], "type": 2, "value_type": 3}, nil)
	admin.ok("trigger.create", map[string]any{"description": "Load high", "expression": "last(/web-1/load)>10", "priority": 4}, nil)

	var mt struct{ MediaTypeIDs []string }
	admin.ok("mediatype.create", map[string]any{"name": "Hook", "type": 4, "parameters": []map[string]string{
		{"name": "URL", "value": hook.srv.URL + "/{ALERT.SENDTO}"}, {"name": "to", "value": "{ALERT.SENDTO}"}}}, &mt)
	var webOps, dbOps struct{ UsrgrpIDs []string }
	admin.ok("usergroup.create", map[string]any{"name": "Web ops", "rights": []map[string]any{{"id": g.GroupIDs[0], "permission": 2}}}, &webOps)
	admin.ok("usergroup.create", map[string]any{"name": "DB ops", "rights": []map[string]any{{"id": other.GroupIDs[0], "permission": 3}}}, &dbOps)
	media := func(to string) []map[string]any {
		return []map[string]any{{"mediatypeid": mt.MediaTypeIDs[0], "sendto": to}}
	}
	var users struct{ UserIDs []string }
	admin.ok("user.create", []map[string]any{
		{"username": "webby", "passwd": "W3bby-secret", "roleid": 1, "usrgrps": []map[string]string{{"usrgrpid": webOps.UsrgrpIDs[0]}}, "medias": media("webby")},
		{"username": "dba", "passwd": "D8a-secret-1", "roleid": 2, "usrgrps": []map[string]string{{"usrgrpid": dbOps.UsrgrpIDs[0]}}, "medias": media("dba")},
	}, &users)
	var act struct{ ActionIDs []string }
	admin.ok("action.create", map[string]any{"name": "Everyone", "eventsource": 0, "operations": []map[string]any{{
		"operationtype": 0, "opmessage": map[string]any{"default_msg": 0, "subject": "{EVENT.NAME}", "message": "m"},
		"opmessage_grp": []map[string]string{{"usrgrpid": webOps.UsrgrpIDs[0]}, {"usrgrpid": dbOps.UsrgrpIDs[0]}}}}}, &act)

	admin.ok("history.push", map[string]any{"host": "web-1", "key": "load", "value": 42}, nil)
	var alerts []struct{ UserID, Status, SendTo string }
	for i := 0; ; i++ {
		admin.ok("alert.get", map[string]any{"output": "extend", "actionids": act.ActionIDs}, &alerts)
		if len(alerts) > 0 && alerts[0].Status == "1" {
			break
		}
		if i == 1000 {
			t.Fatalf("no alert delivered after 20 s: %+v", alerts)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Both users were decided in the same pass: the one alert is all.
	if len(alerts) != 1 || alerts[0].UserID != users.UserIDs[0] || alerts[0].SendTo != "webby" {
		t.Fatalf("alerts: %+v, want one to user %s", alerts, users.UserIDs[0])
	}
	if b := hook.got(); len(b) != 1 || b[0]["to"] != "webby" {
		t.Fatalf("webhook bodies: %+v", b)
	}
	resp, err := http.Get("http://" + s.HTTPAddr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	m, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(m), "peregrine_alert_recipients_denied_total 1\n") {
		t.Fatalf("/metrics lacks peregrine_alert_recipients_denied_total 1")
	}
}
