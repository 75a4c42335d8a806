package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// floodEnv sets the number of problem events of
// TestIntegrationAlertFlood (default 10,000); `make bench-alert-flood`
// runs it with 100,000. floodEnv+"_FSYNC" sets alerts.fsync (default
// interval).
const floodEnv = "PEREGRINE_ALERT_FLOOD"

// TestIntegrationAlertFlood: a flood of problem events (100 triggers
// with multiple problem events, fed 10,000 values through the trapper:
// one problem event each) × one action,
// to a webhook media type whose receiver on 127.0.0.1 takes a
// millisecond per request, with a queue of 500 alerts: every problem's
// alert is delivered exactly once at the media type's maxsessions, none
// fails; while the flood drains, the escalations waiting for the full
// queue are on /metrics and in mediatype.get's selectQueue (what the
// UI shows), and alert.get shows every alert sent in the end.
func TestIntegrationAlertFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: a flood of alerts through a server")
	}
	events := 10_000
	if v := os.Getenv(floodEnv); v != "" {
		events, _ = strconv.Atoi(v)
	}
	const triggers, sessions, qsize = 100, 8, 500
	rounds := (events + triggers - 1) / triggers

	// The receiver counts deliveries per event.
	var mu sync.Mutex
	got := map[string]int{}
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]string
		if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		time.Sleep(time.Millisecond)
		mu.Lock()
		got[b["event"]]++
		mu.Unlock()
	}))
	defer rcv.Close()

	cfg := testConfig(t, catalog.Spec{})
	cfg.Alerts.QueueSize = qsize
	cfg.Alerts.RateLimit = 0
	cfg.Alerts.Fsync = "interval"
	if v := os.Getenv(floodEnv + "_FSYNC"); v != "" {
		cfg.Alerts.Fsync = v
	}
	s, _ := runServer(t, cfg)
	admin := adminLogin(t, s)
	var g struct{ GroupIDs []string }
	admin.ok("hostgroup.create", map[string]any{"name": "Flood"}, &g)
	var h struct{ HostIDs []string }
	admin.ok("host.create", map[string]any{"host": "flood-1", "groups": []map[string]string{{"groupid": g.GroupIDs[0]}}}, &h)
	var items, trigs []map[string]any
	for i := range triggers {
		items = append(items, map[string]any{"name": fmt.Sprint("v", i), "key_": fmt.Sprintf("v[%d]", i), "hostid": h.HostIDs[0], "type": 2, "value_type": 3})
		trigs = append(trigs, map[string]any{"description": fmt.Sprint("flood ", i), "expression": fmt.Sprintf("last(/flood-1/v[%d])>0", i), "priority": 4, "type": 1})
	}
	admin.ok("item.create", items, nil)
	admin.ok("trigger.create", trigs, nil)
	var mt struct{ MediaTypeIDs []string }
	admin.ok("mediatype.create", map[string]any{"name": "Flood hook", "type": 4, "maxsessions": sessions, "maxattempts": 3, "attempt_interval": "1s",
		"parameters": []map[string]string{{"name": "URL", "value": rcv.URL}, {"name": "event", "value": "{EVENT.ID}"}, {"name": "subject", "value": "{ALERT.SUBJECT}"}}}, &mt)
	var users []struct{ UserID string }
	admin.ok("user.get", map[string]any{"filter": map[string]string{"username": "Admin"}}, &users)
	admin.ok("user.update", map[string]any{"userid": users[0].UserID, "medias": []map[string]any{{"mediatypeid": mt.MediaTypeIDs[0], "sendto": "ops"}}}, nil)
	admin.ok("action.create", map[string]any{"name": "Flood", "eventsource": 0,
		"filter": map[string]any{"evaltype": 0, "conditions": []map[string]any{{"conditiontype": 0, "operator": 0, "value": g.GroupIDs[0]}}},
		"operations": []map[string]any{{"operationtype": 0, "esc_step_from": 1, "esc_step_to": 1,
			"opmessage": map[string]any{"default_msg": 1, "mediatypeid": mt.MediaTypeIDs[0]}, "opmessage_usr": []map[string]string{{"userid": users[0].UserID}}}}}, nil)

	// The flood: one frame per round, a value > 0 for every trigger's
	// item, each round a second later. A round waits while the
	// evaluations queued would reach 8 per trigger: past 16 a trigger's
	// values would be merged into fewer problem events (trigger
	// evaluation's bound), and the flood is of problem events.
	pendingRe := regexp.MustCompile(`(?m)^peregrine_trigger_eval_pending (\d+)$`)
	pending := func() int {
		sm := pendingRe.FindStringSubmatch(metricsText(t, s))
		if sm == nil {
			t.Fatal("/metrics has no peregrine_trigger_eval_pending")
		}
		n, _ := strconv.Atoi(sm[1])
		return n
	}
	start := time.Now()
	conn, err := net.Dial("tcp", s.TrapperAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	clock := time.Now().Unix() - int64(rounds)
	for r := range rounds {
		for pending() > 7*triggers {
			time.Sleep(2 * time.Millisecond)
		}
		var b strings.Builder
		b.WriteString(`{"request":"sender data","data":[`)
		for i := range triggers {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"host":"flood-1","key":"v[%d]","value":"%d","clock":%d,"ns":0}`, i, r+1, clock+int64(r))
		}
		b.WriteString("]}")
		conn.SetDeadline(time.Now().Add(30 * time.Second))
		if _, err := conn.Write(zbx.AppendFrame(nil, []byte(b.String()), zbx.FlagProtocol)); err != nil {
			t.Fatal(err)
		}
		_, reply, err := zbx.NewReader(conn, zbx.ReaderOptions{}).ReadFrame()
		if err != nil || !strings.Contains(string(reply), fmt.Sprintf("processed: %d;", triggers)) {
			t.Fatalf("round %d: %s, %v", r, reply, err)
		}
	}
	sent := time.Since(start)

	// Drain: watch the backlog (/metrics and selectQueue) until every
	// problem event's alert is delivered.
	waitingRe := regexp.MustCompile(`peregrine_alert_escalations_waiting\{mediatypeid="` + mt.MediaTypeIDs[0] + `"\} (\d+)`)
	var peakMetric, peakAPI, problems int
	deadline := time.Now().Add(time.Duration(events/200+60) * time.Second)
	for {
		m := metricsText(t, s)
		if sm := waitingRe.FindStringSubmatch(m); sm != nil {
			n, _ := strconv.Atoi(sm[1])
			peakMetric = max(peakMetric, n)
		}
		var qs []struct {
			Queue struct{ Alerts, Escalations string }
		}
		admin.ok("mediatype.get", map[string]any{"output": []string{"mediatypeid"}, "mediatypeids": mt.MediaTypeIDs, "selectQueue": "extend"}, &qs)
		if len(qs) != 1 {
			t.Fatalf("mediatype.get selectQueue: %+v", qs)
		}
		n, _ := strconv.Atoi(qs[0].Queue.Escalations)
		peakAPI = max(peakAPI, n)
		var cnt string
		admin.ok("event.get", map[string]any{"source": 0, "object": 0, "value": 1, "countOutput": true}, &cnt)
		problems, _ = strconv.Atoi(cnt)
		mu.Lock()
		delivered := len(got)
		mu.Unlock()
		if problems == rounds*triggers && delivered == problems && qs[0].Queue.Alerts == "0" && qs[0].Queue.Escalations == "0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %d of %d problems delivered; queue %+v", time.Since(start), delivered, problems, qs[0].Queue)
		}
		time.Sleep(200 * time.Millisecond)
	}
	took := time.Since(start)
	mu.Lock()
	for ev, n := range got {
		if n != 1 {
			t.Errorf("event %s delivered %d times", ev, n)
		}
	}
	mu.Unlock()
	if peakMetric == 0 || peakAPI == 0 {
		t.Fatalf("no escalation was seen waiting (metric peak %d, selectQueue peak %d): the flood did not fill the queue", peakMetric, peakAPI)
	}
	for status, want := range map[string]int{"1": problems, "2": 0, "0": 0, "3": 0} {
		var cnt string
		admin.ok("alert.get", map[string]any{"mediatypeids": mt.MediaTypeIDs, "filter": map[string]any{"status": status}, "countOutput": true}, &cnt)
		if n, _ := strconv.Atoi(cnt); n != want && !(status == "1" && n == cfg.Alerts.KeepAlerts) {
			t.Errorf("alert.get status %s: %d alerts, want %d", status, n, want)
		}
	}
	m := metricsText(t, s)
	for _, want := range []string{"peregrine_alert_failed_total 0\n", fmt.Sprintf("peregrine_alert_sent_total %d\n", problems), "peregrine_alert_backlog 0\n"} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics has no %q", want)
		}
	}
	t.Logf("%d problem events sent in %v; every alert delivered once after %v (%.0f alerts/s, maxsessions %d, receiver 1 ms, alerts.fsync %s); escalations waiting peaked at %d (/metrics), %d (selectQueue)",
		problems, sent.Round(time.Millisecond), took.Round(time.Millisecond), float64(problems)/took.Seconds(), sessions, cfg.Alerts.Fsync, peakMetric, peakAPI)
}

func metricsText(t *testing.T, s *Server) string {
	t.Helper()
	resp, err := http.Get("http://" + s.HTTPAddr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
