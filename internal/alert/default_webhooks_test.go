package alert

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// stubTransport answers every request with 200 and a JSON body most of
// Zabbix's webhooks accept as success, and counts the requests.
type stubTransport struct {
	mu   sync.Mutex
	reqs []string
}

func (s *stubTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, r.Method+" "+r.URL.String())
	s.mu.Unlock()
	body := `{"ok":true,"result":{"message_id":1},"id":"1","key":"ZBX-1","data":{"id":1},"status":"success","ts":"1"}`
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
}

// macroValues are what the alert engine would put for the macros of
// Zabbix's webhook parameters, for a problem of severity High.
var macroValues = map[string]string{
	"{ALERT.SENDTO}": "https://hooks.example/send", "{ALERT.SUBJECT}": "Problem: disk full", "{ALERT.MESSAGE}": "Disk full on web-1",
	"{EVENT.ID}": "42", "{EVENT.NSEVERITY}": "4", "{EVENT.SEVERITY}": "High", "{EVENT.VALUE}": "1",
	"{EVENT.UPDATE.STATUS}": "0", "{EVENT.ACK.STATUS}": "No", "{EVENT.SOURCE}": "0", "{EVENT.TAGS}": "env:prod",
	"{EVENT.TAGSJSON}": `[{"tag":"env","value":"prod"}]`, "{EVENT.DATE}": "2024.01.02", "{EVENT.TIME}": "10:00:00",
	"{EVENT.NAME}": "Disk full", "{EVENT.OPDATA}": "95 %", "{TRIGGER.ID}": "7", "{TRIGGER.DESCRIPTION}": "",
	"{HOST.HOST}": "web-1", "{HOST.NAME}": "web-1", "{HOST.IP}": "10.0.0.1", "{$ZABBIX.URL}": "http://zabbix.test",
	// A problem has no recovery and no update: the engine's *UNKNOWN*.
	"{EVENT.RECOVERY.DATE}": "*UNKNOWN*", "{EVENT.RECOVERY.TIME}": "*UNKNOWN*", "{EVENT.UPDATE.DATE}": "*UNKNOWN*",
	"{EVENT.UPDATE.TIME}": "*UNKNOWN*", "{EVENT.UPDATE.ACTION}": "*UNKNOWN*", "{EVENT.UPDATE.MESSAGE}": "*UNKNOWN*",
	"{USER.FULLNAME}": "*UNKNOWN*", "{EVENT.RECOVERY.VALUE}": "*UNKNOWN*",
}

// webhookValue is a plausible value for a webhook parameter whose
// recorded value is a placeholder or a macro.
func webhookValue(name, v string) string {
	if m, ok := macroValues[v]; ok {
		return m
	}
	if !strings.ContainsAny(v, "<{") {
		return v
	}
	n := strings.ToLower(name)
	switch {
	case strings.Contains(n, "url") || strings.Contains(n, "endpoint") || strings.Contains(n, "host"):
		return "http://stub.test/api"
	case strings.Contains(n, "nseverity") || strings.Contains(n, "severity_id"):
		return "4"
	case strings.Contains(n, "event") && strings.HasSuffix(n, "value"):
		return "1"
	case strings.Contains(n, "update_status") || strings.Contains(n, "is_update"):
		return "0"
	case strings.Contains(n, "source"):
		return "0"
	case strings.Contains(n, "tags"):
		return "[]"
	case strings.Contains(n, "id"):
		return "42"
	}
	return "x"
}

// wantHost is where the first request of some webhooks goes.
var wantHost = map[string]string{"Slack": "https://slack.com/api/", "Telegram": "https://api.telegram.org/bot",
	"Discord": "https://hooks.example/send", "Jira": "http://stub.test/api"}

// TestDefaultWebhooksRun runs each of Zabbix 6.0's webhook media types
// (the catalog's defaults, recorded from 6.0.14) through the webhook
// engine against a stub HTTP server: none may fail for want of
// something the engine lacks.
func TestDefaultWebhooksRun(t *testing.T) {
	mts, err := catalog.DefaultMediaTypes()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, mt := range mts {
		if mt.Type != catalog.MediaWebhook {
			continue
		}
		n++
		tr := &stubTransport{}
		s := &WebhookSender{Client: &http.Client{Transport: tr}}
		a := &Alert{SendTo: "someone", Subject: "Problem: disk full", Message: "Disk full on web-1"}
		for _, p := range mt.Parameters {
			a.Params = append(a.Params, Param{Name: p.Name, Value: webhookValue(p.Name, p.Value)})
		}
		err := s.Send(context.Background(), &mt, a)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		t.Logf("%s: %d requests, %v", mt.Name, len(tr.reqs), err)
		for _, gap := range []string{"is not defined", "is not a function", "has no member", "ReferenceError", "SyntaxError", "cannot compile"} {
			if strings.Contains(msg, gap) {
				t.Errorf("%s: the engine lacks something: %v", mt.Name, err)
			}
		}
		// Each gets as far as calling its service (the stub's answers
		// are not every service's, so some then fail on them); these
		// take the stub's answer as their service's.
		if len(tr.reqs) == 0 {
			t.Errorf("%s sent no request: %v", mt.Name, err)
		}
		if want, ok := wantHost[mt.Name]; ok && (err != nil || !strings.Contains(tr.reqs[0], want)) {
			t.Errorf("%s: %v, requests %q, want one to %s", mt.Name, err, tr.reqs, want)
		}
	}
	if n != 31 {
		t.Errorf("%d webhooks, want 31", n)
	}
}
