package server

import (
	"strconv"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/trigger"
)

// TestServiceStatusFromProblems: the wiring of IT services. A problem
// committed by the state machine (with the trigger's and the host's
// tags) sets the status of the service whose problem tags it carries
// and of its parent; a severity change through event.acknowledge and a
// manual close follow; the statuses and their history survive a
// restart.
func TestServiceStatusFromProblems(t *testing.T) {
	cfg := testConfig(t, integrationSpec())
	s, stop := runServer(t, cfg)
	admin := adminLogin(t, s)
	var created struct{ TriggerIDs []string }
	admin.ok("trigger.create", map[string]any{
		"description": "Float too high", "expression": "last(/peregrine-test/trap.float)>10",
		"priority": 3, "manual_close": 1, "tags": []map[string]string{{"tag": "svc", "value": "web"}},
	}, &created)
	var svc struct{ ServiceIDs []string }
	admin.ok("service.create", map[string]any{"name": "web", "algorithm": 2, "sortorder": 0,
		"problem_tags": []map[string]any{{"tag": "svc", "value": "web"}}}, &svc)
	web := svc.ServiceIDs[0]
	admin.ok("service.create", map[string]any{"name": "shop", "algorithm": 2, "sortorder": 0,
		"children": []map[string]any{{"serviceid": web}}}, &svc)
	shop := svc.ServiceIDs[0]

	type status struct{ ServiceID, Status string }
	// statuses polls service.get until web and shop have want: the
	// services apply problems on their own goroutine.
	statuses := func(want string) {
		t.Helper()
		for i := 0; ; i++ {
			var got []status
			admin.ok("service.get", map[string]any{"output": []string{"serviceid", "status"}, "serviceids": []string{web, shop}}, &got)
			if len(got) == 2 && got[0].Status == want && got[1].Status == want {
				return
			}
			if i == 500 {
				t.Fatalf("service statuses %+v after 5 s, want %s", got, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	tid, _ := strconv.ParseUint(created.TriggerIDs[0], 10, 64)
	// Recent: status changes are kept 365 days.
	clock := time.Now().Unix() - 100
	if _, err := s.Triggers.Process(s.Catalog.Snapshot(), []trigger.Result{{TriggerID: tid, Value: trigger.Problem, Clock: clock}}); err != nil {
		t.Fatal(err)
	}
	statuses("3")
	var ps []struct{ EventID string }
	admin.ok("problem.get", map[string]any{}, &ps)
	admin.ok("event.acknowledge", map[string]any{"eventids": ps[0].EventID, "action": 8, "severity": 5}, nil)
	statuses("5")
	stop()

	s2, stop2 := runServer(t, cfg)
	admin = adminLogin(t, s2)
	statuses("5")
	admin.ok("event.acknowledge", map[string]any{"eventids": ps[0].EventID, "action": 1}, nil)
	statuses("-1")
	var tl []struct {
		StatusTimeline []struct {
			StartValue any `json:"start_value"`
			Alarms     []struct{ Clock, Value string }
		} `json:"status_timeline"`
	}
	admin.ok("service.get", map[string]any{"output": []string{"name"}, "serviceids": shop,
		"selectStatusTimeline": []map[string]int64{{"period_from": clock - 1, "period_to": 2147483647}}}, &tl)
	alarms := tl[0].StatusTimeline[0].Alarms
	// 3 at the problem's clock, 5 at the same clock (a severity change
	// dates from its problem), OK at the close.
	at := strconv.FormatInt(clock, 10)
	if len(alarms) != 3 || alarms[0].Clock != at || alarms[0].Value != "3" || alarms[1].Clock != at ||
		alarms[1].Value != "5" || alarms[2].Value != "-1" {
		t.Fatalf("status timeline of shop: %+v", alarms)
	}
	stop2()
}
