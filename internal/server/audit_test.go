package server

import (
	"strings"
	"testing"
)

// TestAuditLogSurvivesRestart makes changes through the API, stops the
// server and starts it again on the same data directory: auditlog.get
// still has the records, and the server keeps appending to them.
func TestAuditLogSurvivesRestart(t *testing.T) {
	cfg := testConfig(t, integrationSpec())
	s, stop := runServer(t, cfg)
	admin := adminLogin(t, s)
	var made struct{ GroupIDs []string }
	admin.ok("hostgroup.create", map[string]any{"name": "audited"}, &made)
	admin.ok("hostgroup.update", map[string]any{"groupid": made.GroupIDs[0], "name": "audited 2"}, nil)
	stop()

	s, _ = runServer(t, cfg)
	admin = adminLogin(t, s)
	var recs []map[string]string
	admin.ok("auditlog.get", map[string]any{"output": []string{"action", "resourcetype", "resourcename", "details", "username"}, "filter": map[string]any{"resourcetype": 14}}, &recs)
	want := []map[string]string{
		{"action": "0", "resourcetype": "14", "resourcename": "audited", "username": "Admin"},
		{"action": "1", "resourcetype": "14", "resourcename": "audited", "username": "Admin",
			"details": `{"hostgroup.name":["update","audited 2","audited"]}`},
	}
	if len(recs) != len(want) {
		t.Fatalf("auditlog.get after a restart: %v", recs)
	}
	// The add's details, whatever else a host group stores (a UUID).
	if d := recs[0]["details"]; !strings.HasPrefix(d, `{"hostgroup.name":["add","audited"],`) || !strings.HasSuffix(d, `"hostgroup.groupid":["add","`+made.GroupIDs[0]+`"]}`) {
		t.Errorf("details of the add: %s", d)
	}
	for i := range want {
		for k, v := range want[i] {
			if recs[i][k] != v {
				t.Errorf("record %d %s = %q, want %q", i, k, recs[i][k], v)
			}
		}
	}
	var logins string
	admin.ok("auditlog.get", map[string]any{"filter": map[string]any{"action": 8}, "countOutput": true}, &logins)
	if logins != "2" {
		t.Errorf("%s logins recorded, want 2 (one per start)", logins)
	}
}
