package server

import (
	"slices"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/config"
)

// TestAlertingAPI: media types and actions through their API methods —
// create, get, partial update, delete — with Zabbix's field names, and
// the refusals of bad input with their messages.
func TestAlertingAPI(t *testing.T) {
	s, stop := runServer(t, testConfig(t, catalog.Spec{}))
	admin := adminLogin(t, s)
	var mt struct{ MediaTypeIDs []string }
	admin.ok("mediatype.create", map[string]any{"name": "Mail", "type": "0", "smtp_server": "mail.example.com", "smtp_email": "z@example.com",
		"smtp_security": "1", "smtp_authentication": 1, "username": "z", "passwd": "secret"}, &mt)
	var got []map[string]any
	admin.ok("mediatype.get", map[string]any{"output": "extend", "mediatypeids": mt.MediaTypeIDs, "selectMessageTemplates": "extend"}, &got)
	if len(got) != 1 || got[0]["smtp_port"] != "25" || got[0]["maxattempts"] != "3" || got[0]["attempt_interval"] != "10s" ||
		got[0]["timeout"] != "30s" || got[0]["smtp_security"] != "1" || got[0]["passwd"] != "" || got[0]["maxsessions"] != "1" {
		t.Fatalf("mediatype.get: %v", got)
	}
	admin.ok("mediatype.update", map[string]any{"mediatypeid": mt.MediaTypeIDs[0], "smtp_port": "587", "status": 1}, nil)
	admin.ok("mediatype.get", map[string]any{"output": []string{"smtp_port", "status", "smtp_server"}, "mediatypeids": mt.MediaTypeIDs}, &got)
	if len(got) != 1 || got[0]["smtp_port"] != "587" || got[0]["status"] != "1" || got[0]["smtp_server"] != "mail.example.com" {
		t.Fatalf("after a partial update: %v", got)
	}
	for _, c := range []struct {
		params any
		want   string
	}{
		{map[string]any{"name": "Mail", "type": 0, "smtp_server": "x", "smtp_email": "y"}, `Media type "Mail" already exists.`},
		{map[string]any{"type": 4}, `Invalid parameter "/1": the parameter "name" is missing.`},
		{map[string]any{"name": "x", "type": 7}, `Invalid parameter "/1/type": value must be one of 0, 1, 2, 4.`},
		{map[string]any{"name": "x", "type": 1}, `Invalid parameter "/1/exec_path": cannot be empty.`},
		{map[string]any{"name": "x", "type": 4, "script": "return 1", "maxattempts": 0}, `Invalid parameter "/1/maxattempts": value must be one of 1-100.`},
		{map[string]any{"name": "x", "type": 4, "script": "return 1", "bogus": 1}, `Invalid parameter "/1": unexpected parameter "bogus".`},
		{map[string]any{"name": "x", "type": "four"}, `Invalid parameter "/1/type": an integer is expected.`},
	} {
		admin.fails("mediatype.create", c.params, -32602, c.want)
	}

	var users []struct{ UserID string }
	admin.ok("user.get", map[string]any{"filter": map[string]string{"username": "Admin"}}, &users)
	admin.fails("user.update", map[string]any{"userid": users[0].UserID, "medias": []map[string]any{{"mediatypeid": mt.MediaTypeIDs[0], "sendto": "a@b", "period": "8-9,00:00-24:00"}}},
		-32602, `Invalid parameter "/1/medias/1/period": invalid time period "8-9,00:00-24:00": days must be 1-7.`)
	admin.fails("user.update", map[string]any{"userid": users[0].UserID, "medias": []map[string]any{{"mediatypeid": "999", "sendto": "a@b"}}},
		-32602, `Invalid parameter "/1/medias/1/mediatypeid": No permissions to referred object or it does not exist!`)

	op := map[string]any{"operationtype": 0, "esc_step_from": 1, "esc_step_to": 2,
		"opmessage": map[string]any{"default_msg": 1, "mediatypeid": mt.MediaTypeIDs[0]}, "opmessage_usr": []map[string]string{{"userid": users[0].UserID}}}
	var act struct{ ActionIDs []string }
	admin.ok("action.create", map[string]any{"name": "Page", "eventsource": "0", "operations": []any{op},
		"update_operations": []any{map[string]any{"operationtype": 12, "opmessage": map[string]any{}}}}, &act)
	for _, c := range []struct {
		params any
		want   string
	}{
		{map[string]any{"name": "Page", "eventsource": 0, "operations": []any{op}}, `Action "Page" already exists.`},
		{map[string]any{"name": "Short", "eventsource": 0, "esc_period": "30s", "operations": []any{op}}, `Invalid parameter "/1/esc_period": value must be one of 60-604800.`},
		// Discovery actions' operations run once (recorded from 6.0.14: no
		// escalation steps).
		{map[string]any{"name": "Disco", "eventsource": 1, "operations": []any{op}}, `Invalid parameter "/1/operations/1": unexpected parameter "esc_step_from".`},
		{map[string]any{"name": "Service", "eventsource": 4, "operations": []any{op}}, "service (4) actions are not supported"},
		{map[string]any{"name": "Empty", "eventsource": 0}, `No operations defined for action "Empty".`},
		{map[string]any{"name": "Cmd", "eventsource": 0, "operations": []any{map[string]any{"operationtype": 1}}}, `Invalid parameter "/1/operations/1": the parameter "opcommand" is missing.`},
		{map[string]any{"name": "Nobody", "eventsource": 0, "operations": []any{map[string]any{"operationtype": 0, "opmessage": map[string]any{"default_msg": 1}}}},
			"No recipients specified for action operation message."},
		{map[string]any{"name": "Ghost", "eventsource": 0, "operations": []any{map[string]any{"operationtype": 0, "opmessage": map[string]any{"default_msg": 1},
			"opmessage_usr": []map[string]string{{"userid": "777"}}}}}, `Incorrect user ID "777" in action "Ghost".`},
		{map[string]any{"name": "Steps", "eventsource": 0, "operations": []any{map[string]any{"operationtype": 0, "esc_step_from": 3, "esc_step_to": 2,
			"opmessage": map[string]any{"default_msg": 1}, "opmessage_usr": []map[string]string{{"userid": users[0].UserID}}}}}, "Incorrect action operation escalation step values."},
		{map[string]any{"name": "Formula", "eventsource": 0, "operations": []any{op}, "filter": map[string]any{"evaltype": 3, "formula": "A and B",
			"conditions": []map[string]any{{"conditiontype": 4, "operator": 5, "value": "2", "formulaid": "A"}}}}, `Invalid parameter "/1/filter/formula"`},
		{map[string]any{"name": "Sev", "eventsource": 0, "operations": []any{op}, "filter": map[string]any{"evaltype": 0,
			"conditions": []map[string]any{{"conditiontype": 4, "operator": 5, "value": "9"}}}}, "Incorrect filter condition value for action."},
	} {
		admin.fails("action.create", c.params, -32602, c.want)
	}
	admin.ok("action.update", map[string]any{"actionid": act.ActionIDs[0], "status": "1", "esc_period": "2h"}, nil)
	var acts []struct {
		Name, Status     string
		EscPeriod        string `json:"esc_period"`
		Operations       []map[string]any
		UpdateOperations []map[string]any `json:"update_operations"`
	}
	admin.ok("action.get", map[string]any{"output": "extend", "selectOperations": "extend", "selectUpdateOperations": "extend", "actionids": act.ActionIDs}, &acts)
	if len(acts) != 1 || acts[0].EscPeriod != "2h" || len(acts[0].Operations) != 1 || acts[0].Operations[0]["esc_step_to"] != "2" ||
		len(acts[0].UpdateOperations) != 1 || acts[0].UpdateOperations[0]["operationtype"] != "12" {
		t.Fatalf("action.get after update: %+v", acts)
	}

	// The configuration survives a restart.
	stop()
	s2, _ := runServer(t, s.cfg)
	admin = adminLogin(t, s2)
	acts = nil
	admin.ok("action.get", map[string]any{"output": "extend", "actionids": act.ActionIDs}, &acts)
	if len(acts) != 1 || acts[0].Name != "Page" || acts[0].Status != "1" {
		t.Fatalf("action.get after a restart: %+v", acts)
	}
	admin.ok("action.delete", act.ActionIDs, nil)
	admin.ok("mediatype.delete", mt.MediaTypeIDs, nil)
	admin.ok("mediatype.get", map[string]any{"mediatypeids": mt.MediaTypeIDs}, &got)
	acts = nil
	admin.ok("action.get", map[string]any{"actionids": act.ActionIDs}, &acts)
	if len(got)+len(acts) != 0 {
		t.Fatalf("left after delete: %v %v", got, acts)
	}
	admin.fails("action.delete", act.ActionIDs, -32500, "No permissions to referred object or it does not exist!")
	// Updates name their object: none named, or one that does not exist.
	for _, m := range []struct{ method, field string }{{"mediatype.update", "mediatypeid"}, {"action.update", "actionid"}, {"script.update", "scriptid"}} {
		admin.fails(m.method, map[string]any{"name": "x"}, -32602, `Invalid parameter "/1": the parameter "`+m.field+`" is missing.`)
		admin.fails(m.method, map[string]any{m.field: "999999", "name": "x"}, -32500, "No permissions to referred object or it does not exist!")
	}
	var alerts []any
	admin.ok("alert.get", map[string]any{"output": "extend"}, &alerts)
	if len(alerts) != 0 {
		t.Fatalf("alert.get: %v", alerts)
	}
}

// TestActionOpConditionsAPI: escalation operations take Zabbix 6.0's
// opconditions ("event acknowledged", conditiontype 14) and evaltype,
// action.get returns them, an update keeps them, and bad ones are
// refused with the position of the mistake.
func TestActionOpConditionsAPI(t *testing.T) {
	s, _ := runServer(t, testConfig(t, catalog.Spec{}))
	admin := adminLogin(t, s)
	var mt struct{ MediaTypeIDs []string }
	admin.ok("mediatype.create", map[string]any{"name": "Hook", "type": 4, "parameters": []map[string]string{{"name": "URL", "value": "http://127.0.0.1:1/"}}}, &mt)
	var users []struct{ UserID string }
	admin.ok("user.get", map[string]any{"filter": map[string]string{"username": "Admin"}}, &users)
	op := func(conds ...map[string]any) map[string]any {
		return map[string]any{"operationtype": 0, "esc_step_from": 2, "esc_step_to": 2, "evaltype": "0", "opconditions": conds,
			"opmessage": map[string]any{"default_msg": 1, "mediatypeid": mt.MediaTypeIDs[0]}, "opmessage_usr": []map[string]string{{"userid": users[0].UserID}}}
	}
	var act struct{ ActionIDs []string }
	admin.ok("action.create", map[string]any{"name": "Unacked", "eventsource": 0,
		"operations": []any{op(map[string]any{"conditiontype": "14", "operator": "0", "value": "0"})}}, &act)
	admin.ok("action.update", map[string]any{"actionid": act.ActionIDs[0], "esc_period": "2h"}, nil)
	var acts []struct{ Operations []map[string]any }
	admin.ok("action.get", map[string]any{"output": "extend", "selectOperations": "extend", "actionids": act.ActionIDs}, &acts)
	if len(acts) != 1 || len(acts[0].Operations) != 1 {
		t.Fatalf("action.get: %+v", acts)
	}
	conds, _ := acts[0].Operations[0]["opconditions"].([]any)
	if len(conds) != 1 {
		t.Fatalf("opconditions after an update: %+v", acts[0].Operations[0])
	}
	if c := conds[0].(map[string]any); c["conditiontype"] != "14" || c["operator"] != "0" || c["value"] != "0" {
		t.Fatalf("opcondition: %v", c)
	}
	for _, c := range []struct {
		cond map[string]any
		want string
	}{
		{map[string]any{"conditiontype": 13, "operator": 0, "value": "1"}, `Invalid parameter "/1/operations/1/opconditions/1": Incorrect action operation condition type.`},
		{map[string]any{"conditiontype": 14, "operator": 1, "value": "1"}, `Incorrect action operation condition operator.`},
		{map[string]any{"conditiontype": 14, "operator": 0, "value": "yes"}, `Incorrect action operation condition value`},
	} {
		admin.fails("action.create", map[string]any{"name": "Bad", "eventsource": 0, "operations": []any{op(c.cond)}}, -32602, c.want)
	}
	admin.fails("action.create", map[string]any{"name": "Bad", "eventsource": 0, "operations": []any{op()},
		"recovery_operations": []any{map[string]any{"operationtype": 11, "opconditions": []map[string]any{{"conditiontype": 14, "value": "1"}}}}},
		-32602, `Invalid parameter "/1/recovery_operations/1": unexpected parameter "opconditions".`)
}

// TestOpConditionAcknowledgedEndToEnd: two problems escalate with a
// step 2 that runs only when not acknowledged; the one acknowledged with
// event.acknowledge between the steps gets no step 2, the other does.
// The acknowledged flag comes from the real event store at the step.
func TestOpConditionAcknowledgedEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a 2 s escalation step")
	}
	hook := newHookListener(t)
	cfg := testConfig(t, catalog.Spec{})
	cfg.Alerts.MinStepDuration = config.Duration(time.Second)
	cfg.Alerts.RateLimit = 0
	s, _ := runServer(t, cfg)
	admin := adminLogin(t, s)
	var g struct{ GroupIDs []string }
	admin.ok("hostgroup.create", map[string]any{"name": "Web"}, &g)
	for _, host := range []string{"a", "b"} {
		var h struct{ HostIDs []string }
		admin.ok("host.create", map[string]any{"host": host, "groups": []map[string]string{{"groupid": g.GroupIDs[0]}}}, &h)
		admin.ok("item.create", map[string]any{"name": "Load", "key_": "load", "hostid": h.HostIDs[0], "type": 2, "value_type": 3}, nil)
		admin.ok("trigger.create", map[string]any{"description": "Load high on " + host, "expression": "last(/" + host + "/load)>10", "priority": 4}, nil)
	}
	var mt struct{ MediaTypeIDs []string }
	admin.ok("mediatype.create", map[string]any{"name": "Hook", "type": 4, "parameters": []map[string]string{
		{"name": "URL", "value": hook.srv.URL + "/x"}, {"name": "subject", "value": "{ALERT.SUBJECT}"}}}, &mt)
	var users []struct{ UserID string }
	admin.ok("user.get", map[string]any{"filter": map[string]string{"username": "Admin"}}, &users)
	admin.ok("user.update", map[string]any{"userid": users[0].UserID, "medias": []map[string]any{{"mediatypeid": mt.MediaTypeIDs[0], "sendto": "admin"}}}, nil)
	op := func(step int, subject string, conds ...map[string]any) map[string]any {
		return map[string]any{"operationtype": 0, "esc_step_from": step, "esc_step_to": step, "opconditions": conds,
			"opmessage": map[string]any{"default_msg": 0, "subject": subject, "message": "m"}, "opmessage_usr": []map[string]string{{"userid": users[0].UserID}}}
	}
	var act struct{ ActionIDs []string }
	admin.ok("action.create", map[string]any{"name": "Escalate", "eventsource": 0, "esc_period": "2s", "operations": []any{
		op(1, "first {EVENT.NAME}"), op(2, "unacknowledged {EVENT.NAME}", map[string]any{"conditiontype": 14, "operator": 0, "value": "0"})}}, &act)

	// a's problem first, acknowledged at once; b's after: b's step 2 is
	// due after a's, so once it has run a's step 2 was decided.
	admin.ok("history.push", map[string]any{"host": "a", "key": "load", "value": 42}, nil)
	var probs []struct{ EventID, Name string }
	for i := 0; len(probs) < 1; i++ {
		if i == 1000 {
			t.Fatal("no problem after 10 s")
		}
		time.Sleep(10 * time.Millisecond)
		admin.ok("problem.get", map[string]any{"output": "extend"}, &probs)
	}
	admin.ok("event.acknowledge", map[string]any{"eventids": probs[0].EventID, "action": 2}, nil)
	admin.ok("history.push", map[string]any{"host": "b", "key": "load", "value": 42}, nil)
	var subjects []string
	for i := 0; ; i++ {
		subjects = subjects[:0]
		for _, b := range hook.got() {
			subjects = append(subjects, b["subject"])
		}
		if slices.Contains(subjects, "unacknowledged Load high on b") {
			break
		}
		if i == 1000 {
			t.Fatalf("no step 2 for the unacknowledged problem after 20 s: %q", subjects)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The alerts of a pass are logged before any is sent, and a's step 2
	// was due first: alert.get has every alert it could have made.
	var alerts []struct{ Subject string }
	admin.ok("alert.get", map[string]any{"output": "extend", "actionids": act.ActionIDs}, &alerts)
	subjects = subjects[:0]
	for _, a := range alerts {
		subjects = append(subjects, a.Subject)
	}
	slices.Sort(subjects)
	if want := []string{"first Load high on a", "first Load high on b", "unacknowledged Load high on b"}; !slices.Equal(subjects, want) {
		t.Fatalf("alerts: %q, want %q", subjects, want)
	}
}
