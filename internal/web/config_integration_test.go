package web_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestIntegrationBrowserConfig drives the configuration pages and value
// maps in headless Chromium against a whole server: a value map created
// through the API shows in latest data and in the problem it raises
// ("Up (1)"), and in a problem's operational data ({ITEM.LASTVALUE},
// mapped by the server: problem.get and the row say "state Up (1)"); a host is created and then edited through the UI's form
// and the API sees both; an item is edited; a bad trigger expression
// shows the API's error with its position marked, then a good one is
// saved; actions and media types are listed and an action is disabled in
// place (the page says "not available" on a server without those
// methods); names that are markup stay text on every new
// page.
func TestIntegrationBrowserConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs headless Chromium and zabbix_sender")
	}
	testutil.Need(t, "zabbix_sender", "zabbix-agent")
	spec := catalog.Spec{Hosts: []catalog.HostSpec{
		{Host: "web-test", Name: "Web test host", Groups: []string{"Web"}, Items: []catalog.ItemSpec{
			{Key: "trap.state", Name: "Service state", ValueType: "unsigned"},
			{Key: "trap.count", Name: "Requests", ValueType: "unsigned"},
		}},
		{Host: "xss-host", Name: xssName, Groups: []string{"Web"}, Items: []catalog.ItemSpec{
			{Key: "trap.note", Name: "<img src=x onerror=alert(2)>", ValueType: "character"},
		}},
	}}
	s, base, password := startServer(t, spec)
	token := apiLogin(t, base, password)
	snap := s.Catalog.Snapshot()
	web, xss := snap.Host("web-test"), snap.Host("xss-host")
	state := snap.Lookup("web-test", "trap.state")

	// A value map, linked to the item, and a value through the trapper.
	var vm struct{ ValueMapIDs []string }
	json.Unmarshal(apiCall(t, base, token, "valuemap.create", map[string]any{"hostid": web.ID, "name": "Service state",
		"mappings": []map[string]any{{"value": "0", "newvalue": "Down"}, {"value": "1", "newvalue": "Up"}}}), &vm)
	apiCall(t, base, token, "valuemap.create", map[string]any{"hostid": xss.ID, "name": xssName,
		"mappings": []map[string]any{{"value": "1", "newvalue": "<b onmouseover=alert(3)>x</b>"}}})
	apiCall(t, base, token, "item.update", map[string]any{"itemid": state.ID, "valuemapid": vm.ValueMapIDs[0]})
	apiCall(t, base, token, "trigger.create", map[string]any{"description": "Service is up on {HOST.HOST}", "expression": "last(/web-test/trap.state)=1", "priority": 2})
	// Operational data: the server applies the value map to
	// {ITEM.LASTVALUE} when it makes the problem.
	var opTrig struct{ TriggerIDs []string }
	json.Unmarshal(apiCall(t, base, token, "trigger.create", map[string]any{"description": "Service state known", "expression": "last(/web-test/trap.state)>=0",
		"priority": 1, "opdata": "state {ITEM.LASTVALUE}"}), &opTrig)
	if r := testutil.RunSender(t, s.TrapperAddr().String(), "-s", "web-test", "-k", "trap.state", "-o", "1"); r.Processed != 1 {
		t.Fatalf("zabbix_sender: %+v", r)
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

	// Value maps in latest data and in the problem's row.
	row := fmt.Sprintf(`.item-row[data-itemid="%d"] .last-value`, state.ID)
	var shown string
	run(t, ctx, "latest data shows the mapped value",
		chromedp.Navigate(fmt.Sprintf("%s/latest?hostid=%d", base, web.ID)),
		poll(fmt.Sprintf(`(document.querySelector(%q) || {}).textContent === 'Up (1)'`, row)), textOf(row, &shown))
	sh.take(t, ctx, "latest-valuemap")
	var op string
	run(t, ctx, "the problem shows the mapped value",
		chromedp.Navigate(base+"/problems"),
		poll(`[...document.querySelectorAll('.problem-row:not(.loading) .problem-name')].some((e) => e.textContent.startsWith('Service is up') && e.querySelector('.opdata'))`),
		chromedp.Evaluate(`[...document.querySelectorAll('.problem-row:not(.loading) .problem-name')].find((e) => e.textContent.startsWith('Service is up')).querySelector('.opdata').textContent`, &op))
	if op != " (Up (1))" {
		t.Errorf("problem row's value: %q, want \" (Up (1))\"", op)
	}
	var opdata []struct{ Opdata string }
	json.Unmarshal(apiCall(t, base, token, "problem.get", map[string]any{"objectids": opTrig.TriggerIDs, "output": []string{"opdata"}}), &opdata)
	if len(opdata) != 1 || opdata[0].Opdata != "state Up (1)" {
		t.Errorf("problem.get opdata of the trigger with operational data: %+v, want \"state Up (1)\"", opdata)
	}
	run(t, ctx, "the problem's operational data shows the mapped value",
		poll(`[...document.querySelectorAll('.problem-row:not(.loading) .opdata')].some((e) => e.textContent === ' (state Up (1))')`))

	// Create a host through the form.
	run(t, ctx, "open the hosts configuration",
		chromedp.Click(`#nav a[data-page="config"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#config-hosts .config-host-row`, chromedp.ByQuery),
		chromedp.Click(`#host-create`, chromedp.ByQuery),
		chromedp.WaitVisible(`#host-edit`, chromedp.ByQuery),
		chromedp.SendKeys(`#host-host`, "ui-host", chromedp.ByQuery),
		chromedp.SendKeys(`#host-name`, "Made in the UI", chromedp.ByQuery),
		chromedp.Evaluate(`(() => {
			for (const o of document.querySelector('#host-groups').options) o.selected = o.textContent === 'Web';
			document.querySelector('#host-ifaces .add-row').click();
			document.querySelector('#host-tags .add-row').click();
			return true; })()`, nil),
		chromedp.SendKeys(`#host-ifaces .host-ifaces-ip`, "127.0.0.1", chromedp.ByQuery),
		chromedp.SendKeys(`#host-tags .host-tags-tag`, "env", chromedp.ByQuery),
		chromedp.SendKeys(`#host-tags .host-tags-value`, "prod", chromedp.ByQuery))
	sh.take(t, ctx, "config-host-create")
	run(t, ctx, "save the new host", chromedp.Click(`#host-save`, chromedp.ByQuery),
		poll(`[...document.querySelectorAll('#config-hosts .host-name')].some((e) => e.textContent === 'Made in the UI')`))
	type apiHost struct {
		HostID, Host, Name, Status string
		Groups                     []struct{ Name string }
		Interfaces                 []struct{ IP, Port, Type string }
		Tags                       []struct{ Tag, Value string }
	}
	getHost := func() apiHost {
		t.Helper()
		var hs []apiHost
		json.Unmarshal(apiCall(t, base, token, "host.get", map[string]any{"filter": map[string]any{"host": "ui-host"}, "output": "extend",
			"selectGroups": "extend", "selectInterfaces": "extend", "selectTags": "extend"}), &hs)
		if len(hs) != 1 {
			t.Fatalf("host.get ui-host: %+v", hs)
		}
		return hs[0]
	}
	h := getHost()
	if h.Name != "Made in the UI" || h.Status != "0" || len(h.Groups) != 1 || h.Groups[0].Name != "Web" ||
		len(h.Interfaces) != 1 || h.Interfaces[0].IP != "127.0.0.1" || h.Interfaces[0].Port != "10050" || h.Interfaces[0].Type != "1" ||
		len(h.Tags) != 1 || h.Tags[0].Tag != "env" || h.Tags[0].Value != "prod" {
		t.Fatalf("host created through the UI: %+v", h)
	}
	// Edit it: another visible name, disabled.
	run(t, ctx, "open the host's form",
		chromedp.Evaluate(`[...document.querySelectorAll('#config-hosts .host-name')].find((e) => e.textContent === 'Made in the UI').click()`, nil),
		chromedp.WaitVisible(`#host-edit`, chromedp.ByQuery))
	run(t, ctx, "change the host",
		chromedp.Evaluate(`document.querySelector('#host-name').value = 'Renamed in the UI'; document.querySelector('#host-status').value = '1'`, nil))
	run(t, ctx, "save the host",
		chromedp.Click(`#host-save`, chromedp.ByQuery),
		poll(`[...document.querySelectorAll('#config-hosts .host-name')].some((e) => e.textContent === 'Renamed in the UI') || !document.querySelector('#host-error').hidden`))
	var saveErr string
	run(t, ctx, "no error", chromedp.Evaluate(`document.querySelector('#host-form').hidden ? '' : document.querySelector('#host-error').textContent`, &saveErr))
	if saveErr != "" {
		t.Fatalf("host.update from the form: %s", saveErr)
	}
	if h2 := getHost(); h2.Name != "Renamed in the UI" || h2.Status != "1" || len(h2.Interfaces) != 1 || len(h2.Tags) != 1 {
		t.Errorf("host edited through the UI: %+v", h2)
	}
	sh.take(t, ctx, "config-hosts")
	var hostText string
	run(t, ctx, "the XSS host name is text", chromedp.Evaluate(`[...document.querySelectorAll('#config-hosts .host-name')].map(e => e.textContent).find(t => t.includes('script')) || ''`, &hostText))
	if hostText != xssName {
		t.Errorf("configuration shows the host name as %q", hostText)
	}

	// Edit an item: key and interval.
	count := snap.Lookup("web-test", "trap.count")
	run(t, ctx, "edit an item",
		chromedp.Navigate(fmt.Sprintf("%s/config/items?hostid=%d", base, web.ID)),
		chromedp.WaitVisible(fmt.Sprintf(`.config-item-row[data-itemid="%d"] .item-name`, count.ID), chromedp.ByQuery),
		chromedp.Click(fmt.Sprintf(`.config-item-row[data-itemid="%d"] .item-name`, count.ID), chromedp.ByQuery),
		chromedp.WaitVisible(`#item-edit`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('#item-key').value = 'trap.requests'; document.querySelector('#item-value-type').value = '0'; document.querySelector('#item-valuemap').value = '0'`, nil),
		chromedp.Click(`#item-save`, chromedp.ByQuery),
		poll(fmt.Sprintf(`(document.querySelector('.config-item-row[data-itemid="%d"] .item-key') || {}).textContent === 'trap.requests'`, count.ID)))
	if it := s.Catalog.Snapshot().Item(count.ID); it.Key != "trap.requests" || it.ValueType != 0 {
		t.Errorf("item edited through the UI: key %q, value type %d", it.Key, it.ValueType)
	}
	sh.take(t, ctx, "config-items")

	// A trigger: a bad expression shows the API's error and where.
	run(t, ctx, "bad trigger expression",
		chromedp.Navigate(fmt.Sprintf("%s/config/triggers?hostid=%d", base, web.ID)),
		chromedp.WaitVisible(`.config-trigger-row`, chromedp.ByQuery),
		chromedp.Click(`#trigger-create`, chromedp.ByQuery),
		chromedp.SendKeys(`#trigger-description`, "Too many requests", chromedp.ByQuery),
		chromedp.SendKeys(`#trigger-event-name`, "Requests over 100 on {HOST.NAME}", chromedp.ByQuery),
		chromedp.SendKeys(`#trigger-expression-input`, "last(/web-test/trap.requests)>>100", chromedp.ByQuery),
		chromedp.Click(`#trigger-save`, chromedp.ByQuery),
		chromedp.WaitVisible(`#trigger-error-pos mark`, chromedp.ByQuery))
	var errText, marked string
	run(t, ctx, "read the error", textOf(`#trigger-error span`, &errText), textOf(`#trigger-error-pos mark`, &marked))
	if !strings.Contains(errText, "expression") || marked == "" || !strings.HasSuffix("last(/web-test/trap.requests)>>100", marked) {
		t.Errorf("trigger error %q, marked %q", errText, marked)
	}
	sh.take(t, ctx, "config-trigger-error")
	run(t, ctx, "good trigger expression",
		chromedp.Evaluate(`document.querySelector('#trigger-expression-input').value = 'last(/web-test/trap.requests)>100'`, nil),
		chromedp.Click(`#trigger-save`, chromedp.ByQuery),
		poll(`[...document.querySelectorAll('.config-trigger-row .trigger-name')].some((e) => e.textContent === 'Too many requests')`))
	var made []struct {
		EventName string `json:"event_name"`
	}
	json.Unmarshal(apiCall(t, base, token, "trigger.get", map[string]any{"filter": map[string]string{"description": "Too many requests"}, "output": []string{"event_name"}}), &made)
	if len(made) != 1 || made[0].EventName != "Requests over 100 on {HOST.NAME}" {
		t.Errorf("trigger made by the form: %+v", made)
	}

	// Value maps page, with the XSS names as text.
	var vmName string
	run(t, ctx, "value maps of the XSS host",
		chromedp.Navigate(fmt.Sprintf("%s/config/valuemaps?hostid=%d", base, xss.ID)),
		chromedp.WaitVisible(`.config-valuemap-row .valuemap-name`, chromedp.ByQuery),
		textOf(`.config-valuemap-row .valuemap-name`, &vmName))
	if vmName != xssName {
		t.Errorf("value map name shown as %q", vmName)
	}
	sh.take(t, ctx, "config-valuemaps")
	run(t, ctx, "items of the XSS host",
		chromedp.Navigate(fmt.Sprintf("%s/config/items?hostid=%d", base, xss.ID)),
		chromedp.WaitVisible(`.config-item-row .item-name`, chromedp.ByQuery))

	// Actions and media types: listed (a markup name stays text), and an
	// action disabled in place is disabled for the API too.
	var mt struct{ MediaTypeIDs []string }
	json.Unmarshal(apiCall(t, base, token, "mediatype.create", map[string]any{"name": xssName, "type": 4,
		"parameters": []map[string]string{{"name": "URL", "value": "http://127.0.0.1:9/hook"}}}), &mt)
	var users []struct{ UserID string }
	json.Unmarshal(apiCall(t, base, token, "user.get", map[string]any{"filter": map[string]string{"username": "Admin"}}), &users)
	var act struct{ ActionIDs []string }
	json.Unmarshal(apiCall(t, base, token, "action.create", map[string]any{"name": "Notify ops", "eventsource": 0, "esc_period": "1h",
		"operations": []map[string]any{{"operationtype": 0, "opmessage": map[string]any{"default_msg": 1, "mediatypeid": mt.MediaTypeIDs[0]},
			"opmessage_usr": []map[string]string{{"userid": users[0].UserID}}}}}), &act)
	if len(mt.MediaTypeIDs) != 1 || len(act.ActionIDs) != 1 {
		t.Fatalf("mediatype.create %v, action.create %v", mt, act)
	}
	var mtName string
	run(t, ctx, "actions and media types listed",
		chromedp.Navigate(base+"/config/actions"),
		poll(`[...document.querySelectorAll('.action-row .action-name')].some((e) => e.textContent === 'Notify ops')`),
		chromedp.Navigate(base+"/admin/mediatypes"),
		poll(fmt.Sprintf(`!!document.querySelector('.mediatype-row[data-id="%s"] .mediatype-name')`, mt.MediaTypeIDs[0])),
		textOf(fmt.Sprintf(`.mediatype-row[data-id="%s"] .mediatype-name`, mt.MediaTypeIDs[0]), &mtName))
	if mtName != xssName {
		t.Errorf("media type name shown as %q", mtName)
	}
	sh.take(t, ctx, "config-actions")
	run(t, ctx, "disable the action with the mass action",
		chromedp.Navigate(base+"/config/actions"),
		poll(fmt.Sprintf(`!!document.querySelector('.action-row[data-id="%s"] .row-check')`, act.ActionIDs[0])),
		chromedp.Evaluate(fmt.Sprintf(`document.querySelector('.action-row[data-id="%s"] .row-check').click()`, act.ActionIDs[0]), nil),
		chromedp.Evaluate(`document.querySelector('#action-mass-disable').click()`, nil),
		poll(fmt.Sprintf(`(document.querySelector('.action-row[data-id="%s"]') || {textContent: ''}).textContent.includes('Disabled')`, act.ActionIDs[0])))
	var got []struct{ Status string }
	json.Unmarshal(apiCall(t, base, token, "action.get", map[string]any{"actionids": act.ActionIDs[0], "output": []string{"status"}}), &got)
	if len(got) != 1 || got[0].Status != "1" {
		t.Errorf("action.get after disabling in the page: %+v", got)
	}

	var injected int
	run(t, ctx, "count injected elements", chromedp.Evaluate(`document.querySelectorAll('main script, main img, main b').length`, &injected))
	if injected != 0 || len(dialogs) != 0 {
		t.Errorf("markup from names became elements (%d) or ran (dialogs %q)", injected, dialogs)
	}
}
