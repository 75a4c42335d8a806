package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// recordedTasks are the task exchanges recorded from 6.0.14.
func recordedTasks(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	b, err := os.ReadFile("testdata/proxy_tasks_zabbix60.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// normTasks decodes a reply and blanks what differs between servers
// (clock, task and host IDs).
func normTasks(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	tasks, _ := m["tasks"].([]any)
	for _, x := range tasks {
		task := x.(map[string]any)
		for _, k := range []string{"clock", "parent_taskid", "hostid", "itemid"} {
			if _, ok := task[k]; ok {
				task[k] = "id"
			}
		}
	}
	return m
}

// TestProxyTasks: a remote command and a check now are sent in the
// reply to the proxy's next "proxy data" exactly as 6.0.14 sends them
// (recorded), once; the result in a later "proxy data" is what
// ProxyCommand returns, its error for status -1; a result nobody waits
// for is counted.
func TestProxyTasks(t *testing.T) {
	rec := recordedTasks(t)
	ts := startTrapper(t, proxySpec(), nil)
	pid := addProxy(t, ts, "px-tasks")
	host := ts.cat.Snapshot().Host("px-host")
	type out struct {
		s   string
		err error
	}
	run := func(cmd string, execOn int) chan out {
		ch := make(chan out, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			s, err := ts.srv.ProxyCommand(ctx, pid, ProxyCommand{HostID: host.ID, ExecuteOn: execOn, Command: cmd})
			ch <- out{s, err}
		}()
		return ch
	}
	data := func(extra string) []byte {
		t.Helper()
		return request(t, ts.addr, []byte(`{"request":"proxy data","host":"px-tasks","session":"`+sess+`","version":"6.0.14"`+extra+`,"clock":1,"ns":1}`))
	}
	// Wait for the command to be queued before asking.
	waitQueued := func(n int) {
		t.Helper()
		for i := 0; ts.metric(t, `peregrine_trapper_proxy_tasks_total{kind="remote_command",result="queued"}`) < float64(n); i++ {
			if i > 1000 {
				t.Fatal("the command was never queued")
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	for _, tc := range []struct {
		rec, cmd string
		execOn   int
		result   string
		want     out
	}{
		{"active_remote_command_reply", "echo s5px-out", 2, `"status":0,"info":"s5px-out"`, out{s: "s5px-out"}},
		{"active_remote_command_agent_reply", "echo on-agent", 0, `"status":-1,"info":"Cannot connect: boom"`, out{err: fmt.Errorf("Cannot connect: boom")}},
	} {
		before := ts.metric(t, `peregrine_trapper_proxy_tasks_total{kind="remote_command",result="queued"}`)
		ch := run(tc.cmd, tc.execOn)
		waitQueued(int(before) + 1)
		got := data("")
		if d := cmp.Diff(normTasks(t, rec[tc.rec]), normTasks(t, got)); d != "" {
			t.Fatalf("%s (-6.0.14 +Peregrine):\n%s", tc.rec, d)
		}
		if again := data(""); strings.Contains(string(again), "tasks") {
			t.Fatalf("a task was sent twice: %s", again)
		}
		var reply struct {
			Tasks []struct {
				ParentTaskID uint64 `json:"parent_taskid"`
			}
		}
		json.Unmarshal(got, &reply)
		data(fmt.Sprintf(`,"tasks":[{"type":3,"clock":1,"ttl":0,%s,"parent_taskid":%d}]`, tc.result, reply.Tasks[0].ParentTaskID))
		r := <-ch
		if r.s != tc.want.s || fmt.Sprint(r.err) != fmt.Sprint(tc.want.err) {
			t.Fatalf("%s: got %q, %v; want %q, %v", tc.cmd, r.s, r.err, tc.want.s, tc.want.err)
		}
	}
	if err := ts.srv.ProxyCheckNow(pid, []uint64{ts.item(t, "px-host", "agent.ping").ID}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(normTasks(t, rec["active_check_now_reply"]), normTasks(t, data(""))); d != "" {
		t.Fatalf("check now (-6.0.14 +Peregrine):\n%s", d)
	}
	data(`,"tasks":[{"type":3,"clock":1,"ttl":0,"status":0,"info":"late","parent_taskid":999}]`)
	if ts.metric(t, `peregrine_trapper_proxy_tasks_total{kind="result",result="unexpected"}`) != 1 {
		t.Fatal("a result nobody waits for was not counted")
	}
	// A passive proxy's acknowledgement, as 6.0.14's (recorded).
	if err := ts.srv.ProxyCheckNow(pid, []uint64{ts.item(t, "px-host", "agent.ping").ID}); err != nil {
		t.Fatal(err)
	}
	passive := &catalog.Proxy{ID: pid, Status: catalog.ProxyPassive}
	if d := cmp.Diff(normTasks(t, rec["passive_ack_check_now"]), normTasks(t, ts.srv.proxyReply(passive))); d != "" {
		t.Fatalf("passive acknowledgement (-6.0.14 +Peregrine):\n%s", d)
	}
	// A caller that gives up takes its task back.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ts.srv.ProxyCommand(ctx, pid, ProxyCommand{HostID: host.ID, Command: "x"}); err == nil {
		t.Fatal("no timeout error")
	}
	if got := data(""); strings.Contains(string(got), "tasks") {
		t.Fatalf("the task of a caller that gave up was sent: %s", got)
	}
	// Malformed results refuse the request (the proxy resends it).
	if got := string(data(`,"tasks":{"x":1}`)); !strings.Contains(got, "not an array of task results") {
		t.Fatalf("malformed tasks: %s", got)
	}
}

// TestIntegrationRealProxyTasks: the real zabbix_proxy 6.0, active and
// passive, runs a remote command Peregrine sends it and returns the
// output, and checks an item at once on "check now" (an HTTP agent item
// with a one-hour interval whose server counts its requests).
func TestIntegrationRealProxyTasks(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	testutil.ProxyBinary(t)
	var hits atomic.Int64
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, hits.Add(1)) }))
	defer web.Close()
	spec := catalog.Spec{Hosts: []catalog.HostSpec{{Host: "px-host", Groups: []string{"Test"}, Items: []catalog.ItemSpec{
		{Key: "px.http", Type: "http_agent", ValueType: "unsigned", Delay: "1h", HTTPSpec: catalog.HTTPSpec{URL: web.URL}},
	}}}}
	for _, passive := range []bool{false, true} {
		t.Run(fmt.Sprintf("passive=%v", passive), func(t *testing.T) {
			hits.Store(0)
			ts := startTrapper(t, spec, nil)
			extra := []string{"StartHTTPPollers=1", "EnableRemoteCommands=1", "LogRemoteCommands=1"}
			var pid uint64
			if passive {
				px := testutil.StartProxy(t, testutil.ProxyOptions{Name: "px-tasks", Server: "127.0.0.1", Passive: true, Extra: extra})
				pid = addPassiveProxy(t, ts, "px-tasks", px.Addr, catalog.DefaultHostTLS)
				passiveRun(t, ts)
			} else {
				pid = addProxy(t, ts, "px-tasks")
				testutil.StartProxy(t, testutil.ProxyOptions{Name: "px-tasks", Server: ts.addr, Extra: extra})
			}
			host := ts.cat.Snapshot().Host("px-host")
			deadline := time.Now().Add(90 * time.Second)
			for {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				out, err := ts.srv.ProxyCommand(ctx, pid, ProxyCommand{HostID: host.ID, ExecuteOn: 2, Command: "echo proxy-ran-it"})
				cancel()
				if err == nil {
					if strings.TrimSpace(out) != "proxy-ran-it" { // the proxy sends the shell's output as is, newline included
						t.Fatalf("remote command output %q", out)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("remote command: %v\n%s", err, ts.logs.String())
				}
			}
			// The proxy has its configuration; its first check of the
			// item may come at any time in the hour: wait for none or
			// one, then check now.
			time.Sleep(2 * time.Second)
			before := hits.Load()
			item := ts.item(t, "px-host", "px.http").ID
			if err := ts.srv.ProxyCheckNow(pid, []uint64{item}); err != nil {
				t.Fatal(err)
			}
			for hits.Load() == before || len(ts.read(t, "px-host", "px.http")) == 0 {
				if time.Now().After(deadline) {
					t.Fatalf("check now: the proxy did not check the item (%d requests)\n%s", hits.Load(), ts.logs.String())
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}
