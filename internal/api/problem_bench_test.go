package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/trigger"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// BenchmarkProblemGet answers problem.get through the API handler (no
// network) with 1,000 and 100,000 open problems, as Grafana's problems
// panel asks for them: everything, with tags and acknowledgements, newest
// first. 1,000 triggers each hold open/1000 problems ("multiple problem
// events"), so the 100,000 case needs no 100,000-trigger catalog; the
// per-problem work (permission via its trigger, object, tags) is the
// same. hosts-limit1000 is the storm's request: hostids of every host
// and limit 1,000, newest first; severity-count and severity-first60 are
// the web UI's severity filter (its count and first page).
//
//	go test -run '^$' -bench BenchmarkProblemGet -benchtime 20x -count 6 ./internal/api/
func BenchmarkProblemGet(b *testing.B) {
	const triggers = 1000
	dir := b.TempDir()
	cat, err := catalog.Open(context.Background(), catalog.Options{Path: filepath.Join(dir, "catalog.db"), ExprRefs: trigger.ItemRefs})
	if err != nil {
		b.Fatal(err)
	}
	defer cat.Close()
	spec := catalog.Spec{}
	for h := range 10 {
		hs := catalog.HostSpec{Host: fmt.Sprintf("host-%d", h), Groups: []string{"G"}}
		for i := range triggers / 10 {
			hs.Items = append(hs.Items, catalog.ItemSpec{Key: fmt.Sprintf("load[%d]", i)})
			hs.Triggers = append(hs.Triggers, catalog.TriggerSpec{Name: fmt.Sprintf("Load %d on {HOST.NAME}", i),
				Expression: fmt.Sprintf("last(/host-%d/load[%d])>1", h, i), Priority: "HIGH", Type: "MULTIPLE",
				Tags: []catalog.TagSpec{{Tag: "service", Value: "web"}, {Tag: "scope", Value: "capacity"}}})
		}
		spec.Hosts = append(spec.Hosts, hs)
	}
	if _, err := cat.Apply(context.Background(), spec); err != nil {
		b.Fatal(err)
	}
	trigs := cat.Snapshot().Triggers()
	for _, open := range []int{1000, 100_000} {
		b.Run(fmt.Sprintf("open=%d", open), func(b *testing.B) {
			st, err := event.Open(event.Options{Dir: filepath.Join(b.TempDir(), "events"), Sync: wal.SyncNever})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			m, err := trigger.New(trigger.Options{Store: st})
			if err != nil {
				b.Fatal(err)
			}
			results := make([]trigger.Result, 0, triggers)
			for round := range open / triggers {
				results = results[:0]
				for i := range trigs {
					results = append(results, trigger.Result{TriggerID: trigs[i].ID, Value: trigger.Problem, Clock: 1700000000 + int64(round)})
				}
				if _, err := m.Process(cat.Snapshot(), results); err != nil {
					b.Fatal(err)
				}
			}
			if n := len(st.OpenProblems()); n != open {
				b.Fatalf("%d open problems, want %d", n, open)
			}
			api := New(Options{Catalog: cat, History: memstore.New(), Events: st, TriggerStates: m,
				Auth: &fakeAuth{sessions: map[string]User{"super": {ID: 1, Username: "Admin", Role: RoleSuperAdmin}}}})
			h := api.Handler()
			var hostids []string
			for _, h := range cat.Snapshot().Hosts() {
				hostids = append(hostids, fmt.Sprintf("%q", fmt.Sprint(h.ID)))
			}
			const extend = `"output":"extend","selectAcknowledges":"extend","selectTags":"extend","sortfield":["eventid"],"sortorder":"DESC",`
			for _, q := range []struct{ name, params, want string }{
				{"all", extend + `"recent":true`, `[{`},
				// The storm's request: the hosts named, the newest 1,000.
				{"hosts-limit1000", extend + `"hostids":[` + strings.Join(hostids, ",") + `],"limit":1000`, `[{`},
				// The web UI's severity filter: its count, and its first
				// page (the newest 60 with tags).
				{"severity-count", `"countOutput":true,"severities":[4]`, `"`},
				{"severity-first60", `"output":"extend","selectTags":"extend","severities":[4],"sortfield":["eventid"],"sortorder":"DESC","limit":60`, `[{`},
			} {
				b.Run(q.name, func(b *testing.B) {
					body := `{"jsonrpc":"2.0","method":"problem.get","params":{` + q.params + `},"id":1,"auth":"super"}`
					b.ReportAllocs()
					b.ResetTimer()
					for range b.N {
						rec := httptest.NewRecorder()
						h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/api_jsonrpc.php", strings.NewReader(body)))
						if rec.Code != 200 || !strings.HasPrefix(rec.Body.String(), `{"jsonrpc":"2.0","result":`+q.want) {
							b.Fatalf("problem.get: %d %.200s", rec.Code, rec.Body.String())
						}
					}
				})
			}
		})
	}
}

// BenchmarkProblemGetStorm answers the requests `peregrine bench storm`
// makes at its peak, 100,000 triggers on 100 hosts of 1,000 items, each
// with one open problem: the count it polls every 50 ms while the storm
// fires and recovers (hostids of every host, countOutput), and the
// newest 1,000 with tags and acknowledgements. The poll shares the
// server's core with evaluation during the measured window, so its cost
// delays the problems it waits for.
//
//	go test -run '^$' -bench BenchmarkProblemGetStorm -benchtime 20x ./internal/api/
func BenchmarkProblemGetStorm(b *testing.B) {
	const hosts, perHost = 100, 1000
	dir := b.TempDir()
	cat, err := catalog.Open(context.Background(), catalog.Options{Path: filepath.Join(dir, "catalog.db"), ExprRefs: trigger.ItemRefs})
	if err != nil {
		b.Fatal(err)
	}
	defer cat.Close()
	spec := catalog.Spec{}
	for h := range hosts {
		hs := catalog.HostSpec{Host: fmt.Sprintf("host-%d", h), Groups: []string{"G"}}
		for i := range perHost {
			hs.Items = append(hs.Items, catalog.ItemSpec{Key: fmt.Sprintf("k[%d]", i)})
			hs.Triggers = append(hs.Triggers, catalog.TriggerSpec{Name: fmt.Sprintf("storm host-%d k[%d]", h, i),
				Expression: fmt.Sprintf("last(/host-%d/k[%d])>0", h, i)})
		}
		spec.Hosts = append(spec.Hosts, hs)
	}
	if _, err := cat.Apply(context.Background(), spec); err != nil {
		b.Fatal(err)
	}
	snap := cat.Snapshot()
	st, err := event.Open(event.Options{Dir: filepath.Join(dir, "events"), Sync: wal.SyncNever})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	m, err := trigger.New(trigger.Options{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	trigs := snap.Triggers()
	results := make([]trigger.Result, len(trigs))
	for i := range trigs {
		results[i] = trigger.Result{TriggerID: trigs[i].ID, Value: trigger.Problem, Clock: 1700000000}
	}
	if _, err := m.Process(snap, results); err != nil {
		b.Fatal(err)
	}
	api := New(Options{Catalog: cat, History: memstore.New(), Events: st, TriggerStates: m,
		Auth: &fakeAuth{sessions: map[string]User{"super": {ID: 1, Username: "Admin", Role: RoleSuperAdmin}}}})
	h := api.Handler()
	var hostids []string
	for _, h := range snap.Hosts() {
		hostids = append(hostids, fmt.Sprintf("%q", fmt.Sprint(h.ID)))
	}
	hs := `"hostids":[` + strings.Join(hostids, ",") + `]`
	for _, q := range []struct{ name, params, want string }{
		{"count", hs + `,"countOutput":true`, `{"jsonrpc":"2.0","result":"100000"`},
		{"limit1000", hs + `,"output":"extend","selectAcknowledges":"extend","selectTags":"extend","limit":1000,"sortfield":["eventid"],"sortorder":"DESC"`, `{"jsonrpc":"2.0","result":[{`},
	} {
		b.Run(q.name, func(b *testing.B) {
			body := `{"jsonrpc":"2.0","method":"problem.get","params":{` + q.params + `},"id":1,"auth":"super"}`
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/api_jsonrpc.php", strings.NewReader(body)))
				if rec.Code != 200 || !strings.HasPrefix(rec.Body.String(), q.want) {
					b.Fatalf("problem.get: %d %.200s", rec.Code, rec.Body.String())
				}
			}
		})
	}
}
