package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/engine"
	"github.com/peregrine-mon/peregrine/internal/history/historytest"
	"github.com/peregrine-mon/peregrine/internal/zbx"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// buildBinary builds cmd/peregrine once per test process.
func buildBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "peregrine-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "peregrine")
		out, err := exec.Command("go", "build", "-o", binPath, "../../cmd/peregrine").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

type sentValue struct {
	item  int
	clock int64
	value float64
}

// TestIntegrationCrashLosesNothingAcknowledged runs `peregrine serve` as a
// child, drives it with concurrent senders, kills it with SIGKILL at random
// moments several times and restarts it; then it opens the history engine
// on the data directory and checks that every value a sender saw
// acknowledged is there exactly once, with the value sent. The head is
// flushed into blocks every second or 50k values, so kills also land
// during flushes and WAL truncations.
func TestIntegrationCrashLosesNothingAcknowledged(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: kills and restarts the server")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	cfgPath := filepath.Join(dir, "peregrine.yaml")
	os.WriteFile(cfgPath, []byte("data_dir: "+data+"\ntrapper:\n  listen: 127.0.0.1:0\nhttp:\n  listen: 127.0.0.1:0\nhistory:\n  store: engine\n  fsync: batch\n  flush_interval: 1s\n  max_head_values: 50000\n"), 0o600)
	const items = 20
	var spec strings.Builder
	spec.WriteString("hosts:\n  - host: crash-test\n    groups: [Crash]\n    items:\n")
	for i := 0; i < items; i++ {
		fmt.Fprintf(&spec, "      - key: v[%d]\n", i)
	}
	specPath := filepath.Join(dir, "spec.yaml")
	os.WriteFile(specPath, []byte(spec.String()), 0o600)
	if out, err := exec.Command(bin, "import", "-config", cfgPath, specPath).CombinedOutput(); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}

	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	var mu sync.Mutex
	acked := map[int64]sentValue{} // clock -> value; clocks are unique across the run
	sent := map[int64]sentValue{}
	nextClock := time.Now().Add(-30 * 24 * time.Hour).Unix() // inside the items' 90-day retention: the retention loop runs too
	rounds := 4
	for round := 0; round < rounds; round++ {
		cmd := exec.Command(bin, "serve", "-config", cfgPath)
		stderr, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		addrs := waitAddrs(t, stderr)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var conn net.Conn
				for {
					select {
					case <-stop:
						if conn != nil {
							conn.Close()
						}
						return
					default:
					}
					if conn == nil {
						c, err := net.Dial("tcp", addrs["trapper"])
						if err != nil {
							time.Sleep(10 * time.Millisecond)
							continue
						}
						conn = c
					}
					// One frame of 100 values with clocks nobody else uses.
					mu.Lock()
					batch := make([]sentValue, 100)
					for i := range batch {
						batch[i] = sentValue{item: int(nextClock % items), clock: nextClock, value: float64(nextClock%1000) / 4}
						sent[nextClock] = batch[i]
						nextClock++
					}
					mu.Unlock()
					var b strings.Builder
					b.WriteString(`{"request":"sender data","data":[`)
					for i, v := range batch {
						if i > 0 {
							b.WriteByte(',')
						}
						fmt.Fprintf(&b, `{"host":"crash-test","key":"v[%d]","value":"%g","clock":%d,"ns":0}`, v.item, v.value, v.clock)
					}
					b.WriteString("]}")
					conn.SetDeadline(time.Now().Add(5 * time.Second))
					if _, err := conn.Write(zbx.AppendFrame(nil, []byte(b.String()), zbx.FlagProtocol)); err != nil {
						conn.Close()
						conn = nil
						continue
					}
					_, reply, err := zbx.NewReader(conn, zbx.ReaderOptions{}).ReadFrame()
					if err != nil {
						conn.Close()
						conn = nil
						continue
					}
					if strings.Contains(string(reply), "processed: 100;") {
						mu.Lock()
						for _, v := range batch {
							acked[v.clock] = v
						}
						mu.Unlock()
					} else {
						t.Errorf("unexpected reply %s", reply)
					}
				}
			}()
		}
		time.Sleep(time.Duration(500+r.IntN(2000)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL) // mid-flight: some frames were in the WAL, unanswered
		cmd.Wait()
		close(stop)
		wg.Wait()
		mu.Lock()
		t.Logf("round %d: %d values acknowledged so far, %d sent", round, len(acked), len(sent))
		mu.Unlock()
	}
	if len(acked) == 0 {
		t.Fatal("nothing was acknowledged")
	}

	// Read the data directory back with the engine itself.
	s, err := engine.Open(engine.Options{Dir: HistoryPath(data)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.BlockCount() == 0 {
		t.Fatal("no block was flushed: the test did not exercise flushes")
	}
	t.Logf("engine reopened: %d blocks, %d values replayed from the WAL", s.BlockCount(), s.Replayed())
	// The test's items by id, from the catalog: the self-monitoring host's
	// internal items store values in the same engine and are not ours.
	cat, err := catalog.Open(context.Background(), catalog.Options{Path: CatalogPath(data)})
	if err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	for i := 0; i < items; i++ {
		it := cat.Snapshot().Lookup("crash-test", fmt.Sprintf("v[%d]", i))
		if it == nil {
			t.Fatalf("item v[%d] is not in the catalog", i)
		}
		ids = append(ids, it.ID)
	}
	cat.Close()
	stored := map[int64]int{}
	for _, id := range ids {
		for _, v := range historytest.ReadAll(t, s, history.Query{ItemID: id, From: 0, Till: 1 << 40}) {
			stored[v.Clock]++
			want, ok := sent[v.Clock]
			if !ok {
				t.Fatalf("stored a value nobody sent: %+v", v)
			}
			if v.F != want.value {
				t.Fatalf("clock %d: stored %v, sent %v", v.Clock, v.F, want.value)
			}
		}
	}
	missing := 0
	for c := range acked {
		switch stored[c] {
		case 0:
			missing++
		case 1:
		default:
			t.Fatalf("clock %d stored %d times", c, stored[c])
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d acknowledged values are missing after %d SIGKILLs", missing, len(acked), rounds)
	}
	t.Logf("%d acknowledged values all present after %d SIGKILLs; %d stored in total (unacknowledged frames may or may not be)", len(acked), rounds, len(stored))
}

// TestIntegrationCrashAlertFlood: the kill -9 loop with alerts. A child
// `peregrine serve` gets a flood of problems (50 triggers with multiple
// problem events) faster than its webhook media type can deliver them
// (4 sessions to a receiver in this test taking 5 ms a request, a queue
// of 200), so that at each SIGKILL alerts are queued and escalations
// wait for room. After four kills a last run drains the backlog. Then
// every problem event in the event store has exactly one alert, sent,
// and the receiver got it; an alert got twice was one in flight at a
// kill (at most maxsessions per kill), the at-least-once of a request
// that cannot be taken back.
func TestIntegrationCrashAlertFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: kills and restarts the server")
	}
	const items, sessions, kills = 50, 4, 4
	var mu sync.Mutex
	got := map[string]int{}
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]string
		if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		time.Sleep(5 * time.Millisecond)
		mu.Lock()
		got[b["event"]]++
		mu.Unlock()
	}))
	defer rcv.Close()
	delivered := func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(got)
	}
	repeats := func(d map[string]int) int {
		n := 0
		for _, c := range d {
			n += c - 1
		}
		return n
	}

	bin := buildBinary(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	cfgPath := filepath.Join(dir, "peregrine.yaml")
	os.WriteFile(cfgPath, []byte("data_dir: "+data+"\ntrapper:\n  listen: 127.0.0.1:0\nhttp:\n  listen: 127.0.0.1:0\nhistory:\n  store: engine\n  fsync: batch\n"+
		"alerts:\n  fsync: batch\n  queue_size: 200\n  rate_limit: 0\n"), 0o600)
	var spec strings.Builder
	spec.WriteString("hosts:\n  - host: crash-alert\n    groups: [Crash alerts]\n    items:\n")
	for i := range items {
		fmt.Fprintf(&spec, "      - key: v[%d]\n        value_type: unsigned\n", i)
	}
	spec.WriteString("    triggers:\n")
	for i := range items {
		fmt.Fprintf(&spec, "      - name: flood %d\n        expression: last(/crash-alert/v[%d])>0\n        type: MULTIPLE\n        priority: HIGH\n", i, i)
	}
	specPath := filepath.Join(dir, "spec.yaml")
	os.WriteFile(specPath, []byte(spec.String()), 0o600)
	if out, err := exec.Command(bin, "import", "-config", cfgPath, specPath).CombinedOutput(); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}

	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	clock := time.Now().Add(-time.Hour).Unix()
	var api *apiClient
	var triggerIDs []string
	dups := 0
	for round := 0; round <= kills; round++ {
		cmd := exec.Command(bin, "serve", "-config", cfgPath)
		stderr, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		addrs := waitAddrs(t, stderr)
		go io.Copy(io.Discard, stderr)
		api = &apiClient{t: t, url: "http://" + addrs["http"] + "/api_jsonrpc.php"}
		pw, err := os.ReadFile(filepath.Join(data, "admin-password"))
		if err != nil {
			t.Fatal(err)
		}
		api.auth = api.login("Admin", strings.TrimSpace(string(pw)))
		if round == 0 {
			var groups []struct{ GroupID string }
			api.ok("hostgroup.get", map[string]any{"filter": map[string]string{"name": "Crash alerts"}}, &groups)
			var trigs []struct{ TriggerID string }
			api.ok("trigger.get", map[string]any{"output": []string{"triggerid"}, "groupids": []string{groups[0].GroupID}}, &trigs)
			for _, tr := range trigs {
				triggerIDs = append(triggerIDs, tr.TriggerID)
			}
			var mt struct{ MediaTypeIDs []string }
			api.ok("mediatype.create", map[string]any{"name": "Crash hook", "type": 4, "maxsessions": sessions, "maxattempts": 3, "attempt_interval": "1s",
				"parameters": []map[string]string{{"name": "URL", "value": rcv.URL}, {"name": "event", "value": "{EVENT.ID}"}}}, &mt)
			var users []struct{ UserID string }
			api.ok("user.get", map[string]any{"filter": map[string]string{"username": "Admin"}}, &users)
			api.ok("user.update", map[string]any{"userid": users[0].UserID, "medias": []map[string]any{{"mediatypeid": mt.MediaTypeIDs[0], "sendto": "ops"}}}, nil)
			api.ok("action.create", map[string]any{"name": "Crash flood", "eventsource": 0,
				"filter": map[string]any{"evaltype": 0, "conditions": []map[string]any{{"conditiontype": 0, "operator": 0, "value": groups[0].GroupID}}},
				"operations": []map[string]any{{"operationtype": 0, "esc_step_from": 1, "esc_step_to": 1,
					"opmessage": map[string]any{"default_msg": 1, "mediatypeid": mt.MediaTypeIDs[0]}, "opmessage_usr": []map[string]string{{"userid": users[0].UserID}}}}}, nil)
		}
		before := delivered()
		if round < kills {
			// ≈ 1,250 problems a second for 1.5–3 s; the medium delivers
			// ≈ 800 a second.
			conn, err := net.Dial("tcp", addrs["trapper"])
			if err != nil {
				t.Fatal(err)
			}
			end := time.Now().Add(time.Duration(1500+r.IntN(1500)) * time.Millisecond)
			for time.Now().Before(end) {
				var b strings.Builder
				b.WriteString(`{"request":"sender data","data":[`)
				for i := range items {
					if i > 0 {
						b.WriteByte(',')
					}
					fmt.Fprintf(&b, `{"host":"crash-alert","key":"v[%d]","value":"1","clock":%d,"ns":0}`, i, clock)
				}
				b.WriteString("]}")
				clock++
				conn.SetDeadline(time.Now().Add(5 * time.Second))
				if _, err := conn.Write(zbx.AppendFrame(nil, []byte(b.String()), zbx.FlagProtocol)); err != nil {
					t.Fatal(err)
				}
				if _, _, err := zbx.NewReader(conn, zbx.ReaderOptions{}).ReadFrame(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(40 * time.Millisecond)
			}
			conn.Close()
		} else {
			// The last run: no more problems; wait for the backlog while
			// deliveries go on (the checks below say what is missing).
			progress, seen := time.Now(), 0
			for time.Since(progress) < 20*time.Second {
				var cnt string
				api.ok("event.get", map[string]any{"objectids": triggerIDs, "value": 1, "countOutput": true}, &cnt)
				n, _ := strconv.Atoi(cnt)
				d := delivered()
				if n > 0 && len(d) == n {
					break
				}
				if len(d) > seen {
					progress, seen = time.Now(), len(d)
				}
				time.Sleep(200 * time.Millisecond)
			}
		}
		var queued []struct {
			Queue struct{ Alerts, Escalations string }
		}
		api.ok("mediatype.get", map[string]any{"output": []string{"mediatypeid"}, "filter": map[string]string{"name": "Crash hook"}, "selectQueue": "extend"}, &queued)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		after := delivered()
		roundDups := repeats(after) - repeats(before)
		if roundDups > sessions {
			t.Fatalf("round %d: %d alerts delivered again, more than the %d in flight at a kill", round, roundDups, sessions)
		}
		dups += roundDups
		t.Logf("round %d: %d problems delivered, at the kill %s alerts queued and %s escalations waiting, %d delivered again (in flight at the last kill)",
			round, len(after), queued[0].Queue.Alerts, queued[0].Queue.Escalations, roundDups)
	}

	// The last run's store, read by a fresh server: one alert per
	// problem, each sent.
	cmd := exec.Command(bin, "serve", "-config", cfgPath)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(syscall.SIGKILL); cmd.Wait() }()
	addrs := waitAddrs(t, stderr)
	go io.Copy(io.Discard, stderr)
	api.url = "http://" + addrs["http"] + "/api_jsonrpc.php"
	var problems []struct{ EventID string }
	api.ok("event.get", map[string]any{"objectids": triggerIDs, "value": 1, "output": []string{"eventid"}}, &problems)
	var alerts []struct{ AlertID, EventID, Status string }
	api.ok("alert.get", map[string]any{"objectids": triggerIDs, "output": []string{"alertid", "eventid", "status"}}, &alerts)
	perEvent := map[string]int{}
	var notSent []string
	for _, a := range alerts {
		perEvent[a.EventID]++
		if a.Status != "1" {
			notSent = append(notSent, a.AlertID+" status "+a.Status)
		}
	}
	final := delivered()
	var notOne, lost []string
	for _, p := range problems {
		if perEvent[p.EventID] != 1 {
			notOne = append(notOne, fmt.Sprintf("%s (%d)", p.EventID, perEvent[p.EventID]))
		}
		if final[p.EventID] == 0 {
			lost = append(lost, p.EventID)
		}
	}
	first := func(l []string) []string { return l[:min(len(l), 5)] }
	if len(notSent)+len(notOne)+len(lost) > 0 || len(alerts) != len(problems) {
		t.Fatalf("%d problems, %d alerts: %d alerts not sent (%v), %d problems without exactly one alert (%v), %d never received (%v)",
			len(problems), len(alerts), len(notSent), first(notSent), len(notOne), first(notOne), len(lost), first(lost))
	}
	t.Logf("%d problems across %d SIGKILLs: each has one alert, sent and received; %d deliveries were repeats of sends in flight at a kill", len(problems), kills, dups)
}
