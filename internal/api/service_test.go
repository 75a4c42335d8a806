package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/service"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// serviceEvents is an event store's open problems for the engine.
type serviceEvents struct {
	mu   sync.Mutex
	open []event.Event
}

func (f *serviceEvents) OpenProblems() []event.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.open)
}

// serviceFixture is an API with services: session "admin" is a super
// admin, "user" a user of the User type.
type serviceFixture struct {
	api    *Server
	engine *service.Engine
}

func newServiceFixture(t *testing.T, ev *serviceEvents, now func() time.Time) *serviceFixture {
	t.Helper()
	if ev == nil {
		ev = &serviceEvents{}
	}
	e, err := service.Open(context.Background(), service.Options{Path: filepath.Join(t.TempDir(), "services.db"), Events: ev, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	cat := catalogtest.Open(t, catalog.Spec{})
	api := New(Options{Catalog: cat, Services: e, Auth: &fakeAuth{sessions: map[string]User{
		"admin": {ID: 1, Username: "Admin", Role: RoleSuperAdmin},
		"user":  {ID: 7, Username: "sv-user", Role: RoleUser},
	}}})
	return &serviceFixture{api: api, engine: e}
}

// call sends one request and returns the response's result or error.
func (f *serviceFixture) call(t *testing.T, session, method string, params []byte) json.RawMessage {
	t.Helper()
	body := `{"jsonrpc":"2.0","method":"` + method + `","params":` + string(params) + `,"auth":"` + session + `","id":1}`
	w := httptest.NewRecorder()
	r := httptest.NewRequest("POST", "/api_jsonrpc.php", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json-rpc")
	f.api.Handler().ServeHTTP(w, r)
	var resp struct {
		Result json.RawMessage
		Error  json.RawMessage
	}
	if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
		t.Fatalf("%s: %v: %s", method, err, w.Body.String())
	}
	if resp.Error != nil {
		return json.RawMessage(`{"error":` + string(resp.Error) + `}`)
	}
	return json.RawMessage(`{"result":` + string(resp.Result) + `}`)
}

// goldenLine is one request of a recorded scenario and Zabbix 6.0.14's
// answer (testdata/service/*.jsonl, written by record.py against the
// peer). "$x" in params is the ID the create bound to x; "$#x" the same
// as a number. Answers have the IDs replaced back, uuid and created_at
// masked.
type goldenLine struct {
	Method string
	Params json.RawMessage
	User   string
	Answer json.RawMessage
}

var placeholder = regexp.MustCompile(`"\$(#?)([a-z0-9]+)"`)

// TestServiceGolden replays the service.* and sla.* scenarios recorded
// from Zabbix 6.0.14 and expects its answers: results, and errors with
// their codes and texts. Lists the request does not sort are compared
// as sets (Zabbix returns them in its database's order), and so are
// parents, children and problem events.
func TestServiceGolden(t *testing.T) {
	for _, name := range []string{"service", "sla"} {
		t.Run(name, func(t *testing.T) {
			f := newServiceFixture(t, nil, nil)
			b, err := os.ReadFile("testdata/service/" + name + ".jsonl")
			if err != nil {
				t.Fatal(err)
			}
			// IDs by kind: services and SLAs count from 1 each.
			binds := map[string]map[string]string{"service": {}, "sla": {}}
			sc := bufio.NewScanner(bytes.NewReader(b))
			sc.Buffer(nil, 1<<20)
			for n := 1; sc.Scan(); n++ {
				var l goldenLine
				if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
					t.Fatal(err)
				}
				kind, _, _ := strings.Cut(l.Method, ".")
				lookup := func(name string) (string, bool) {
					for _, k := range []string{"service", "sla"} {
						if id, ok := binds[k][name]; ok {
							return id, true
						}
					}
					return "", false
				}
				params := placeholder.ReplaceAllFunc(l.Params, func(m []byte) []byte {
					g := placeholder.FindSubmatch(m)
					id, ok := lookup(string(g[2]))
					if !ok {
						return m
					}
					if len(g[1]) > 0 {
						return []byte(id)
					}
					return []byte(`"` + id + `"`)
				})
				session := "admin"
				if l.User != "" {
					session = "user"
				}
				got := f.call(t, session, l.Method, params)
				var want map[string]any
				json.Unmarshal(l.Answer, &want)
				var gotv map[string]any
				json.Unmarshal(got, &gotv)
				if bind := bindNames(l); bind != nil {
					if res, ok := gotv["result"].(map[string]any); ok {
						for _, v := range res {
							for i, idv := range v.([]any) {
								if i < len(bind) {
									binds[kind][bind[i]] = idv.(string)
								}
							}
						}
					}
				}
				rev := map[string]map[string]string{}
				for k, m := range binds {
					rev[k] = map[string]string{}
					for name, v := range m {
						rev[k][v] = "$" + name
					}
				}
				rev[""] = rev[kind]
				gotv = normGolden(gotv, rev).(map[string]any)
				sorted := bytes.Contains(l.Params, []byte(`"sortfield"`))
				canon(want, sorted)
				canon(gotv, sorted)
				if prefix := tzPrefix(want); prefix != "" {
					if d := errData(gotv); strings.HasPrefix(d, prefix) {
						continue
					}
				}
				wj, _ := json.Marshal(want)
				gj, _ := json.Marshal(gotv)
				if !bytes.Equal(wj, gj) {
					t.Errorf("line %d: %s %s\n got %s\nwant %s", n, l.Method, params, gj, wj)
				}
			}
		})
	}
}

// bindNames are the names a create line binds its IDs to: the
// placeholders its answer holds.
func bindNames(l goldenLine) []string {
	var a struct {
		Result map[string][]string
	}
	if json.Unmarshal(l.Answer, &a) != nil || len(a.Result) != 1 || !strings.HasSuffix(l.Method, ".create") {
		return nil
	}
	var out []string
	for _, v := range a.Result {
		for _, s := range v {
			out = append(out, strings.TrimPrefix(s, "$"))
		}
	}
	return out
}

var idInText = regexp.MustCompile(`\((\d+)\)`)

// normGolden puts the placeholders of rev (by kind: "service", "sla",
// and "" for the method's own) in place of IDs and masks uuid and
// created_at, as the recording did.
func normGolden(v any, rev map[string]map[string]string) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			kind := strings.TrimSuffix(strings.TrimSuffix(k, "ids"), "id")
			switch {
			case k == "uuid" || k == "created_at":
				out[k] = "*"
			case (k == "serviceid" || k == "slaid") && isString(e):
				out[k] = revID(rev[kind], e.(string))
			case k == "serviceids" || k == "slaids":
				l, _ := e.([]any)
				var ids []any
				for _, i := range l {
					if f, ok := i.(float64); ok {
						ids = append(ids, "#"+revID(rev[kind], strconv.FormatFloat(f, 'f', -1, 64)))
					} else {
						ids = append(ids, revID(rev[kind], i.(string)))
					}
				}
				out[k] = nonNilAny(ids)
			case k == "data" && isString(e):
				out[k] = idInText.ReplaceAllStringFunc(e.(string), func(m string) string { return "(" + revID(rev[""], m[1:len(m)-1]) + ")" })
			default:
				if r, ok := rev[""][k]; ok {
					k = r
				}
				out[k] = normGolden(e, rev)
			}
		}
		return out
	case []any:
		for i := range x {
			x[i] = normGolden(x[i], rev)
		}
	}
	return v
}

func nonNilAny(l []any) []any {
	if l == nil {
		return []any{}
	}
	return l
}

func isString(v any) bool { _, ok := v.(string); return ok }

func revID(rev map[string]string, id string) string {
	if r, ok := rev[id]; ok {
		return r
	}
	return id
}

// canon sorts what Zabbix does not order: the result list of a request
// without sortfield, and parents, children and problem events.
func canon(v map[string]any, sorted bool) {
	sortJSON := func(l []any) {
		slices.SortFunc(l, func(a, b any) int {
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			return bytes.Compare(ja, jb)
		})
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if l, ok := e.([]any); ok && (k == "parents" || k == "children" || k == "problem_events") {
					sortJSON(l)
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	if l, ok := v["result"].([]any); ok && !sorted {
		sortJSON(l)
	}
}

func errData(v map[string]any) string {
	e, _ := v["error"].(map[string]any)
	d, _ := e["data"].(string)
	return d
}

// tzPrefix: Zabbix lists every time zone of PHP's database in the error
// for an unknown one; Peregrine names the database instead (docs/api.md).
func tzPrefix(want map[string]any) string {
	d := errData(want)
	const list = `": value must be one of "system", `
	if i := strings.Index(d, list); i >= 0 && strings.Contains(d[:i], "/timezone") {
		return d[:i] + `": value must be one of "system"`
	}
	return ""
}
