package web_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// TestIntegrationBrowserAlertingForms creates a media type (webhook) and
// an action (a severity condition, a message operation to a user through
// that media type) with the configuration page's forms in headless
// Chromium, edits both, and checks each step through the API: the forms
// make the real mediatype.*/action.* calls. Names that are markup stay
// text, and a refused change shows the API's message.
func TestIntegrationBrowserAlertingForms(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs headless Chromium")
	}
	const mtName = `<img src=x onerror=alert(5)>hook`
	const actName = `Page on <b>disaster</b>`
	_, base, password := startServer(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "web-1", Groups: []string{"Web"}}}})
	token := apiLogin(t, base, password)
	var users []struct{ UserID string }
	json.Unmarshal(apiCall(t, base, token, "user.get", map[string]any{"filter": map[string]string{"username": "Admin"}}), &users)
	apiCall(t, base, token, "usergroup.create", map[string]any{"name": "Ops"})
	var groups []struct{ UsrGrpID, Name string }
	json.Unmarshal(apiCall(t, base, token, "usergroup.get", map[string]any{"output": []string{"usrgrpid", "name"}}), &groups)
	if len(users) != 1 || len(groups) == 0 {
		t.Fatalf("user.get %v, usergroup.get %v", users, groups)
	}

	ctx, sh := browser(t)
	var dialogs []string
	chromedp.ListenTarget(ctx, func(ev any) {
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			dialogs = append(dialogs, d.Message)
			go chromedp.Run(ctx, page.HandleJavaScriptDialog(false))
		}
	})
	login(t, ctx, base, password)
	poll := func(expr string) chromedp.Action {
		return chromedp.Poll(expr, nil, chromedp.WithPollingTimeout(20*time.Second))
	}
	// set sets a field's value and tells the page (change and input
	// events), as a user's choice would.
	set := func(sel, v string) chromedp.Action {
		return chromedp.Evaluate(fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = %q;
			e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); })()`, sel, v), nil)
	}
	// choose selects options of a multiple select by value.
	choose := func(sel string, vs ...string) chromedp.Action {
		js, _ := json.Marshal(vs)
		return chromedp.Evaluate(fmt.Sprintf(`(() => { const want = %s; for (const o of document.querySelector(%q).options) o.selected = want.includes(o.value); })()`, js, sel), nil)
	}

	// A webhook media type through the form.
	run(t, ctx, "new media type form",
		chromedp.Navigate(base+"/config/actions"),
		chromedp.WaitVisible(`#mediatype-create`, chromedp.ByQuery),
		chromedp.Click(`#mediatype-create`, chromedp.ByQuery),
		chromedp.WaitVisible(`#mediatype-edit`, chromedp.ByQuery))
	var emailHidden bool
	run(t, ctx, "fill the webhook", set(`#mediatype-name`, mtName), set(`#mediatype-type`, "4"),
		chromedp.Evaluate(`document.querySelector('#mediatype-email-fields').hidden`, &emailHidden),
		set(`#mediatype-params .mediatype-params-row:first-child .mediatype-params-value`, "http://127.0.0.1:9/hook"),
		chromedp.Click(`#mediatype-params .add-row`, chromedp.ByQuery),
		set(`#mediatype-params .mediatype-params-row:last-child .mediatype-params-name`, "Severity"),
		set(`#mediatype-params .mediatype-params-row:last-child .mediatype-params-value`, "{EVENT.SEVERITY}"),
		set(`#mediatype-maxattempts`, "4"))
	if !emailHidden {
		t.Error("the webhook form shows the email fields")
	}
	sh.take(t, ctx, "config-mediatype-form")
	run(t, ctx, "create the media type", chromedp.Click(`#mediatype-save`, chromedp.ByQuery),
		poll(fmt.Sprintf(`[...document.querySelectorAll('.mediatype-row .mediatype-name')].some((e) => e.textContent === %q)`, mtName)))
	type mediaType struct {
		MediaTypeID, Name, Type, MaxAttempts, SMTPServer, SMTPEmail string
		Parameters                                                  []struct{ Name, Value string }
	}
	readMT := func() mediaType {
		t.Helper()
		var raw []map[string]any
		json.Unmarshal(apiCall(t, base, token, "mediatype.get", map[string]any{"output": "extend", "filter": map[string]string{"name": mtName}}), &raw)
		if len(raw) != 1 {
			t.Fatalf("mediatype.get by name: %v", raw)
		}
		b, _ := json.Marshal(raw[0])
		var m mediaType
		json.Unmarshal(b, &m)
		m.MaxAttempts, _ = raw[0]["maxattempts"].(string)
		m.SMTPServer, _ = raw[0]["smtp_server"].(string)
		m.SMTPEmail, _ = raw[0]["smtp_email"].(string)
		return m
	}
	mt := readMT()
	// The list shows each media type's queue (mediatype.get selectQueue):
	// nothing waits for a new one.
	var queue string
	run(t, ctx, "the media type's queue", poll(fmt.Sprintf(`(document.querySelector('.mediatype-queue[data-id="%s"]') || {}).textContent === 'empty'`, mt.MediaTypeID)),
		chromedp.Evaluate(fmt.Sprintf(`document.querySelector('.mediatype-queue[data-id="%s"]').textContent`, mt.MediaTypeID), &queue))
	if queue != "empty" {
		t.Fatalf("queue cell %q", queue)
	}
	if mt.Type != "4" || mt.MaxAttempts != "4" || len(mt.Parameters) != 2 || mt.Parameters[0].Name != "URL" || mt.Parameters[0].Value != "http://127.0.0.1:9/hook" ||
		mt.Parameters[1].Name != "Severity" || mt.Parameters[1].Value != "{EVENT.SEVERITY}" {
		t.Fatalf("media type made by the form: %+v", mt)
	}

	// Edited into an email media type: a refused change shows the
	// API's message, then a complete one is saved.
	run(t, ctx, "edit the media type",
		chromedp.Click(fmt.Sprintf(`.mediatype-row[data-id="%s"] .mediatype-name`, mt.MediaTypeID), chromedp.ByQuery),
		poll(fmt.Sprintf(`(document.querySelector('#mediatype-name') || {}).value === %q`, mtName)),
		set(`#mediatype-type`, "0"), set(`#mediatype-smtp-server`, "127.0.0.1"),
		chromedp.Click(`#mediatype-save`, chromedp.ByQuery),
		poll(`!document.querySelector('#mediatype-error').hidden && document.querySelector('#mediatype-error').textContent.includes('smtp_email')`))
	run(t, ctx, "complete the email fields", set(`#mediatype-smtp-email`, "peregrine@example.com"), set(`#mediatype-passwd`, "s3cret"),
		set(`#mediatype-smtp-auth`, "1"), set(`#mediatype-username`, "mailer"),
		chromedp.Click(`#mediatype-save`, chromedp.ByQuery),
		poll(`document.querySelector('#alerting-form').hidden`))
	if mt = readMT(); mt.Type != "0" || mt.SMTPServer != "127.0.0.1" || mt.SMTPEmail != "peregrine@example.com" || mt.MaxAttempts != "4" {
		t.Fatalf("media type after the edit: %+v", mt)
	}

	// An action through the form: severity ≥ Disaster, a message from
	// step 1 to 2 through the media type to Admin.
	run(t, ctx, "new action form",
		chromedp.Click(`#action-create`, chromedp.ByQuery),
		chromedp.WaitVisible(`#action-edit`, chromedp.ByQuery),
		set(`#action-name`, actName), set(`#action-esc-period`, "30m"),
		chromedp.Click(`#action-add-condition`, chromedp.ByQuery),
		set(`.condition-row .condition-type`, "4"), set(`.condition-row .condition-operator`, "5"), set(`.condition-row .condition-value`, "5"),
		chromedp.Click(`#action-add-condition`, chromedp.ByQuery),
		set(`.condition-row:last-child .condition-type`, "26"), set(`.condition-row:last-child .condition-operator`, "0"),
		set(`.condition-row:last-child .condition-value`, "web"), set(`.condition-row:last-child .condition-value2`, "service"),
		set(`.operation-row .op-step-to`, "2"), set(`.operation-row .op-mediatype`, mt.MediaTypeID),
		choose(`.operation-row .op-users`, users[0].UserID))
	sh.take(t, ctx, "config-action-form")
	run(t, ctx, "create the action", chromedp.Click(`#action-save`, chromedp.ByQuery),
		poll(fmt.Sprintf(`[...document.querySelectorAll('.action-row .action-name')].some((e) => e.textContent === %q)`, actName)))
	type action struct {
		ActionID, Name, EscPeriod string `json:"-"`
		Filter                    struct {
			Conditions []struct{ ConditionType, Operator, Value, Value2 string }
		}
		Operations []struct {
			EscStepFrom string `json:"esc_step_from"`
			EscStepTo   string `json:"esc_step_to"`
			OpMessage   struct {
				MediaTypeID string
			}
			OpMessageUsr []struct{ UserID string }   `json:"opmessage_usr"`
			OpMessageGrp []struct{ UsrGrpID string } `json:"opmessage_grp"`
		}
	}
	readAction := func() action {
		t.Helper()
		var raw []map[string]any
		json.Unmarshal(apiCall(t, base, token, "action.get", map[string]any{"output": "extend", "filter": map[string]string{"name": actName},
			"selectFilter": "extend", "selectOperations": "extend"}), &raw)
		if len(raw) != 1 {
			t.Fatalf("action.get by name: %v", raw)
		}
		b, _ := json.Marshal(raw[0])
		var a action
		json.Unmarshal(b, &a)
		a.ActionID, _ = raw[0]["actionid"].(string)
		a.EscPeriod, _ = raw[0]["esc_period"].(string)
		return a
	}
	a := readAction()
	conds, _ := json.Marshal(a.Filter.Conditions)
	if a.EscPeriod != "30m" || len(a.Filter.Conditions) != 2 || string(conds) != `[{"ConditionType":"4","Operator":"5","Value":"5","Value2":""},{"ConditionType":"26","Operator":"0","Value":"web","Value2":"service"}]` {
		t.Fatalf("action made by the form: esc_period %q, conditions %s", a.EscPeriod, conds)
	}
	if len(a.Operations) != 1 || a.Operations[0].EscStepFrom != "1" || a.Operations[0].EscStepTo != "2" || a.Operations[0].OpMessage.MediaTypeID != mt.MediaTypeID ||
		len(a.Operations[0].OpMessageUsr) != 1 || a.Operations[0].OpMessageUsr[0].UserID != users[0].UserID {
		t.Fatalf("action's operations: %+v", a.Operations)
	}

	// Edited: the first condition removed, the operation to the end and
	// to a user group too.
	run(t, ctx, "edit the action",
		chromedp.Click(fmt.Sprintf(`.action-row[data-id="%s"] .action-name`, a.ActionID), chromedp.ByQuery),
		poll(fmt.Sprintf(`(document.querySelector('#action-name') || {}).value === %q && document.querySelectorAll('.condition-row').length === 2`, actName)),
		chromedp.Click(`.condition-row:first-child .remove-row`, chromedp.ByQuery),
		set(`.operation-row .op-step-to`, "0"),
		choose(`.operation-row .op-groups`, groups[0].UsrGrpID),
		chromedp.Click(`#action-save`, chromedp.ByQuery),
		poll(`document.querySelector('#alerting-form').hidden`))
	a = readAction()
	if len(a.Filter.Conditions) != 1 || a.Filter.Conditions[0].ConditionType != "26" || len(a.Operations) != 1 || a.Operations[0].EscStepTo != "0" ||
		len(a.Operations[0].OpMessageUsr) != 1 || len(a.Operations[0].OpMessageGrp) != 1 || a.Operations[0].OpMessageGrp[0].UsrGrpID != groups[0].UsrGrpID {
		t.Fatalf("action after the edit: %+v", a)
	}
	sh.take(t, ctx, "config-actions-edited")

	var injected int
	run(t, ctx, "count injected elements", chromedp.Evaluate(`document.querySelectorAll('main script, main img, main b').length`, &injected))
	if injected != 0 || len(dialogs) != 0 {
		t.Errorf("markup from names became elements (%d) or ran (dialogs %q)", injected, dialogs)
	}
}
