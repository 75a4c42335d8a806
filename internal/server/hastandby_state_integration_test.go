package server

import (
	"bytes"
	"encoding/json"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The standby's reads of the active node's runtime state (docs/ha.md,
// "The API and UI on a standby"), checked by TestIntegrationHAStandbyReads
// with the helpers of this file: services and SLAs, media types,
// actions and alerts, the audit log, item.get's last values, and a
// logout on the standby.

// standbyObjects are what standbySetup made on the active node.
type standbyObjects struct {
	leaf, root, sla, mediaType, action string
}

// standbySetup makes, through the active node's API, a service tree
// whose leaf takes the problems tagged service=s9-standby, an SLA over
// it, a webhook media type posting to hook, Admin's medium of it and an
// action sending every trigger problem to Admin.
func standbySetup(t *testing.T, api *apiClient, hook *hookListener) standbyObjects {
	t.Helper()
	var o standbyObjects
	var svc struct{ ServiceIDs []string }
	api.ok("service.create", map[string]any{"name": "s9-standby leaf", "algorithm": 1, "sortorder": 0,
		"problem_tags": []map[string]any{{"tag": "service", "operator": 0, "value": "s9-standby"}},
		"tags":         []map[string]string{{"tag": "sla", "value": "s9-standby"}}}, &svc)
	o.leaf = svc.ServiceIDs[0]
	api.ok("service.create", map[string]any{"name": "s9-standby root", "algorithm": 1, "sortorder": 0,
		"children": []map[string]string{{"serviceid": o.leaf}}}, &svc)
	o.root = svc.ServiceIDs[0]
	var sla struct{ SLAIDs []string }
	api.ok("sla.create", map[string]any{"name": "s9-standby SLA", "period": 0, "slo": "99.9", "timezone": "UTC",
		"effective_date": time.Now().Add(-48 * time.Hour).Unix(),
		"service_tags":   []map[string]any{{"tag": "sla", "operator": 0, "value": "s9-standby"}}}, &sla)
	o.sla = sla.SLAIDs[0]
	var mt struct{ MediaTypeIDs []string }
	api.ok("mediatype.create", map[string]any{
		"name": "s9-standby hook", "type": "4", "script": hookJS, "timeout": "5s",
		"parameters": []map[string]string{{"name": "url", "value": "{ALERT.SENDTO}"}, {"name": "event", "value": "{EVENT.ID}"}},
		"message_templates": []map[string]any{
			{"eventsource": "0", "recovery": "0", "subject": "Problem: {EVENT.NAME}", "message": "p"},
		},
	}, &mt)
	o.mediaType = mt.MediaTypeIDs[0]
	var users []struct{ UserID string }
	api.ok("user.get", map[string]any{"filter": map[string]string{"username": "Admin"}}, &users)
	api.ok("user.update", map[string]any{"userid": users[0].UserID, "medias": []map[string]any{
		{"mediatypeid": o.mediaType, "sendto": hook.srv.URL + "/admin", "severity": 63},
	}}, nil)
	var act struct{ ActionIDs []string }
	api.ok("action.create", map[string]any{
		"name": "s9-standby notify", "eventsource": 0, "esc_period": "1h",
		"operations": []map[string]any{{"operationtype": 0, "esc_step_from": 1, "esc_step_to": 1,
			"opmessage": map[string]any{"default_msg": 1, "mediatypeid": o.mediaType}, "opmessage_usr": []map[string]string{{"userid": users[0].UserID}}}},
	}, &act)
	o.action = act.ActionIDs[0]
	return o
}

// standbyQueueItem makes an HTTP agent item on host, checked every
// second with a 30 s timeout against a listener that accepts and never
// answers: each check stays in flight past 5 s, so the active node's
// queue holds it.
func standbyQueueItem(t *testing.T, api *apiClient, host string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	})
	api.ok("item.create", map[string]any{"hostid": host, "name": "s9-standby silent", "key_": "s9.silent", "type": 19,
		"value_type": 4, "delay": "1s", "timeout": "30s", "url": "http://" + ln.Addr().String() + "/"}, nil)
}

// sameOnBoth calls method with params on the active node and the
// standby until both answer the same, non-empty result (the standby
// follows within its poll; within bounds the wait), and returns it.
// check, when set, must also hold of the answer.
func sameOnBoth(t *testing.T, api, sb *apiClient, method string, params any, check func(json.RawMessage) bool) json.RawMessage {
	t.Helper()
	var a, b rpcResponse
	t0 := time.Now()
	for {
		a, b = api.call(method, params), sb.call(method, params)
		if a.Error == nil && b.Error == nil && bytes.Equal(a.Result, b.Result) && len(a.Result) > 2 &&
			(check == nil || check(a.Result)) {
			break
		}
		if time.Since(t0) > 30*time.Second {
			t.Fatalf("%s: not equal within 30 s:\nactive  %+v %s\nstandby %+v %s", method, a.Error, a.Result, b.Error, b.Result)
		}
		time.Sleep(100 * time.Millisecond)
	}
	took := time.Since(t0)
	t.Logf("%s on the standby equals the active node's after %.1f s", method, took.Seconds())
	return a.Result
}

// checkStandbyState compares the active node's runtime state with the
// standby's answers once the problem of trigger trig (event eventID,
// severity 3) is open: the services' statuses and problems, the SLA's
// SLI, media types, actions, the alert the action sent to hook, the
// audit log, the queue (standbyQueueItem's check) and item's last
// values (3 then 7).
func checkStandbyState(t *testing.T, api, sb *apiClient, o standbyObjects, hook *hookListener, eventID, item string) {
	t.Helper()
	waitHA(t, "the alert sent by the active node", 30*time.Second, func() bool {
		for _, b := range hook.got() {
			if b["event"] == eventID {
				return true
			}
		}
		return false
	})
	sameOnBoth(t, api, sb, "service.get", map[string]any{"serviceids": []string{o.leaf, o.root}, "output": "extend",
		"selectProblemEvents": "extend", "selectChildren": []string{"serviceid"}, "sortfield": "serviceid"},
		func(r json.RawMessage) bool {
			var ss []struct {
				Status        string
				ProblemEvents []struct{ EventID string } `json:"problem_events"`
			}
			return json.Unmarshal(r, &ss) == nil && len(ss) == 2 && ss[0].Status == "3" && ss[1].Status == "3" &&
				len(ss[0].ProblemEvents) == 1 && ss[0].ProblemEvents[0].EventID == eventID
		})
	sameOnBoth(t, api, sb, "sla.get", map[string]any{"slaids": []string{o.sla}, "output": "extend", "selectServiceTags": "extend"}, nil)
	// The SLI counts up to now: the two calls agree when made in the
	// same second, which sameOnBoth waits for.
	sameOnBoth(t, api, sb, "sla.getsli", map[string]any{"slaid": o.sla, "periods": 3}, func(r json.RawMessage) bool {
		return strings.Contains(string(r), `"serviceids":[`+o.leaf+`]`)
	})
	sameOnBoth(t, api, sb, "mediatype.get", map[string]any{"mediatypeids": []string{o.mediaType}, "output": "extend",
		"selectMessageTemplates": "extend", "selectUsers": []string{"userid"}}, nil)
	sameOnBoth(t, api, sb, "action.get", map[string]any{"actionids": []string{o.action}, "output": "extend",
		"selectOperations": "extend", "selectFilter": "extend"}, nil)
	sameOnBoth(t, api, sb, "alert.get", map[string]any{"eventids": []string{eventID}, "output": "extend"}, func(r json.RawMessage) bool {
		var as []struct{ Status, MediaTypeID string }
		return json.Unmarshal(r, &as) == nil && len(as) == 1 && as[0].Status == "1" && as[0].MediaTypeID == o.mediaType
	})
	sameOnBoth(t, api, sb, "auditlog.get", map[string]any{"output": "extend", "sortfield": "clock", "sortorder": "DESC", "limit": 50},
		func(r json.RawMessage) bool { return strings.Contains(string(r), `"resourcename":"s9-standby notify"`) })
	// The queue is the active node's poller's: the standby asks the
	// active node's trapper for it (hanode_queue.go).
	sameOnBoth(t, api, sb, "queue.get", map[string]any{"groupby": []string{"host", "type"}}, func(r json.RawMessage) bool {
		var q struct{ Total string }
		return json.Unmarshal(r, &q) == nil && q.Total == "1"
	})
	// preprocessing.test runs in the standby's own JavaScript workers.
	js := map[string]any{"value": "2", "value_type": 3, "steps": []map[string]any{
		{"type": 21, "params": "return value * 3;", "error_handler": 0, "error_handler_params": ""}}}
	var pa, pb json.RawMessage
	api.ok("preprocessing.test", js, &pa)
	sb.ok("preprocessing.test", js, &pb)
	if !bytes.Equal(pa, pb) || !strings.Contains(string(pb), `"result":"6"`) {
		t.Fatalf("preprocessing.test: active %s, standby %s", pa, pb)
	}
	sameOnBoth(t, api, sb, "item.get", map[string]any{"itemids": []string{item}, "output": []string{"itemid", "lastvalue", "lastclock", "lastns", "prevvalue"}},
		func(r json.RawMessage) bool {
			var is []struct{ LastValue, PrevValue, LastClock string }
			return json.Unmarshal(r, &is) == nil && len(is) == 1 && is[0].LastValue == "7" && is[0].PrevValue == "3" && is[0].LastClock != "0"
		})
}

// checkStandbyPages opens the UI pages of the state above on the
// standby (get: a GET with the active node's session) and calls the
// reads they make through the UI's API (ui).
func checkStandbyPages(t *testing.T, get func(string) (int, string), ui func(string, any) rpcResponse, o standbyObjects, item string) {
	t.Helper()
	for _, p := range []string{"/services", "/services/sla", "/admin/auditlog", "/config/actions", "/admin/mediatypes", "/latest"} {
		if code, page := get(p); code != 200 || !strings.Contains(page, `<meta name="peregrine-csrf"`) {
			t.Fatalf("GET %s on the standby: %d %.300q", p, code, page)
		}
	}
	for _, c := range []struct {
		method string
		params any
		want   string
	}{
		{"service.get", map[string]any{"output": []string{"serviceid", "name"}, "sortfield": "name"}, `"s9-standby root"`},
		{"sla.getsli", map[string]any{"slaid": o.sla, "periods": 6}, `"sli":`},
		{"auditlog.get", map[string]any{"output": "extend", "limit": 100}, `"s9-standby hook"`},
		{"action.get", map[string]any{"output": "extend", "actionids": []string{o.action}}, `"s9-standby notify"`},
		{"mediatype.get", map[string]any{"output": "extend", "mediatypeids": []string{o.mediaType}, "selectQueue": "extend"}, `"s9-standby hook"`},
		{"item.get", map[string]any{"output": []string{"itemid", "lastvalue", "prevvalue"}, "itemids": []string{item}}, `"lastvalue":"7"`},
	} {
		if r := ui(c.method, c.params); r.Error != nil || !strings.Contains(string(r.Result), c.want) {
			t.Fatalf("the UI's %s on the standby: %+v %.300s", c.method, r.Error, r.Result)
		}
	}
}

// checkStandbyLogout logs in on the active node (a session of its own),
// uses the session on both nodes, logs it out on the standby, and
// checks it is refused on both, on the active node within a poll, and
// that the logout is in the audit log of both.
func checkStandbyLogout(t *testing.T, api, sb *apiClient, password string) {
	t.Helper()
	sid := api.login("Admin", password)
	onA := &apiClient{t: t, url: api.url, auth: sid}
	onB := &apiClient{t: t, url: sb.url, auth: sid}
	onA.ok("host.get", map[string]any{"countOutput": true}, nil)
	waitHA(t, "the new session on the standby", 30*time.Second, func() bool {
		return onB.call("host.get", map[string]any{"countOutput": true}).Error == nil
	})
	logouts := func(c *apiClient) int {
		var n string
		c.ok("auditlog.get", map[string]any{"filter": map[string]any{"action": 4}, "countOutput": true}, &n)
		v, _ := strconv.Atoi(n)
		return v
	}
	before := logouts(api)
	var out bool
	onB.ok("user.logout", []any{}, &out)
	if !out {
		t.Fatal("user.logout on the standby answered false")
	}
	const gone = "Session terminated, re-login, please."
	onB.fails("host.get", map[string]any{"countOutput": true}, -32602, gone)
	took := waitHA(t, "the session logged out on the standby refused on the active node", 30*time.Second, func() bool {
		r := onA.call("host.get", map[string]any{"countOutput": true})
		return r.Error != nil && r.Error.Data == gone
	})
	t.Logf("a logout on the standby ended the session on the active node after %.1f s (poll %s)", took.Seconds(), standbyPoll)
	onB.fails("user.logout", []any{}, -32602, gone)
	// The logout's audit record, handed to the active node, is in its
	// audit log and then in the standby's.
	waitHA(t, "the standby's logout in the audit log", 30*time.Second, func() bool {
		return logouts(api) == before+1 && logouts(sb) == before+1
	})
	// The test's own session goes on on both nodes.
	api.ok("host.get", map[string]any{"countOutput": true}, nil)
	sb.ok("host.get", map[string]any{"countOutput": true}, nil)
}
