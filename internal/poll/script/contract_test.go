package script

import (
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/jsvm"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/poll/polltest"
)

// TestContract holds the script item checker to poll.Checker's contract
// with scripts run in the pool's worker processes: ones that return a
// value (one through HttpRequest to a peer on loopback), ones that loop
// and ones that wait on a request to a peer that never answers (they
// hang until ctx ends, or end at their timeout), and ones that return a
// value far larger than a value may be, which the worker refuses.
func TestContract(t *testing.T) {
	silent := polltest.SilentTCP(t)
	const maxValue = 64 << 10
	polltest.Run(t, func(t *testing.T) *polltest.Subject {
		f := newFixture(t,
			catalog.ItemSpec{Key: "a1", Params: "return 6 * 7;"},
			catalog.ItemSpec{Key: "a2", Params: "return JSON.parse(value).p;", Parameters: []catalog.ItemParam{{Name: "p", Value: "{$M}"}}},
			catalog.ItemSpec{Key: "h1", Params: "while (true) {}"},
			catalog.ItemSpec{Key: "h2", Params: "return new HttpRequest().get('http://" + silent + "/');"},
			catalog.ItemSpec{Key: "e1", Params: "while (true) {}"},
			catalog.ItemSpec{Key: "e2", Params: "return new HttpRequest().get('http://" + silent + "/');"},
			catalog.ItemSpec{Key: "f1", Params: "return 'x'.repeat(16 * 1024 * 1024);"},
			catalog.ItemSpec{Key: "f2", Params: "var s = 'y'; while (s.length < 4e6) s += s; return s;"},
		)
		check := func(key string) poll.Check { return f.check(t, key, 5*time.Second) }
		// More workers than hanging scripts: a full pool holds the other
		// checks by design.
		pool, err := jsvm.NewPool(jsvm.PoolOptions{Workers: 4, MemLimit: 128 << 20})
		if err != nil {
			t.Fatal(err)
		}
		c := New(Options{Item: f.item, JS: pool, MaxValueSize: maxValue})
		return &polltest.Subject{
			Checker:  c,
			Close:    func() { c.Close(); pool.Close() },
			Answer:   []poll.Check{check("a1"), check("a2")},
			Hang:     []poll.Check{check("h1"), check("h2")},
			Expire:   []poll.Check{check("e1"), check("e2")},
			Flood:    []poll.Check{check("f1"), check("f2")},
			MaxValue: maxValue,
			Markers:  []string{"script.(*Checker)"},
		}
	})
}
