package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/trigger"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// TestProblemSelectMatchesFullSort checks problem.get's ordered walk
// and host index against the full path (every matching problem copied,
// sorted, then cut; forced by a "filter" that keeps everything) and
// against problems counted by hand: 12 hosts in 3 groups, 20 triggers
// each with severities 0–4, every fifth trigger "multiple" with three
// problems, every seventh resolved (recent). One host's triggers are
// few enough for the host index, five hosts' are not, so both paths run;
// a few problems by ID are looked up one by one.
func TestProblemSelectMatchesFullSort(t *testing.T) {
	const hosts, perHost = 12, 20
	dir := t.TempDir()
	cat, err := catalog.Open(context.Background(), catalog.Options{Path: filepath.Join(dir, "catalog.db"), ExprRefs: trigger.ItemRefs})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	spec := catalog.Spec{}
	for h := range hosts {
		hs := catalog.HostSpec{Host: fmt.Sprintf("h%d", h), Groups: []string{fmt.Sprintf("G%d", h%3)}}
		for i := range perHost {
			hs.Items = append(hs.Items, catalog.ItemSpec{Key: fmt.Sprintf("k[%d]", i)})
			typ := ""
			if i%5 == 0 {
				typ = "MULTIPLE"
			}
			hs.Triggers = append(hs.Triggers, catalog.TriggerSpec{Name: fmt.Sprintf("t %d %d", h, i),
				Expression: fmt.Sprintf("last(/h%d/k[%d])>1", h, i), Priority: []string{"NOT_CLASSIFIED", "INFO", "WARNING", "AVERAGE", "HIGH"}[(h+i)%5], Type: typ})
		}
		spec.Hosts = append(spec.Hosts, hs)
	}
	if _, err := cat.Apply(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	snap := cat.Snapshot()
	st, err := event.Open(event.Options{Dir: filepath.Join(dir, "events"), Sync: wal.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, err := trigger.New(trigger.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	trigs := slices.Clone(snap.Triggers())
	// Interleave hosts so that event IDs do not follow hosts.
	slices.SortFunc(trigs, func(a, b catalog.Trigger) int { return int(a.ID%7) - int(b.ID%7) })
	for round := range 3 {
		var rs []trigger.Result
		for _, tr := range trigs {
			if round == 0 || tr.Multiple {
				rs = append(rs, trigger.Result{TriggerID: tr.ID, Value: trigger.Problem, Clock: now - 100 + int64(round)})
			}
		}
		if _, err := m.Process(snap, rs); err != nil {
			t.Fatal(err)
		}
	}
	var ok []trigger.Result
	for _, tr := range trigs {
		if tr.ID%7 == 0 {
			ok = append(ok, trigger.Result{TriggerID: tr.ID, Value: trigger.OK, Clock: now - 10})
		}
	}
	if _, err := m.Process(snap, ok); err != nil {
		t.Fatal(err)
	}

	api := New(Options{Catalog: cat, History: memstore.New(), Events: st, TriggerStates: m,
		Auth: &fakeAuth{sessions: map[string]User{"super": {ID: 1, Username: "Admin", Role: RoleSuperAdmin}}}})
	h := api.Handler()
	call := func(params string) json.RawMessage {
		t.Helper()
		body := `{"jsonrpc":"2.0","method":"problem.get","params":` + params + `,"id":1,"auth":"super"}`
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/api_jsonrpc.php", strings.NewReader(body)))
		var r struct {
			Result json.RawMessage
			Error  *rpcError
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil || r.Error != nil {
			t.Fatalf("problem.get %s: %v %+v %.300s", params, err, r.Error, rec.Body.String())
		}
		return r.Result
	}
	eventIDs := func(params string) []string {
		t.Helper()
		var objs []map[string]any
		if err := json.Unmarshal(call(params), &objs); err != nil {
			t.Fatal(err)
		}
		return fields(objs, "eventid")
	}
	hostID := func(i int) string { return strconv.FormatUint(snap.Host(fmt.Sprintf("h%d", i)).ID, 10) }
	groupID := func(i int) string { return strconv.FormatUint(snap.Group(fmt.Sprintf("G%d", i)).ID, 10) }
	trigOf := map[uint64]*catalog.Trigger{}
	for i := range trigs {
		trigOf[trigs[i].ID] = &trigs[i]
	}

	open := st.OpenProblems()
	var resolved uint64
	for _, e := range st.Events(func(e *event.Event) bool { return e.Value == event.ValueProblem && e.REventID != 0 }) {
		resolved = e.ID
	}
	if resolved == 0 {
		t.Fatal("no resolved problem")
	}
	idList := func(ids ...uint64) string {
		var out []string
		for _, id := range ids {
			out = append(out, strconv.FormatUint(id, 10))
		}
		return strings.Join(out, ",")
	}
	if len(open) < hosts*perHost*3/4 {
		t.Fatalf("%d open problems, want at least %d", len(open), hosts*perHost*3/4)
	}
	filters := []string{
		`"hostids":[` + hostID(3) + `]`, // host index
		`"hostids":[` + hostID(0) + `,` + hostID(1) + `,` + hostID(2) + `,` + hostID(5) + `,` + hostID(8) + `]`, // ordered walk
		`"groupids":[` + groupID(1) + `]`,
		`"severities":[3,4]`,
		`"hostids":[` + hostID(3) + `],"severities":[0,2]`,
		`"objectids":[` + strconv.FormatUint(trigs[0].ID, 10) + `,` + strconv.FormatUint(trigs[5].ID, 10) + `]`,
		`"time_from":` + strconv.FormatInt(now-99, 10),
		// A few by ID (looked up one by one): open ones, a duplicate,
		// a resolved one and one that does not exist.
		`"eventids":[` + idList(open[3].ID, open[10].ID, open[10].ID, resolved, 999999, open[len(open)-1].ID) + `]`,
		`"eventids":[` + idList(open[3].ID, open[10].ID, open[20].ID, open[30].ID) + `],"severities":[3,4]`,
	}
	for _, fl := range filters {
		for _, recent := range []string{"", `,"recent":true`} {
			for _, order := range []string{"", `,"sortfield":"eventid","sortorder":"DESC"`, `,"sortfield":["eventid"],"sortorder":"ASC"`} {
				for _, limit := range []string{"", `,"limit":0`, `,"limit":1`, `,"limit":7`, `,"limit":5000`} {
					params := `{"output":"extend",` + fl + recent + order + limit + `}`
					full := `{"output":"extend","filter":{"source":"0"},` + fl + recent + order + limit + `}`
					got, want := eventIDs(params), eventIDs(full)
					if !slices.Equal(got, want) {
						t.Errorf("problem.get %s:\n got %v\nwant %v (full sort)", params, got, want)
					}
					if limit == "" {
						var n string
						if err := json.Unmarshal(call(`{"countOutput":true,`+fl+recent+`}`), &n); err != nil || n != strconv.Itoa(len(want)) {
							t.Errorf("countOutput %s%s: %q (%v), want %d", fl, recent, n, err, len(want))
						}
					}
				}
			}
		}
	}

	// By hand: host 3's open problems of severity 0 or 2, newest first,
	// the first 4.
	h3 := snap.Host("h3").ID
	var want []string
	for i := len(open) - 1; i >= 0; i-- {
		e := &open[i]
		tr := trigOf[e.ObjectID]
		if slices.Contains(tr.HostIDs, h3) && (e.Severity == 0 || e.Severity == 2) {
			want = append(want, strconv.FormatUint(e.ID, 10))
		}
	}
	if len(want) < 5 {
		t.Fatalf("only %d problems for the hand check", len(want))
	}
	got := eventIDs(`{"hostids":[` + hostID(3) + `],"severities":[0,2],"sortfield":"eventid","sortorder":"DESC","limit":4}`)
	if !slices.Equal(got, want[:4]) {
		t.Errorf("host 3, severities 0 and 2, newest 4: %v, want %v", got, want[:4])
	}
}

// TestCandCache checks what the candidate cache answers: nothing for an
// unknown scope or another snapshot, the walk's triggers while they are
// within the limit, and "too many" for a limit no higher than one a walk
// gave up past.
func TestCandCache(t *testing.T) {
	s1, s2 := &catalog.Snapshot{}, &catalog.Snapshot{}
	var c candCache
	if _, _, known := c.get(s1, "a", 10); known {
		t.Fatal("empty cache knows scope a")
	}
	c.put(s1, "a", 10, []uint64{1, 2, 3}, true)
	c.put(s1, "b", 10, nil, false)
	for _, tc := range []struct {
		snap         *catalog.Snapshot
		key          string
		limit        int
		ok, known    bool
		wantIDsCount int
	}{
		{s1, "a", 10, true, true, 3},
		{s1, "a", 3, true, true, 3},
		{s1, "a", 2, false, true, 0},  // complete, but more than the limit
		{s1, "b", 10, false, true, 0}, // gave up past 10
		{s1, "b", 4, false, true, 0},
		{s1, "b", 11, false, false, 0}, // might fit a higher limit: walk again
		{s2, "a", 10, false, false, 0}, // another snapshot
	} {
		ids, ok, known := c.get(tc.snap, tc.key, tc.limit)
		if ok != tc.ok || known != tc.known || len(ids) != tc.wantIDsCount {
			t.Errorf("get(%s, limit %d) = %v %v %v, want %d ids, ok %v, known %v", tc.key, tc.limit, ids, ok, known, tc.wantIDsCount, tc.ok, tc.known)
		}
	}
	c.put(s2, "c", 10, []uint64{9}, true)
	if _, _, known := c.get(s1, "a", 10); known {
		t.Error("entries of an older snapshot survived a newer one's put")
	}
	for i := range maxCandScopes + 1 {
		c.put(s2, fmt.Sprint(i), 10, []uint64{1}, true)
	}
	if len(c.m) > maxCandScopes {
		t.Errorf("%d scopes remembered, bound %d", len(c.m), maxCandScopes)
	}
}

// TestProblemCandidatesFollowCatalog: problem.get's count over a host
// whose few triggers are read through the index (and remembered) counts
// a trigger added to the host afterwards: the remembered candidates
// belong to the snapshot they were walked in.
func TestProblemCandidatesFollowCatalog(t *testing.T) {
	dir := t.TempDir()
	cat, err := catalog.Open(context.Background(), catalog.Options{Path: filepath.Join(dir, "catalog.db"), ExprRefs: trigger.ItemRefs})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	mkSpec := func(small int) catalog.Spec {
		big := catalog.HostSpec{Host: "big", Groups: []string{"G"}}
		for i := range 40 {
			big.Items = append(big.Items, catalog.ItemSpec{Key: fmt.Sprintf("k[%d]", i)})
			big.Triggers = append(big.Triggers, catalog.TriggerSpec{Name: fmt.Sprintf("big %d", i), Expression: fmt.Sprintf("last(/big/k[%d])>1", i)})
		}
		sm := catalog.HostSpec{Host: "small", Groups: []string{"G"}}
		for i := range 3 {
			sm.Items = append(sm.Items, catalog.ItemSpec{Key: fmt.Sprintf("k[%d]", i)})
		}
		for i := range small {
			sm.Triggers = append(sm.Triggers, catalog.TriggerSpec{Name: fmt.Sprintf("small %d", i), Expression: fmt.Sprintf("last(/small/k[%d])>1", i)})
		}
		return catalog.Spec{Hosts: []catalog.HostSpec{big, sm}}
	}
	if _, err := cat.Apply(context.Background(), mkSpec(2)); err != nil {
		t.Fatal(err)
	}
	st, err := event.Open(event.Options{Dir: filepath.Join(dir, "events"), Sync: wal.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, err := trigger.New(trigger.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	fire := func() {
		t.Helper()
		snap := cat.Snapshot()
		var rs []trigger.Result
		for _, tr := range snap.Triggers() {
			rs = append(rs, trigger.Result{TriggerID: tr.ID, Value: trigger.Problem, Clock: 1_700_000_000})
		}
		if _, err := m.Process(snap, rs); err != nil {
			t.Fatal(err)
		}
	}
	fire()
	api := New(Options{Catalog: cat, History: memstore.New(), Events: st, TriggerStates: m,
		Auth: &fakeAuth{sessions: map[string]User{"super": {ID: 1, Username: "Admin", Role: RoleSuperAdmin}}}})
	h := api.Handler()
	count := func(host string) string {
		t.Helper()
		hid := cat.Snapshot().Host(host).ID
		body := fmt.Sprintf(`{"jsonrpc":"2.0","method":"problem.get","params":{"countOutput":true,"hostids":["%d"]},"id":1,"auth":"super"}`, hid)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/api_jsonrpc.php", strings.NewReader(body)))
		var r struct{ Result string }
		if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
			t.Fatalf("%v: %s", err, rec.Body.String())
		}
		return r.Result
	}
	for range 2 { // the second answer comes from the remembered walk
		if n := count("small"); n != "2" {
			t.Fatalf("small: %s open problems, want 2", n)
		}
		if n := count("big"); n != "40" {
			t.Fatalf("big: %s open problems, want 40", n)
		}
	}
	if _, err := cat.Apply(context.Background(), mkSpec(3)); err != nil {
		t.Fatal(err)
	}
	fire() // the new trigger's problem; the others are already open
	if n := count("small"); n != "3" {
		t.Fatalf("small after a trigger was added: %s open problems, want 3", n)
	}
}
