package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

const (
	dashName    = `<script>d</script> ops "'&`
	serviceName = `<script>s</script> web "'&`
	slaName     = `<img src=x onerror=alert(4)> gold "'&`
)

// apiError calls method and returns its error's data ("" on success).
func apiError(t *testing.T, base, token, method string, params any) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params, "id": 1})
	req, _ := http.NewRequest("POST", base+"/api_jsonrpc.php", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json-rpc")
	req.Header.Set("Authorization", "Bearer "+token)
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var res struct {
		Error *struct {
			Data string `json:"data"`
		} `json:"error"`
	}
	json.NewDecoder(r.Body).Decode(&res)
	if res.Error == nil {
		return ""
	}
	return res.Error.Data
}

// dragBy drags the element sel by dx, dy pixels with the mouse (real
// pointer events, as a user's).
func dragBy(sel string, dx, dy float64) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		var r []float64
		if err := chromedp.Evaluate(fmt.Sprintf(`(() => { const b = document.querySelector(%q).getBoundingClientRect(); return [b.left + 20, b.top + b.height / 2]; })()`, sel), &r).Do(ctx); err != nil {
			return err
		}
		x, y := r[0], r[1]
		if err := input.DispatchMouseEvent(input.MousePressed, x, y).WithButton(input.Left).WithClickCount(1).Do(ctx); err != nil {
			return err
		}
		for i := 1; i <= 5; i++ {
			if err := input.DispatchMouseEvent(input.MouseMoved, x+dx*float64(i)/5, y+dy*float64(i)/5).WithButton(input.Left).WithButtons(1).Do(ctx); err != nil {
				return err
			}
		}
		return input.DispatchMouseEvent(input.MouseReleased, x+dx, y+dy).WithButton(input.Left).WithClickCount(1).Do(ctx)
	})
}

// TestIntegrationBrowserDashboards drives the dashboards, services and
// SLA pages in headless Chromium: a dashboard is created, shared with a
// user group, given widgets on its grid, one moved and one removed, and
// deleted; a service and an SLA are created and edited, the SLA report
// opened; every step is checked through the API. Names carry markup:
// it must stay text.
func TestIntegrationBrowserDashboards(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs headless Chromium")
	}
	_, base, password := startServer(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "web-1", Groups: []string{"Web"},
		Items: []catalog.ItemSpec{{Key: "load", Name: "Load"}}}}})
	token := apiLogin(t, base, password)
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
	login(t, ctx, base, password)
	defer func() {
		if len(exceptions) > 0 {
			t.Errorf("page exceptions: %q", exceptions)
		}
	}()

	// The defaults of a fresh 6.0 are listed; the Global view opens,
	// and the widget types Peregrine does not draw say so.
	run(t, ctx, "the list", chromedp.Navigate(base+"/dashboards"), pollJS(rowNamed("dashboard", "Global view")))
	run(t, ctx, "global view", chromedp.Navigate(base+"/dashboards?id=1"),
		pollJS(`!!document.querySelector('.widget[data-type="clock"] .clock-time')`),
		pollJS(`!!document.querySelector('.widget[data-type="systeminfo"] .widget-systeminfo')`),
		pollJS(`!!document.querySelector('.widget[data-type="favmaps"] .widget-unsupported')`))
	sh.take(t, ctx, "dashboard-global-view")

	// Create, shared read-write with "Zabbix administrators" (7).
	run(t, ctx, "create", chromedp.Navigate(base+"/dashboards"), chromedp.WaitVisible(`#dashboard-create`, chromedp.ByQuery),
		chromedp.Click(`#dashboard-create`, chromedp.ByQuery), chromedp.WaitVisible(`#dashboard-edit`, chromedp.ByQuery),
		setJS(`#dashboard-name`, dashName), setJS(`#dashboard-private`, "1"),
		chromedp.Click(`#dashboard-groups-add`, chromedp.ByQuery), setJS(`.dashboard-groups-row select[data-key="usrgrpid"]`, "7"),
		setJS(`.dashboard-groups-row select[data-key="permission"]`, "3"),
		chromedp.Click(`#dashboard-save`, chromedp.ByQuery), pollJS(rowNamed("dashboard", dashName)))
	dParams := map[string]any{"output": "extend", "selectPages": "extend", "selectUserGroups": "extend", "filter": map[string]any{"name": dashName}}
	d := getOne(t, base, token, "dashboard", dParams)
	id := d["dashboardid"].(string)
	if js(d["userGroups"]) != `[{"permission":"3","usrgrpid":"7"}]` || d["private"] != "1" || len(d["pages"].([]any)) != 1 {
		t.Fatalf("dashboard made by the form: %v", d)
	}

	// Widgets: a clock, an item value, and a URL; then save.
	item := getOne(t, base, token, "item", map[string]any{"output": []string{"itemid", "hostid"}, "filter": map[string]any{"key_": "load"}})
	run(t, ctx, "open and edit", chromedp.Navigate(base+"/dashboards?id="+id), chromedp.WaitVisible(`#dashboard-edit`, chromedp.ByQuery),
		chromedp.Click(`#dashboard-edit`, chromedp.ByQuery), chromedp.WaitVisible(`#widget-add`, chromedp.ByQuery),
		chromedp.Click(`#widget-add`, chromedp.ByQuery), chromedp.WaitVisible(`#widget-edit`, chromedp.ByQuery),
		setJS(`#widget-name`, `<b>clock</b>`), chromedp.Click(`#widget-apply`, chromedp.ByQuery),
		pollJS(`document.querySelectorAll('.widget').length === 1`),
		chromedp.Click(`#widget-add`, chromedp.ByQuery), chromedp.WaitVisible(`#widget-edit`, chromedp.ByQuery),
		setJS(`#widget-type`, "item"), pollJS(fmt.Sprintf(`!!document.querySelector('#widget-itemid-host option[value="%s"]')`, item["hostid"])),
		setJS(`#widget-itemid-host`, item["hostid"].(string)), pollJS(fmt.Sprintf(`!!document.querySelector('#widget-itemid option[value="%s"]')`, item["itemid"])),
		setJS(`#widget-itemid`, item["itemid"].(string)), chromedp.Click(`#widget-apply`, chromedp.ByQuery),
		chromedp.Click(`#widget-add`, chromedp.ByQuery), chromedp.WaitVisible(`#widget-edit`, chromedp.ByQuery),
		setJS(`#widget-type`, "url"), setJS(`#widget-url`, "http://127.0.0.1:9/"), chromedp.Click(`#widget-apply`, chromedp.ByQuery),
		pollJS(`document.querySelectorAll('.widget').length === 3`))
	sh.take(t, ctx, "dashboard-edit")
	run(t, ctx, "save", chromedp.Click(`#dashboard-save`, chromedp.ByQuery), pollJS(`!!document.querySelector('#dashboard-edit')`),
		pollJS(`!!document.querySelector('.widget[data-type="url"] iframe[sandbox=""]')`),
		pollJS(`!!document.querySelector('.widget[data-type="item"] .widget-item')`))
	d = getOne(t, base, token, "dashboard", dParams)
	ws := d["pages"].([]any)[0].(map[string]any)["widgets"].([]any)
	if len(ws) != 3 || !strings.Contains(js(ws), fmt.Sprintf(`"name":"itemid","type":"4","value":%q`, item["itemid"])) ||
		!strings.Contains(js(ws), `"name":"url","type":"1","value":"http://127.0.0.1:9/"`) || !strings.Contains(js(ws), `"name":"\u003cb\u003eclock\u003c/b\u003e"`) {
		t.Fatalf("widgets after save: %s", js(ws))
	}
	first := ws[0].(map[string]any)
	// Move the clock down by 3 rows (beside it is the item value), remove the URL widget.
	run(t, ctx, "move and remove", chromedp.Click(`#dashboard-edit`, chromedp.ByQuery), chromedp.WaitVisible(`#widget-add`, chromedp.ByQuery),
		dragBy(fmt.Sprintf(`.widget[data-widgetid="%s"] .widget-head`, first["widgetid"]), 0, 3*70+5),
		clickJS(`document.querySelector('.widget[data-type="url"] .widget-remove')`),
		pollJS(`document.querySelectorAll('.widget').length === 2`),
		chromedp.Click(`#dashboard-save`, chromedp.ByQuery), pollJS(`!!document.querySelector('#dashboard-edit')`))
	d = getOne(t, base, token, "dashboard", dParams)
	ws = d["pages"].([]any)[0].(map[string]any)["widgets"].([]any)
	moved := ws[0].(map[string]any)
	if len(ws) != 2 || moved["widgetid"] != first["widgetid"] || moved["y"] != "3" {
		t.Fatalf("after moving and removing: %s (the clock was %v)", js(ws), first)
	}
	sh.take(t, ctx, "dashboard-view")

	// A user of type User shared read-only: sees it, gets no edit
	// control, and the server refuses a change; the owner's private
	// dashboard it is not shared is not shown.
	apiCall(t, base, token, "user.create", map[string]any{"username": "viewer", "passwd": "Zx9!long-passw0rd", "roleid": "1",
		"usrgrps": []map[string]string{{"usrgrpid": "8"}}})
	viewer := getOne(t, base, token, "user", map[string]any{"output": []string{"userid"}, "filter": map[string]any{"username": "viewer"}})["userid"].(string)
	apiCall(t, base, token, "dashboard.update", map[string]any{"dashboardid": id, "users": []map[string]any{{"userid": viewer, "permission": 2}}})
	var vt string
	json.Unmarshal(apiCall(t, base, "", "user.login", map[string]string{"username": "viewer", "password": "Zx9!long-passw0rd"}), &vt)
	if n := countOf(t, base, vt, "dashboard", map[string]any{"dashboardids": []string{id}}); n != 1 {
		t.Errorf("the viewer sees %d of the dashboard shared with them", n)
	}
	if n := countOf(t, base, vt, "dashboard", map[string]any{"dashboardids": []string{id}, "editable": true}); n != 0 {
		t.Errorf("a read-only share is editable")
	}
	if n := countOf(t, base, vt, "dashboard", map[string]any{"dashboardids": []string{"2"}}); n != 0 {
		t.Errorf("the viewer sees Admin's private dashboard 2")
	}
	if e := apiError(t, base, vt, "dashboard.update", map[string]any{"dashboardid": id, "name": "x"}); e != "No permissions to referred object or it does not exist!" {
		t.Errorf("a read-only share's update: %q", e)
	}
	if e := apiError(t, base, token, "user.delete", []string{viewer}); e != "" {
		t.Errorf("deleting a user shared a dashboard: %q", e)
	}

	// Delete it from the list.
	run(t, ctx, "delete", chromedp.Navigate(base+"/dashboards"), pollJS(rowNamed("dashboard", dashName)),
		chromedp.Evaluate(fmt.Sprintf(`document.querySelector('.dashboard-row[data-id="%s"] .row-check').click()`, id), nil),
		clickJS(`document.querySelector('#dashboard-mass-delete')`), pollJS(`!!document.querySelector('#dashboard-mass-delete-yes')`),
		clickJS(`document.querySelector('#dashboard-mass-delete-yes')`), pollJS(`!`+rowNamed("dashboard", dashName)))
	if n := countOf(t, base, token, "dashboard", map[string]any{"filter": map[string]any{"name": dashName}}); n != 0 {
		t.Fatal("the dashboard is still there")
	}

	// Services: one with a problem tag, then edited.
	run(t, ctx, "new service", chromedp.Navigate(base+"/services"), chromedp.WaitVisible(`#service-create`, chromedp.ByQuery),
		chromedp.Click(`#service-create`, chromedp.ByQuery), chromedp.WaitVisible(`#service-edit`, chromedp.ByQuery),
		setJS(`#service-name`, serviceName), chromedp.Click(`#service-problem-tags-add`, chromedp.ByQuery),
		setJS(`.service-problem-tags-row input[data-key="tag"]`, "service"), setJS(`.service-problem-tags-row input[data-key="value"]`, "web"),
		chromedp.Click(`#service-tags-add`, chromedp.ByQuery), setJS(`.service-tags-row input[data-key="tag"]`, "sla"), setJS(`.service-tags-row input[data-key="value"]`, "gold"),
		chromedp.Click(`#service-save`, chromedp.ByQuery), pollJS(rowNamed("service", serviceName)))
	sParams := map[string]any{"output": "extend", "selectProblemTags": "extend", "selectTags": "extend", "filter": map[string]any{"name": serviceName}}
	sv := getOne(t, base, token, "service", sParams)
	if !strings.Contains(js(sv["problem_tags"]), `"tag":"service"`) || !strings.Contains(js(sv["tags"]), `"tag":"sla","value":"gold"`) {
		t.Fatalf("service made by the form: %v", sv)
	}
	run(t, ctx, "edit the service", clickJS(rowNamed("service", serviceName)),
		pollJS(fmt.Sprintf(`(document.querySelector('#service-name') || {}).value === %q`, serviceName)),
		setJS(`#service-weight`, "5"), chromedp.Click(`#service-save`, chromedp.ByQuery), pollJS(`document.querySelector('#service-form').hidden`))
	if sv = getOne(t, base, token, "service", sParams); sv["weight"] != "5" {
		t.Fatalf("service after the edit: %v", sv)
	}
	sh.take(t, ctx, "services")

	// SLA over the service's tag, and its report.
	run(t, ctx, "new SLA", chromedp.Navigate(base+"/services/sla"), chromedp.WaitVisible(`#sla-create`, chromedp.ByQuery),
		chromedp.Click(`#sla-create`, chromedp.ByQuery), chromedp.WaitVisible(`#sla-edit`, chromedp.ByQuery),
		setJS(`#sla-name`, slaName), setJS(`#sla-slo`, "99.5"), setJS(`#sla-timezone`, "UTC"),
		chromedp.Click(`#sla-service-tags-add`, chromedp.ByQuery), setJS(`.sla-service-tags-row input[data-key="tag"]`, "sla"),
		setJS(`.sla-service-tags-row input[data-key="value"]`, "gold"),
		chromedp.Click(`#sla-save`, chromedp.ByQuery), pollJS(rowNamed("sla", slaName)))
	sla := getOne(t, base, token, "sla", map[string]any{"output": "extend", "filter": map[string]any{"name": slaName}})
	if sla["slo"] != "99.5" || sla["timezone"] != "UTC" {
		t.Fatalf("SLA made by the form: %v", sla)
	}
	run(t, ctx, "SLA report", clickJS(`document.querySelector(".sla-report-open")`),
		pollJS(fmt.Sprintf(`[...document.querySelectorAll('#sla-report-table td')].some((e) => e.textContent === %q)`, serviceName)))
	sh.take(t, ctx, "sla-report")

	// Tokens, authentication and system information open.
	run(t, ctx, "tokens", chromedp.Navigate(base+"/user/tokens"), chromedp.WaitVisible(`#token-create`, chromedp.ByQuery),
		chromedp.Click(`#token-create`, chromedp.ByQuery), setJS(`#token-name`, `<i>ci</i>`), chromedp.Click(`#token-save`, chromedp.ByQuery),
		pollJS(rowNamed("token", `<i>ci</i>`)))
	run(t, ctx, "authentication", chromedp.Navigate(base+"/admin/authentication"), chromedp.WaitVisible(`#authentication-edit`, chromedp.ByQuery))
	run(t, ctx, "system information", chromedp.Navigate(base+"/admin/sysinfo"), pollJS(`[...document.querySelectorAll('#sysinfo-table td')].some((e) => e.textContent === 'Number of hosts (enabled/disabled)')`))
	sh.take(t, ctx, "admin-sysinfo")

	var injected int
	run(t, ctx, "count injected elements", chromedp.Evaluate(`document.querySelectorAll('main script, main img, main b, main i').length`, &injected))
	if injected != 0 || len(dialogs) != 0 {
		t.Errorf("markup from names became elements (%d) or ran (dialogs %q)", injected, dialogs)
	}
}
