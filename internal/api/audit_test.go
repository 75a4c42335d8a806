package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/audit"
	"github.com/peregrine-mon/peregrine/internal/auth"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
	"github.com/peregrine-mon/peregrine/internal/trigger"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// auditFixture is a server with every family and an audit log, whose
// super admin "au-admin" makes the changes (the user the recording on
// Zabbix made them as).
type auditFixture struct {
	t     testing.TB
	api   *Server
	srv   *httptest.Server
	log   *audit.Log
	store *auth.Store
	sid   string
	me    uint64
}

func newAuditFixture(t testing.TB) *auditFixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	cat := catalogtest.Open(t, catalog.Spec{})
	store, err := auth.Open(ctx, auth.Options{Path: filepath.Join(dir, "auth.db"), FailDelay: -1, HashParams: auth.HashParams{Memory: 64, Time: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	me, err := store.CreateUser(ctx, "au-admin", "au-Secret-123", auth.RoleSuperAdmin)
	if err != nil {
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
	log, err := audit.Open(audit.Options{Dir: filepath.Join(dir, "audit"), Sync: wal.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	api := New(Options{Catalog: cat, History: memstore.New(), Auth: store, Accounts: store, Events: evs, TriggerStates: m,
		Alerting: goldenAlerting{cat}, Audit: log, Ingest: &recordingPusher{cat: cat}, Queue: &fakeQueue{}, CheckNow: &fakeCheckNow{}})
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	f := &auditFixture{t: t, api: api, srv: srv, log: log, store: store, me: me.ID}
	var sid string
	f.rpc(`{"jsonrpc":"2.0","method":"user.login","params":{"username":"au-admin","password":"au-Secret-123"},"id":1}`, &sid)
	f.sid = sid
	return f
}

// rpc posts body and decodes the result (or the batch's results) into
// out; it returns the raw response.
func (f *auditFixture) rpc(body string, out any) []byte {
	f.t.Helper()
	resp, err := http.Post(f.srv.URL, "application/json-rpc", strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	if out != nil {
		var r struct{ Result json.RawMessage }
		if json.Unmarshal(buf.Bytes(), &r) == nil && r.Result != nil {
			json.Unmarshal(r.Result, out)
		}
	}
	return buf.Bytes()
}

// auditStep is one step of testdata/audit/sequence.json.
type auditStep struct {
	Method string            `json:"method"`
	Params json.RawMessage   `json:"params"`
	Auth   json.RawMessage   `json:"auth"`
	Save   map[string]string `json:"save"`
	Batch  []auditStep       `json:"batch"`
}

// peerRecording is testdata/audit/peer.json, written by record.py.
type peerRecording struct {
	Saved map[string]any `json:"saved"`
	Steps []struct {
		Answer  json.RawMessage  `json:"answer"`
		Records []map[string]any `json:"records"`
	} `json:"steps"`
}

// save keeps the IDs a step's answer gives under the step's names.
func save(saved map[string]string, st auditStep, result json.RawMessage) {
	for name, path := range st.Save {
		var v any
		if json.Unmarshal(result, &v) != nil {
			continue
		}
		if path != "" {
			for p := range strings.SplitSeq(path, ".") {
				if i, err := strconv.Atoi(p); err == nil {
					l, _ := v.([]any)
					if i >= len(l) {
						v = nil
						break
					}
					v = l[i]
				} else {
					m, _ := v.(map[string]any)
					v = m[p]
				}
			}
		}
		if s, ok := v.(string); ok {
			saved[name] = s
		}
	}
}

func fill(saved map[string]string, b []byte) string {
	s := string(b)
	for k, v := range saved {
		s = strings.ReplaceAll(s, "{"+k+"}", v)
	}
	return s
}

// runAuditSequence plays sequence.json against the fixture and returns
// the records each step made, and the IDs saved.
func (f *auditFixture) runAuditSequence(steps []auditStep) ([][]map[string]any, map[string]string) {
	saved := map[string]string{"me": id(f.me)}
	seen := map[string]bool{}
	var before []map[string]any
	f.rpc(fmt.Sprintf(`{"jsonrpc":"2.0","method":"auditlog.get","params":{"output":["auditid"]},"auth":%q,"id":1}`, f.sid), &before)
	for _, r := range before {
		seen[r["auditid"].(string)] = true
	}
	var out [][]map[string]any
	for _, st := range steps {
		if st.Batch != nil {
			var calls []string
			for i, b := range st.Batch {
				calls = append(calls, fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":%s,"auth":%q,"id":%d}`, b.Method, fill(saved, b.Params), f.sid, i+1))
			}
			var res []struct{ Result json.RawMessage }
			json.Unmarshal(f.rpc("["+strings.Join(calls, ",")+"]", nil), &res)
			for i, b := range st.Batch {
				if i < len(res) {
					save(saved, b, res[i].Result)
				}
			}
		} else {
			auth := `,"auth":"` + f.sid + `"`
			if st.Auth != nil {
				var a any
				json.Unmarshal(st.Auth, &a)
				switch a := a.(type) {
				case bool:
					auth = ""
				case string:
					auth = `,"auth":"` + fill(saved, []byte(a)) + `"`
				}
			}
			var r struct{ Result json.RawMessage }
			json.Unmarshal(f.rpc(fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":%s%s,"id":1}`, st.Method, fill(saved, st.Params), auth), nil), &r)
			save(saved, st, r.Result)
		}
		var recs []map[string]any
		f.rpc(fmt.Sprintf(`{"jsonrpc":"2.0","method":"auditlog.get","params":{"output":"extend"},"auth":%q,"id":1}`, f.sid), &recs)
		var mine []map[string]any
		for _, r := range recs {
			if id := r["auditid"].(string); !seen[id] {
				seen[id] = true
				mine = append(mine, r)
			}
		}
		out = append(out, mine)
	}
	return out, saved
}

var (
	auditUUID  = regexp.MustCompile(`^[0-9a-f]{32}$`)
	auditIndex = regexp.MustCompile(`\[([0-9]+)\]`)
	// auditKinds are the kinds of IDs: by the member naming one in the
	// details, and by resource type.
	auditKinds = map[string]string{"groupid": "group", "usrgrpid": "usrgrp", "userid": "user", "hostid": "host",
		"mediatypeid": "mediatype", "globalmacroid": "globalmacro", "tokenid": "token", "actionid": "action",
		"scriptid": "script", "maintenanceid": "maintenance", "triggerid": "trigger", "itemid": "item", "valuemapid": "valuemap"}
	auditTypeKinds = map[string]string{"14": "group", "11": "usrgrp", "0": "user", "4": "host", "3": "mediatype", "29": "globalmacro",
		"45": "token", "5": "action", "25": "script", "27": "maintenance", "13": "trigger", "15": "item", "17": "valuemap"}
)

// auditNames names the IDs a run saved: kind, then ID, to its name.
func auditNames(saved map[string]string, steps []auditStep) map[string]map[string]string {
	kinds := map[string]string{"me": "user"}
	var walk func([]auditStep)
	walk = func(l []auditStep) {
		for _, st := range l {
			walk(st.Batch)
			for name, path := range st.Save {
				k, _, _ := strings.Cut(path, ".")
				kinds[name] = strings.TrimSuffix(k, "ids")
			}
		}
	}
	walk(steps)
	out := map[string]map[string]string{}
	for name, v := range saved {
		k := kinds[name]
		if out[k] == nil {
			out[k] = map[string]string{}
		}
		out[k][v] = "{" + name + "}"
	}
	return out
}

// normAudit makes a record comparable across servers: IDs named by the
// step that made them, nested objects' IDs by their order in the
// record, record sets by their order in the run, times and UUIDs gone.
func normAudit(r map[string]any, ids map[string]map[string]string, sets map[string]string) map[string]any {
	name := func(kind, v string) string {
		if n, ok := ids[kind][v]; ok {
			return n
		}
		return v
	}
	out := map[string]any{}
	for _, k := range []string{"action", "resourcetype", "resourcename", "username", "resource_cuid"} {
		out[k] = r[k]
	}
	out["resourceid"] = name(auditTypeKinds[r["resourcetype"].(string)], r["resourceid"].(string))
	if r["action"] == "7" {
		out["resourceid"] = name("host", r["resourceid"].(string))
	}
	out["userid"] = name("user", r["userid"].(string))
	set := r["recordsetid"].(string)
	if _, ok := sets[set]; !ok {
		sets[set] = "set" + strconv.Itoa(len(sets)+1)
	}
	out["recordset"] = sets[set]
	d := r["details"].(string)
	if d == "" {
		out["details"] = ""
		return out
	}
	v, err := parseOrdered([]byte(d))
	if err != nil {
		out["details"] = "unreadable: " + d
		return out
	}
	// Nested objects are numbered per list, in order of appearance.
	idx := map[string]map[string]string{}
	var lines []string
	for _, fd := range v.(jobj) {
		var kb strings.Builder
		rest := fd.k
		for {
			loc := auditIndex.FindStringSubmatchIndex(rest)
			if loc == nil {
				kb.WriteString(rest)
				break
			}
			kb.WriteString(rest[:loc[0]])
			list := auditIndex.ReplaceAllString(kb.String(), "")
			n := rest[loc[2]:loc[3]]
			if idx[list] == nil {
				idx[list] = map[string]string{}
			}
			if _, ok := idx[list][n]; !ok {
				idx[list][n] = "#" + strconv.Itoa(len(idx[list])+1)
			}
			kb.WriteString("[" + idx[list][n] + "]")
			rest = rest[loc[1]:]
		}
		key := kb.String()
		vals, _ := fd.v.([]any)
		last := key[strings.LastIndexByte(key, '.')+1:]
		parent := key[:max(strings.LastIndexByte(key, '.'), 0)]
		var parts []string
		for i, x := range vals {
			s, isStr := x.(string)
			if !isStr {
				s = "num:" + phpString(x)
			}
			kind, isID := auditKinds[last]
			switch {
			case i == 0:
			case auditUUID.MatchString(s):
				s = "UUID"
			case last == "id" && strings.HasSuffix(parent, "]") && strings.Contains(parent, ".rights["):
				s = name("group", s)
			case strings.HasSuffix(parent, "]") && strings.HasSuffix(last, "id") && !isID, last == "id" && strings.HasSuffix(parent, "]"):
				s = "nested-id" // a nested object's own ID
			case isID:
				s = name(kind, s)
			}
			parts = append(parts, s)
		}
		lines = append(lines, key+" = "+strings.Join(parts, " | "))
	}
	out["details"] = lines
	return out
}

// auditMayLack are the details Zabbix 6.0.14 records that Peregrine's
// records may lack, by path (nested objects' IDs left out), each with
// its reason: members Peregrine does not store have nothing to record.
var auditMayLack = map[string]string{
	"hostgroup.uuid":   "Peregrine's host groups have no UUID",
	"host.description": "Peregrine does not store a host's description yet",
	"user.name":        "Peregrine does not store a user's name yet",
	"user.surname":     "Peregrine does not store a user's surname yet",
}

// dropMayLack removes from want the lines auditMayLack allows that have
// lacks.
func dropMayLack(want, have map[string]any) {
	wl, ok1 := want["details"].([]string)
	hl, _ := have["details"].([]string)
	if !ok1 {
		return
	}
	var kept []string
	for _, l := range wl {
		path, _, _ := strings.Cut(l, " = ")
		if _, ok := auditMayLack[auditIndex.ReplaceAllString(path, "")]; ok && !slices.Contains(hl, l) {
			continue
		}
		kept = append(kept, l)
	}
	want["details"] = kept
	if len(kept) == 0 {
		want["details"] = ""
	}
}

// TestAuditLogAsZabbix replays testdata/audit/sequence.json against
// Peregrine and compares what it records with what Zabbix 6.0.14
// recorded for the same steps (testdata/audit/peer.json, written by
// record.py against the peer): the same records, in the same order and
// record sets, with the same details, after IDs, times and UUIDs are
// named alike.
func TestAuditLogAsZabbix(t *testing.T) {
	var steps []auditStep
	b, err := os.ReadFile("testdata/audit/sequence.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &steps); err != nil {
		t.Fatal(err)
	}
	var peer peerRecording
	b, err = os.ReadFile("testdata/audit/peer.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &peer); err != nil {
		t.Fatal(err)
	}
	if len(peer.Steps) != len(steps) {
		t.Fatalf("peer.json has %d steps, sequence.json %d: record again (record.py)", len(peer.Steps), len(steps))
	}
	f := newAuditFixture(t)
	got, saved := f.runAuditSequence(steps)
	peerSaved := map[string]string{}
	for k, v := range peer.Saved {
		if s, ok := v.(string); ok {
			peerSaved[k] = s
		}
	}
	peerIDs, ourIDs := auditNames(peerSaved, steps), auditNames(saved, steps)
	peerSets, ourSets := map[string]string{}, map[string]string{}
	for i, st := range steps {
		var want, have []map[string]any
		for _, r := range peer.Steps[i].Records {
			want = append(want, normAudit(r, peerIDs, peerSets))
		}
		for _, r := range got[i] {
			have = append(have, normAudit(r, ourIDs, ourSets))
		}
		for j := range min(len(want), len(have)) {
			dropMayLack(want[j], have[j])
		}
		if diff := cmp.Diff(want, have); diff != "" {
			t.Errorf("step %d (%s %s): records differ (-zabbix +peregrine):\n%s", i, st.Method, st.Params, diff)
		}
	}
}
