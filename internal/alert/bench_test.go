package alert

import (
	"context"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/history/engine/wal"
)

// BenchmarkMatchEnqueue measures the engine's path from a committed
// problem event to a queued alert: matching against actions (one that
// matches, nine that do not), starting the escalation, making the alert
// (template and macro expansion), logging both (fsync policy
// SyncNever: the log's own cost is measured by the WAL's benchmarks)
// and queueing it. One op is one event. Run:
//
//	go test -run '^$' -bench BenchmarkMatchEnqueue -benchtime 20000x -count 6 ./internal/alert/
func BenchmarkMatchEnqueue(b *testing.B) {
	match := catalog.Action{Name: "match", Filter: catalog.Filter{Conditions: []catalog.Condition{
		{ConditionType: catalog.CondSeverity, Operator: catalog.OpGreaterEq, Value: "3"},
		{ConditionType: catalog.CondTagValue, Operator: catalog.OpEqual, Value2: "service", Value: "web"}}},
		Operations: []catalog.Operation{{StepFrom: 1, StepTo: 1, DefaultMsg: 1, UserIDs: []uint64{1}}}}
	cfg := testConfig(match)
	for i := uint64(2); i <= 10; i++ {
		a := match
		a.ID, a.Name = i, "other"
		a.Filter = catalog.Filter{Conditions: []catalog.Condition{{ConditionType: catalog.CondTag, Operator: catalog.OpEqual, Value: "db"}}}
		cfg.Actions[i] = &a
	}
	evs := &fakeEvents{}
	e, err := New(Options{Dir: b.TempDir(), Sync: wal.SyncNever, Config: func() *catalog.AlertConfig { return cfg },
		Snapshot: func() *catalog.Snapshot { return nil }, Events: evs, QueueSize: 1 << 30, KeepAlerts: 1 << 30,
		Now: func() time.Time { return time.Unix(1_800_000_000, 0) }, Senders: map[int]Sender{catalog.MediaWebhook: &recSender{block: make(chan struct{})}}})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.qMu.Lock()
	e.ctx = ctx // queues exist; Run's loop is not needed: pass is driven here
	e.qMu.Unlock()
	const batch = 1000
	batches := make([]*event.Batch, 0, b.N/batch+1)
	for i := 0; i < b.N; i += batch {
		bt := &event.Batch{}
		for j := i; j < min(i+batch, b.N); j++ {
			bt.Events = append(bt.Events, problem(uint64(j+1), 4, "CPU high", event.Tag{Tag: "service", Value: "web"}))
		}
		evs.put(bt.Events...)
		batches = append(batches, bt)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for _, bt := range batches {
		e.Notify(bt)
		e.pass()
	}
	el := time.Since(start)
	b.StopTimer()
	if got := e.m.queued.Load(); got != uint64(b.N) {
		b.Fatalf("queued %d alerts, want %d", got, b.N)
	}
	b.ReportMetric(float64(b.N)/el.Seconds(), "events/s")
	cancel()
	e.wg.Wait()
}
