package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestIntegrationMediaTypeTest: mediatype.test (a Peregrine addition for
// 6.0's media type "Test") sends through a real SMTP server (aiosmtpd on
// loopback) and a webhook script to a loopback HTTP server, answers with
// the script's return value, refuses what 6.0's test refuses (a
// disabled media type, no message, a bad address, a webhook given
// sendto, a user who is not Super admin) and stores no alert.
func TestIntegrationMediaTypeTest(t *testing.T) {
	if testing.Short() {
		t.Skip("starts aiosmtpd")
	}
	smtpd := testutil.StartSMTPD(t, testutil.SMTPDOptions{})
	got := make(chan string, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- string(b)
		io.WriteString(w, `{"ok":true}`)
	}))
	defer hook.Close()
	s, stop := runServer(t, testConfig(t, catalog.Spec{}))
	defer stop()
	admin := adminLogin(t, s)
	var mail, wh, off struct{ MediaTypeIDs []string }
	admin.ok("mediatype.create", map[string]any{"name": "s7ui mail", "type": 0, "smtp_server": "127.0.0.1", "smtp_port": smtpd.Port,
		"smtp_helo": "peregrine.test", "smtp_email": "peregrine@example.com"}, &mail)
	admin.ok("mediatype.create", map[string]any{"name": "s7ui hook", "type": 4, "timeout": "10s",
		"parameters": []map[string]string{{"name": "url", "value": "{ALERT.SENDTO}"}, {"name": "text", "value": "{ALERT.MESSAGE}"}},
		"script": `var p = JSON.parse(value); var r = new HttpRequest(); r.addHeader('Content-Type: application/json');
var resp = r.post(p.url, JSON.stringify({text: p.text})); if (r.getStatus() != 200) throw 'HTTP ' + r.getStatus(); return resp;`}, &wh)
	admin.ok("mediatype.create", map[string]any{"name": "s7ui off", "type": 0, "status": 1, "smtp_server": "127.0.0.1", "smtp_email": "p@example.com"}, &off)

	var res map[string]any
	admin.ok("mediatype.test", map[string]any{"mediatypeid": mail.MediaTypeIDs[0], "sendto": "ops@example.com", "subject": "Test subject", "message": "Test message"}, &res)
	if res["response"] != "success" {
		t.Fatalf("email test: %v", res)
	}
	if m := smtpd.Messages(t); len(m) != 1 || !strings.Contains(m[0], "Test subject") || !strings.Contains(m[0], "ops@example.com") {
		t.Fatalf("the SMTP server received %q", m)
	}
	admin.ok("mediatype.test", map[string]any{"mediatypeid": wh.MediaTypeIDs[0], "parameters": []map[string]string{{"name": "url", "value": hook.URL}, {"name": "text", "value": "hello"}}}, &res)
	if b := <-got; !strings.Contains(b, `"text":"hello"`) || res["value"] != `{"ok":true}` {
		t.Fatalf("webhook test: received %q, answered %v", b, res)
	}
	for _, c := range []struct {
		params any
		code   int
		want   string
	}{
		{map[string]any{"mediatypeid": off.MediaTypeIDs[0], "sendto": "a@example.com", "message": "x"}, -32500, "Cannot test disabled media type."},
		{map[string]any{"mediatypeid": mail.MediaTypeIDs[0], "sendto": "a@example.com", "message": " "}, -32602, `Invalid parameter "/message": cannot be empty.`},
		{map[string]any{"mediatypeid": mail.MediaTypeIDs[0], "sendto": "not an address", "message": "x"}, -32602, `Invalid parameter "/sendto": an email address is expected.`},
		{map[string]any{"mediatypeid": wh.MediaTypeIDs[0], "sendto": "x"}, -32602, `Invalid parameter "/": unexpected parameter "sendto".`},
		{map[string]any{"mediatypeid": "999999", "message": "x"}, -32500, "No permissions to referred object or it does not exist!"},
		{map[string]any{"mediatypeid": wh.MediaTypeIDs[0], "parameters": []map[string]string{{"name": "url", "value": "http://127.0.0.1:1/"}}}, -32500, "Media type test failed"},
	} {
		admin.fails("mediatype.test", c.params, c.code, c.want)
	}
	var alerts []any
	admin.ok("alert.get", map[string]any{}, &alerts)
	if len(alerts) != 0 {
		t.Fatalf("a test stored alerts: %v", alerts)
	}
	// An Admin (not Super admin) may not test.
	admin.ok("user.create", map[string]any{"username": "s7ui-admin", "passwd": "Zx9!long-passw0rd", "roleid": "2",
		"usrgrps": []map[string]string{{"usrgrpid": "7"}}}, nil)
	other := &apiClient{t: t, url: admin.url}
	other.auth = other.login("s7ui-admin", "Zx9!long-passw0rd")
	r := other.call("mediatype.test", map[string]any{"mediatypeid": mail.MediaTypeIDs[0], "sendto": "a@example.com", "message": "x"})
	if r.Error == nil {
		b, _ := json.Marshal(r)
		t.Fatalf("an Admin's mediatype.test: %s", b)
	}
}
