package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/config"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// hookJS is a webhook media type script in Zabbix's form.
const hookJS = `
var p = JSON.parse(value);
var req = new HttpRequest();
req.addHeader('Content-Type: application/json');
var resp = req.post(p.url, JSON.stringify(p));
if (req.getStatus() != 200) {
	throw 'Response code: ' + req.getStatus();
}
return 'OK';
`

// hookListener records the JSON bodies POSTed to it; /fail answers 500.
type hookListener struct {
	mu     sync.Mutex
	bodies []map[string]string
	fails  int
	srv    *httptest.Server
}

func newHookListener(t *testing.T) *hookListener {
	h := &hookListener{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		defer h.mu.Unlock()
		if r.URL.Path == "/fail" {
			h.fails++
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		var b map[string]string
		_ = json.NewDecoder(r.Body).Decode(&b)
		h.bodies = append(h.bodies, b)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookListener) got() []map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]map[string]string(nil), h.bodies...)
}

// TestIntegrationAlertWebhookEscalation: a value sent with the real
// zabbix_sender raises a problem; the action's step 1 reaches the test's
// HTTP listener through a JavaScript webhook media type, step 2 one
// (real) second later, a failing medium fails after its attempts while
// the others are delivered, the recovery is sent to everyone notified,
// and alert.get shows it all. Configuration goes through the API.
func TestIntegrationAlertWebhookEscalation(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs the real zabbix_sender")
	}
	testutil.Need(t, "zabbix_sender", "zabbix-agent")
	hook := newHookListener(t)
	cfg := testConfig(t, catalog.Spec{})
	cfg.Alerts.MinStepDuration = config.Duration(time.Second)
	cfg.Alerts.RateLimit = 0
	s, _ := runServer(t, cfg)
	admin := adminLogin(t, s)
	var g struct{ GroupIDs []string }
	admin.ok("hostgroup.create", map[string]any{"name": "Alerting"}, &g)
	var h struct{ HostIDs []string }
	admin.ok("host.create", map[string]any{"host": "web-1", "name": "Web server 1", "groups": []map[string]string{{"groupid": g.GroupIDs[0]}}}, &h)
	admin.ok("item.create", map[string]any{"name": "CPU load", "key_": "cpu.load", "hostid": h.HostIDs[0], "type": 2, "value_type": 0}, nil)
	var tr struct{ TriggerIDs []string }
	admin.ok("trigger.create", map[string]any{"description": "CPU load high on {HOST.NAME}", "expression": "last(/web-1/cpu.load)>10", "priority": "4",
		"tags": []map[string]string{{"tag": "service", "value": "web"}}}, &tr)

	var mt, bad struct{ MediaTypeIDs []string }
	admin.ok("mediatype.create", map[string]any{
		"name": "Test hook", "type": "4", "script": hookJS, "timeout": "5s",
		"parameters": []map[string]string{
			{"name": "url", "value": "{ALERT.SENDTO}"}, {"name": "subject", "value": "{ALERT.SUBJECT}"}, {"name": "event", "value": "{EVENT.ID}"},
			{"name": "host", "value": "{HOST.NAME}"}, {"name": "value", "value": "{ITEM.LASTVALUE}"}, {"name": "status", "value": "{EVENT.STATUS}"},
			{"name": "tags", "value": "{EVENT.TAGS}"},
		},
		"message_templates": []map[string]any{
			{"eventsource": "0", "recovery": "0", "subject": "Problem: {EVENT.NAME}", "message": "{EVENT.SEVERITY}"},
			{"eventsource": "0", "recovery": "1", "subject": "Resolved: {EVENT.NAME}", "message": "after {EVENT.RECOVERY.TIME}"},
		},
	}, &mt)
	admin.fails("mediatype.create", map[string]any{"name": "Test hook", "type": 4, "script": "return 1"}, -32602, `Media type "Test hook" already exists.`)
	admin.ok("mediatype.create", map[string]any{"name": "Broken hook", "type": 4, "maxattempts": "2", "attempt_interval": "0s",
		"parameters": []map[string]string{{"name": "URL", "value": hook.srv.URL + "/fail"}}}, &bad)

	var users []struct{ UserID string }
	admin.ok("user.get", map[string]any{"filter": map[string]string{"username": "Admin"}}, &users)
	admin.ok("user.update", map[string]any{"userid": users[0].UserID, "medias": []map[string]any{
		{"mediatypeid": mt.MediaTypeIDs[0], "sendto": hook.srv.URL + "/admin", "severity": 63},
		{"mediatypeid": bad.MediaTypeIDs[0], "sendto": "x", "severity": "48"},
	}}, nil)
	var withMedia []struct {
		Medias []struct{ MediaTypeID, SendTo, Severity, Period string }
	}
	admin.ok("user.get", map[string]any{"userids": users[0].UserID, "selectMedias": "extend"}, &withMedia)
	if len(withMedia) != 1 || len(withMedia[0].Medias) != 2 || withMedia[0].Medias[0].SendTo != hook.srv.URL+"/admin" || withMedia[0].Medias[0].Period != "1-7,00:00-24:00" {
		t.Fatalf("user.get selectMedias: %+v", withMedia)
	}

	op := func(from, to int, mediatype string) map[string]any {
		return map[string]any{"operationtype": 0, "esc_step_from": from, "esc_step_to": to, "esc_period": "0",
			"opmessage": map[string]any{"default_msg": 1, "mediatypeid": mediatype}, "opmessage_usr": []map[string]string{{"userid": users[0].UserID}}}
	}
	var act struct{ ActionIDs []string }
	admin.ok("action.create", map[string]any{
		"name": "Notify web", "eventsource": 0, "esc_period": "1s",
		"filter": map[string]any{"evaltype": 0, "conditions": []map[string]any{
			{"conditiontype": 4, "operator": 5, "value": "3"},
			{"conditiontype": 0, "operator": 0, "value": g.GroupIDs[0]},
			{"conditiontype": 26, "operator": 0, "value2": "service", "value": "web"},
		}},
		"operations":          []map[string]any{op(1, 1, mt.MediaTypeIDs[0]), op(2, 2, mt.MediaTypeIDs[0]), op(1, 1, bad.MediaTypeIDs[0])},
		"recovery_operations": []map[string]any{{"operationtype": 11, "opmessage": map[string]any{"default_msg": 1}}},
	}, &act)
	admin.fails("action.create", map[string]any{"name": "Bad", "eventsource": 0, "filter": map[string]any{"evaltype": 0,
		"conditions": []map[string]any{{"conditiontype": 99, "operator": 0, "value": "1"}}},
		"operations": []map[string]any{op(1, 1, mt.MediaTypeIDs[0])}}, -32602, `Invalid parameter "/1/filter/conditions/1/conditiontype": value must be one of 0, 1, 2, 3, 4, 6, 13, 16, 25, 26.`)
	admin.fails("mediatype.delete", []string{mt.MediaTypeIDs[0]}, -32500, `Media type "Test hook" is used by action "Notify web".`)
	var acts []struct {
		Name   string
		Filter struct {
			EvalFormula string `json:"eval_formula"`
		}
		Operations []struct {
			EscStepFrom string `json:"esc_step_from"`
			OpMessage   struct{ MediaTypeID string }
		}
	}
	admin.ok("action.get", map[string]any{"actionids": act.ActionIDs, "selectFilter": "extend", "selectOperations": "extend"}, &acts)
	if len(acts) != 1 || acts[0].Filter.EvalFormula != "A and B and C" || len(acts[0].Operations) != 3 || acts[0].Operations[1].EscStepFrom != "2" {
		t.Fatalf("action.get: %+v", acts)
	}

	send := func(v string) {
		t.Helper()
		if r := testutil.RunSender(t, s.TrapperAddr().String(), "-s", "web-1", "-k", "cpu.load", "-o", v); r.Processed != 1 {
			t.Fatalf("zabbix_sender: %+v", r)
		}
	}
	waitHooks := func(n int) []map[string]string {
		t.Helper()
		for i := 0; ; i++ {
			if b := hook.got(); len(b) >= n {
				return b
			}
			if i == 1000 {
				t.Fatalf("webhook listener got %d bodies after 20 s, want %d: %+v", len(hook.got()), n, hook.got())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	sent := time.Now()
	send("42")
	b := waitHooks(1)[0]
	if b["subject"] != "Problem: CPU load high on Web server 1" || b["host"] != "Web server 1" || b["value"] != "42" || b["status"] != "PROBLEM" || b["tags"] != "service:web" {
		t.Fatalf("step 1 webhook body: %+v", b)
	}
	waitHooks(2)
	if d := time.Since(sent); d < time.Second {
		t.Fatalf("step 2 came %v after the value, before the 1 s step duration", d)
	}
	send("1")
	b = waitHooks(3)[2]
	if b["subject"] != "Resolved: CPU load high on Web server 1" || b["status"] != "RESOLVED" {
		t.Fatalf("recovery webhook body: %+v", b)
	}

	type alertRow struct {
		AlertID, EventID, PEventID, MediaTypeID, Status, Retries, Error, EscStep, SendTo string
		Hosts                                                                            []struct{ Host string }
	}
	var alerts []alertRow
	for i := 0; ; i++ {
		admin.ok("alert.get", map[string]any{"output": "extend", "actionids": act.ActionIDs, "selectHosts": "extend", "sortfield": "alertid"}, &alerts)
		final := 0
		for _, a := range alerts {
			if a.Status == "1" || a.Status == "2" {
				final++
			}
		}
		if len(alerts) == 5 && final == 5 {
			break
		}
		if i == 500 {
			t.Fatalf("alert.get: %+v", alerts)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var failed, ok int
	for _, a := range alerts {
		if len(a.Hosts) != 1 || a.Hosts[0].Host != "web-1" {
			t.Fatalf("alert %s hosts: %+v", a.AlertID, a.Hosts)
		}
		switch {
		case a.MediaTypeID == bad.MediaTypeIDs[0] && a.Status == "2" && a.Retries == "2" && strings.Contains(a.Error, "500 Internal Server Error"):
			failed++
		case a.MediaTypeID == mt.MediaTypeIDs[0] && a.Status == "1":
			ok++
		default:
			t.Fatalf("unexpected alert %+v", a)
		}
	}
	// Step 1: the hook and the broken medium; step 2: the hook; the
	// recovery: everyone step 1 and 2 notified (the hook) and the
	// broken medium (it was "notified", the message failed).
	if ok != 3 || failed != 2 {
		t.Fatalf("alerts: %d sent, %d failed: %+v", ok, failed, alerts)
	}
	if hook.fails != 4 {
		t.Fatalf("the failing endpoint was called %d times, want 2 alerts × 2 attempts", hook.fails)
	}
	resp, err := http.Get("http://" + s.HTTPAddr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m strings.Builder
	_, _ = io.Copy(&m, resp.Body)
	for _, want := range []string{"peregrine_alert_sent_total 3\n", "peregrine_alert_failed_total 2\n", "peregrine_alert_retries_total 2\n",
		"peregrine_alert_backlog 0\n", "peregrine_alert_steps_waited_total 0\n", "peregrine_alert_escalations 0\n",
		`peregrine_alert_queue_length{mediatypeid="` + mt.MediaTypeIDs[0] + `"} 0` + "\n"} {
		if !strings.Contains(m.String(), want) {
			t.Errorf("/metrics has no %q", want)
		}
	}
}

// TestIntegrationAlertRestartKeepsEscalation: a problem's step 1 is
// delivered, the server stops before step 2 is due, and the restarted
// server sends step 2 (once) and nothing of step 1 again.
func TestIntegrationAlertRestartKeepsEscalation(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs the real zabbix_sender")
	}
	testutil.Need(t, "zabbix_sender", "zabbix-agent")
	hook := newHookListener(t)
	cfg := testConfig(t, catalog.Spec{})
	cfg.Alerts.MinStepDuration = config.Duration(time.Second)
	s, stop := runServer(t, cfg)
	admin := adminLogin(t, s)
	var g struct{ GroupIDs []string }
	admin.ok("hostgroup.create", map[string]any{"name": "Restart"}, &g)
	var h struct{ HostIDs []string }
	admin.ok("host.create", map[string]any{"host": "db-1", "groups": []map[string]string{{"groupid": g.GroupIDs[0]}}}, &h)
	admin.ok("item.create", map[string]any{"name": "lag", "key_": "lag", "hostid": h.HostIDs[0], "type": 2, "value_type": 3}, nil)
	admin.ok("trigger.create", map[string]any{"description": "Replication lag", "expression": "last(/db-1/lag)>100", "priority": 5}, nil)
	var mt struct{ MediaTypeIDs []string }
	admin.ok("mediatype.create", map[string]any{"name": "Plain hook", "type": 4,
		"parameters": []map[string]string{{"name": "URL", "value": hook.srv.URL + "/x"}, {"name": "step", "value": "{EVENT.NAME} {ALERT.SUBJECT}"}}}, &mt)
	var users []struct{ UserID string }
	admin.ok("user.get", map[string]any{"filter": map[string]string{"username": "Admin"}}, &users)
	admin.ok("user.update", map[string]any{"userid": users[0].UserID, "medias": []map[string]any{{"mediatypeid": mt.MediaTypeIDs[0], "sendto": "ops"}}}, nil)
	op := func(step int) map[string]any {
		return map[string]any{"operationtype": 0, "esc_step_from": step, "esc_step_to": step,
			"opmessage":     map[string]any{"default_msg": 0, "subject": "step " + string(rune('0'+step)), "mediatypeid": mt.MediaTypeIDs[0]},
			"opmessage_usr": []map[string]string{{"userid": users[0].UserID}}}
	}
	admin.ok("action.create", map[string]any{"name": "Page DBA", "eventsource": 0, "esc_period": "3s", "operations": []map[string]any{op(1), op(2)}}, nil)
	if r := testutil.RunSender(t, s.TrapperAddr().String(), "-s", "db-1", "-k", "lag", "-o", "500"); r.Processed != 1 {
		t.Fatalf("zabbix_sender: %+v", r)
	}
	wait := func(n int) {
		t.Helper()
		for i := 0; len(hook.got()) < n; i++ {
			if i == 1000 {
				t.Fatalf("webhook listener got %+v, want %d bodies", hook.got(), n)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	wait(1)
	stop()
	if n := len(hook.got()); n != 1 {
		t.Fatalf("%d bodies before the restart, want step 1 only", n)
	}
	s2, _ := runServer(t, cfg)
	wait(2)
	time.Sleep(500 * time.Millisecond) // a duplicate would come now
	got := hook.got()
	if len(got) != 2 || got[0]["step"] != "Replication lag step 1" || got[1]["step"] != "Replication lag step 2" {
		t.Fatalf("bodies: %+v", got)
	}
	var esc []struct {
		EscStep string `json:"esc_step"`
		Status  string
	}
	newAPI := adminLogin(t, s2)
	newAPI.ok("alert.get", map[string]any{"output": "extend", "sortfield": "alertid"}, &esc)
	if len(esc) != 2 || esc[0].EscStep != "1" || esc[1].EscStep != "2" || esc[0].Status != "1" || esc[1].Status != "1" {
		t.Fatalf("alert.get after the restart: %+v", esc)
	}
}

// TestIntegrationAlertEmailAndScript: one operation to every medium of
// the user sends an email through a real SMTP server (aiosmtpd, STARTTLS
// and AUTH) and runs a script media type.
func TestIntegrationAlertEmailAndScript(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs zabbix_sender and aiosmtpd")
	}
	testutil.Need(t, "zabbix_sender", "zabbix-agent")
	certs := testutil.MakeCerts(t)
	smtpd := testutil.StartSMTPD(t, testutil.SMTPDOptions{CertFile: certs.Server.Cert, KeyFile: certs.Server.Key, User: "zabbix", Password: "mail-pw"})
	scripts := t.TempDir()
	out := filepath.Join(scripts, "out")
	if err := os.WriteFile(filepath.Join(scripts, "page.sh"), []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" > "+out+".tmp && mv "+out+".tmp "+out+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, catalog.Spec{})
	cfg.Alerts.ScriptsDir = scripts
	s, _ := runServer(t, cfg)
	admin := adminLogin(t, s)
	var g struct{ GroupIDs []string }
	admin.ok("hostgroup.create", map[string]any{"name": "Mail"}, &g)
	var h struct{ HostIDs []string }
	admin.ok("host.create", map[string]any{"host": "mail-1", "groups": []map[string]string{{"groupid": g.GroupIDs[0]}}}, &h)
	admin.ok("item.create", map[string]any{"name": "queue", "key_": "queue", "hostid": h.HostIDs[0], "type": 2, "value_type": 3}, nil)
	admin.ok("trigger.create", map[string]any{"description": "Mail queue of {HOST.HOST} too long", "expression": "last(/mail-1/queue)>1000", "priority": 3}, nil)
	var email, script struct{ MediaTypeIDs []string }
	// "Email" is a default media type of a fresh server (6.0's): another name.
	admin.ok("mediatype.create", map[string]any{"name": "Test email", "type": 0, "smtp_server": "127.0.0.1", "smtp_port": smtpd.Port,
		"smtp_helo": "peregrine.test", "smtp_email": "peregrine@example.com", "smtp_security": 1, "smtp_authentication": 1,
		"username": "zabbix", "passwd": "mail-pw"}, &email)
	admin.ok("mediatype.create", map[string]any{"name": "Pager", "type": 1, "exec_path": "page.sh",
		"exec_params": "{ALERT.SENDTO}\n{ALERT.SUBJECT}\n{ITEM.LASTVALUE}\n"}, &script)
	var users []struct{ UserID string }
	admin.ok("user.get", map[string]any{"filter": map[string]string{"username": "Admin"}}, &users)
	admin.ok("user.update", map[string]any{"userid": users[0].UserID, "medias": []map[string]any{
		{"mediatypeid": email.MediaTypeIDs[0], "sendto": []string{"ops@example.com"}},
		{"mediatypeid": script.MediaTypeIDs[0], "sendto": "pager-7"},
	}}, nil)
	admin.ok("action.create", map[string]any{"name": "Mail admins", "eventsource": 0, "operations": []map[string]any{{
		"operationtype": 0, "opmessage": map[string]any{"default_msg": 0, "subject": "Problem: {EVENT.NAME}", "message": "Host {HOST.HOST}: {ITEM.NAME} is {ITEM.LASTVALUE}"},
		"opmessage_usr": []map[string]string{{"userid": users[0].UserID}}}}}, nil)
	if r := testutil.RunSender(t, s.TrapperAddr().String(), "-s", "mail-1", "-k", "queue", "-o", "5000"); r.Processed != 1 {
		t.Fatalf("zabbix_sender: %+v", r)
	}
	var msgs []string
	var page []byte
	for i := 0; ; i++ {
		msgs = smtpd.Messages(t)
		page, _ = os.ReadFile(out)
		if len(msgs) == 1 && len(page) > 0 {
			break
		}
		if i == 1000 {
			var alerts []map[string]any
			admin.ok("alert.get", map[string]any{"output": "extend"}, &alerts)
			t.Fatalf("after 20 s: %d messages, page %q; alerts %v", len(msgs), page, alerts)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(msgs[0], "X-Envelope-To: ops@example.com") || !strings.Contains(msgs[0], "X-Auth: yes") || !strings.Contains(msgs[0], "X-TLS: yes") {
		t.Fatalf("email: %q", msgs[0])
	}
	if string(page) != "pager-7\nProblem: Mail queue of mail-1 too long\n5000\n" {
		t.Fatalf("script arguments: %q", page)
	}
}
