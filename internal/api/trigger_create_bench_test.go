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

// BenchmarkTriggerCreate: trigger.create of 1,000 triggers
// `last(/host/key)>0` (the storm's batch) per op, through the API handler,
// into a catalog of 100 hosts × 1,000 items that gains 1,000 triggers an
// op (up to 100 ops): expression parsing, one SQLite transaction and one
// snapshot.
//
//	go test -run '^$' -bench BenchmarkTriggerCreate -benchtime 20x ./internal/api/
func BenchmarkTriggerCreate(b *testing.B) {
	const hosts, per = 100, 1000
	dir := b.TempDir()
	cat, err := catalog.Open(context.Background(), catalog.Options{Path: filepath.Join(dir, "catalog.db"), ExprRefs: trigger.ItemRefs})
	if err != nil {
		b.Fatal(err)
	}
	defer cat.Close()
	spec := catalog.Spec{}
	for h := range hosts {
		hs := catalog.HostSpec{Host: fmt.Sprintf("host-%d", h), Groups: []string{"G"}}
		for i := range per {
			hs.Items = append(hs.Items, catalog.ItemSpec{Key: fmt.Sprintf("k[%d]", i)})
		}
		spec.Hosts = append(spec.Hosts, hs)
	}
	if _, err := cat.Apply(context.Background(), spec); err != nil {
		b.Fatal(err)
	}
	st, err := event.Open(event.Options{Dir: filepath.Join(dir, "events"), Sync: wal.SyncNever})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	m, err := trigger.New(trigger.Options{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	h := New(Options{Catalog: cat, History: memstore.New(), Events: st, TriggerStates: m, MaxBodyBytes: 64 << 20,
		Auth: &fakeAuth{sessions: map[string]User{"super": {ID: 1, Username: "Admin", Role: RoleSuperAdmin}}}}).Handler()
	if b.N > hosts {
		b.Fatalf("at most %d ops (one host's triggers each)", hosts)
	}
	bodies := make([]string, b.N)
	for op := range b.N {
		var sb strings.Builder
		for i := range per {
			if i > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `{"description":"storm host-%d k[%d]","expression":"last(/host-%d/k[%d])>0","priority":3}`, op, i, op, i)
		}
		bodies[op] = `{"jsonrpc":"2.0","method":"trigger.create","params":[` + sb.String() + `],"id":1,"auth":"super"}`
	}
	b.ResetTimer()
	for op := range b.N {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/api_jsonrpc.php", strings.NewReader(bodies[op])))
		if !strings.Contains(rec.Body.String(), `"triggerids"`) {
			b.Fatalf("trigger.create: %.300s", rec.Body.String())
		}
	}
	b.StopTimer()
	if n := len(cat.Snapshot().Triggers()); n != b.N*per {
		b.Fatalf("%d triggers, want %d", n, b.N*per)
	}
	b.ReportMetric(float64(per)*float64(b.N)/b.Elapsed().Seconds(), "triggers/s")
}
