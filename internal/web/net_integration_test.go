package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// Names with markup and quotes (a page writing HTML from strings would
// break on them or run them). Proxy names are host names, which take
// no markup: the API refuses one, and the page shows that beside the
// field.
const (
	netProxy    = "uinet-px"
	netProxyTxt = `<img src=x onerror=alert("px")> 'desc' &`
	netRule     = `<script>alert("dr")</script> lan 'a' &`
	netScenario = `<b>shop</b> 'login' & co`
	netPSK      = "1f87b595725ac58dd977beef14b97461a7c1045b9a1c963065002c5473194952"
)

// reloadUntil opens url every 2 s until expr holds, for 80 s at most:
// discovery sweeps and web scenarios run on their own schedule.
func reloadUntil(t *testing.T, ctx context.Context, what, url, expr string) {
	t.Helper()
	deadline := time.Now().Add(80 * time.Second)
	for {
		var ok bool
		run(t, ctx, what, chromedp.Navigate(url), chromedp.WaitVisible(`#main .toolbar`, chromedp.ByQuery), chromedp.Sleep(500*time.Millisecond),
			chromedp.Evaluate(expr, &ok))
		if ok {
			return
		}
		if time.Now().After(deadline) {
			var text string
			chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector('#main').innerText`, &text))
			t.Fatalf("%s: not within 80 s (%s); the page shows:\n%s", what, url, text)
		}
		time.Sleep(2 * time.Second)
	}
}

// deleteThroughForm opens noun's row named name and deletes it from its form.
func deleteThroughForm(noun, name string) chromedp.Action {
	return chromedp.Tasks{clickJS(rowNamed(noun, name)),
		pollJS(fmt.Sprintf(`!!document.querySelector('#%s-delete')`, noun)), clickJS(fmt.Sprintf(`document.querySelector('#%s-delete')`, noun)),
		pollJS(fmt.Sprintf(`!!document.querySelector('#%s-delete-yes')`, noun)), clickJS(fmt.Sprintf(`document.querySelector('#%s-delete-yes')`, noun)),
		pollJS(`!` + rowNamed(noun, name))}
}

// massDelete checks the row with id and deletes it with the mass action.
func massDelete(noun, id, name string) chromedp.Action {
	// A row left checked by an earlier mass action stays checked.
	return chromedp.Tasks{chromedp.Evaluate(fmt.Sprintf(`(() => { const c = document.querySelector('.%s-row[data-id="%s"] .row-check'); if (!c.checked) c.click(); })()`, noun, id), nil),
		pollJS(fmt.Sprintf(`!(document.querySelector('#%s-mass-delete') || {disabled: true}).disabled`, noun)), clickJS(fmt.Sprintf(`document.querySelector('#%s-mass-delete')`, noun)),
		pollJS(fmt.Sprintf(`!!document.querySelector('#%s-mass-delete-yes')`, noun)), clickJS(fmt.Sprintf(`document.querySelector('#%s-mass-delete-yes')`, noun)),
		pollJS(`!` + rowNamed(noun, name))}
}

// fieldError is a JS expression: the form of noun shows an error beside
// the field with id (the element right after it) containing text.
func fieldError(id, text string) string {
	return fmt.Sprintf(`(() => { const e = document.querySelector('#%s'); const n = e && e.nextElementSibling;
		return !!n && n.classList.contains('field-error') && n.textContent.includes(%q); })()`, id, text)
}

// TestIntegrationBrowserNetPages drives the proxy, network discovery,
// discovery status, autoregistration, web scenario and web monitoring
// pages and the dashboards' kiosk mode in headless Chromium at
// 1400×900: each object is created, edited, cloned and deleted through
// its page and checked through the API; bad input shows the API's error
// beside the field and saves nothing; secrets are never read back. The
// discovery rule sweeps the server's own HTTP port and the web
// scenario fetches the server's own pages, so their status pages show
// real results. A user of type User is refused the configuration pages
// by the server and sees no edit control where it may look.
func TestIntegrationBrowserNetPages(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs headless Chromium")
	}
	_, base, password := startServer(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "web-1", Groups: []string{"Web"}},
		// The proxy's host (web-1 runs the web scenario on the server).
		{Host: "px-1", Groups: []string{"Web"}}}})
	token := apiLogin(t, base, password)
	u, _ := url.Parse(base)
	httpPort := u.Port()
	hostID := getOne(t, base, token, "host", map[string]any{"output": []string{"hostid"}, "filter": map[string]any{"host": "web-1"}})["hostid"].(string)
	webGroup := getOne(t, base, token, "hostgroup", map[string]any{"output": []string{"groupid"}, "filter": map[string]any{"name": "Web"}})["groupid"].(string)

	ctx, sh := browser(t)
	var dialogs, exceptions []string
	chromedp.ListenTarget(ctx, func(ev any) {
		switch e := ev.(type) {
		case *page.EventJavascriptDialogOpening:
			dialogs = append(dialogs, e.Message)
			go chromedp.Run(ctx, page.HandleJavaScriptDialog(false))
		case *runtime.EventExceptionThrown:
			exceptions = append(exceptions, e.ExceptionDetails.Error())
		}
	})
	run(t, ctx, "1400×900", emulation.SetDeviceMetricsOverride(1400, 900, 1, false))
	login(t, ctx, base, password)
	defer func() {
		if len(exceptions) > 0 {
			t.Errorf("page exceptions: %q", exceptions)
		}
	}()

	// Proxies. A name with markup is refused beside the field; the
	// proxy is made active with an address and the host.
	pxParams := map[string]any{"output": "extend", "selectHosts": []string{"host"}, "selectInterface": "extend", "filter": map[string]any{"host": netProxy}}
	run(t, ctx, "new proxy", chromedp.Navigate(base+"/config/proxies"), chromedp.WaitVisible(`#proxy-create`, chromedp.ByQuery),
		chromedp.Click(`#proxy-create`, chromedp.ByQuery), chromedp.WaitVisible(`#proxy-edit`, chromedp.ByQuery),
		setJS(`#proxy-host`, `<script>px</script>`), setJS(`#proxy-proxy-address`, "127.0.0.1"), setJS(`#proxy-description`, netProxyTxt),
		setJS(`#proxy-hosts-search`, "px-1"), pollJS(`document.querySelectorAll('#proxy-hosts-results option').length === 1`),
		chromedp.Evaluate(`document.querySelector('#proxy-hosts-results option').selected = true`, nil), chromedp.Click(`#proxy-hosts-add`, chromedp.ByQuery),
		chromedp.Click(`#proxy-save`, chromedp.ByQuery), pollJS(fieldError("proxy-host", "invalid host name")))
	if n := countOf(t, base, token, "proxy", map[string]any{"output": []string{"proxyid"}}); n != 0 {
		t.Fatalf("a refused proxy was saved (%d proxies)", n)
	}
	run(t, ctx, "create the proxy", setJS(`#proxy-host`, netProxy), chromedp.Click(`#proxy-save`, chromedp.ByQuery), pollJS(rowNamed("proxy", netProxy)),
		pollJS(fmt.Sprintf(`[...document.querySelectorAll('.proxy-row')].some((r) => r.querySelector('.proxy-host-count').textContent === '1' && r.textContent.includes(%q))`, netProxy)))
	px := getOne(t, base, token, "proxy", pxParams)
	pxID := px["proxyid"].(string)
	if px["status"] != "5" || px["proxy_address"] != "127.0.0.1" || px["description"] != netProxyTxt || !strings.Contains(js(px["hosts"]), `"host":"px-1"`) {
		t.Fatalf("proxy made by the form: %v", px)
	}
	// 6.0's mass "Disable hosts" of a proxy, then "Enable hosts".
	hostStatus := func() string {
		return getOne(t, base, token, "host", map[string]any{"output": []string{"status"}, "filter": map[string]any{"host": "px-1"}})["status"].(string)
	}
	for _, c := range []struct{ button, want string }{{"disable-hosts", "1"}, {"enable-hosts", "0"}} {
		run(t, ctx, c.button, chromedp.Evaluate(fmt.Sprintf(`(() => { const c = document.querySelector('.proxy-row[data-id="%s"] .row-check'); if (!c.checked) c.click(); })()`, pxID), nil),
			pollJS(fmt.Sprintf(`!(document.querySelector('#proxy-mass-%s') || {disabled: true}).disabled`, c.button)), clickJS(fmt.Sprintf(`document.querySelector('#proxy-mass-%s')`, c.button)))
		for end := time.Now().Add(20 * time.Second); hostStatus() != c.want; time.Sleep(200 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("%s: px-1's status is %s, want %s", c.button, hostStatus(), c.want)
			}
		}
	}
	run(t, ctx, "uncheck", chromedp.Evaluate(fmt.Sprintf(`document.querySelector('.proxy-row[data-id="%s"] .row-check').click()`, pxID), nil))
	// Passive with an interface and PSK; the secrets are never read back.
	run(t, ctx, "edit the proxy: passive with PSK", clickJS(rowNamed("proxy", netProxy)),
		pollJS(fmt.Sprintf(`(document.querySelector('#proxy-host') || {}).value === %q`, netProxy)),
		setJS(`#proxy-status`, "6"), setJS(`#proxy-ip`, "127.0.0.1"), setJS(`#proxy-port`, "10099"), setJS(`#proxy-tls-connect`, "2"),
		setJS(`#proxy-tls-psk-identity`, "uinet psk"), setJS(`#proxy-tls-psk`, "abc"),
		chromedp.Click(`#proxy-save`, chromedp.ByQuery), pollJS(fieldError("proxy-tls-psk", "even number of hexadecimal")),
		setJS(`#proxy-tls-psk`, netPSK), chromedp.Click(`#proxy-save`, chromedp.ByQuery), pollJS(`document.querySelector('#proxy-form').hidden`))
	px = getOne(t, base, token, "proxy", pxParams)
	if px["status"] != "6" || px["tls_connect"] != "2" || js(px["interface"]) == "[]" || !strings.Contains(js(px["interface"]), `"port":"10099"`) {
		t.Fatalf("proxy after the edit: %v", px)
	}
	if raw := string(apiCall(t, base, token, "proxy.get", map[string]any{"proxyids": []string{pxID}, "output": "extend"})); strings.Contains(raw, netPSK) || strings.Contains(raw, "uinet psk") {
		t.Fatalf("proxy.get returns the PSK: %s", raw)
	}
	run(t, ctx, "the PSK fields start empty, and empty keeps the key", clickJS(rowNamed("proxy", netProxy)),
		pollJS(fmt.Sprintf(`(document.querySelector('#proxy-host') || {}).value === %q`, netProxy)),
		pollJS(`document.querySelector('#proxy-tls-psk').value === '' && document.querySelector('#proxy-tls-psk-identity').value === '' && !document.querySelector('#proxy-psk').hidden`),
		setJS(`#proxy-description`, "kept key"), chromedp.Click(`#proxy-save`, chromedp.ByQuery), pollJS(`document.querySelector('#proxy-form').hidden`))
	if px = getOne(t, base, token, "proxy", pxParams); px["description"] != "kept key" || px["tls_connect"] != "2" {
		t.Fatalf("proxy after an edit without the PSK: %v", px)
	}
	// Clone: no hosts (a host has one proxy), the PSK typed again.
	run(t, ctx, "clone the proxy", clickJS(rowNamed("proxy", netProxy)),
		pollJS(fmt.Sprintf(`(document.querySelector('#proxy-host') || {}).value === %q`, netProxy)),
		chromedp.Click(`#proxy-clone`, chromedp.ByQuery), pollJS(fmt.Sprintf(`document.querySelector('#proxy-host').value === %q`, netProxy+"-copy")),
		chromedp.Click(`#proxy-save`, chromedp.ByQuery), pollJS(fieldError("proxy-tls-psk-identity", "cannot be empty")),
		setJS(`#proxy-tls-psk-identity`, "uinet psk 2"), setJS(`#proxy-tls-psk`, netPSK),
		chromedp.Click(`#proxy-save`, chromedp.ByQuery), pollJS(rowNamed("proxy", netProxy+"-copy")))
	clone := getOne(t, base, token, "proxy", map[string]any{"output": "extend", "selectHosts": []string{"hostid"}, "selectInterface": "extend", "filter": map[string]any{"host": netProxy + "-copy"}})
	if clone["status"] != "6" || clone["tls_connect"] != "2" || !strings.Contains(js(clone["interface"]), `"port":"10099"`) || js(clone["hosts"]) != "[]" {
		t.Fatalf("proxy clone: %v", clone)
	}
	sh.take(t, ctx, "config-proxies")
	run(t, ctx, "delete the clone", deleteThroughForm("proxy", netProxy+"-copy"))
	// A proxy with hosts stays (the API's error in the form); without
	// them it goes.
	run(t, ctx, "a proxy with hosts is not deleted", clickJS(rowNamed("proxy", netProxy)),
		pollJS(`!!document.querySelector('#proxy-delete')`), clickJS(`document.querySelector('#proxy-delete')`),
		pollJS(`!!document.querySelector('#proxy-delete-yes')`), clickJS(`document.querySelector('#proxy-delete-yes')`),
		pollJS(`(document.querySelector('#proxy-error') || {textContent: ''}).textContent.includes('is monitored by proxy')`),
		clickJS(`document.querySelector('#proxy-hosts .unpick')`), chromedp.Click(`#proxy-save`, chromedp.ByQuery),
		pollJS(`document.querySelector('#proxy-form').hidden`))
	if px = getOne(t, base, token, "proxy", pxParams); js(px["hosts"]) != "[]" {
		t.Fatalf("proxy after its host was removed: %v", px["hosts"])
	}
	// The list drawn again after the save (a mass action on the rows
	// before it would be redrawn away).
	run(t, ctx, "mass delete the proxy", pollJS(fmt.Sprintf(`(document.querySelector('.proxy-row[data-id="%s"] .proxy-host-count') || {}).textContent === '0'`, pxID)),
		massDelete("proxy", pxID, netProxy))
	if n := countOf(t, base, token, "proxy", map[string]any{"output": []string{"proxyid"}}); n != 0 {
		t.Fatalf("%d proxies left", n)
	}

	// Network discovery: TCP on the server's own HTTP port, an agent
	// check made the unique one and a SNMPv3 check with its settings.
	drParams := map[string]any{"output": "extend", "selectDChecks": "extend", "filter": map[string]any{"name": netRule}}
	run(t, ctx, "new discovery rule", chromedp.Navigate(base+"/config/drules"), chromedp.WaitVisible(`#drule-create`, chromedp.ByQuery),
		chromedp.Click(`#drule-create`, chromedp.ByQuery), chromedp.WaitVisible(`#drule-edit`, chromedp.ByQuery),
		setJS(`#drule-name`, netRule), setJS(`#drule-iprange`, "999.0.0.1"), setJS(`#drule-delay`, "5s"),
		chromedp.Click(`#drule-checks-add`, chromedp.ByQuery), setJS(`.drule-checks-row:nth-child(1) .dcheck-type`, "8"),
		setJS(`.drule-checks-row:nth-child(1) .dcheck-ports`, httpPort),
		chromedp.Click(`#drule-checks-add`, chromedp.ByQuery), setJS(`.drule-checks-row:nth-child(2) .dcheck-type`, "9"),
		setJS(`.drule-checks-row:nth-child(2) .dcheck-key`, "system.uname"),
		chromedp.Click(`#drule-checks-add`, chromedp.ByQuery), setJS(`.drule-checks-row:nth-child(3) .dcheck-type`, "13"),
		setJS(`.drule-checks-row:nth-child(3) .dcheck-key`, "1.3.6.1.2.1.1.1.0"), setJS(`.drule-checks-row:nth-child(3) .dcheck-v3-securityname`, "uinet"),
		setJS(`.drule-checks-row:nth-child(3) .dcheck-v3-securitylevel`, "2"), setJS(`.drule-checks-row:nth-child(3) .dcheck-v3-authprotocol`, "1"),
		setJS(`.drule-checks-row:nth-child(3) .dcheck-v3-authpassphrase`, "authpass1"), setJS(`.drule-checks-row:nth-child(3) .dcheck-v3-privprotocol`, "1"),
		setJS(`.drule-checks-row:nth-child(3) .dcheck-v3-privpassphrase`, "privpass1"),
		pollJS(`[...document.querySelectorAll('#drule-uniq option')].some((o) => o.textContent.startsWith('Zabbix agent'))`),
		chromedp.Evaluate(`(() => { const s = document.querySelector('#drule-uniq'); s.value = [...s.options].find((o) => o.textContent.startsWith('Zabbix agent')).value; s.dispatchEvent(new Event('change')); })()`, nil),
		setJS(`#drule-name-source`, "2"),
		chromedp.Click(`#drule-save`, chromedp.ByQuery), pollJS(fieldError("drule-iprange", "iprange")))
	if n := countOf(t, base, token, "drule", map[string]any{"output": []string{"druleid"}, "filter": map[string]any{"name": netRule}}); n != 0 {
		t.Fatalf("a refused discovery rule was saved (%d rules)", n)
	}
	run(t, ctx, "create the discovery rule", setJS(`#drule-iprange`, "127.0.0.1"), chromedp.Click(`#drule-save`, chromedp.ByQuery), pollJS(rowNamed("drule", netRule)))
	dr := getOne(t, base, token, "drule", drParams)
	drID := dr["druleid"].(string)
	checks := js(dr["dchecks"])
	if dr["delay"] != "5s" || dr["iprange"] != "127.0.0.1" || len(dr["dchecks"].([]any)) != 3 ||
		!strings.Contains(checks, fmt.Sprintf(`"ports":%q`, httpPort)) || !strings.Contains(checks, `"key_":"system.uname"`) ||
		!strings.Contains(checks, `"snmpv3_securitylevel":"2"`) || !strings.Contains(checks, `"snmpv3_privpassphrase":"privpass1"`) {
		t.Fatalf("discovery rule made by the form: %v", dr)
	}
	for _, c := range dr["dchecks"].([]any) {
		c := c.(map[string]any)
		wantUniq := map[bool]string{true: "1", false: "0"}[c["type"] == "9"]
		if c["uniq"] != wantUniq || c["name_source"] != "2" {
			t.Errorf("check %v: uniq %v (want %s), name_source %v (want 2)", c["type"], c["uniq"], wantUniq, c["name_source"])
		}
	}
	run(t, ctx, "edit the rule", clickJS(rowNamed("drule", netRule)),
		pollJS(`document.querySelectorAll('.drule-checks-row').length === 3`))
	sh.take(t, ctx, "config-drules")
	run(t, ctx, "the SNMPv3 check removed",
		clickJS(`document.querySelector('.drule-checks-row:nth-child(3) .remove-row')`),
		chromedp.Click(`#drule-save`, chromedp.ByQuery), pollJS(`document.querySelector('#drule-form').hidden`))
	if dr = getOne(t, base, token, "drule", drParams); len(dr["dchecks"].([]any)) != 2 || !strings.Contains(js(dr["dchecks"]), `"uniq":"1"`) {
		t.Fatalf("discovery rule after the edit: %v", dr["dchecks"])
	}
	run(t, ctx, "clone the rule", clickJS(rowNamed("drule", netRule)), pollJS(`document.querySelectorAll('.drule-checks-row').length === 2`),
		chromedp.Click(`#drule-clone`, chromedp.ByQuery), pollJS(fmt.Sprintf(`document.querySelector('#drule-name').value === %q`, netRule+" (copy)")),
		chromedp.Click(`#drule-save`, chromedp.ByQuery), pollJS(rowNamed("drule", netRule+" (copy)")))
	drClone := getOne(t, base, token, "drule", map[string]any{"output": "extend", "selectDChecks": "extend", "filter": map[string]any{"name": netRule + " (copy)"}})
	if len(drClone["dchecks"].([]any)) != 2 {
		t.Fatalf("rule clone: %v", drClone)
	}
	run(t, ctx, "mass disable the clone", clickJS(fmt.Sprintf(`document.querySelector('.drule-row[data-id="%s"] .row-check')`, drClone["druleid"])),
		pollJS(`!(document.querySelector('#drule-mass-disable') || {disabled: true}).disabled`), clickJS(`document.querySelector('#drule-mass-disable')`),
		pollJS(fmt.Sprintf(`(document.querySelector('.drule-row[data-id="%s"]') || {textContent: ''}).textContent.includes('Disabled')`, drClone["druleid"])))
	if c := getOne(t, base, token, "drule", map[string]any{"output": "extend", "druleids": []any{drClone["druleid"]}}); c["status"] != "1" {
		t.Fatalf("the clone after mass disable: %v", c)
	}
	run(t, ctx, "mass delete the clone", massDelete("drule", drClone["druleid"].(string), netRule+" (copy)"))

	// Discovery status: the sweep finds the server's HTTP port up.
	// The page reads every 30 s; it is opened again every 2 s until the
	// sweep has run.
	reloadUntil(t, ctx, "the discovered device", base+"/discovery?druleid="+drID, `(() => { const r = document.querySelector('.dhost-row[data-ip="127.0.0.1"]');
		return !!r && !!r.querySelector('td.dservice-up'); })()`)
	sh.take(t, ctx, "discovery-status")

	// Autoregistration: PSK on (a bad key refused beside its field),
	// then back as it was.
	var ar map[string]any
	json.Unmarshal(apiCall(t, base, token, "autoregistration.get", map[string]any{"output": "extend"}), &ar)
	before := ar["tls_accept"]
	run(t, ctx, "autoregistration with PSK", chromedp.Navigate(base+"/admin/autoreg"), chromedp.WaitVisible(`#autoreg-edit`, chromedp.ByQuery),
		setJS(`#autoreg-accept-psk`, "1"), setJS(`#autoreg-tls-psk-identity`, "uinet autoreg"), setJS(`#autoreg-tls-psk`, "xyz"),
		chromedp.Click(`#autoreg-save`, chromedp.ByQuery), pollJS(fieldError("autoreg-tls-psk", "tls_psk")))
	json.Unmarshal(apiCall(t, base, token, "autoregistration.get", map[string]any{"output": "extend"}), &ar)
	if ar["tls_accept"] != before {
		t.Fatalf("a refused autoregistration change was saved: %v", ar)
	}
	run(t, ctx, "save PSK", setJS(`#autoreg-tls-psk`, netPSK), chromedp.Click(`#autoreg-save`, chromedp.ByQuery),
		pollJS(`(document.querySelector('#autoreg-saved') || {}).textContent.startsWith('Saved')`),
		pollJS(`document.querySelector('#autoreg-tls-psk').value === '' && document.querySelector('#autoreg-tls-psk-identity').value === ''`))
	raw := string(apiCall(t, base, token, "autoregistration.get", map[string]any{"output": "extend"}))
	if json.Unmarshal([]byte(raw), &ar); ar["tls_accept"] != "3" || strings.Contains(raw, netPSK) || strings.Contains(raw, "uinet autoreg") {
		t.Fatalf("autoregistration after the form: %s", raw)
	}
	run(t, ctx, "PSK off again", setJS(`#autoreg-accept-psk`, "0"), chromedp.Click(`#autoreg-save`, chromedp.ByQuery),
		pollJS(`(document.querySelector('#autoreg-saved') || {}).textContent.startsWith('Saved')`))
	if json.Unmarshal(apiCall(t, base, token, "autoregistration.get", map[string]any{}), &ar); ar["tls_accept"] != "1" {
		t.Fatalf("autoregistration not restored: %v", ar)
	}

	// Web scenario of web-1 fetching two of the server's own pages.
	wsParams := map[string]any{"output": "extend", "selectSteps": "extend", "selectTags": "extend", "filter": map[string]any{"name": netScenario}}
	run(t, ctx, "new web scenario", chromedp.Navigate(base+"/config/webscenarios?hostid="+hostID), chromedp.WaitVisible(`#httptest-create`, chromedp.ByQuery),
		chromedp.Click(`#httptest-create`, chromedp.ByQuery), chromedp.WaitVisible(`#httptest-edit`, chromedp.ByQuery),
		setJS(`#httptest-name`, netScenario), setJS(`#httptest-delay`, "5s"),
		chromedp.Click(`#httptest-variables .add-row`, chromedp.ByQuery), setJS(`#httptest-variables .httptest-variables-name`, "{path}"),
		setJS(`#httptest-variables .httptest-variables-value`, "/login"),
		chromedp.Click(`#httptest-tags .add-row`, chromedp.ByQuery), setJS(`#httptest-tags .httptest-tags-tag`, "team"), setJS(`#httptest-tags .httptest-tags-value`, "uinet"),
		chromedp.Click(`#httptest-steps-add`, chromedp.ByQuery),
		setJS(`.httptest-steps-row:nth-child(1) .step-name`, "front"), setJS(`.httptest-steps-row:nth-child(1) .step-url`, base+"{path}"),
		setJS(`.httptest-steps-row:nth-child(1) .step-required`, "Peregrine"), setJS(`.httptest-steps-row:nth-child(1) .step-status-codes`, "200"),
		chromedp.Click(`#httptest-steps-add`, chromedp.ByQuery),
		setJS(`.httptest-steps-row:nth-child(2) .step-name`, "style"), setJS(`.httptest-steps-row:nth-child(2) .step-url`, ""),
		chromedp.Click(`#httptest-save`, chromedp.ByQuery), pollJS(`!!document.querySelector('#httptest-edit .field-error') && document.querySelector('#httptest-edit .field-error').textContent.includes('url')`))
	if n := countOf(t, base, token, "httptest", map[string]any{"output": []string{"httptestid"}, "filter": map[string]any{"name": netScenario}}); n != 0 {
		t.Fatalf("a refused web scenario was saved (%d)", n)
	}
	run(t, ctx, "create the web scenario", setJS(`.httptest-steps-row:nth-child(2) .step-url`, base+"/assets/style.css"),
		chromedp.Click(`.httptest-steps-row:nth-child(2) .step-query .add-row`, chromedp.ByQuery),
		setJS(`.httptest-steps-row:nth-child(2) .step-query input[aria-label="Name"]`, "v"), setJS(`.httptest-steps-row:nth-child(2) .step-query input[aria-label="Value"]`, "1"),
		chromedp.Click(`#httptest-save`, chromedp.ByQuery), pollJS(rowNamed("httptest", netScenario)))
	ws := getOne(t, base, token, "httptest", wsParams)
	wsID := ws["httptestid"].(string)
	steps := js(ws["steps"])
	if ws["delay"] != "5s" || len(ws["steps"].([]any)) != 2 || !strings.Contains(steps, `"required":"Peregrine"`) || !strings.Contains(steps, `"status_codes":"200"`) ||
		!strings.Contains(steps, `"query_fields":[{"name":"v","value":"1"}]`) || !strings.Contains(js(ws["variables"]), `"name":"{path}","value":"/login"`) ||
		!strings.Contains(js(ws["tags"]), `"tag":"team","value":"uinet"`) {
		t.Fatalf("web scenario made by the form: %v", ws)
	}
	run(t, ctx, "edit the scenario: a header and basic authentication", clickJS(rowNamed("httptest", netScenario)),
		pollJS(`document.querySelectorAll('.httptest-steps-row').length === 2`),
		chromedp.Click(`#httptest-headers .add-row`, chromedp.ByQuery), setJS(`#httptest-headers .httptest-headers-name`, "X-Uinet"),
		setJS(`#httptest-headers .httptest-headers-value`, "1"), setJS(`#httptest-authentication`, "1"), setJS(`#httptest-http-user`, "uinet"),
		setJS(`#httptest-http-password`, "s3cret-uinet"), chromedp.Evaluate(`window.scrollTo(0, 0); document.querySelector('.scroll') && 0`, nil))
	sh.take(t, ctx, "config-webscenarios")
	run(t, ctx, "save the scenario", chromedp.Click(`#httptest-save`, chromedp.ByQuery), pollJS(`document.querySelector('#httptest-form').hidden`))
	raw = string(apiCall(t, base, token, "httptest.get", map[string]any{"httptestids": []string{wsID}, "output": "extend"}))
	if !strings.Contains(raw, `"authentication":"1"`) || !strings.Contains(raw, `"http_user":"uinet"`) || !strings.Contains(raw, `"X-Uinet"`) || strings.Contains(raw, "s3cret-uinet") {
		t.Fatalf("web scenario after the edit (the password must not be returned): %s", raw)
	}
	// Back to no authentication so that the scenario runs.
	run(t, ctx, "edit the scenario back", clickJS(rowNamed("httptest", netScenario)),
		pollJS(`document.querySelector('#httptest-http-password') && document.querySelector('#httptest-http-password').value === ''`),
		setJS(`#httptest-authentication`, "0"), chromedp.Click(`#httptest-save`, chromedp.ByQuery), pollJS(`document.querySelector('#httptest-form').hidden`))
	run(t, ctx, "clone the scenario", clickJS(rowNamed("httptest", netScenario)), pollJS(`document.querySelectorAll('.httptest-steps-row').length === 2`),
		chromedp.Click(`#httptest-clone`, chromedp.ByQuery), pollJS(fmt.Sprintf(`document.querySelector('#httptest-name').value === %q`, netScenario+" (copy)")),
		setJS(`#httptest-status`, "0"), chromedp.Click(`#httptest-save`, chromedp.ByQuery), pollJS(rowNamed("httptest", netScenario+" (copy)")))
	wsClone := getOne(t, base, token, "httptest", map[string]any{"output": "extend", "selectSteps": "extend", "filter": map[string]any{"name": netScenario + " (copy)"}})
	if len(wsClone["steps"].([]any)) != 2 || wsClone["status"] != "1" || !strings.Contains(js(wsClone["headers"]), `"X-Uinet"`) {
		t.Fatalf("scenario clone: %v", wsClone)
	}
	run(t, ctx, "delete the clone", deleteThroughForm("httptest", netScenario+" (copy)"))

	// Web monitoring: the scenario ran; its steps' figures are shown.
	reloadUntil(t, ctx, "the scenario ran", base+"/web?hostid="+hostID, fmt.Sprintf(`(() => { const r = document.querySelector('.web-row[data-id="%s"]');
		return !!r && r.querySelector('.web-status').textContent === 'OK'; })()`, wsID))
	run(t, ctx, "web monitoring details",
		clickJS(`document.querySelector('.web-name')`),
		pollJS(`[...document.querySelectorAll('.web-step .step-code')].length === 2 && [...document.querySelectorAll('.web-step .step-code')].every((e) => e.textContent === '200')`))
	sh.take(t, ctx, "web-monitoring")
	run(t, ctx, "a host's web from Monitoring → Hosts", chromedp.Navigate(base+"/hosts"),
		pollJS(fmt.Sprintf(`!!document.querySelector('.host-row[data-hostid="%s"] .host-web')`, hostID)),
		clickJS(fmt.Sprintf(`document.querySelector('.host-row[data-hostid="%s"] .host-web')`, hostID)),
		pollJS(fmt.Sprintf(`location.pathname === '/web' && (document.querySelector('#web-host') || {}).value === %q && !!document.querySelector('.web-row[data-id="%s"]')`, hostID, wsID)))

	// Kiosk mode: the button, then the header and menus gone.
	run(t, ctx, "kiosk mode", chromedp.Navigate(base+"/dashboards?id=1"), chromedp.WaitVisible(`#dashboard-kiosk`, chromedp.ByQuery),
		chromedp.Click(`#dashboard-kiosk`, chromedp.ByQuery), chromedp.WaitVisible(`#kiosk-exit`, chromedp.ByQuery),
		pollJS(`location.search.includes('kiosk=1') && getComputedStyle(document.querySelector('header.top')).display === 'none' && !(document.querySelector('#dashboard-edit') || {}).offsetParent`),
		pollJS(`!!document.querySelector('.widget[data-type="clock"] .clock-time')`))
	sh.take(t, ctx, "dashboard-kiosk")
	run(t, ctx, "normal view", chromedp.Click(`#kiosk-exit`, chromedp.ByQuery),
		pollJS(`!document.querySelector('#kiosk-exit') && getComputedStyle(document.querySelector('header.top')).display !== 'none' && !!document.querySelector('#dashboard-edit')`))

	var injected int
	run(t, ctx, "count injected elements", chromedp.Evaluate(`document.querySelectorAll('main script, main img, main b').length`, &injected))
	if injected != 0 || len(dialogs) != 0 {
		t.Errorf("markup from names became elements (%d) or ran (dialogs %q)", injected, dialogs)
	}

	// A user of type User with read access to web-1: the server refuses
	// the configuration pages, the API the writes; the pages it may open
	// show no edit control.
	ug := getOne(t, base, token, "usergroup", map[string]any{"output": []string{"usrgrpid"}, "filter": map[string]any{"name": "Guests"}})["usrgrpid"].(string)
	var created struct {
		IDs []string `json:"usrgrpids"`
	}
	json.Unmarshal(apiCall(t, base, token, "usergroup.create", map[string]any{"name": "uinet viewers", "rights": []map[string]any{{"id": webGroup, "permission": 2}}}), &created)
	apiCall(t, base, token, "user.create", map[string]any{"username": "uinet-viewer", "passwd": "Zx9!long-passw0rd", "roleid": "1",
		"usrgrps": []map[string]string{{"usrgrpid": created.IDs[0]}, {"usrgrpid": ug}}})
	var vt string
	json.Unmarshal(apiCall(t, base, "", "user.login", map[string]string{"username": "uinet-viewer", "password": "Zx9!long-passw0rd"}), &vt)
	viewer := getOne(t, base, token, "user", map[string]any{"output": []string{"userid"}, "filter": map[string]any{"username": "uinet-viewer"}})["userid"].(string)
	apiCall(t, base, token, "dashboard.update", map[string]any{"dashboardid": "1", "users": []map[string]any{{"userid": viewer, "permission": 2}}})
	for p, want := range map[string]int{"/config/proxies": 403, "/config/drules": 403, "/discovery": 403, "/admin/autoreg": 403,
		"/config/webscenarios?hostid=" + hostID: 403, "/web": 200} {
		req, _ := http.NewRequestWithContext(context.Background(), "GET", base+p, nil)
		req.AddCookie(&http.Cookie{Name: "peregrine_session", Value: vt})
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != want {
			t.Errorf("a User's GET %s: %d, want %d", p, r.StatusCode, want)
		}
	}
	for m, params := range map[string]any{"httptest.update": map[string]any{"httptestid": wsID, "delay": "1m"}, "proxy.delete": []string{pxID},
		"drule.delete": []string{drID}, "autoregistration.update": map[string]any{"tls_accept": 1}} {
		if e := apiError(t, base, vt, m, params); e == "" {
			t.Errorf("a User's %s was not refused", m)
		}
	}
	run(t, ctx, "log out", chromedp.Click(`#logout`, chromedp.ByQuery), chromedp.Sleep(time.Second))
	run(t, ctx, "log in as the User", chromedp.Navigate(base+"/login"), chromedp.WaitVisible(`#username`, chromedp.ByQuery),
		chromedp.SendKeys("#username", "uinet-viewer", chromedp.ByQuery), chromedp.SendKeys("#password", "Zx9!long-passw0rd", chromedp.ByQuery),
		chromedp.Click("#login-submit", chromedp.ByQuery), chromedp.WaitReady(`#theme-toggle`, chromedp.ByQuery))
	run(t, ctx, "the User's pages", pollJS(`(document.querySelector('#whoami') || {}).textContent === 'uinet-viewer'`),
		chromedp.Navigate(base+"/web"), pollJS(fmt.Sprintf(`!!document.querySelector('.web-row[data-id="%s"]')`, wsID)),
		pollJS(`!document.querySelector('#main button, #main form') && document.querySelector('#nav a[data-page="config"]').hidden`),
		chromedp.Navigate(base+"/dashboards?id=1"), chromedp.WaitVisible(`#dashboard-kiosk`, chromedp.ByQuery),
		pollJS(`!document.querySelector('#dashboard-edit')`))

	// What is left goes through the API (the pages were shown above).
	apiCall(t, base, token, "httptest.delete", []string{wsID})
	apiCall(t, base, token, "drule.delete", []string{drID})
}
