package calc

import (
	"context"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/poll/polltest"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// stuckReader is a history reader whose reads of one item block until
// their ctx ends: a remote store (ClickHouse) that stopped answering.
type stuckReader struct {
	history.Reader
	stuck uint64
}

func (r stuckReader) Read(ctx context.Context, q history.Query, fn func(*history.Sample) bool) error {
	if q.ItemID == r.stuck {
		<-ctx.Done()
		return ctx.Err()
	}
	return r.Reader.Read(ctx, q, fn)
}

// TestContract holds the calculated item checker to poll.Checker's
// contract over a store that answers for one item and hangs for
// another. It keeps no timeout of its own (Zabbix applies none to
// calculated items; the store's query timeout bounds a read), reads
// only local values (no flood), and answers a batch in order.
func TestContract(t *testing.T) {
	calc := func(key, formula string) catalog.ItemSpec {
		return catalog.ItemSpec{Key: key, Type: "calculated", Delay: "1m", Params: formula}
	}
	cat := catalogtest.Open(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "a", Groups: []string{"g"}, Items: []catalog.ItemSpec{
		{Key: "x"}, {Key: "stuck"},
		calc("last", "last(//x)"), calc("avg", "avg(//x,1h)*2"),
		calc("hang.last", "last(//stuck)"), calc("hang.avg", "avg(//stuck,5m)+last(//x)"),
	}}}})
	snap := cat.Snapshot()
	store := memstore.New()
	now := time.Now().Unix()
	if err := store.Write(context.Background(), []history.Sample{
		{ItemID: snap.Lookup("a", "x").ID, Clock: now - 60, Type: history.Float, F: 1},
		{ItemID: snap.Lookup("a", "x").ID, Clock: now - 30, Type: history.Float, F: 2},
	}); err != nil {
		t.Fatal(err)
	}
	values := stuckReader{Reader: store, stuck: snap.Lookup("a", "stuck").ID}
	polltest.Run(t, func(t *testing.T) *polltest.Subject {
		c, err := New(Options{Snapshot: cat.Snapshot, Store: store, Values: values})
		if err != nil {
			t.Fatal(err)
		}
		check := func(key string) poll.Check {
			it := snap.Lookup("a", key)
			return poll.Check{ItemID: it.ID, HostID: it.HostID, Key: key, Timeout: 3 * time.Second, Due: time.Now()}
		}
		return &polltest.Subject{
			Checker: c,
			Answer:  []poll.Check{check("last"), check("avg")},
			Hang:    []poll.Check{check("hang.last"), check("hang.avg")},
			InOrder: true,
			Markers: []string{"calc.(*Checker)"},
		}
	})
}
