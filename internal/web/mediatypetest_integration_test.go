package web_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestIntegrationBrowserMediaTypeTest drives the media types' "Test"
// (mediatype.test) in headless Chromium at 1400×900: an email media
// type sends to an address typed in the dialog through a real SMTP
// server (aiosmtpd on loopback), a bad address is refused beside its
// field, a webhook sends its parameters to a loopback HTTP server and
// shows the script's JSON response, a disabled media type is refused
// with 6.0's text. An Admin is refused the page and the method.
func TestIntegrationBrowserMediaTypeTest(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs headless Chromium and aiosmtpd")
	}
	smtpd := testutil.StartSMTPD(t, testutil.SMTPDOptions{})
	got := make(chan string, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- string(b)
		io.WriteString(w, `{"id":42,"ok":true}`)
	}))
	defer hook.Close()
	_, base, password := startServer(t, catalog.Spec{})
	token := apiLogin(t, base, password)
	var mail, wh, off struct{ MediaTypeIDs []string }
	json.Unmarshal(apiCall(t, base, token, "mediatype.create", map[string]any{"name": "mt mail", "type": 0, "smtp_server": "127.0.0.1", "smtp_port": smtpd.Port,
		"smtp_helo": "peregrine.test", "smtp_email": "peregrine@example.com"}), &mail)
	json.Unmarshal(apiCall(t, base, token, "mediatype.create", map[string]any{"name": "mt hook", "type": 4, "timeout": "10s",
		"parameters": []map[string]string{{"name": "url", "value": "{ALERT.SENDTO}"}, {"name": "text", "value": "{ALERT.MESSAGE}"}},
		"script": `var p = JSON.parse(value); var r = new HttpRequest(); r.addHeader('Content-Type: application/json');
var resp = r.post(p.url, JSON.stringify({text: p.text})); if (r.getStatus() != 200) throw 'HTTP ' + r.getStatus(); return resp;`}), &wh)
	json.Unmarshal(apiCall(t, base, token, "mediatype.create", map[string]any{"name": "mt off", "type": 0, "status": 1, "smtp_server": "127.0.0.1", "smtp_email": "p@example.com"}), &off)

	ctx, sh := browser(t)
	watchPage(t, ctx)
	login(t, ctx, base, password)
	open := func(id string) chromedp.Action {
		return chromedp.Tasks{clickJS(fmt.Sprintf(`document.querySelector('.mediatype-test-open[data-id="%s"]')`, id)),
			chromedp.WaitVisible(`#mediatype-test-form`, chromedp.ByQuery)}
	}
	run(t, ctx, "a bad address", chromedp.Navigate(base+"/admin/mediatypes"), chromedp.WaitVisible(`.mediatype-test-open`, chromedp.ByQuery),
		open(mail.MediaTypeIDs[0]), setJS(`#mediatype-test-sendto`, "not an address"), chromedp.Click(`#mediatype-test-send`, chromedp.ByQuery),
		pollJS(fieldError("mediatype-test-sendto", "an email address is expected")))
	run(t, ctx, "an email test", setJS(`#mediatype-test-sendto`, "ops@example.com"), setJS(`#mediatype-test-subject`, "Peregrine test"),
		chromedp.Click(`#mediatype-test-send`, chromedp.ByQuery),
		pollJS(`(document.querySelector('#mediatype-test-result') || {}).textContent === 'Media type test successful.'`))
	if m := smtpd.Messages(t); len(m) != 1 || !strings.Contains(m[0], "Peregrine test") || !strings.Contains(m[0], "ops@example.com") {
		t.Fatalf("the SMTP server received %q", m)
	}
	run(t, ctx, "a webhook test", chromedp.Click(`#mediatype-test-cancel`, chromedp.ByQuery), open(wh.MediaTypeIDs[0]),
		setJS(`#mediatype-test-params .mediatype-test-params-row:nth-child(1) .mediatype-test-params-value`, hook.URL),
		setJS(`#mediatype-test-params .mediatype-test-params-row:nth-child(2) .mediatype-test-params-value`, "hello from the page"),
		chromedp.Click(`#mediatype-test-send`, chromedp.ByQuery),
		pollJS(`(document.querySelector('#mediatype-test-response') || {}).textContent.includes('"id": 42')`))
	if b := <-got; !strings.Contains(b, "hello from the page") {
		t.Fatalf("the webhook received %q", b)
	}
	shot1400(t, ctx, sh, "admin-mediatype-test")
	run(t, ctx, "a disabled media type", chromedp.Click(`#mediatype-test-cancel`, chromedp.ByQuery), open(off.MediaTypeIDs[0]),
		setJS(`#mediatype-test-sendto`, "ops@example.com"), chromedp.Click(`#mediatype-test-send`, chromedp.ByQuery),
		pollJS(`(document.querySelector('#mediatype-test-result') || {}).textContent.includes('Cannot test disabled media type.')`))
	if n := countOf(t, base, token, "alert", map[string]any{}); n != 0 {
		t.Fatalf("tests stored %d alerts", n)
	}

	// An Admin: the page is refused (403) and so is the method.
	apiCall(t, base, token, "user.create", map[string]any{"username": "mt-admin", "passwd": "Zx9!long-passw0rd", "roleid": "2",
		"usrgrps": []map[string]string{{"usrgrpid": getOne(t, base, token, "usergroup", map[string]any{"output": []string{"usrgrpid"}, "filter": map[string]any{"name": "Zabbix administrators"}})["usrgrpid"].(string)}}})
	var admin string
	json.Unmarshal(apiCall(t, base, "", "user.login", map[string]string{"username": "mt-admin", "password": "Zx9!long-passw0rd"}), &admin)
	if st := pageStatus(t, base, admin, "/admin/mediatypes"); st != http.StatusForbidden {
		t.Errorf("an Admin opening /admin/mediatypes: %d, want 403", st)
	}
	if e := apiTry(t, base, admin, "mediatype.test", map[string]any{"mediatypeid": mail.MediaTypeIDs[0], "sendto": "a@example.com", "message": "x"}); e == "" {
		t.Error("an Admin's mediatype.test was accepted")
	}
	if m := smtpd.Messages(t); len(m) != 1 {
		t.Fatalf("%d messages after the refusals, want 1", len(m))
	}
}
