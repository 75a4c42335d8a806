package web_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// itemForm60 is testdata/item-form-6.0.14.json: what 6.0.14's item form
// shows for each type, type of information, SSH authentication method,
// HTTP authentication and "Enable trapping" (its field_switches: the
// js-item-*-field rows each switch shows), recorded from the peer's
// items.php?form=create.
type itemForm60 struct {
	ForType         map[string][]string `json:"for_type"`
	ForAuthType     map[string][]string `json:"for_authtype"`
	ForHTTPAuthType map[string][]string `json:"for_http_auth_type"`
	ForTraps        map[string][]string `json:"for_traps"`
	ForValueType    map[string][]string `json:"for_value_type"`
	Types           []int               `json:"types"`
	ValueTypes      []int               `json:"value_types"`
	ItemSteps       []int               `json:"item_steps"`
	LLDSteps        []int               `json:"lld_steps"`
	NoOnFail        []int               `json:"no_on_fail"`
}

// fieldOf60 names 6.0's row id ("js-item-flex-intervals-field") as the
// page's row (data-field="delay_flex").
func fieldOf60(id string) string {
	f := strings.ReplaceAll(strings.TrimSuffix(strings.TrimPrefix(id, "js-item-"), "-field"), "-", "_")
	if r, ok := map[string]string{"flex_intervals": "delay_flex", "interface": "interfaceid", "impi_sensor": "ipmi_sensor", "master_item": "master_itemid",
		"private_key": "privatekey", "public_key": "publickey", "value_map": "valuemapid", "log_time_format": "logtimefmt"}[f]; ok {
		return r
	}
	return f
}

// TestIntegrationBrowserItemForm drives /config/items in headless
// Chromium and checks every step through the API:
//   - for every item type and type of information (and the SSH key,
//     HTTP authentication and trapping switches) the form shows exactly
//     the fields 6.0.14's form shows (testdata/item-form-6.0.14.json);
//   - items of the types agent, HTTP agent, SNMP agent, dependent,
//     calculated and script are made through the form, with their type's
//     members read back by item.get (a secret never shown back);
//   - a dependent item gets a chain of three steps with custom on fail,
//     reordered, and the Test dialog shows each step's result and the
//     final one as 6.0.14's server answered the same requests
//     (testdata/preproc-test-6.0.14.json, which Peregrine's
//     preprocessing.test must also answer alike);
//   - one item is edited, one cloned, one deleted;
//   - bad input (a name over 255 characters, an interval "abc", a
//     duplicate key, a history "abc" on update) is refused with the
//     API's error beside its field and nothing saved; a name with markup
//     is stored and shown as text;
//   - an item prototype uses the same form and editor.
func TestIntegrationBrowserItemForm(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs headless Chromium")
	}
	var form60 itemForm60
	readJSON(t, "testdata/item-form-6.0.14.json", &form60)
	_, base, password := startServer(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "if-host", Groups: []string{"Linux"},
		Interfaces: []catalog.InterfaceSpec{{Type: "agent", IP: "127.0.0.1", Port: "10050"}, {Type: "snmp", IP: "127.0.0.2", Port: "161", Details: map[string]string{"version": "2", "community": "public"}}}}}})
	token := apiLogin(t, base, password)
	host := getOne(t, base, token, "host", map[string]any{"output": []string{"hostid"}, "selectInterfaces": []string{"interfaceid", "type"}, "filter": map[string]any{"host": "if-host"}})
	hostID := host["hostid"].(string)
	iface := map[string]string{}
	for _, f := range host["interfaces"].([]any) {
		m := f.(map[string]any)
		iface[m["type"].(string)] = m["interfaceid"].(string)
	}
	item := func(key string) map[string]any {
		return getOne(t, base, token, "item", map[string]any{"output": "extend", "hostids": hostID, "filter": map[string]any{"key_": key},
			"selectPreprocessing": "extend", "selectTags": "extend"})
	}
	items := func() int { return countOf(t, base, token, "item", map[string]any{"hostids": hostID}) }

	// Peregrine's preprocessing.test answers the requests recorded from
	// 6.0.14's server as it did.
	var recorded struct {
		Cases []struct {
			Name            string
			Request, Answer map[string]any
		}
	}
	readJSON(t, "testdata/preproc-test-6.0.14.json", &recorded)
	for _, c := range recorded.Cases {
		var got map[string]any
		json.Unmarshal(apiCall(t, base, token, "preprocessing.test", c.Request), &got)
		if d := cmp.Diff(c.Answer, got); d != "" {
			t.Errorf("preprocessing.test %q differs from 6.0.14 (-6.0.14 +Peregrine):\n%s", c.Name, d)
		}
	}

	ctx, sh := browser(t)
	watchPage(t, ctx)
	login(t, ctx, base, password)
	page := base + "/config/items?hostid=" + hostID
	itemRow := func(name string) string {
		return fmt.Sprintf(`[...document.querySelectorAll('.config-item-row .item-name')].find((e) => e.textContent === %q)`, name)
	}
	tab := func(name string) chromedp.Action {
		return clickJS(fmt.Sprintf(`document.querySelector('#item-tabs [data-tab=%q]')`, name))
	}
	create := []chromedp.Action{chromedp.Navigate(page), chromedp.WaitVisible(`#item-create`, chromedp.ByQuery), chromedp.Click(`#item-create`, chromedp.ByQuery),
		chromedp.WaitVisible(`#item-edit`, chromedp.ByQuery)}
	// save clicks Add or Update and waits for the list to show name; an
	// error under the form fails the test with its text.
	save := func(what, name string) {
		t.Helper()
		var errText string
		run(t, ctx, what, chromedp.Click(`#item-save`, chromedp.ByQuery),
			pollJS(fmt.Sprintf(`(document.querySelector('#item-error') || {}).hidden === false || (document.querySelector('#item-form').hidden && !!%s)`, itemRow(name))),
			chromedp.Evaluate(`document.querySelector('#item-form').hidden ? '' : document.querySelector('#item-error').textContent`, &errText))
		if errText != "" {
			t.Fatalf("%s: the form says %q", what, errText)
		}
	}
	// refused clicks save and returns the error shown and whether it
	// stands beside the field sel (the element right after it).
	refused := func(what, sel string) (string, bool) {
		t.Helper()
		var msg string
		var beside bool
		run(t, ctx, what, chromedp.Evaluate(`document.querySelector('#item-error').textContent = ''`, nil), chromedp.Click(`#item-save`, chromedp.ByQuery),
			pollJS(`(document.querySelector('#item-error') || {}).hidden === false && document.querySelector('#item-error').textContent !== ''`),
			chromedp.Evaluate(`document.querySelector('#item-error').textContent`, &msg),
			chromedp.Evaluate(fmt.Sprintf(`(() => { const n = document.querySelector(%q).nextElementSibling; return !!n && n.classList.contains('field-error') && n.textContent === document.querySelector('#item-error').textContent; })()`, sel), &beside))
		return msg, beside
	}

	// The fields of every type and type of information, and of the
	// switches inside a type, against 6.0.14's.
	run(t, ctx, "open a new item", create...)
	var shown map[string][]string
	run(t, ctx, "fields per type", chromedp.Evaluate(fmt.Sprintf(`(() => {
		const set = (sel, v) => { const e = document.querySelector(sel); if (e.type === 'checkbox') e.checked = v === '1'; else e.value = v;
			e.dispatchEvent(new Event('change', {bubbles: true})); };
		const seen = () => [...document.querySelectorAll('#item-fields .iform-row')].filter((r) => !r.hidden).map((r) => r.dataset.field).sort();
		const out = {};
		for (const t of %s) for (const v of %s) { set('#item-type', String(t)); set('#item-value-type', String(v)); out[t + '/' + v] = seen(); }
		set('#item-value-type', '3');
		set('#item-type', '13'); set('#item-authtype', '1'); out['13/auth'] = seen(); set('#item-authtype', '0');
		set('#item-type', '19'); set('#item-http-authtype', '1'); out['19/httpauth'] = seen(); set('#item-http-authtype', '0');
		set('#item-allow-traps', '1'); out['19/traps'] = seen(); set('#item-allow-traps', '0');
		return out; })()`, js(form60.Types), js(form60.ValueTypes)), &shown))
	want := func(t60 string, vt string, extra ...[]string) []string {
		f := []string{"name", "type", "key", "value_type", "history", "description", "status"}
		for _, l := range append([][]string{form60.ForType[t60], form60.ForValueType[vt]}, extra...) {
			for _, id := range l {
				f = append(f, fieldOf60(id))
			}
		}
		slices.Sort(f)
		return slices.Compact(f)
	}
	for _, ty := range form60.Types {
		for _, vt := range form60.ValueTypes {
			k := fmt.Sprintf("%d/%d", ty, vt)
			if d := cmp.Diff(want(fmt.Sprint(ty), fmt.Sprint(vt)), shown[k]); d != "" {
				t.Errorf("type %d, type of information %d: fields differ from 6.0.14's (-6.0.14 +page):\n%s", ty, vt, d)
			}
		}
	}
	for k, w := range map[string][]string{"13/auth": want("13", "3", form60.ForAuthType["1"]), "19/httpauth": want("19", "3", form60.ForHTTPAuthType["1"]),
		"19/traps": want("19", "3", form60.ForTraps["1"])} {
		if d := cmp.Diff(w, shown[k]); d != "" {
			t.Errorf("%s: fields differ from 6.0.14's (-6.0.14 +page):\n%s", k, d)
		}
	}
	// The step menus: an item's and a discovery rule's.
	var steps []int
	run(t, ctx, "item steps", tab("Preprocessing"), chromedp.Click(`#item-preprocessing-add`, chromedp.ByQuery),
		chromedp.Evaluate(`[...document.querySelectorAll('#item-preprocessing .pp-type option')].map((o) => Number(o.value))`, &steps))
	if !reflect.DeepEqual(steps, form60.ItemSteps) {
		t.Errorf("item step menu %v, 6.0.14's %v", steps, form60.ItemSteps)
	}
	var noFail []int
	run(t, ctx, "custom on fail per type", chromedp.Evaluate(`(() => { const sel = document.querySelector('#item-preprocessing .pp-type'); const out = [];
		for (const o of [...sel.options]) { sel.value = o.value; sel.dispatchEvent(new Event('change', {bubbles: true}));
			if (document.querySelector('#item-preprocessing .pp-on-fail').disabled && o.value !== '26') out.push(Number(o.value)); }
		return out.sort((a, b) => a - b); })()`, &noFail))
	if !reflect.DeepEqual(noFail, form60.NoOnFail) {
		t.Errorf("steps without custom on fail %v, 6.0.14's %v", noFail, form60.NoOnFail)
	}

	// An agent item: interval with a custom interval, history kept 7
	// days, no trends, an inventory field, a tag.
	run(t, ctx, "agent item", append(create, setJS(`#item-name`, "CPU load"), setJS(`#item-type`, "0"), setJS(`#item-key`, "system.cpu.load"),
		setJS(`#item-value-type`, "0"), setJS(`#item-delay`, "30s"), chromedp.Click(`#item-delay-flex-add`, chromedp.ByQuery),
		setJS(`#item-delay-flex .flex-interval`, "10s"), setJS(`#item-delay-flex .flex-period`, "1-5,09:00-18:00"),
		setJS(`#item-history`, "7d"), clickJS(`document.querySelector('#item-trends-mode input[value="0"]')`), setJS(`#item-units`, "%"),
		setJS(`#item-inventory-link`, "5"), setJS(`#item-description`, "Load <b>average</b>"),
		tab("Tags"), chromedp.Click(`#item-tags-add`, chromedp.ByQuery), setJS(`#item-tags .tag-tag`, "component"), setJS(`#item-tags .tag-value`, "cpu"))...)
	save("create the agent item", "CPU load")
	agent := item("system.cpu.load")
	for k, v := range map[string]string{"type": "0", "value_type": "0", "delay": "30s;10s/1-5,09:00-18:00", "history": "7d", "trends": "0", "units": "%",
		"inventory_link": "5", "description": "Load <b>average</b>", "interfaceid": iface["1"]} {
		if agent[k] != v {
			t.Errorf("agent item %s = %v, want %q", k, agent[k], v)
		}
	}
	if js(agent["tags"]) != `[{"tag":"component","value":"cpu"}]` {
		t.Errorf("agent item tags %s", js(agent["tags"]))
	}

	// An HTTP agent item with every HTTP member the form has.
	run(t, ctx, "HTTP agent item", append(create, setJS(`#item-name`, "API health"), setJS(`#item-type`, "19"), setJS(`#item-key`, "api.health"),
		setJS(`#item-value-type`, "4"), setJS(`#item-url`, "http://127.0.0.1:9/health"),
		setJS(`#item-query-fields .pair-name`, "verbose"), setJS(`#item-query-fields .pair-value`, "1"),
		setJS(`#item-request-method`, "1"), setJS(`#item-timeout`, "5s"), clickJS(`document.querySelector('#item-post-type input[value="2"]')`),
		setJS(`#item-posts`, `{"probe": true}`), setJS(`#item-headers .pair-name`, "X-Token"), setJS(`#item-headers .pair-value`, "abc"),
		setJS(`#item-status-codes`, "200,201"), setJS(`#item-follow-redirects`, "0"), clickJS(`document.querySelector('#item-retrieve-mode input[value="2"]')`),
		setJS(`#item-http-proxy`, "http://127.0.0.1:3128"), setJS(`#item-http-authtype`, "1"), setJS(`#item-http-username`, "probe"),
		setJS(`#item-http-password`, "s3cret"), setJS(`#item-verify-peer`, "1"), setJS(`#item-ssl-cert-file`, "client.pem"),
		setJS(`#item-delay`, "1m"), setJS(`#item-interfaceid`, iface["1"]))...)
	shot1400(t, ctx, sh, "config-item-form-http")
	save("create the HTTP agent item", "API health")
	web := item("api.health")
	for k, v := range map[string]string{"type": "19", "url": "http://127.0.0.1:9/health", "request_method": "1", "timeout": "5s", "post_type": "2",
		"posts": `{"probe": true}`, "status_codes": "200,201", "follow_redirects": "0", "retrieve_mode": "2", "http_proxy": "http://127.0.0.1:3128",
		"authtype": "1", "username": "probe", "password": "", "verify_peer": "1", "verify_host": "0", "ssl_cert_file": "client.pem", "interfaceid": iface["1"]} {
		if web[k] != v {
			t.Errorf("HTTP agent item %s = %v, want %q", k, web[k], v)
		}
	}
	if js(web["headers"]) != `{"X-Token":"abc"}` || js(web["query_fields"]) != `[{"verbose":"1"}]` {
		t.Errorf("HTTP agent item headers %s, query fields %s", js(web["headers"]), js(web["query_fields"]))
	}
	// The stored password is never shown back: its field is empty.
	var pw string
	run(t, ctx, "the password is not shown", clickJS(itemRow("API health")), pollJS(`(document.querySelector('#item-url') || {}).value === 'http://127.0.0.1:9/health'`),
		chromedp.Evaluate(`document.querySelector('#item-http-password').value + document.querySelector('#item-ssl-key-password').value + document.body.innerHTML.includes('s3cret')`, &pw))
	if pw != "false" {
		t.Errorf("the HTTP agent item's form shows a secret: %q", pw)
	}

	// An SNMP agent item on the SNMP interface.
	run(t, ctx, "SNMP agent item", append(create, setJS(`#item-name`, "In octets"), setJS(`#item-type`, "20"), setJS(`#item-key`, "net.if.in[1]"),
		setJS(`#item-snmp-oid`, "1.3.6.1.2.1.2.2.1.10.1"), setJS(`#item-units`, "bps"))...)
	save("create the SNMP item", "In octets")
	if snmp := item("net.if.in[1]"); snmp["snmp_oid"] != "1.3.6.1.2.1.2.2.1.10.1" || snmp["interfaceid"] != iface["2"] || snmp["type"] != "20" {
		t.Errorf("SNMP item: %v", snmp)
	}

	// A calculated item and a script item.
	run(t, ctx, "calculated item", append(create, setJS(`#item-name`, "Load doubled"), setJS(`#item-type`, "15"), setJS(`#item-key`, "load.doubled"),
		setJS(`#item-value-type`, "0"), setJS(`#item-formula`, "last(//system.cpu.load)*2"))...)
	save("create the calculated item", "Load doubled")
	if calc := item("load.doubled"); calc["params"] != "last(//system.cpu.load)*2" || calc["type"] != "15" {
		t.Errorf("calculated item: %v", calc)
	}
	run(t, ctx, "script item", append(create, setJS(`#item-name`, "Script probe"), setJS(`#item-type`, "21"), setJS(`#item-key`, "script.probe"),
		setJS(`#item-value-type`, "4"), setJS(`#item-parameters .pair-name`, "target"), setJS(`#item-parameters .pair-value`, "{HOST.CONN}"),
		setJS(`#item-script`, "return JSON.parse(value).target;"), setJS(`#item-timeout`, "4s"))...)
	save("create the script item", "Script probe")
	if sc := item("script.probe"); sc["params"] != "return JSON.parse(value).target;" || sc["timeout"] != "4s" || js(sc["parameters"]) != `[{"name":"target","value":"{HOST.CONN}"}]` {
		t.Errorf("script item: %v", sc)
	}

	// A dependent item of the HTTP one with a chain of three steps, each
	// with a custom on fail, then reordered and tested.
	step := func(n int, sel string) string {
		return fmt.Sprintf(`#item-preprocessing .pp-step:nth-child(%d) %s`, n, sel)
	}
	run(t, ctx, "dependent item", append(create, setJS(`#item-name`, "API value"), setJS(`#item-type`, "18"), setJS(`#item-key`, "api.value"),
		setJS(`#item-value-type`, "3"), setJS(`#item-master-itemid`, web["itemid"].(string)), tab("Preprocessing"),
		chromedp.Click(`#item-preprocessing-add`, chromedp.ByQuery), chromedp.Click(`#item-preprocessing-add`, chromedp.ByQuery), chromedp.Click(`#item-preprocessing-add`, chromedp.ByQuery),
		setJS(step(1, ".pp-type"), "12"), setJS(step(1, ".pp-params"), "$.v"), setJS(step(1, ".pp-on-fail"), "1"), clickJS(`document.querySelector('`+step(1, ".pp-handler-3")+`')`),
		setJS(step(1, ".pp-error-params"), "no v"),
		setJS(step(2, ".pp-type"), "1"), setJS(step(2, ".pp-params"), "10"), setJS(step(2, ".pp-on-fail"), "1"),
		setJS(step(3, ".pp-type"), "13"), setJS(step(3, ".pp-param-1"), "0"), setJS(step(3, ".pp-param-2"), "100"), setJS(step(3, ".pp-on-fail"), "1"),
		clickJS(`document.querySelector('`+step(3, ".pp-handler-2")+`')`), setJS(step(3, ".pp-error-params"), "100"),
		// In range before the multiplier.
		chromedp.Click(step(3, ".pp-up"), chromedp.ByQuery))...)
	var order []string
	run(t, ctx, "the order", chromedp.Evaluate(`[...document.querySelectorAll('#item-preprocessing .pp-type')].map((s) => s.value)`, &order))
	if !reflect.DeepEqual(order, []string{"12", "13", "1"}) {
		t.Fatalf("steps after moving the third up: %v", order)
	}
	shot1400(t, ctx, sh, "config-item-form-preprocessing")
	// Test all steps: 6.0.14's server answered the same chain (case
	// "reordered") with these results.
	answer := func(name string) map[string]any {
		for _, c := range recorded.Cases {
			if c.Name == name {
				return c.Answer
			}
		}
		t.Fatalf("no recorded case %q", name)
		return nil
	}
	var results []string
	var final string
	run(t, ctx, "test all steps", chromedp.Click(`#item-preprocessing-test-all`, chromedp.ByQuery), chromedp.WaitVisible(`#item-preprocessing-test`, chromedp.ByQuery),
		setJS(`#pp-test-value`, `{"v":"12"}`), chromedp.Click(`#pp-test-run`, chromedp.ByQuery), pollJS(`!!document.querySelector('#pp-test-final-value')`),
		chromedp.Evaluate(`[...document.querySelectorAll('#pp-test-results .pp-test-result')].map((c) => c.textContent)`, &results),
		chromedp.Evaluate(`document.querySelector('#pp-test-final-value').textContent`, &final))
	var wantResults []string
	for _, s := range answer("reordered: range checked before the multiplier")["steps"].([]any) {
		wantResults = append(wantResults, s.(map[string]any)["result"].(string))
	}
	if !reflect.DeepEqual(results, wantResults) || final != answer("reordered: range checked before the multiplier")["result"] {
		t.Errorf("Test shows steps %q and %q, 6.0.14 answered %q and %v", results, final, wantResults, answer("reordered: range checked before the multiplier")["result"])
	}
	shot1400(t, ctx, sh, "config-item-form-test")
	// A value without "v": the first step's custom on fail sets the
	// error, the steps after it are not shown, and the result is the
	// error.
	var failedText, finalErr string
	var shownSteps int
	run(t, ctx, "test a failing value", setJS(`#pp-test-value`, `{"x":1}`), chromedp.Click(`#pp-test-run`, chromedp.ByQuery),
		pollJS(`!!document.querySelector('#pp-test-final-error')`),
		chromedp.Evaluate(`document.querySelector('#pp-test-results .pp-test-step').textContent`, &failedText),
		chromedp.Evaluate(`document.querySelectorAll('#pp-test-results .pp-test-step').length`, &shownSteps),
		chromedp.Evaluate(`document.querySelector('#pp-test-final-error').textContent`, &finalErr))
	noV := answer("no v: the JSONPath's set error")
	stepErr := noV["steps"].([]any)[0].(map[string]any)
	if shownSteps != 1 || !strings.Contains(failedText, stepErr["error"].(string)) || !strings.Contains(failedText, "Set error to no v") || finalErr != noV["error"] {
		t.Errorf("failing test: %d steps shown, first %q, result %q; 6.0.14: %v", shownSteps, failedText, finalErr, noV)
	}
	run(t, ctx, "close the dialog", chromedp.Click(`#pp-test-close`, chromedp.ByQuery), pollJS(`!document.querySelector('#item-preprocessing-test')`))
	save("create the dependent item", "API value")
	dep := item("api.value")
	wantSteps := `[{"error_handler":"3","error_handler_params":"no v","params":"$.v","type":"12"},{"error_handler":"2","error_handler_params":"100","params":"0\n100","type":"13"},{"error_handler":"1","error_handler_params":"","params":"10","type":"1"}]`
	if dep["master_itemid"] != web["itemid"] || js(dep["preprocessing"]) != wantSteps {
		t.Errorf("dependent item: master %v, steps %s\nwant %s", dep["master_itemid"], js(dep["preprocessing"]), wantSteps)
	}
	// The saved chain opens in its order; a step moved down by the
	// button and saved is saved so.
	run(t, ctx, "reorder a saved chain", clickJS(itemRow("API value")), pollJS(`(document.querySelector('#item-key') || {}).value === 'api.value'`),
		tab("Preprocessing"), pollJS(`document.querySelectorAll('#item-preprocessing .pp-step').length === 3`),
		chromedp.Click(step(1, ".pp-down"), chromedp.ByQuery))
	save("update the chain", "API value")
	if got := js(item("api.value")["preprocessing"]); !strings.HasPrefix(got, `[{"error_handler":"2","error_handler_params":"100","params":"0\n100","type":"13"},{"error_handler":"3"`) {
		t.Errorf("chain after moving the first step down: %s", got)
	}

	// Edit: the SNMP item's OID and interval.
	run(t, ctx, "edit the SNMP item", clickJS(itemRow("In octets")), pollJS(`(document.querySelector('#item-snmp-oid') || {}).value === '1.3.6.1.2.1.2.2.1.10.1'`),
		setJS(`#item-snmp-oid`, "1.3.6.1.2.1.31.1.1.1.6.1"), setJS(`#item-delay`, "2m"))
	save("update the SNMP item", "In octets")
	if snmp := item("net.if.in[1]"); snmp["snmp_oid"] != "1.3.6.1.2.1.31.1.1.1.6.1" || snmp["delay"] != "2m" {
		t.Errorf("SNMP item after the edit: %v", snmp)
	}

	// Clone: the HTTP agent item under a new key keeps its members.
	run(t, ctx, "clone the HTTP agent item", clickJS(itemRow("API health")), pollJS(`(document.querySelector('#item-url') || {}).value === 'http://127.0.0.1:9/health'`),
		chromedp.Click(`#item-clone`, chromedp.ByQuery), pollJS(`!document.querySelector('#item-clone') && document.querySelector('#item-url').value === 'http://127.0.0.1:9/health'`),
		setJS(`#item-name`, "API health 2"), setJS(`#item-key`, "api.health[2]"))
	save("create the clone", "API health 2")
	clone := item("api.health[2]")
	for _, k := range []string{"type", "url", "request_method", "timeout", "post_type", "posts", "status_codes", "follow_redirects", "retrieve_mode", "http_proxy",
		"authtype", "username", "verify_peer", "ssl_cert_file", "headers", "query_fields", "value_type", "interfaceid"} {
		if !reflect.DeepEqual(clone[k], web[k]) {
			t.Errorf("the clone's %s is %v, the original's %v", k, clone[k], web[k])
		}
	}

	// Delete: the calculated item.
	run(t, ctx, "delete the calculated item", clickJS(itemRow("Load doubled")), pollJS(`(document.querySelector('#item-formula') || {}).value === 'last(//system.cpu.load)*2'`),
		chromedp.Click(`#item-delete`, chromedp.ByQuery), chromedp.WaitVisible(`#item-delete-yes`, chromedp.ByQuery), chromedp.Click(`#item-delete-yes`, chromedp.ByQuery),
		pollJS(`!`+itemRow("Load doubled")))
	if n := countOf(t, base, token, "item", map[string]any{"hostids": hostID, "filter": map[string]any{"key_": "load.doubled"}}); n != 0 {
		t.Errorf("the deleted item is still there")
	}

	// Bad input: refused with the API's error beside its field, nothing
	// saved.
	before := items()
	long := strings.Repeat("n", 256)
	run(t, ctx, "a name too long", append(create, setJS(`#item-name`, long), setJS(`#item-type`, "2"), setJS(`#item-key`, "bad.name"))...)
	if msg, beside := refused("save a name too long", `#item-name`); msg != `Value "`+long+`" is too long for field "name" - 256 characters. Allowed length is 255 characters.` || !beside { // 6.0.14's words
		t.Errorf("a 256-character name: error %q, beside the name: %v", msg, beside)
	}
	run(t, ctx, "an interval abc", setJS(`#item-name`, "Bad interval"), setJS(`#item-type`, "0"), setJS(`#item-key`, "bad.delay"), setJS(`#item-delay`, "abc"))
	if msg, beside := refused("save an interval abc", `#item-delay`); msg != `Incorrect value for field "delay": invalid delay.` || !beside { // 6.0.14's words
		t.Errorf("delay abc: error %q, beside the interval: %v", msg, beside)
	}
	run(t, ctx, "a duplicate key", setJS(`#item-name`, "Duplicate"), setJS(`#item-delay`, "1m"), setJS(`#item-key`, "system.cpu.load"))
	if msg, beside := refused("save a duplicate key", `#item-key`); msg != `Item with key "system.cpu.load" already exists on "if-host".` || !beside { // 6.0.14's words
		t.Errorf("a duplicate key: error %q, beside the key: %v", msg, beside)
	}
	if n := items(); n != before {
		t.Errorf("refused items were saved: %d items, %d before", n, before)
	}
	// A wrong value on update changes nothing: not the history, not
	// the name typed with it.
	run(t, ctx, "a history abc", chromedp.Click(`#item-cancel`, chromedp.ByQuery), pollJS(`document.querySelector('#item-form').hidden`), clickJS(itemRow("CPU load")), pollJS(`(document.querySelector('#item-key') || {}).value === 'system.cpu.load'`),
		setJS(`#item-name`, "CPU load renamed"), setJS(`#item-history`, "abc"))
	if msg, beside := refused("update with a history abc", `#item-history`); msg != `Incorrect value for field "history": a time unit is expected.` || !beside { // 6.0.14's words
		t.Errorf("history abc: error %q, beside the history: %v", msg, beside)
	}
	if a := item("system.cpu.load"); a["history"] != "7d" || a["name"] != "CPU load" {
		t.Errorf("a refused update changed the item: %v %v", a["name"], a["history"])
	}
	// Markup in a name is stored as it is and shown as text.
	run(t, ctx, "a name with markup", append(create, setJS(`#item-name`, xssName), setJS(`#item-type`, "2"), setJS(`#item-key`, "xss.name"))...)
	save("create the item named with markup", xssName)
	var listed string
	run(t, ctx, "the name is text", chromedp.Evaluate(itemRow(xssName)+`.textContent`, &listed))
	if x := item("xss.name"); x["name"] != xssName || listed != xssName {
		t.Errorf("the markup name is stored as %v and listed as %q", x["name"], listed)
	}

	// An item prototype: the same form (HTTP agent fields) and editor
	// with Test.
	var rule struct{ ItemIDs []string }
	json.Unmarshal(apiCall(t, base, token, "discoveryrule.create", map[string]any{"hostid": hostID, "name": "Disks", "key_": "disks.discovery", "type": 2}), &rule)
	var protoFields []string
	run(t, ctx, "item prototype form", chromedp.Navigate(base+"/config/prototypes?kind=item&ruleid="+rule.ItemIDs[0]),
		chromedp.WaitVisible(`#itemproto-create`, chromedp.ByQuery), chromedp.Click(`#itemproto-create`, chromedp.ByQuery), chromedp.WaitVisible(`#itemproto-edit`, chromedp.ByQuery),
		setJS(`#itemproto-name`, "Disk {#NAME} reads"), setJS(`#itemproto-type`, "18"), setJS(`#itemproto-key`, "disk.reads[{#NAME}]"),
		setJS(`#itemproto-master-itemid`, web["itemid"].(string)),
		chromedp.Evaluate(`[...document.querySelectorAll('#itemproto-fields .iform-row')].filter((r) => !r.hidden).map((r) => r.dataset.field).sort()`, &protoFields),
		clickJS(`document.querySelector('#itemproto-tabs [data-tab="Preprocessing"]')`),
		chromedp.Click(`#itemproto-preprocessing-add`, chromedp.ByQuery), setJS(`#itemproto-preprocessing .pp-type`, "12"), setJS(`#itemproto-preprocessing .pp-params`, "$.reads"),
		chromedp.Click(`#itemproto-preprocessing-add`, chromedp.ByQuery), setJS(`#itemproto-preprocessing .pp-step:nth-child(2) .pp-type`, "10"),
		chromedp.Click(`#itemproto-preprocessing-test-all`, chromedp.ByQuery), chromedp.WaitVisible(`#pp-test-prev-value`, chromedp.ByQuery),
		setJS(`#pp-test-value`, `{"reads":"70"}`), setJS(`#pp-test-prev-value`, `{"reads":"10"}`), setJS(`#pp-test-prev-time`, "now-30s"),
		chromedp.Click(`#pp-test-run`, chromedp.ByQuery), pollJS(`(document.querySelector('#pp-test-final-value') || {}).textContent === '2'`),
		chromedp.Click(`#pp-test-close`, chromedp.ByQuery), chromedp.Click(`#itemproto-save`, chromedp.ByQuery), pollJS(`document.querySelector('#itemproto-form').hidden`))
	wantProto := want("18", "3")
	wantProto = append(slices.DeleteFunc(wantProto, func(f string) bool { return f == "inventory_link" }), "discover")
	slices.Sort(wantProto)
	if d := cmp.Diff(wantProto, protoFields); d != "" {
		t.Errorf("item prototype fields (-want +page):\n%s", d)
	}
	ip := getOne(t, base, token, "itemprototype", map[string]any{"output": "extend", "selectPreprocessing": "extend", "discoveryids": rule.ItemIDs[0]})
	if ip["master_itemid"] != web["itemid"] || !strings.Contains(js(ip["preprocessing"]), `"params":"$.reads","type":"12"`) || !strings.Contains(js(ip["preprocessing"]), `"type":"10"`) {
		t.Errorf("item prototype: %v", ip)
	}
}

// readJSON reads a testdata file into v.
func readJSON(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.FromSlash(name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}
