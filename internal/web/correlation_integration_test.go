package web_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// TestIntegrationBrowserCorrelationPage drives /config/correlation in
// headless Chromium at 1400×900 and checks each step through the API:
// a rule with a new event tag and a tag pair closing old events is
// created, edited to a custom expression with a tag value condition,
// refused as a duplicate (the API's error beside the name) and with no
// conditions (beside them) with nothing saved, cloned, disabled with
// the mass action and deleted. An Admin is refused the page and the
// methods.
func TestIntegrationBrowserCorrelationPage(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs headless Chromium")
	}
	_, base, password := startServer(t, catalog.Spec{})
	token := apiLogin(t, base, password)
	const name = `<b>Close</b> "old" by service & scope`
	ctx, sh := browser(t)
	watchPage(t, ctx)
	login(t, ctx, base, password)
	row := func(n int, sel string) string {
		return `#correlation-conditions .correlation-conditions-row:nth-child(` + string(rune('0'+n)) + `) ` + sel
	}
	run(t, ctx, "new rule", chromedp.Navigate(base+"/config/correlation"), chromedp.WaitVisible(`#correlation-create`, chromedp.ByQuery),
		chromedp.Click(`#correlation-create`, chromedp.ByQuery), chromedp.WaitVisible(`#correlation-edit`, chromedp.ByQuery),
		setJS(`#correlation-name`, name), setJS(`#correlation-description`, "service restarts"),
		chromedp.Click(`#correlation-conditions-add`, chromedp.ByQuery), chromedp.Click(`#correlation-conditions-add`, chromedp.ByQuery),
		setJS(row(1, ".cond-type"), "1"), setJS(row(1, ".cond-tag"), "service"),
		setJS(row(2, ".cond-type"), "3"), setJS(row(2, ".cond-oldtag"), "service"), setJS(row(2, ".cond-newtag"), "service"),
		setJS(`#correlation-op-0`, "1"), chromedp.Click(`#correlation-save`, chromedp.ByQuery), pollJS(savedOr("correlation", name)))
	params := map[string]any{"output": "extend", "selectFilter": "extend", "selectOperations": "extend", "filter": map[string]any{"name": name}}
	c := getOne(t, base, token, "correlation", params)
	if f := js(c["filter"]); c["description"] != "service restarts" || !strings.Contains(f, `"tag":"service"`) || !strings.Contains(f, `"oldtag":"service"`) ||
		!strings.Contains(f, `"eval_formula":"A and B"`) || js(c["operations"]) != `[{"type":"0"}]` {
		t.Fatalf("rule made by the page: %v", c)
	}
	run(t, ctx, "edit: custom expression", clickJS(rowNamed("correlation", name)), pollJS(`document.querySelectorAll('.correlation-conditions-row').length === 2`),
		chromedp.Click(`#correlation-conditions-add`, chromedp.ByQuery), setJS(row(3, ".cond-type"), "5"), setJS(row(3, ".cond-tag"), "scope"),
		setJS(row(3, ".cond-value-operator"), "2"), setJS(row(3, ".cond-value"), "prod"),
		setJS(`#correlation-evaltype`, "3"), setJS(row(3, ".cond-formulaid"), "C"), setJS(`#correlation-formula`, "A and (B or C)"),
		setJS(`#correlation-op-1`, "1"))
	shot1400(t, ctx, sh, "config-correlation-form")
	run(t, ctx, "save the edit", chromedp.Click(`#correlation-save`, chromedp.ByQuery), pollJS(`document.querySelector('#correlation-form').hidden`))
	if c = getOne(t, base, token, "correlation", params); !strings.Contains(js(c["filter"]), `"eval_formula":"A and (B or C)"`) ||
		!strings.Contains(js(c["filter"]), `"value":"prod"`) || js(c["operations"]) != `[{"type":"0"},{"type":"1"}]` {
		t.Fatalf("rule after the edit: %v", c)
	}
	// Refusals: a duplicate name, no conditions. Nothing is saved.
	apiCall(t, base, token, "correlation.create", map[string]any{"name": "taken", "filter": map[string]any{"evaltype": 0, "conditions": []map[string]any{{"type": 0, "tag": "x"}}},
		"operations": []map[string]any{{"type": 0}}})
	run(t, ctx, "a duplicate", clickJS(rowNamed("correlation", name)), pollJS(`document.querySelectorAll('.correlation-conditions-row').length === 3`),
		setJS(`#correlation-name`, "taken"), setJS(`#correlation-description`, "changed"), chromedp.Click(`#correlation-save`, chromedp.ByQuery),
		pollJS(fieldError("correlation-name", `Correlation "taken" already exists.`)))
	run(t, ctx, "no conditions", setJS(`#correlation-name`, name), chromedp.Evaluate(`document.querySelectorAll('.correlation-conditions-row .remove-row').forEach((b) => b.click())`, nil),
		chromedp.Click(`#correlation-save`, chromedp.ByQuery),
		pollJS(`(() => { const e = document.querySelector('#correlation-conditions').nextElementSibling; return !!e && e.classList.contains('field-error') && e.textContent.includes('cannot be empty'); })()`))
	if c = getOne(t, base, token, "correlation", params); c["description"] != "service restarts" || !strings.Contains(js(c["filter"]), `"value":"prod"`) {
		t.Fatalf("a refused edit saved something: %v", c)
	}
	run(t, ctx, "clone", chromedp.Click(`#correlation-cancel`, chromedp.ByQuery), clickJS(rowNamed("correlation", name)),
		pollJS(`document.querySelectorAll('.correlation-conditions-row').length === 3`), chromedp.Click(`#correlation-clone`, chromedp.ByQuery),
		pollJS(`(document.querySelector('#correlation-name') || {}).value.endsWith('(copy)')`), chromedp.Click(`#correlation-save`, chromedp.ByQuery),
		pollJS(savedOr("correlation", name+" (copy)")))
	cp := getOne(t, base, token, "correlation", map[string]any{"output": "extend", "selectFilter": "extend", "filter": map[string]any{"name": name + " (copy)"}})
	if !strings.Contains(js(cp["filter"]), `"A and (B or C)"`) {
		t.Fatalf("clone: %v", cp)
	}
	run(t, ctx, "mass disable", clickJS(`document.querySelector('.correlation-row[data-id="`+c["correlationid"].(string)+`"] .row-check')`),
		clickJS(`document.querySelector('#correlation-mass-disable')`),
		pollJS(`(document.querySelector('.correlation-row[data-id="`+c["correlationid"].(string)+`"]') || {textContent: ''}).textContent.includes('Disabled')`))
	if c = getOne(t, base, token, "correlation", params); c["status"] != "1" {
		t.Fatalf("after the mass disable: %v", c)
	}
	shot1400(t, ctx, sh, "config-correlation")
	run(t, ctx, "delete the clone", deleteThroughForm("correlation", name+" (copy)"))
	if n := countOf(t, base, token, "correlation", map[string]any{}); n != 2 {
		t.Fatalf("%d rules, want 2", n)
	}
	var injected int
	run(t, ctx, "count injected elements", chromedp.Evaluate(`document.querySelectorAll('main script, main img, main b').length`, &injected))
	if injected != 0 {
		t.Errorf("markup from names became elements (%d)", injected)
	}

	// An Admin: the page is refused and so are the writes.
	apiCall(t, base, token, "user.create", map[string]any{"username": "cr-admin", "passwd": "Zx9!long-passw0rd", "roleid": "2",
		"usrgrps": []map[string]string{{"usrgrpid": getOne(t, base, token, "usergroup", map[string]any{"output": []string{"usrgrpid"}, "filter": map[string]any{"name": "Zabbix administrators"}})["usrgrpid"].(string)}}})
	var admin string
	json.Unmarshal(apiCall(t, base, "", "user.login", map[string]string{"username": "cr-admin", "password": "Zx9!long-passw0rd"}), &admin)
	if st := pageStatus(t, base, admin, "/config/correlation"); st != http.StatusForbidden {
		t.Errorf("an Admin opening /config/correlation: %d, want 403", st)
	}
	if e := apiTry(t, base, admin, "correlation.update", map[string]any{"correlationid": c["correlationid"], "status": 0}); e == "" {
		t.Error("an Admin's correlation.update was accepted")
	}
}
