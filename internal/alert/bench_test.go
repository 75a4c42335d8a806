package alert

import (
	"context"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/wal"
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

// BenchmarkNotifyNoMatch measures what a storm's commits cost the
// engine when no action matches them (the storm bench's case, and the
// usual one for most events): Notify of 10,000-event batches of
// problems, then of their OK events, each followed by a pass. One op
// is one event; B/op is the engine's allocation per event. Run:
//
//	go test -run '^$' -bench BenchmarkNotifyNoMatch -benchtime 200000x -count 6 ./internal/alert/
func BenchmarkNotifyNoMatch(b *testing.B) {
	other := catalog.Action{Name: "db", Filter: catalog.Filter{Conditions: []catalog.Condition{
		{ConditionType: catalog.CondTag, Operator: catalog.OpEqual, Value: "db"}}},
		Operations: []catalog.Operation{{StepFrom: 1, StepTo: 1, DefaultMsg: 1, UserIDs: []uint64{1}}}}
	cfg := testConfig(other)
	e, err := New(Options{Dir: b.TempDir(), Sync: wal.SyncNever, Config: func() *catalog.AlertConfig { return cfg },
		Snapshot: func() *catalog.Snapshot { return nil }, Events: &fakeEvents{},
		Now: func() time.Time { return time.Unix(1_800_000_000, 0) }})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	const batch = 10_000
	var batches []*event.Batch
	for i := 0; i < b.N; i += batch {
		n := min(batch, b.N-i)
		pb, ob := &event.Batch{Events: make([]event.Event, 0, n/2+1)}, &event.Batch{Events: make([]event.Event, 0, n/2+1)}
		for j := i; j < i+n; j += 2 {
			pid := uint64(j + 1)
			pb.Events = append(pb.Events, problem(pid, 4, "CPU high", event.Tag{Tag: "service", Value: "web"}))
			ob.Events = append(ob.Events, event.Event{ID: pid + 1, ObjectID: 100 + pid, Value: event.ValueOK, Resolves: []uint64{pid}})
		}
		batches = append(batches, pb, ob)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for _, bt := range batches {
		e.Notify(bt)
		e.pass()
	}
	b.StopTimer()
	if n := len(e.escs); n != 0 {
		b.Fatalf("%d escalations started, want none", n)
	}
}

// BenchmarkDeliver measures the delivery path per alert: the attempt's
// "send started" record, the sender (a no-op here), and the outcome
// record, with fsync policy SyncBatch (concurrent sends share fsyncs,
// the WAL's group commit) and 100 sessions. One op is one alert. Run:
//
//	go test -run '^$' -bench BenchmarkDeliver -benchtime 20000x -count 6 ./internal/alert/
func BenchmarkDeliver(b *testing.B) {
	cfg := testConfig(catalog.Action{Name: "a"})
	cfg.MediaTypes[1].MaxSessions = 100
	snd := &recSender{}
	e, err := New(Options{Dir: b.TempDir(), Sync: wal.SyncBatch, Config: func() *catalog.AlertConfig { return cfg },
		Snapshot: func() *catalog.Snapshot { return nil }, Events: &fakeEvents{}, QueueSize: 1 << 30, KeepAlerts: 1 << 30,
		Senders: map[int]Sender{catalog.MediaWebhook: snd}})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	recs := make([]record, 0, 1000)
	for i := 1; i <= b.N; i++ {
		recs = append(recs, record{Alert: &Alert{ID: uint64(i), ActionID: 1, EventID: 1, UserID: 1, MediaTypeID: 1, SendTo: "u1", Status: StatusNew}})
		if len(recs) == cap(recs) || i == b.N {
			if err := e.store.write(recs); err != nil {
				b.Fatal(err)
			}
			recs = recs[:0]
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	b.ResetTimer()
	start := time.Now()
	go func() { e.Run(ctx); close(done) }()
	for e.m.sent.Load() < uint64(b.N) {
		time.Sleep(time.Millisecond)
	}
	el := time.Since(start)
	b.StopTimer()
	cancel()
	<-done
	b.ReportMetric(float64(b.N)/el.Seconds(), "alerts/s")
}
