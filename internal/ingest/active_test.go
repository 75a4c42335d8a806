package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// activeSpec is the catalog of the active-agent tests: the items of the
// captures (host peregrine-test), plus items that must never reach an
// agent (a trapper item, a disabled one) and a second host.
func activeSpec() catalog.Spec {
	return catalog.Spec{
		Hosts: []catalog.HostSpec{
			{Host: "peregrine-test", Groups: []string{"Test"}, Items: []catalog.ItemSpec{
				{Key: "agent.ping", Type: "zabbix_agent_active", ValueType: "unsigned", Delay: "1s"},
				{Key: "no.such.key[a]", Type: "zabbix_agent_active", ValueType: "float", Delay: "1s"},
				{Key: "log[/tmp/peregrine-test.log]", Type: "zabbix_agent_active", ValueType: "log", Delay: "1s"},
				{Key: "system.cpu.load[all,avg1]", Type: "zabbix_agent_active", ValueType: "float", Delay: "2s"},
				{Key: "active.off", Type: "zabbix_agent_active", Delay: "1m", Status: "disabled"},
				{Key: "trap.one", ValueType: "float"},
			}},
			{Host: "other-host", Groups: []string{"Test"}, Items: []catalog.ItemSpec{
				{Key: "agent.ping", Type: "zabbix_agent_active", ValueType: "unsigned", Delay: "30s"},
			}},
			{Host: "down-host", Status: "disabled", Groups: []string{"Test"}, Items: []catalog.ItemSpec{
				{Key: "agent.ping", Type: "zabbix_agent_active", ValueType: "unsigned"},
			}},
		},
	}
}

// payloadOf returns the (inflated) payload of a captured frame.
func payloadOf(t testing.TB, name string) []byte {
	t.Helper()
	_, p, err := zbx.NewReader(bytes.NewReader(fixture(t, name)), zbx.ReaderOptions{}).ReadFrame()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return append([]byte(nil), p...)
}

// captureIDs maps the item ids the capture listener chose to keys.
func captureIDs(t testing.TB, resp string) map[uint64]string {
	t.Helper()
	var r struct {
		Data []struct {
			Key    string
			ItemID uint64
		}
	}
	if err := json.Unmarshal(payloadOf(t, resp), &r); err != nil {
		t.Fatal(err)
	}
	m := map[uint64]string{}
	for _, d := range r.Data {
		m[d.ItemID] = d.Key
	}
	return m
}

// remapItemIDs rewrites the itemids of a captured agent 2 request to the
// test catalog's ids of the same keys.
func remapItemIDs(t testing.TB, ts *testServer, payload []byte, ids map[uint64]string) []byte {
	t.Helper()
	var req map[string]any
	d := json.NewDecoder(bytes.NewReader(payload))
	d.UseNumber()
	if err := d.Decode(&req); err != nil {
		t.Fatal(err)
	}
	for _, row := range req["data"].([]any) {
		r := row.(map[string]any)
		id, _ := strconv.ParseUint(string(r["itemid"].(json.Number)), 10, 64)
		r["itemid"] = ts.item(t, "peregrine-test", ids[id]).ID
	}
	out, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// activeServer starts a trapper with a state recorder and a log
// position file in a temporary directory.
func activeServer(t *testing.T) (*testServer, *itemstate.Registry, *LogPositions) {
	t.Helper()
	lp, err := OpenLogPositions(context.Background(), filepath.Join(t.TempDir(), "agent-state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lp.Close() })
	rec := itemstate.New()
	ts := startTrapper(t, activeSpec(), func(o *Options) {
		o.ItemStates = rec
		o.LogPositions = lp
	})
	return ts, rec, lp
}

func request(t testing.TB, addr string, payload []byte) []byte {
	t.Helper()
	_, reply := roundTrip(t, addr, zbx.AppendFrame(nil, payload, zbx.FlagProtocol))
	if reply == nil {
		t.Fatalf("no reply to %s", payload)
	}
	return reply
}

type activeReply struct {
	Response           string
	Info               string
	RefreshUnsupported *int `json:"refresh_unsupported"`
	Data               []struct {
		Key         string
		ItemID      uint64
		Delay       any // a string, or seconds (float64) in the older form
		LastLogSize uint64
		Mtime       int64
	}
}

func TestActiveChecksFixtures(t *testing.T) {
	ts, _, lp := activeServer(t)
	// The captured agent 2 request gets the captured reply, item ids
	// aside. 6.0 zabbix_agentd sends no version: Zabbix 6.0.14 gives it
	// the older form, intervals in seconds and no itemid (recorded, see
	// testdata/active_checks_zabbix60.json), which it reads with atoi.
	agent2 := payloadOf(t, "agent2-active-checks-resp")
	for id, key := range captureIDs(t, "agent2-active-checks-resp") {
		agent2 = bytes.Replace(agent2, []byte(`"itemid":`+strconv.FormatUint(id, 10)+","),
			[]byte(`"itemid":`+strconv.FormatUint(ts.item(t, "peregrine-test", key).ID, 10)+","), 1)
	}
	agentd := []byte(`{"response":"success","data":[{"key":"agent.ping","delay":1,"lastlogsize":0,"mtime":0},` +
		`{"key":"no.such.key[a]","delay":1,"lastlogsize":0,"mtime":0},{"key":"log[/tmp/peregrine-test.log]","delay":1,"lastlogsize":0,"mtime":0},` +
		`{"key":"system.cpu.load[all,avg1]","delay":2,"lastlogsize":0,"mtime":0}]}`)
	// In this order: the agent info checked below is the last request's
	// (agent 2 sends its version, zabbix_agentd none).
	for _, c := range []struct {
		req  string
		want []byte
	}{{"agentd-active-checks-req", agentd}, {"agent2-active-checks-req", agent2}} {
		req, want := c.req, c.want
		// The reply is sorted by key; the capture is in item id order.
		var got, exp activeReply
		raw := request(t, ts.addr, payloadOf(t, req))
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("%s: %s: %v", req, raw, err)
		}
		if err := json.Unmarshal(want, &exp); err != nil {
			t.Fatal(err)
		}
		if got.Response != "success" || len(got.Data) != len(exp.Data) || got.RefreshUnsupported != nil {
			t.Fatalf("%s: reply %s, want %s", req, raw, want)
		}
		for _, e := range exp.Data {
			found := false
			for _, g := range got.Data {
				found = found || g == e
			}
			if !found {
				t.Errorf("%s: reply %s lacks %+v", req, raw, e)
			}
		}
	}
	// host_metadata is kept for auto-registration.
	info, ok := ts.srv.ActiveAgent("peregrine-test")
	if !ok || info.HostMetadata != "Linux peregrine" || info.Version != "6.0" || !info.Known {
		t.Fatalf("agent info %+v, %v", info, ok)
	}
	// A saved log position goes to the agent.
	logItem := ts.item(t, "peregrine-test", "log[/tmp/peregrine-test.log]")
	if err := lp.Save([]uint64{logItem.ID}, []LogPos{{LastLogSize: 4242, Mtime: 7}}); err != nil {
		t.Fatal(err)
	}
	raw := request(t, ts.addr, []byte(`{"request":"active checks","host":"peregrine-test","version":"5.0"}`))
	var r activeReply
	json.Unmarshal(raw, &r)
	if r.RefreshUnsupported == nil || *r.RefreshUnsupported != 600 {
		t.Errorf("a 5.0 agent gets no refresh_unsupported 600: %s", raw)
	}
	for _, d := range r.Data {
		if d.ItemID == logItem.ID && (d.LastLogSize != 4242 || d.Mtime != 7) {
			t.Errorf("log item %+v, want lastlogsize 4242 mtime 7", d)
		}
	}
	if got := ts.metric(t, `peregrine_trapper_active_checks_total{result="ok"}`); got != 3 {
		t.Errorf("active checks ok = %v, want 3", got)
	}
}

func TestActiveChecksRefused(t *testing.T) {
	ts, _, _ := activeServer(t)
	f := func(payload, wantInfo, result string) {
		t.Helper()
		before := ts.metric(t, `peregrine_trapper_active_checks_total{result="`+result+`"}`)
		raw := request(t, ts.addr, []byte(payload))
		var r activeReply
		if err := json.Unmarshal(raw, &r); err != nil || r.Response != "failed" || r.Info != wantInfo || r.Data != nil {
			t.Errorf("%s: reply %s, want failed with info %q", payload, raw, wantInfo)
		}
		if got := ts.metric(t, `peregrine_trapper_active_checks_total{result="`+result+`"}`); got != before+1 {
			t.Errorf("%s: %s counted %v times, want once", payload, result, got-before)
		}
	}
	f(`{"request":"active checks","host":"nobody","host_metadata":"Linux x"}`, "host [nobody] not found", "unknown_host")
	f(`{"request":"active checks","host":"down-host"}`, "host [down-host] not monitored", "host_disabled")
	f(`{"request":"active checks"}`, `cannot find the "host" member in the request`, "bad_request")
	f(`{"request":"active checks","host":"bad/name"}`, `invalid host name [bad/name]: character '/' is not allowed`, "bad_request")
	f(`{"request":"active checks","host":"peregrine-test","ip":"300.1.1.1"}`, `"300.1.1.1" is not a valid IP address`, "bad_request")
	// An unknown host's metadata is kept too: it is what auto-registration
	// will match on.
	if info, ok := ts.srv.ActiveAgent("nobody"); !ok || info.HostMetadata != "Linux x" || info.Known {
		t.Errorf("unknown host's agent info %+v, %v", info, ok)
	}
	// The other hosts' agents are served as before.
	var r activeReply
	json.Unmarshal(request(t, ts.addr, payloadOf(t, "agentd-active-checks-req")), &r)
	if r.Response != "success" || len(r.Data) != 4 {
		t.Fatalf("after refusals: %+v", r)
	}
}

func TestHeartbeat(t *testing.T) {
	ts, _, _ := activeServer(t)
	_, reply := roundTrip(t, ts.addr, zbx.AppendFrame(nil, []byte(`{"request":"active check heartbeat","host":"peregrine-test","heartbeat_freq":60,"version":"7.0.22","variant":1}`), zbx.FlagProtocol))
	if reply != nil {
		t.Fatalf("heartbeat answered %s; agents read no reply", reply)
	}
	waitMetric(t, ts, "peregrine_trapper_heartbeats_total", 1)
	if info, ok := ts.srv.ActiveAgent("peregrine-test"); !ok || info.LastHeartbeat.IsZero() {
		t.Fatalf("heartbeat not recorded: %+v", info)
	}
}

func TestAgentDataFixtures(t *testing.T) {
	ts, rec, lp := activeServer(t)
	logKey := "log[/tmp/peregrine-test.log]"
	f := func(payload []byte, processed, failed int) {
		t.Helper()
		p, fl, total := infoCounts(t, request(t, ts.addr, payload))
		if p != processed || fl != failed || total != processed+failed {
			t.Fatalf("%s: processed %d failed %d total %d, want %d/%d", payload, p, fl, total, processed, failed)
		}
	}
	count := func(key string) int { return len(ts.read(t, "peregrine-test", key)) }

	// zabbix_agentd 6.0: rows by host and key.
	req1, req2 := payloadOf(t, "agentd-agent-data-req"), payloadOf(t, "agentd-agent-data-req2")
	rec.SetItemState(ts.item(t, "peregrine-test", "agent.ping").ID, itemstate.Item{NotSupported: true, Error: "was broken"})
	f(req1, 4, 0)
	f(req2, 3, 0)
	if count("agent.ping") != 2 || count(logKey) != 2 || count("system.cpu.load[all,avg1]") != 1 || count("no.such.key[a]") != 0 {
		t.Fatalf("stored: ping %d log %d load %d nosuch %d", count("agent.ping"), count(logKey), count("system.cpu.load[all,avg1]"), count("no.such.key[a]"))
	}
	logs := ts.read(t, "peregrine-test", logKey)
	if logs[0].S != "line one" || logs[1].S != "line two" || logs[0].Clock != 1795299360 || logs[0].NS != 716827270 {
		t.Fatalf("log values %+v", logs)
	}
	nosuch := ts.item(t, "peregrine-test", "no.such.key[a]")
	if st, _ := rec.ItemState(nosuch.ID); !st.NotSupported || st.Error != "Unsupported item key." {
		t.Fatalf("no.such.key state %+v", st)
	}
	if st, ok := rec.ItemState(ts.item(t, "peregrine-test", "agent.ping").ID); ok {
		t.Fatalf("agent.ping state %+v: a stored value makes it supported again", st)
	}
	if pos, _ := lp.Get(ts.item(t, "peregrine-test", logKey).ID); pos.LastLogSize != 18 {
		t.Fatalf("log position %+v, want 18", pos)
	}
	// A retransmission (the agent got no reply) is acknowledged, counted
	// as failed, and not stored again.
	f(req1, 0, 4)
	f(req2, 0, 3)
	if count("agent.ping") != 2 || count(logKey) != 2 {
		t.Fatalf("retransmission stored: ping %d log %d", count("agent.ping"), count(logKey))
	}
	if got := ts.metric(t, `peregrine_trapper_values_failed_total{reason="duplicate"}`); got != 7 {
		t.Fatalf("duplicates counted %v, want 7", got)
	}
	// The retransmission of the older batch must not move the position
	// back.
	if pos, _ := lp.Get(ts.item(t, "peregrine-test", logKey).ID); pos.LastLogSize != 18 {
		t.Fatalf("log position %+v after retransmission, want 18", pos)
	}

	// zabbix_agent2 6.0: rows by itemid of the top-level host.
	ids := captureIDs(t, "agent2-active-checks-resp")
	a1 := remapItemIDs(t, ts, payloadOf(t, "agent2-agent-data-req"), ids)
	a2 := remapItemIDs(t, ts, payloadOf(t, "agent2-agent-data-req2"), ids)
	f(a1, 4, 0)
	f(a2, 4, 0)
	f(a1, 0, 4)
	if count("agent.ping") != 5 || count(logKey) != 4 || count("system.cpu.load[all,avg1]") != 3 {
		t.Fatalf("after agent 2: ping %d log %d load %d", count("agent.ping"), count(logKey), count("system.cpu.load[all,avg1]"))
	}
	if st, _ := rec.ItemState(nosuch.ID); st.Error != "Unknown metric no.such.key" {
		t.Fatalf("no.such.key state %+v", st)
	}
	// A later session of the same host (the agent restarted) starts its
	// ids again and is stored.
	restarted := bytes.Replace(a1, []byte("7ba6be5466f29422b9abea17e6ed54e4"), []byte("00000000000000000000000000000001"), 1)
	f(restarted, 4, 0)
}

func TestAgentDataRefusals(t *testing.T) {
	ts, rec, _ := activeServer(t)
	ping := ts.item(t, "peregrine-test", "agent.ping")
	otherPing := ts.item(t, "other-host", "agent.ping")
	trap := ts.item(t, "peregrine-test", "trap.one")
	load := ts.item(t, "peregrine-test", "system.cpu.load[all,avg1]")
	id := func(n uint64) string { return strconv.FormatUint(n, 10) }
	byID := func(rows ...string) []byte {
		return []byte(`{"request":"agent data","session":"0123456789abcdef0123456789abcdef","host":"peregrine-test","version":"6.0","data":[` + strings.Join(rows, ",") + `]}`)
	}
	failedBy := func(reason string) float64 {
		return ts.metric(t, `peregrine_trapper_values_failed_total{reason="`+reason+`"}`)
	}

	// A 31-character session: the whole request fails, counted.
	raw := request(t, ts.addr, []byte(`{"request":"agent data","session":"0123456789abcdef0123456789abcde","host":"peregrine-test","version":"6.0","data":[{"id":1,"itemid":`+id(ping.ID)+`,"value":"1","clock":1700000000,"ns":1}]}`))
	if string(raw) != `{"response":"failed","info":"invalid session token length 31"}` {
		t.Fatalf("31-character session: %s", raw)
	}
	// Counted every time, logged once per window, with the remote address.
	request(t, ts.addr, []byte(`{"request":"agent data","session":"short","data":[]}`))
	request(t, ts.addr, []byte(`{"request":"agent data","session":"short","data":[]}`))
	if got := ts.metric(t, `peregrine_trapper_bad_requests_total{reason="bad_session"}`); got != 3 {
		t.Fatalf("bad_session counted %v, want 3", got)
	}
	if logs := ts.logs.String(); strings.Count(logs, "reason=bad_session") != 1 || !strings.Contains(logs, "session token of 31 characters") || !strings.Contains(logs, "remote=127.0.0.1:") {
		t.Fatalf("bad_session not logged once with context:\n%s", logs)
	}

	// Per-row failures; the good rows of the same request are stored.
	huge := strings.Repeat("x", 200000)
	p, fl, _ := infoCounts(t, request(t, ts.addr, byID(
		`{"id":1,"itemid":999999999,"value":"1","clock":1700000000,"ns":0}`,          // unknown item
		`{"id":2,"itemid":`+id(otherPing.ID)+`,"value":"1","clock":1700000000}`,      // another host's item
		`{"id":3,"itemid":`+id(trap.ID)+`,"value":"1","clock":1700000000}`,           // not an active item
		`{"id":4,"itemid":"abc","value":"1"}`,                                        // garbage itemid
		`[1,2,3]`,                                                                    // not an object
		`{"id":6,"value":"1"}`,                                                       // no itemid
		`{"id":7,"itemid":`+id(load.ID)+`,"value":"`+huge+`","clock":1700000000}`,    // huge, not a number: processed, item not supported
		`{"id":8,"itemid":`+id(ping.ID)+`,"value":"1","clock":1700000001,"ns":5}`,    // good
		`{"id":9,"itemid":`+id(ping.ID)+`,"value":"1","clock":99999999999}`,          // clock out of range
		`{"id":10,"itemid":`+id(ping.ID)+`,"clock":1700000002}`,                      // no value
		`{"id":11,"itemid":`+id(ping.ID)+`,"value":"0","clock":1700000003,"ns":"x"}`, // bad ns
	)))
	if p != 2 || fl != 9 {
		t.Fatalf("processed %d failed %d, want 2 and 9 (the value that does not convert is processed, as in Zabbix 6.0)", p, fl)
	}
	if v := ts.read(t, "peregrine-test", "agent.ping"); len(v) != 1 || v[0].U != 1 || v[0].Clock != 1700000001 || v[0].NS != 5 {
		t.Fatalf("agent.ping values %+v", v)
	}
	if got := failedBy("unknown_item"); got != 2 {
		t.Errorf("unknown_item counted %v, want 2 (unknown and another host's)", got)
	}
	if got := failedBy("wrong_item_type"); got != 1 {
		t.Errorf("wrong_item_type counted %v", got)
	}
	if got := failedBy("bad_field"); got != 1 {
		t.Errorf("bad_field counted %v", got)
	}
	if got := failedBy("missing_field"); got != 3 {
		t.Errorf("missing_field counted %v, want 3", got)
	}
	if got := failedBy("bad_clock"); got != 2 {
		t.Errorf("bad_clock counted %v, want 2", got)
	}
	if got := failedBy("bad_value"); got != 0 {
		t.Errorf("bad_value counted %v, want 0: a value that does not convert is processed", got)
	}
	// The value that does not convert makes its item not supported.
	if st, _ := rec.ItemState(load.ID); !st.NotSupported || !strings.Contains(st.Error, "is not suitable for value type") {
		t.Errorf("load state %+v", st)
	}
	// Rows of a disabled host (by host and key, 6.0 agentd's form) fail;
	// an unknown host in itemid form is acknowledged with Zabbix's info.
	p, fl, _ = infoCounts(t, request(t, ts.addr, []byte(`{"request":"agent data","session":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","data":[{"host":"down-host","key":"agent.ping","value":"1","id":1}]}`)))
	if p != 0 || fl != 1 || failedBy("host_disabled") != 1 {
		t.Errorf("disabled host: processed %d failed %d", p, fl)
	}
	raw = request(t, ts.addr, []byte(`{"request":"agent data","session":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","host":"nobody","version":"7.0.22","data":[{"itemid":1,"value":"1","id":1}]}`))
	if string(raw) != `{"response":"success","info":"unknown host 'nobody'"}` || failedBy("unknown_host") != 1 {
		t.Errorf("unknown host: %s", raw)
	}
	// Nobody else is affected: the sender path and a good agent request.
	if p, _, _ := infoCounts(t, request(t, ts.addr, []byte(`{"request":"sender data","data":[{"host":"peregrine-test","key":"trap.one","value":"1.5"}]}`))); p != 1 {
		t.Fatal("sender data after bad agent data not processed")
	}
	if p, _, _ := infoCounts(t, request(t, ts.addr, byID(`{"id":100,"itemid":`+id(ping.ID)+`,"value":"1","clock":1700000010}`))); p != 1 {
		t.Fatal("good agent data not processed")
	}
}

// failingSubmitter fails the first n Submits, then stores.
type failingSubmitter struct {
	mu    sync.Mutex
	fails int
	next  Submitter
}

func (f *failingSubmitter) Submit(v []history.Sample, t *pipeline.Ticket) error {
	f.mu.Lock()
	fail := f.fails > 0
	f.fails--
	f.mu.Unlock()
	if fail {
		return errors.New("disk full")
	}
	return f.next.Submit(v, t)
}

// A request whose store fails is not acknowledged, and its ids are not
// taken: the agent's resend of the same rows is stored, once.
func TestAgentDataStoreFailureAllowsResend(t *testing.T) {
	lp, err := OpenLogPositions(context.Background(), filepath.Join(t.TempDir(), "agent-state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lp.Close() })
	ts := startTrapper(t, activeSpec(), func(o *Options) {
		o.Pipeline = &failingSubmitter{fails: 1, next: o.Pipeline}
		o.LogPositions = lp
	})
	logItem := ts.item(t, "peregrine-test", "log[/tmp/peregrine-test.log]")
	req := payloadOf(t, "agentd-agent-data-req")
	raw := request(t, ts.addr, req)
	if !bytes.HasPrefix(raw, []byte(`{"response":"failed","info":"cannot store values: disk full"`)) {
		t.Fatalf("reply %s", raw)
	}
	// The position follows stored values only.
	if pos, ok := lp.Get(logItem.ID); ok {
		t.Fatalf("position %+v saved for a line that was not stored", pos)
	}
	if p, fl, _ := infoCounts(t, request(t, ts.addr, req)); p != 4 || fl != 0 {
		t.Fatalf("resend: processed %d failed %d", p, fl)
	}
	if p, fl, _ := infoCounts(t, request(t, ts.addr, req)); p != 0 || fl != 4 {
		t.Fatalf("second resend: processed %d failed %d", p, fl)
	}
	if n := len(ts.read(t, "peregrine-test", "agent.ping")); n != 1 {
		t.Fatalf("agent.ping stored %d times", n)
	}
	if pos, _ := lp.Get(logItem.ID); pos.LastLogSize != 9 {
		t.Fatalf("position %+v after the resend was stored, want 9", pos)
	}
}

// Log rows carry their metadata into the stored value; a row without a
// value but with a position only moves the position.
func TestAgentDataLogMeta(t *testing.T) {
	ts, _, lp := activeServer(t)
	logItem := ts.item(t, "peregrine-test", "log[/tmp/peregrine-test.log]")
	id := strconv.FormatUint(logItem.ID, 10)
	src := strings.Repeat("é", 70) // longer than Zabbix's 64 characters
	p, fl, _ := infoCounts(t, request(t, ts.addr, []byte(`{"request":"agent data","session":"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb","host":"peregrine-test","version":"6.0","data":[`+
		`{"id":1,"itemid":`+id+`,"value":"disk full","lastlogsize":100,"mtime":1700000000,"timestamp":1699999999,"source":"`+src+`","severity":4,"eventid":1234,"clock":1700000001,"ns":0},`+
		`{"id":2,"itemid":`+id+`,"lastlogsize":250,"mtime":1700000005,"clock":1700000006,"ns":0}]}`)))
	if p != 2 || fl != 0 {
		t.Fatalf("processed %d failed %d, want 2 and 0", p, fl)
	}
	v := ts.read(t, "peregrine-test", "log[/tmp/peregrine-test.log]")
	if len(v) != 1 || v[0].S != "disk full" || v[0].Log == nil {
		t.Fatalf("stored %+v", v)
	}
	if m := *v[0].Log; m.Timestamp != 1699999999 || m.Source != strings.Repeat("é", 64) || m.Severity != 4 || m.EventID != 1234 {
		t.Fatalf("log metadata %+v", m)
	}
	if pos, _ := lp.Get(logItem.ID); pos != (LogPos{LastLogSize: 250, Mtime: 1700000005}) {
		t.Fatalf("position %+v, want the position-only row's", pos)
	}
}

// A request without a session (older agents, scripts) is stored as is,
// with no retransmission check, also on a connection whose previous
// request had a session.
func TestAgentDataWithoutSession(t *testing.T) {
	ts, _, _ := activeServer(t)
	c, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rd := zbx.NewReader(c, zbx.ReaderOptions{Timeout: 5 * time.Second})
	send := func(payload string) []byte {
		t.Helper()
		if _, err := c.Write(zbx.AppendFrame(nil, []byte(payload), zbx.FlagProtocol)); err != nil {
			t.Fatal(err)
		}
		_, reply, err := rd.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		return append([]byte(nil), reply...)
	}
	withSession := `{"request":"agent data","session":"cccccccccccccccccccccccccccccccc","data":[{"host":"peregrine-test","key":"agent.ping","value":"1","id":1,"clock":1700000000,"ns":1}]}`
	without := `{"request":"agent data","data":[{"host":"peregrine-test","key":"agent.ping","value":"1","id":1,"clock":1700000001,"ns":1}]}`
	for _, payload := range []string{withSession, without, without} {
		if p, _, _ := infoCounts(t, send(payload)); p != 1 {
			t.Fatalf("%s: not processed", payload)
		}
	}
	if n := len(ts.read(t, "peregrine-test", "agent.ping")); n != 2 { // the two without a session share a timestamp
		t.Fatalf("agent.ping has %d values, want 2", n)
	}
}

// Concurrent retransmissions of one session store each row once.
func TestAgentDataConcurrentRetransmissions(t *testing.T) {
	ts, _, _ := activeServer(t)
	req := payloadOf(t, "agentd-agent-data-req")
	var wg sync.WaitGroup
	var mu sync.Mutex
	processed := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, _, _ := infoCounts(t, request(t, ts.addr, req))
			mu.Lock()
			processed += p
			mu.Unlock()
		}()
	}
	wg.Wait()
	if processed != 4 {
		t.Fatalf("8 copies processed %d rows in all, want 4", processed)
	}
	if n := len(ts.read(t, "peregrine-test", "agent.ping")); n != 1 {
		t.Fatalf("agent.ping stored %d times", n)
	}
}

func TestSessionsBounded(t *testing.T) {
	ss := newSessions(32) // 2 per shard
	var tok [32]byte
	for i := range 1000 {
		copy(tok[:], strconv.Itoa(i))
		s := ss.get(sessionKey{host: uint64(i), token: tok})
		s.last = uint64(i)
	}
	if n := ss.count.Load(); n > 32 || n < 16 {
		t.Fatalf("%d sessions kept, bound 32", n)
	}
	if ss.evicted.Load()+uint64(ss.count.Load()) != 1000 {
		t.Fatalf("evicted %d + kept %d != 1000", ss.evicted.Load(), ss.count.Load())
	}
	// The most recent session of a shard survives.
	copy(tok[:], strconv.Itoa(999))
	if s := ss.get(sessionKey{host: 999, token: tok}); s.last != 999 {
		t.Fatalf("most recent session forgotten (last %d)", s.last)
	}
}

func TestVersionAtLeast44(t *testing.T) {
	for v, want := range map[string]bool{"": false, "4.2": false, "4.4": true, "4.4.1": true, "5.0": true, "6.0": true, "7.0.22": true, "10.0": true, "4": false, "x": false, "3.9": false} {
		if got := versionAtLeast44([]byte(v)); got != want {
			t.Errorf("versionAtLeast44(%q) = %v", v, got)
		}
	}
}

func TestAgentJSON(t *testing.T) {
	var req senderRequest
	in := `{"request":"agent data","session":"s","host":"h","version":"6.0","port":10051,"data":[` +
		`{"host":"h","key":"k","value":"v"},` +
		`{"itemid":18446744073709551615,"id":"7","state":1,"lastlogsize":9,"mtime":-1,"timestamp":5,"source":"src","severity":3,"eventid":4,"value":"x"},` +
		`{"itemid":18446744073709551616,"lastlogsize":1.5,"source":1}]}`
	if err := parseSenderRequest([]byte(in), &req); err != nil {
		t.Fatal(err)
	}
	top := req.top
	if string(top.session) != "s" || !top.hasSession || string(top.host) != "h" || string(top.version) != "6.0" || string(top.port) != "10051" {
		t.Fatalf("top %+v", top)
	}
	if req.extAt(0) != nil && req.extAt(0).has != 0 {
		t.Fatalf("row 0 has agent fields: %+v", req.extAt(0))
	}
	e := req.extAt(1)
	want := rowExt{itemID: 1<<64 - 1, id: 7, state: 1, lastLogSize: 9, mtime: -1, timestamp: 5, source: []byte("src"), severity: 3, eventID: 4,
		has: hasItemID | hasID | hasState | hasLastLogSize | hasMtime | hasTimestamp | hasSource | hasSeverity | hasEventID}
	if e == nil || e.itemID != want.itemID || e.id != want.id || e.state != 1 || e.lastLogSize != 9 || e.mtime != -1 || e.timestamp != 5 ||
		string(e.source) != "src" || e.severity != 3 || e.eventID != 4 || e.has != want.has || e.bad != 0 {
		t.Fatalf("row 1 %+v", e)
	}
	if e := req.extAt(2); e == nil || e.bad != hasItemID|hasLastLogSize|hasSource {
		t.Fatalf("row 2 bad fields %+v", e)
	}
}

func FuzzAgentData(f *testing.F) {
	for _, name := range []string{"agentd-agent-data-req", "agentd-agent-data-req2", "agent2-agent-data-req", "agent2-agent-data-req2", "agentd-active-checks-req", "agent2-active-checks-req"} {
		f.Add(payloadOf(f, name))
	}
	f.Add([]byte(`{"request":"agent data","session":"0123456789abcdef0123456789abcdef","host":"peregrine-test","version":"7.0","data":[{"itemid":1,"id":1,"value":"1","state":1,"lastlogsize":3}]}`))
	f.Add([]byte(`{"request":"active check heartbeat","host":"peregrine-test"}`))
	// Without a session, after requests with one on the same connection
	// state (the fuzzer reuses cs across inputs).
	f.Add([]byte(`{"request":"agent data","data":[{"host":"peregrine-test","key":"agent.ping","value":"1","id":1}]}`))
	s, _ := handlerOnly(f, activeSpec())
	cs := &connState{ticket: pipeline.NewTicket()}
	f.Fuzz(func(t *testing.T, payload []byte) {
		reply, _ := s.handle(cs, bytes.Clone(payload), time.Now(), "fuzz")
		cs.trim(keepBytes)
		if reply == nil {
			return
		}
		var r activeReply
		if err := json.Unmarshal(reply, &r); err != nil {
			t.Fatalf("reply is not JSON: %q", reply)
		}
		if r.Response != "success" && r.Response != "failed" {
			t.Fatalf("reply %s", reply)
		}
		if r.Response == "failed" && r.Info == "" {
			t.Fatalf("failed without info: %s", reply)
		}
	})
}

func TestActiveChecksTimeoutFor70(t *testing.T) {
	spec := activeSpec()
	spec.Hosts[1].Items[0].Timeout = "7s"
	ts := startTrapper(t, spec, nil)
	if got := ts.item(t, "other-host", "agent.ping").Ext().Timeout; got != "7s" {
		t.Fatalf("the catalog kept timeout %q, want 7s", got)
	}
	for _, c := range []struct {
		version string
		want    bool
	}{{"", false}, {"6.0", false}, {"7.0.22", true}} {
		raw := request(t, ts.addr, []byte(`{"request":"active checks","host":"other-host","version":"`+c.version+`"}`))
		if got := bytes.Contains(raw, []byte(`"delay":"30s","lastlogsize":0,"mtime":0,"timeout":"7s"}`)); got != c.want {
			t.Errorf("version %q: reply %s, timeout sent %v, want %v", c.version, raw, got, c.want)
		}
	}
}

func TestAgentRegistryBounded(t *testing.T) {
	r := newAgentRegistry(2, 3)
	r.update(AgentInfo{Host: "known-1", Known: true, HostMetadata: strings.Repeat("é", 2000)}, false)
	r.update(AgentInfo{Host: "known-2", Known: true}, false)
	// A flood of unknown names pushes out unknown names only.
	for i := range 100 {
		r.update(AgentInfo{Host: "made-up-" + strconv.Itoa(i)}, false)
	}
	for _, h := range []string{"known-1", "known-2", "made-up-99", "made-up-98", "made-up-97"} {
		if _, ok := r.get(h); !ok {
			t.Errorf("%s forgotten", h)
		}
	}
	if _, ok := r.get("made-up-96"); ok {
		t.Error("more unknown hosts kept than the bound")
	}
	info, _ := r.get("known-1")
	if len(info.HostMetadata) > maxHostMetadataBytes || !utf8.ValidString(info.HostMetadata) || len(info.HostMetadata) < maxHostMetadataBytes-1 {
		t.Errorf("host metadata of %d bytes kept (valid UTF-8: %v)", len(info.HostMetadata), utf8.ValidString(info.HostMetadata))
	}
	// A heartbeat keeps the details of the latest active checks.
	r.update(AgentInfo{Host: "known-1", Known: true, LastHeartbeat: time.Unix(5, 0)}, true)
	if info, _ := r.get("known-1"); info.HostMetadata == "" || info.LastHeartbeat.Unix() != 5 {
		t.Errorf("after heartbeat %+v", info)
	}
	// A host that appears in the catalog moves to the known list.
	r.update(AgentInfo{Host: "made-up-97", Known: true}, false)
	if r.lrus[1].Len() != 2 || r.lrus[0].Len() != 2 {
		t.Errorf("lists known %d unknown %d, want 2 and 2", r.lrus[1].Len(), r.lrus[0].Len())
	}
}
