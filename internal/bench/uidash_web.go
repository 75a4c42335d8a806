package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// This file is the web side of the ui-dashboard scenario: a logged-in
// browser session on a frontend, and the one request each widget sends
// when it refreshes. Two frontends:
//
//   - Peregrine's UI: a widget's refresh is one POST /ui/api (a JSON-RPC
//     call or batch, the session cookie and the X-CSRF-Token header), the
//     calls of internal/web/assets/pages/widgets.js for its type after its
//     first draw. Clock and URL widgets send nothing.
//   - Zabbix 6.0's PHP frontend: a widget's refresh is one POST
//     zabbix.php?action=widget.<type>.view&sid=<the page's csrf-token>,
//     a JSON body {dashboardid, widgetid, name, fields (a JSON string of
//     name → value, repeated names as arrays), view_mode, edit_mode,
//     content_width, content_height} (read from 6.0.14's
//     js/widgets/class.widget.js and CController's sid check). A classic
//     graph widget's answer names a chart*.php image that the browser
//     then loads: that GET is sent too and timed as its own request.

// webSession is one viewer's logged-in browser session.
type webSession struct {
	base   string // http://host:port
	client *http.Client
	zabbix bool
	csrf   string // Peregrine: X-CSRF-Token; Zabbix: the sid argument
}

// browserConns is how many connections a browser opens to one host
// (HTTP/1.1): a viewer's widget requests beyond it wait, as in Chromium.
const browserConns = 6

// newWebSession logs in to the frontend at base (the API URL's scheme
// and host) as user and opens dashboard dashboardid, as a browser does:
// Zabbix through index.php's form, Peregrine through /login's.
func newWebSession(ctx context.Context, base string, zabbix bool, user, password, dashboardid string) (*webSession, error) {
	jar, _ := cookiejar.New(nil)
	s := &webSession{base: base, zabbix: zabbix, client: &http.Client{
		Jar:       jar,
		Timeout:   60 * time.Second,
		Transport: &http.Transport{MaxConnsPerHost: browserConns, MaxIdleConnsPerHost: browserConns, IdleConnTimeout: 90 * time.Second},
	}}
	var page string
	var err error
	if zabbix {
		if _, err = s.get(ctx, "/index.php"); err != nil {
			return nil, err
		}
		form := url.Values{"name": {user}, "password": {password}, "autologin": {"1"}, "enter": {"Sign in"}}
		if _, err = s.postForm(ctx, "/index.php", form); err != nil {
			return nil, err
		}
		page, err = s.get(ctx, "/zabbix.php?action=dashboard.view&dashboardid="+url.QueryEscape(dashboardid))
	} else {
		var login string
		if login, err = s.get(ctx, "/login"); err != nil {
			return nil, err
		}
		m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(login)
		if m == nil {
			return nil, errors.New("peregrine /login: no csrf field in the form")
		}
		form := url.Values{"csrf": {html.UnescapeString(m[1])}, "username": {user}, "password": {password}}
		if _, err = s.postForm(ctx, "/login", form); err != nil {
			return nil, err
		}
		page, err = s.get(ctx, "/dashboards?id="+url.QueryEscape(dashboardid))
	}
	if err != nil {
		return nil, err
	}
	meta := `name="peregrine-csrf" content="([^"]+)"`
	if zabbix {
		meta = `name="csrf-token" content="([^"]+)"`
	}
	m := regexp.MustCompile(meta).FindStringSubmatch(page)
	if m == nil {
		return nil, fmt.Errorf("%s: the dashboard page has no CSRF token: not logged in (wrong user or password?)", base)
	}
	s.csrf = html.UnescapeString(m[1])
	return s, nil
}

func (s *webSession) do(req *http.Request) (string, error) {
	req.Header.Set("Origin", s.base)
	req.Header.Set("User-Agent", "peregrine-bench-ui-dashboard")
	r, err := s.client.Do(req)
	if err != nil {
		return "", err
	}
	defer r.Body.Close()
	b, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		return "", err
	}
	if r.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s %s: HTTP %d: %.200s", req.Method, req.URL.Path, r.StatusCode, strings.TrimSpace(string(b)))
	}
	return string(b), nil
}

func (s *webSession) get(ctx context.Context, path string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+path, nil)
	if err != nil {
		return "", err
	}
	return s.do(req)
}

func (s *webSession) postForm(ctx context.Context, path string, form url.Values) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return s.do(req)
}

// widget is one widget of the measured dashboard as dashboard.get
// returns it.
type widget struct {
	WidgetID string        `json:"widgetid"`
	Type     string        `json:"type"`
	Name     string        `json:"name"`
	Width    json.Number   `json:"width"`
	Height   json.Number   `json:"height"`
	Fields   []widgetField `json:"fields"`
}

type widgetField struct {
	Type  json.Number `json:"type"`
	Name  string      `json:"name"`
	Value string      `json:"value"`
}

func (w widget) field(name string) string {
	for _, f := range w.Fields {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

func (w widget) fields(name string) []string {
	var out []string
	for _, f := range w.Fields {
		if f.Name == name {
			out = append(out, f.Value)
		}
	}
	return out
}

// refresh sends w's refresh as this frontend's page does and returns
// each request's latency by label (the widget's type; a classic graph's
// image on Zabbix as "graph image"). A widget that sends nothing (a
// Peregrine clock or URL) returns none.
func (s *webSession) refresh(ctx context.Context, dashboardid string, w widget) (map[string]time.Duration, error) {
	if s.zabbix {
		return s.zabbixRefresh(ctx, dashboardid, w)
	}
	body := peregrineWidgetCalls(w, time.Now())
	if body == nil {
		return nil, nil
	}
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+"/ui/api", bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json-rpc")
	req.Header.Set("X-CSRF-Token", s.csrf)
	t0 := time.Now()
	out, err := s.do(req)
	lat := time.Since(t0)
	if err == nil {
		err = rpcErrors(out)
	}
	if err != nil {
		return nil, fmt.Errorf("%s widget: %w", w.Type, err)
	}
	return map[string]time.Duration{w.Type: lat}, nil
}

// rpcErrors finds an error in a JSON-RPC answer or batch of answers.
func rpcErrors(body string) error {
	var one struct {
		Error *APIError `json:"error"`
	}
	if strings.HasPrefix(strings.TrimSpace(body), "[") {
		var many []struct {
			Error *APIError `json:"error"`
		}
		if err := json.Unmarshal([]byte(body), &many); err != nil {
			return fmt.Errorf("cannot read the answer: %w", err)
		}
		for _, m := range many {
			if m.Error != nil {
				return m.Error
			}
		}
		return nil
	}
	if err := json.Unmarshal([]byte(body), &one); err != nil {
		return fmt.Errorf("cannot read the answer: %w", err)
	}
	if one.Error != nil {
		return one.Error
	}
	return nil
}

type rpcReq struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
	ID      int    `json:"id"`
}

// peregrineWidgetCalls is the body widgets.js sends for w's refresh
// after its first draw (the item widgets know their value type by then):
// one call, or a batch; nil for a widget that sends nothing. Keep it in
// step with widgets.js (TestIntegrationDashboardRefresh checks the
// methods a real page sends).
func peregrineWidgetCalls(w widget, now time.Time) any {
	scope := map[string]any{}
	if g := w.fields("groupids"); len(g) > 0 {
		scope["groupids"] = g
	}
	if h := w.fields("hostids"); len(h) > 0 {
		scope["hostids"] = h
	}
	with := func(m map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range scope {
			out[k] = v
		}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	lines := func(def int) int {
		n, err := strconv.Atoi(w.field("show_lines"))
		if err != nil || n < 1 {
			n = def
		}
		return min(100, n)
	}
	batch := func(calls ...rpcReq) []rpcReq {
		for i := range calls {
			calls[i].JSONRPC, calls[i].ID = "2.0", i+1
		}
		return calls
	}
	one := func(method string, params any) rpcReq {
		return rpcReq{JSONRPC: "2.0", Method: method, Params: params, ID: 1}
	}
	itemMeta := func(id string) rpcReq {
		return rpcReq{Method: "item.get", Params: map[string]any{"itemids": []string{id}, "output": []string{"value_type", "units", "name"}}}
	}
	// The bench's items are floats (value type 0).
	switch w.Type {
	case "problems":
		return one("problem.get", with(problemFilter(w, map[string]any{"output": []string{"eventid", "name", "severity", "clock", "acknowledged"},
			"sortfield": []string{"eventid"}, "sortorder": "DESC", "limit": lines(25), "recent": w.field("show") != "3"})))
	case "problemsbysv":
		var calls []rpcReq
		for s := range 6 {
			calls = append(calls, rpcReq{Method: "problem.get", Params: with(problemFilter(w, map[string]any{"severities": []int{s}, "countOutput": true}))})
		}
		return batch(calls...)
	case "problemhosts":
		pq := problemFilter(w, map[string]any{"output": []string{"objectid", "severity", "acknowledged"}})
		return batch(rpcReq{Method: "hostgroup.get", Params: with(map[string]any{"output": []string{"groupid", "name"}, "monitored_hosts": true, "sortfield": "name"})},
			rpcReq{Method: "host.get", Params: with(map[string]any{"output": []string{"hostid", "name"}, "selectGroups": []string{"groupid"}, "monitored_hosts": true})},
			rpcReq{Method: "trigger.get", Params: with(map[string]any{"output": []string{"triggerid"}, "selectHosts": []string{"hostid"}, "monitored": true, "filter": map[string]any{"value": 1}})},
			rpcReq{Method: "problem.get", Params: with(pq)})
	case "tophosts":
		calls := []rpcReq{{Method: "host.get", Params: with(tagFilter(w, map[string]any{"output": []string{"hostid", "name"}, "monitored_hosts": true}))}}
		for i := 0; ; i++ {
			data := w.field("columns.data." + strconv.Itoa(i))
			if data == "" {
				break
			}
			if data == "1" {
				calls = append(calls, rpcReq{Method: "item.get", Params: with(map[string]any{"output": []string{"itemid", "hostid", "lastvalue", "lastclock", "value_type", "units"},
					"selectValueMap": []string{"mappings"}, "monitored": true, "filter": map[string]any{"name": w.field("columns.item." + strconv.Itoa(i))}})})
			}
		}
		return batch(calls...)
	case "dataover":
		return batch(rpcReq{Method: "item.get", Params: with(tagFilter(w, map[string]any{"output": []string{"itemid", "hostid", "name", "lastvalue", "lastclock", "value_type", "units"},
			"selectHosts": []string{"name"}, "selectValueMap": []string{"mappings"}, "monitored": true, "sortfield": "name", "limit": 2000}))},
			rpcReq{Method: "trigger.get", Params: with(map[string]any{"output": []string{"triggerid", "priority"}, "selectItems": []string{"itemid"}, "monitored": true, "filter": map[string]any{"value": 1}})})
	case "slareport":
		id := w.field("slaid")
		n, err := strconv.Atoi(w.field("show_periods"))
		if err != nil || n < 1 {
			n = 20
		}
		return batch(rpcReq{Method: "sla.get", Params: map[string]any{"slaids": []string{id}, "output": []string{"slaid", "name", "period", "slo", "timezone", "status"}}},
			rpcReq{Method: "sla.getsli", Params: map[string]any{"slaid": id, "periods": min(100, n)}},
			rpcReq{Method: "service.get", Params: map[string]any{"slaids": []string{id}, "output": []string{"serviceid", "name"}, "limit": 1000}})
	case "hostavail":
		return one("host.get", with(map[string]any{"output": []string{"hostid"}, "selectInterfaces": []string{"type", "available"}}))
	case "item":
		return one("item.get", map[string]any{"itemids": []string{w.field("itemid")}, "output": []string{"name", "lastvalue", "lastclock", "units"}, "selectHosts": []string{"name"}})
	case "plaintext":
		id := w.field("itemids")
		if id == "" {
			id = w.field("itemid")
		}
		return batch(itemMeta(id), rpcReq{Method: "history.get", Params: map[string]any{"itemids": []string{id}, "history": 0,
			"sortfield": "clock", "sortorder": "DESC", "limit": lines(10), "output": "extend"}})
	case "graph":
		id := w.field("itemid")
		return batch(itemMeta(id), rpcReq{Method: "history.get", Params: map[string]any{"itemids": []string{id}, "history": 0,
			"time_from": now.Unix() - 3600, "sortfield": "clock", "sortorder": "ASC", "output": []string{"clock", "value"}}})
	case "trigover":
		tq := tagFilter(w, map[string]any{"output": []string{"description", "value", "priority"}, "selectHosts": []string{"name"},
			"monitored": true, "expandDescription": true, "sortfield": "description", "limit": 50})
		switch w.field("show") {
		case "3":
			tq["filter"] = map[string]any{"value": 1}
		case "2":
		default:
			tq["only_true"] = true
		}
		return one("trigger.get", with(tq))
	case "systeminfo":
		return batch(rpcReq{Method: "apiinfo.version", Params: []any{}}, rpcReq{Method: "host.get", Params: map[string]any{"countOutput": true}},
			rpcReq{Method: "item.get", Params: map[string]any{"countOutput": true}}, rpcReq{Method: "trigger.get", Params: map[string]any{"countOutput": true}})
	}
	return nil
}

// tagFilter adds to p the evaltype and tags of w's tags.tag.N,
// tags.operator.N and tags.value.N fields, as widgets_hosts.js does.
func tagFilter(w widget, p map[string]any) map[string]any {
	var tags []map[string]string
	for _, f := range w.Fields {
		n, ok := strings.CutPrefix(f.Name, "tags.tag.")
		if !ok {
			continue
		}
		op := w.field("tags.operator." + n)
		if op == "" {
			op = "0"
		}
		tags = append(tags, map[string]string{"tag": f.Value, "operator": op, "value": w.field("tags.value." + n)})
	}
	if len(tags) > 0 {
		ev, err := strconv.Atoi(w.field("evaltype"))
		if err != nil {
			ev = 0
		}
		p["evaltype"], p["tags"] = ev, tags
	}
	return p
}

// problemFilter adds to p a problem.get's filters from w's fields, as
// widgets.js's problemFilter: tags, severities, the problem name,
// unacknowledged only, and suppressed problems left out unless
// show_suppressed is 1.
func problemFilter(w widget, p map[string]any) map[string]any {
	tagFilter(w, p)
	if sev := w.fields("severities"); len(sev) > 0 && p["severities"] == nil {
		var ns []int
		for _, v := range sev {
			n, _ := strconv.Atoi(v)
			ns = append(ns, n)
		}
		p["severities"] = ns
	}
	if name := w.field("problem"); name != "" {
		p["search"] = map[string]any{"name": name}
	}
	if w.field("unacknowledged") == "1" || w.field("ext_ack") == "1" {
		p["acknowledged"] = false
	}
	if w.field("show_suppressed") != "1" {
		p["suppressed"] = false
	}
	return p
}

// zabbixFields is a widget's fields as the 6.0 dashboard hands them to
// its widgets: name → value, a repeated name → the list of its values.
func zabbixFields(w widget) map[string]any {
	out := map[string]any{}
	for _, f := range w.Fields {
		switch v := out[f.Name].(type) {
		case nil:
			out[f.Name] = f.Value
		case string:
			out[f.Name] = []string{v, f.Value}
		case []string:
			out[f.Name] = append(v, f.Value)
		}
	}
	return out
}

// chartSrc finds the chart image a classic graph widget's answer names
// (chart.php for a simple graph of an item).
var chartSrc = regexp.MustCompile(`chart[0-9]?\.php\?[^"'\s<>]+`)

func (s *webSession) zabbixRefresh(ctx context.Context, dashboardid string, w widget) (map[string]time.Duration, error) {
	fields, _ := json.Marshal(zabbixFields(w))
	width, _ := w.Width.Int64()
	height, _ := w.Height.Int64()
	// The widget's content box at 1400 px across 24 columns, 70 px rows
	// (less its header and padding), as the page measures it.
	body := map[string]any{"dashboardid": dashboardid, "widgetid": w.WidgetID, "fields": string(fields), "view_mode": 0, "edit_mode": 0,
		"content_width": max(1, width*1400/24-20), "content_height": max(1, height*70-40)}
	if w.Name != "" {
		body["name"] = w.Name
	}
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost,
		s.base+"/zabbix.php?action=widget."+url.QueryEscape(w.Type)+".view&sid="+url.QueryEscape(s.csrf), bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	t0 := time.Now()
	out, err := s.do(req)
	lat := time.Since(t0)
	if err != nil {
		return nil, fmt.Errorf("%s widget: %w", w.Type, err)
	}
	var res struct {
		Body     string `json:"body"`
		Messages string `json:"messages"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		return nil, fmt.Errorf("%s widget: not a widget answer: %.200s", w.Type, out)
	}
	// A message without a body is the widget's error (the peer's frontend
	// also adds a warning about its locale to every answer).
	if res.Body == "" && strings.Contains(res.Messages, "msg-bad") {
		return nil, fmt.Errorf("%s widget: %s", w.Type, stripTags(res.Messages))
	}
	lats := map[string]time.Duration{w.Type: lat}
	if w.Type == "graph" {
		// The image's address is in the answer's async_data (its
		// time_control_data.src), JSON-escaped.
		src := chartSrc.FindString(strings.NewReplacer(`\/`, `/`, `\u0026`, `&`).Replace(out))
		if src == "" {
			return nil, errors.New("graph widget: no chart image in the answer")
		}
		src = html.UnescapeString(src) + fmt.Sprintf("&width=%d&height=%d&_=%s", body["content_width"], body["content_height"], strconv.FormatInt(time.Now().UnixMilli(), 34))
		t0 := time.Now()
		if _, err := s.get(ctx, "/"+src); err != nil {
			return nil, fmt.Errorf("graph widget image: %w", err)
		}
		lats["graph image"] = time.Since(t0)
	}
	return lats, nil
}

var tags = regexp.MustCompile(`<[^>]*>`)

func stripTags(s string) string {
	return strings.Join(strings.Fields(html.UnescapeString(tags.ReplaceAllString(s, " "))), " ")
}
