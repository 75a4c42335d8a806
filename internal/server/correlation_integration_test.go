package server

import (
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestIntegrationEventCorrelation replays, through the API and the real
// zabbix_sender, the run recorded from Zabbix 6.0.14 (host s8corr-host
// in group s8corr-grp/sub, triggers s8corr-T1..T4, rules s8corr-pair and
// s8corr-closenew): T1 then T4 make problems; T2's problem carries T1's
// tag pair value and closes T1's problem (an OK event of T1 without
// tags, correlationid and c_eventid set on it in event.get, the
// correlationid on the problem in problem.get, T1 OK again); T3's
// problem is made and closed at once by the rule on the parent group.
func TestIntegrationEventCorrelation(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs the real zabbix_sender")
	}
	testutil.Need(t, "zabbix_sender", "zabbix-agent")
	s, _ := runServer(t, testConfig(t, catalog.Spec{}))
	admin := adminLogin(t, s)
	var g, sub struct{ GroupIDs []string }
	admin.ok("hostgroup.create", map[string]any{"name": "corr-grp"}, &g)
	admin.ok("hostgroup.create", map[string]any{"name": "corr-grp/sub"}, &sub)
	var h struct{ HostIDs []string }
	admin.ok("host.create", map[string]any{"host": "corr-host", "groups": []map[string]string{{"groupid": sub.GroupIDs[0]}}}, &h)
	for _, k := range []string{"a", "b", "c", "d"} {
		admin.ok("item.create", map[string]any{"name": k, "key_": k, "hostid": h.HostIDs[0], "type": 2, "value_type": 3}, nil)
	}
	tags := func(kv ...string) []map[string]string {
		var out []map[string]string
		for i := 0; i < len(kv); i += 2 {
			out = append(out, map[string]string{"tag": kv[i], "value": kv[i+1]})
		}
		return out
	}
	var tr struct{ TriggerIDs []string }
	admin.ok("trigger.create", []map[string]any{
		{"description": "T1", "expression": "last(/corr-host/a)>0", "priority": 2, "tags": tags("pair", "v1", "old", "alpha-one")},
		{"description": "T2", "expression": "last(/corr-host/b)>0", "priority": 3, "tags": tags("pair", "v1", "new", "yes")},
		{"description": "T3", "expression": "last(/corr-host/c)>0", "priority": 3, "type": 1, "tags": tags("closenew", "yes")},
		{"description": "T4", "expression": "last(/corr-host/d)>0", "priority": 1, "tags": tags("pair", "v2", "old", "beta")},
	}, &tr)
	t1, t2, t3, t4 := tr.TriggerIDs[0], tr.TriggerIDs[1], tr.TriggerIDs[2], tr.TriggerIDs[3]
	var cr struct{ CorrelationIDs []string }
	admin.ok("correlation.create", []map[string]any{
		{"name": "pair", "filter": map[string]any{"evaltype": 0, "conditions": []map[string]any{
			{"type": 3, "oldtag": "pair", "newtag": "pair"}, {"type": 1, "tag": "new"}}}, "operations": []map[string]any{{"type": 0}}},
		{"name": "closenew", "filter": map[string]any{"evaltype": 0, "conditions": []map[string]any{
			{"type": 1, "tag": "closenew"}, {"type": 2, "operator": 0, "groupid": g.GroupIDs[0]}}}, "operations": []map[string]any{{"type": 1}}},
	}, &cr)
	pairID, closeNewID := cr.CorrelationIDs[0], cr.CorrelationIDs[1]

	type ev struct {
		EventID, ObjectID, Value, Clock, NS, CorrelationID string
		REventID                                           string `json:"r_eventid"`
		CEventID                                           string `json:"c_eventid"`
		Tags                                               []map[string]string
	}
	// events polls event.get until it holds n events of the host.
	events := func(n int) []ev {
		t.Helper()
		var es []ev
		for i := 0; ; i++ {
			admin.ok("event.get", map[string]any{"output": "extend", "selectTags": "extend", "hostids": h.HostIDs, "sortfield": "eventid"}, &es)
			if len(es) == n {
				return es
			}
			if i == 500 {
				t.Fatalf("event.get: %d events after 10 s, want %d: %+v", len(es), n, es)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	send := func(k, v string) {
		t.Helper()
		if r := testutil.RunSender(t, s.TrapperAddr().String(), "-s", "corr-host", "-k", k, "-o", v); r.Processed != 1 {
			t.Fatalf("zabbix_sender: %+v", r)
		}
	}
	send("a", "1")
	events(1)
	send("d", "1")
	events(2)
	send("b", "1")
	es := events(4)
	p1, p4, p2, ok1 := es[0], es[1], es[2], es[3]
	if p1.ObjectID != t1 || p4.ObjectID != t4 || p2.ObjectID != t2 || ok1.ObjectID != t1 {
		t.Fatalf("events %+v, want T1, T4, T2 problems and T1's OK event", es)
	}
	if p1.REventID != ok1.EventID || p1.CEventID != "0" || p1.CorrelationID != "0" {
		t.Fatalf("T1's problem in event.get: %+v", p1)
	}
	if ok1.Value != "0" || ok1.CEventID != p2.EventID || ok1.CorrelationID != pairID || ok1.Clock != p2.Clock || ok1.NS != p2.NS || len(ok1.Tags) != 0 {
		t.Fatalf("the OK event closing T1's problem: %+v (T2's problem %+v)", ok1, p2)
	}
	if p4.REventID != "0" || p2.REventID != "0" {
		t.Fatalf("T4's and T2's problems should stay open: %+v %+v", p4, p2)
	}
	send("c", "1")
	es = events(6)
	p3, ok3 := es[4], es[5]
	if p3.ObjectID != t3 || ok3.ObjectID != t3 || p3.REventID != ok3.EventID || ok3.CEventID != p3.EventID ||
		ok3.CorrelationID != closeNewID || ok3.Clock != p3.Clock || ok3.NS != p3.NS || len(ok3.Tags) != 0 {
		t.Fatalf("T3's problem and its OK event: %+v %+v", p3, ok3)
	}

	var ps []struct{ EventID, CorrelationID string }
	admin.ok("problem.get", map[string]any{"output": "extend", "recent": true, "hostids": h.HostIDs, "sortfield": "eventid"}, &ps)
	want := map[string]string{p1.EventID: pairID, p4.EventID: "0", p2.EventID: "0", p3.EventID: closeNewID}
	if len(ps) != len(want) {
		t.Fatalf("problem.get recent: %+v", ps)
	}
	for _, p := range ps {
		if want[p.EventID] != p.CorrelationID {
			t.Fatalf("problem.get: problem %s has correlationid %s, want %s (%+v)", p.EventID, p.CorrelationID, want[p.EventID], ps)
		}
	}
	var trigs []struct{ TriggerID, Value, LastChange string }
	admin.ok("trigger.get", map[string]any{"output": []string{"value", "lastchange"}, "hostids": h.HostIDs}, &trigs)
	wantValue := map[string]string{t1: "0", t2: "1", t3: "0", t4: "1"}
	for _, x := range trigs {
		if wantValue[x.TriggerID] != x.Value {
			t.Fatalf("trigger.get: %+v, want values %v", trigs, wantValue)
		}
		if x.TriggerID == t1 && x.LastChange != p2.Clock {
			t.Fatalf("T1's lastchange %s, want T2's problem's clock %s", x.LastChange, p2.Clock)
		}
	}
}
