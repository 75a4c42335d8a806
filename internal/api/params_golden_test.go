package api

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/alert"
	"github.com/peregrine-mon/peregrine/internal/api/zjson"
	"github.com/peregrine-mon/peregrine/internal/auth"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
	"github.com/peregrine-mon/peregrine/internal/trigger"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// The params golden files: testdata/params/<method>.golden hold requests
// of one method and the answers this tree gives them, one a line:
//
//	params <TAB> answer
//
// where the answer is "! <code> <data>" for an error (the message is the
// code's), "= <result>" for a result, or "? <answer>" whole when it is
// neither. Lines starting with # are comments. Each file is replayed in
// order against a fresh paramsFixture, so a create that succeeds is
// there for the requests after it. They pin how each method reads its
// parameters (wrong types, null, empty values, unknown members, members
// in the wrong case, errors inside nested objects, which of several
// errors is reported) so that a change to the params vocabulary shows
// every answer it changes:
//
//	go test -run TestParamsGolden ./internal/api/ -update
//
// rewrites the answers.

var updateGolden = flag.Bool("update", false, "rewrite the answers of testdata/params/*.golden")

// goldenAlerting serves the notification methods from the catalog.
type goldenAlerting struct{ c *catalog.Catalog }

func (a goldenAlerting) AlertConfig() *catalog.AlertConfig { return a.c.AlertConfig() }
func (a goldenAlerting) EditAlerts(ctx context.Context, fn func(*catalog.AlertConfig) error) error {
	return a.c.EditAlerts(ctx, fn)
}
func (a goldenAlerting) Alerts(func(*alert.Alert) bool) []alert.Alert { return nil }
func (a goldenAlerting) MinStepDuration() time.Duration               { return time.Minute }
func (a goldenAlerting) RunScript(_ context.Context, _ *catalog.GlobalScript, _ *catalog.Host, command string) (string, error) {
	return "ran " + command, nil
}

// goldenMask hides what changes from run to run: session IDs, tokens
// and the clocks of now.
var goldenMask = regexp.MustCompile(`[0-9a-f]{32,64}|\b1[78][0-9]{8}\b`)

// paramsFixture is a server with every family: two hosts with history
// (web-1 in Linux, db-1 in DB and Linux), three users (Admin, reader,
// writer; the session is Admin's), events, triggers, the notification
// configuration in the catalog, item states and a check-now sink.
type paramsFixture struct {
	do  func(body string) string
	sid string
	// fill puts the fixture's IDs into a request: {HID} web-1, {GID}
	// Linux, {IID} web-1's item a, {IFID} web-1's interface.
	fill *strings.Replacer
}

func newParamsFixture(t testing.TB) *paramsFixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	cat := catalogtest.Open(t, catalog.Spec{Hosts: []catalog.HostSpec{
		{Host: "web-1", Groups: []string{"Linux"}, Interfaces: []catalog.InterfaceSpec{{IP: "127.0.0.1"}},
			Items: []catalog.ItemSpec{{Key: "a", ValueType: "float"}, {Key: "b", ValueType: "unsigned"}, {Key: "s", ValueType: "character"}}},
		{Host: "db-1", Groups: []string{"DB", "Linux"}, Items: []catalog.ItemSpec{{Key: "a", ValueType: "float"}, {Key: "agent.ping", Type: "zabbix_agent", ValueType: "unsigned"}}},
	}})
	snap := cat.Snapshot()
	st := memstore.New()
	var vs []history.Sample
	for _, h := range snap.Hosts() {
		for _, it := range h.Items() {
			for i := range 5 {
				s := history.Sample{ItemID: it.ID, Clock: 1000 + int64(i), Type: history.Float, F: float64(i) / 4}
				switch it.ValueType {
				case history.Uint:
					s.Type, s.F, s.U = history.Uint, 0, uint64(i)
				case history.Str:
					s.Type, s.F, s.S = history.Str, 0, fmt.Sprint("v", i)
				}
				vs = append(vs, s)
			}
		}
	}
	st.Write(ctx, vs)
	store, err := auth.Open(ctx, auth.Options{Path: filepath.Join(dir, "auth.db"), FailDelay: -1, HashParams: auth.HashParams{Memory: 64, Time: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	for _, u := range []struct {
		name string
		role auth.Role
	}{{"Admin", auth.RoleSuperAdmin}, {"reader", auth.RoleUser}, {"writer", auth.RoleAdmin}} {
		if _, err := store.CreateUser(ctx, u.name, testPassword, u.role); err != nil {
			t.Fatal(err)
		}
	}
	// A fresh Peregrine's user groups (7 "Zabbix administrators", ...).
	if _, err := store.EnsureDefaults(ctx); err != nil {
		t.Fatal(err)
	}
	evs, err := event.Open(event.Options{Dir: filepath.Join(dir, "ev"), Sync: wal.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { evs.Close() })
	m, err := trigger.New(trigger.Options{Store: evs})
	if err != nil {
		t.Fatal(err)
	}
	rt := itemstate.New()
	api := New(Options{Catalog: cat, History: st, Trends: fakeTrends{}, Auth: store, Accounts: store, Ingest: &recordingPusher{cat: cat},
		Queue: &fakeQueue{}, Events: evs, TriggerStates: m, Alerting: goldenAlerting{cat}, States: rt, Availability: rt, CheckNow: &fakeCheckNow{}, MaxRows: 1000})
	handler := api.Handler()
	sid, _, err := store.Login(ctx, "Admin", testPassword)
	if err != nil {
		t.Fatal(err)
	}
	web := snap.Host("web-1")
	fill := strings.NewReplacer("{HID}", id(web.ID), "{GID}", id(snap.Group("Linux").ID), "{IID}", id(snap.Lookup("web-1", "a").ID),
		"{IFID}", id(web.Interfaces[0].ID))
	return &paramsFixture{sid: sid, fill: fill, do: func(body string) string {
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequest("POST", "/api_jsonrpc.php", strings.NewReader(body)))
		return goldenMask.ReplaceAllString(rec.Body.String(), "#")
	}}
}

// call is one request of method with params, as Admin (or without a
// session for the methods that take none).
func (f *paramsFixture) call(method, params string) string {
	authPart := `,"auth":"` + f.sid + `"`
	if method == "user.login" || method == "user.checkAuthentication" || method == "apiinfo.version" {
		authPart = ""
	}
	return f.do(`{"jsonrpc":"2.0","method":"` + method + `","params":` + params + `,"id":1` + authPart + `}`)
}

// goldenSeed is what the golden files' requests find: media types 1
// (email) and 2 (webhook), scripts 1 (for actions) and 2 (manual, host),
// action 1, value map 1 on web-1, maintenance 1.
var goldenSeed = [][2]string{
	{"mediatype.create", `{"name":"Email","type":0,"smtp_server":"mail.example.com","smtp_email":"zabbix@example.com"}`},
	{"mediatype.create", `{"name":"Hook","type":4,"script":"return 1","parameters":[{"name":"URL","value":"http://x"}],"message_templates":[{"eventsource":0,"recovery":0,"subject":"s","message":"m"}]}`},
	{"script.create", `{"name":"Ping","type":0,"command":"ping {HOST.CONN}","scope":1}`},
	{"script.create", `{"name":"Uptime","type":0,"command":"uptime","scope":2}`},
	{"action.create", `{"name":"Notify","eventsource":0,"filter":{"evaltype":0,"conditions":[{"conditiontype":4,"operator":5,"value":"2"}]},` +
		`"operations":[{"operationtype":0,"esc_step_from":1,"esc_step_to":2,"opmessage":{"default_msg":1,"mediatypeid":"1"},"opmessage_usr":[{"userid":"1"}]}],` +
		`"recovery_operations":[{"operationtype":11,"opmessage":{"default_msg":1}}]}`},
	{"valuemap.create", `{"hostid":"{HID}","name":"State","mappings":[{"value":"0","newvalue":"down"},{"value":"1","newvalue":"up"}]}`},
	{"maintenance.create", `{"name":"Night","active_since":1000,"active_till":2000,"groupids":["{GID}"],"timeperiods":[{"timeperiod_type":0,"period":3600}],"tags":[{"tag":"a","value":"b"}]}`},
}

func (f *paramsFixture) seed(t testing.TB) {
	t.Helper()
	for _, s := range goldenSeed {
		if got := f.call(s[0], f.fill.Replace(s[1])); !strings.Contains(got, `"result"`) {
			t.Fatalf("seed %s %s: %s", s[0], s[1], got)
		}
	}
}

// compactAnswer is an answer as a golden file holds it (see above).
func compactAnswer(ans string) string {
	line := "? " + ans
	if r, ok := strings.CutPrefix(ans, `{"jsonrpc":"2.0","result":`); ok {
		if r, ok := strings.CutSuffix(r, `,"id":1}`); ok {
			line = "= " + r
		}
	} else if r, ok := strings.CutPrefix(ans, `{"jsonrpc":"2.0","error":{"code":`); ok {
		code, rest, _ := strings.Cut(r, ",")
		if c, err := strconv.Atoi(code); err == nil {
			if data, ok := strings.CutPrefix(rest, `"message":`+string(zjson.AppendString(nil, codeMessages[c]))+`,"data":`); ok {
				if data, ok := strings.CutSuffix(data, `},"id":1}`); ok {
					if s, err := strconv.Unquote(data); err == nil && !strings.ContainsAny(s, "\t\n\r") {
						line = "! " + code + " " + s
					}
				}
			}
		}
	}
	if line[0] != '?' && expandAnswer(line) != ans {
		return "? " + ans
	}
	return line
}

// expandAnswer is the answer a golden file's line stands for.
func expandAnswer(line string) string {
	switch {
	case strings.HasPrefix(line, "= "):
		return `{"jsonrpc":"2.0","result":` + line[2:] + `,"id":1}`
	case strings.HasPrefix(line, "! "):
		code, data, _ := strings.Cut(line[2:], " ")
		c, _ := strconv.Atoi(code)
		return `{"jsonrpc":"2.0","error":{"code":` + code + `,"message":` + string(zjson.AppendString(nil, codeMessages[c])) +
			`,"data":` + string(zjson.AppendString(nil, data)) + `},"id":1}`
	}
	return strings.TrimPrefix(line, "? ")
}

func TestParamsGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "params", "*.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no testdata/params/*.golden")
	}
	for _, file := range files {
		method := strings.TrimSuffix(filepath.Base(file), ".golden")
		t.Run(method, func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			f := newParamsFixture(t)
			f.seed(t)
			var out bytes.Buffer
			sc := bufio.NewScanner(bytes.NewReader(b))
			sc.Buffer(make([]byte, 1<<16), 1<<22)
			for n := 1; sc.Scan(); n++ {
				line := sc.Text()
				if line == "" || line[0] == '#' {
					out.WriteString(line + "\n")
					continue
				}
				params, want, _ := strings.Cut(line, "\t")
				got := compactAnswer(f.call(method, f.fill.Replace(params)))
				if got != want && !*updateGolden {
					t.Errorf("%s:%d: %s %s\n got %s\nwant %s", file, n, method, params, got, want)
				}
				out.WriteString(params + "\t" + got + "\n")
			}
			if err := sc.Err(); err != nil {
				t.Fatal(err)
			}
			if *updateGolden {
				if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
