package poll_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/bench/sim/agentsim"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/historytest"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/poll/agent"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// TestPolledPreprocessing: a polled master's value reaches its dependent
// item through the shard's steps, and its failed check reaches the
// dependents too: one becomes not supported with the agent's message,
// one turns it into a value with "Check for not supported value". The
// poller leaves the state of items with steps to the shard.
func TestPolledPreprocessing(t *testing.T) {
	fleet, err := agentsim.Start(1, func(_ int, key string) agentsim.Reply {
		if key == "down" {
			return agentsim.NotSupported("Cannot obtain data.")
		}
		return agentsim.Reply{Value: `{"a":41}`}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	ip, port, _ := net.SplitHostPort(fleet.Addr(0))
	dep := func(key, master string, steps ...catalog.PreprocSpec) catalog.ItemSpec {
		return catalog.ItemSpec{Key: key, Type: "dependent", MasterItem: &catalog.MasterItemSpec{Key: master}, Preprocessing: steps}
	}
	cat := catalogtest.Open(t, catalog.Spec{Hosts: []catalog.HostSpec{{
		Host: "h", Groups: []string{"G"}, Interfaces: []catalog.InterfaceSpec{{Type: "agent", IP: ip, Port: port}},
		Items: []catalog.ItemSpec{
			{Key: "up", Type: "zabbix_agent", ValueType: "text", Delay: "1s"},
			dep("up.a", "up", catalog.PreprocSpec{Type: "JSONPATH", Parameters: []string{"$.a"}}, catalog.PreprocSpec{Type: "MULTIPLIER", Parameters: []string{"2"}}),
			{Key: "down", Type: "zabbix_agent", ValueType: "text", Delay: "1s"},
			dep("down.copy", "down"),
			dep("down.fallback", "down", catalog.PreprocSpec{Type: "CHECK_NOT_SUPPORTED", Parameters: []string{""}, ErrorHandler: "CUSTOM_VALUE", ErrorHandlerParams: "-1"}),
		},
	}}})
	store, rt := memstore.New(), itemstate.New()
	p, err := pipeline.New(pipeline.Options{Store: store, Catalog: cat.Snapshot, ItemStates: rt})
	if err != nil {
		t.Fatal(err)
	}
	go p.Run(context.Background())
	defer p.Stop()
	s, err := poll.New(poll.Options{
		Catalog: cat, ItemStates: rt,
		Submit:   func(v []history.Sample) error { return p.Submit(v, pipeline.NewTicket()) },
		Checkers: map[catalog.ItemType]poll.CheckerSpec{catalog.ZabbixAgent: {Checker: agent.New(agent.Options{})}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	snap := cat.Snapshot()
	read := func(key string) []history.Sample {
		return historytest.ReadAll(t, store, history.Query{ItemID: snap.Lookup("h", key).ID, From: 0, Till: 1 << 40})
	}
	waitFor(t, 20*time.Second, "values of up.a and down.fallback", func() bool {
		return len(read("up.a")) > 0 && len(read("down.fallback")) > 0
	})
	if v := read("up.a")[0]; v.F != 82 {
		t.Errorf("up.a = %v, want 82", v.F)
	}
	if v := read("down.fallback")[0]; v.F != -1 {
		t.Errorf("down.fallback = %v, want -1", v.F)
	}
	for _, key := range []string{"down", "down.copy"} {
		if st, _ := rt.ItemState(snap.Lookup("h", key).ID); !st.NotSupported || st.Error != "Cannot obtain data." {
			t.Errorf("%s state %+v", key, st)
		}
	}
	if n := len(read("down.copy")); n != 0 {
		t.Errorf("down.copy stored %d values", n)
	}
	for _, key := range []string{"up", "up.a", "down.fallback"} {
		if st, _ := rt.ItemState(snap.Lookup("h", key).ID); st.NotSupported {
			t.Errorf("%s state %+v", key, st)
		}
	}
}
