package selfcheck

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// fixture is a checker over fake figures and a small catalog: host "a"
// monitored with a trapper, an agent item at 1m, an internal item at
// 30s, a disabled item at 10s; host "b" not monitored, one item at 10s.
type fixture struct {
	c        *Checker
	now      time.Time
	busy     map[string]*selfmon.Busy
	queueArg [2]int64
	snap     *catalog.Snapshot
}

func newFixture(t *testing.T) *fixture {
	cat := catalogtest.Open(t, catalog.Spec{Hosts: []catalog.HostSpec{
		{Host: "a", Groups: []string{"g"}, Interfaces: []catalog.InterfaceSpec{{IP: "127.0.0.1"}}, Items: []catalog.ItemSpec{
			{Key: "trap"},
			{Key: "agent.ping", Type: "zabbix_agent", Delay: "1m"},
			{Key: "zabbix[hosts]", Type: "internal", Delay: "30s"},
			{Key: "off", Type: "internal", Delay: "10s", Status: "disabled"},
		}},
		{Host: "b", Groups: []string{"g"}, Status: "disabled", Items: []catalog.ItemSpec{
			{Key: "zabbix[items]", Type: "internal", Delay: "10s"},
		}},
	}})
	f := &fixture{now: time.Unix(1_700_000_000, 0), busy: map[string]*selfmon.Busy{}, snap: cat.Snapshot()}
	for _, p := range Processes {
		f.busy[p] = &selfmon.Busy{Goroutines: 2}
	}
	agentID := f.snap.Lookup("a", "agent.ping").ID
	f.c = New(Options{
		Figures: Figures{
			ValuesWritten: func() [history.Text + 1]uint64 {
				return [history.Text + 1]uint64{history.Float: 10, history.Str: 20, history.Log: 30, history.Uint: 40, history.Text: 50}
			},
			NotSupportedTotal: func() uint64 { return 7 },
			QueueRange: func(from, to int64) int {
				f.queueArg = [2]int64{from, to}
				return 42
			},
			Snapshot: func() *catalog.Snapshot { return f.snap },
			CountNotSupported: func(keep func(uint64) bool) int {
				n := 0
				// The agent item and an item of no catalog are not supported.
				for _, id := range []uint64{agentID, 99999} {
					if keep(id) {
						n++
					}
				}
				return n
			},
			Busy: func(p string) (*selfmon.Busy, bool) {
				b, ok := f.busy[p]
				return b, ok
			},
			Started: time.Unix(1_700_000_000-3725, 0),
			Version: "1.2.3",
		},
		Now: func() time.Time { return f.now },
	})
	return f
}

func (f *fixture) answer(t *testing.T, item uint64, key string) *poll.Result {
	t.Helper()
	return f.c.Answer(&poll.Check{ItemID: item, HostID: 1, Key: key})
}

func TestKeys(t *testing.T) {
	f := newFixture(t)
	check := func(key, want, wantErr string) {
		t.Helper()
		r := f.answer(t, 1, key)
		if wantErr != "" {
			if r.Status != poll.NotSupported || r.Error != wantErr {
				t.Errorf("%s: status %v, value %q, error %q; want not supported with %q", key, r.Status, r.Value, r.Error, wantErr)
			}
			return
		}
		if r.Status != poll.OK || string(r.Value) != want {
			t.Errorf("%s: status %v, value %q, error %q; want %q", key, r.Status, r.Value, r.Error, want)
		}
		if !r.Clock.Equal(f.now) {
			t.Errorf("%s: clock %v; want %v", key, r.Clock, f.now)
		}
	}
	check("zabbix[wcache,values]", "150", "")
	check("zabbix[wcache,values,all]", "150", "")
	check("zabbix[wcache,values,float]", "10", "")
	check("zabbix[wcache,values,uint]", "40", "")
	check("zabbix[wcache,values,str]", "20", "")
	check("zabbix[wcache,values,log]", "30", "")
	check("zabbix[wcache,values,text]", "50", "")
	check("zabbix[wcache,values,not supported]", "7", "")
	check(`zabbix[wcache,values,"not supported"]`, "7", "")
	check("zabbix[wcache,values,bogus]", "", msgThirdParam)
	check("zabbix[wcache,history,pfree]", "", msgSecondParam)
	check("zabbix[wcache]", "", msgParamCount)
	check("zabbix[items]", "3", "")
	check("zabbix[items_unsupported]", "1", "")
	check("zabbix[hosts]", "1", "")
	check("zabbix[requiredperformance]", "0.050000", "")
	check("zabbix[uptime]", "3725", "")
	check("zabbix[boottime]", "1699996275", "")
	check("zabbix[version]", "1.2.3", "")
	check("zabbix[hosts,x]", "", msgParamCount)
	check("zabbix[triggers]", "", msgUnsupported)
	check("zabbix[host,,items]", "", msgUnsupported)
	check("zabbix", "", msgParamCount)
	check("agent.ping", "", msgWrongKey)
	check("zabbix[", "", msgWrongKey)
	check("zabbix[[a,b]]", "", "Invalid parameter #1: arrays are not accepted.")
	check("zabbix[process,nonesuch,avg,busy]", "", msgSecondParam)
	check("zabbix[process,poller,max,busy]", "", msgThirdParam)
	check("zabbix[process,poller,avg,sleeping]", "", msgFourthParam)
	check("zabbix[process,poller,avg,busy,x]", "", msgParamCount)
}

// zabbix[queue,<from>,<to>]: defaults 6 s and no bound; time suffixes.
func TestQueueKey(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		key      string
		from, to int64
		err      string
	}{
		{"zabbix[queue]", 6, 0, ""},
		{"zabbix[queue,,]", 6, 0, ""},
		{"zabbix[queue,10m]", 600, 0, ""},
		{"zabbix[queue,30,1h]", 30, 3600, ""},
		{"zabbix[queue,,5m]", 6, 300, ""},
		{"zabbix[queue,1d,2w]", 86400, 14 * 86400, ""},
		{"zabbix[queue,soon]", 0, 0, msgSecondParam},
		{"zabbix[queue,10m,5m]", 0, 0, msgThirdParam},
		{"zabbix[queue,10m,later]", 0, 0, msgThirdParam},
		{"zabbix[queue,1,2,3]", 0, 0, msgParamCount},
	} {
		f.queueArg = [2]int64{-1, -1}
		r := f.answer(t, 1, c.key)
		if c.err != "" {
			if r.Status != poll.NotSupported || r.Error != c.err {
				t.Errorf("%s: status %v error %q; want %q", c.key, r.Status, r.Error, c.err)
			}
			continue
		}
		if r.Status != poll.OK || string(r.Value) != "42" || f.queueArg != [2]int64{c.from, c.to} {
			t.Errorf("%s: status %v value %q error %q, asked for %v; want 42 from QueueRange(%d, %d)", c.key, r.Status, r.Value, r.Error, f.queueArg, c.from, c.to)
		}
	}
}

// zabbix[process,<type>,avg,busy]: the busy share of the stage's
// goroutines since the item's previous check (the first: since start),
// per item.
func TestProcessBusy(t *testing.T) {
	f := newFixture(t)
	f.c.opts.Started = f.now
	b := f.busy["pipeline shard"]
	key := "zabbix[process,pipeline shard,avg,busy]"
	step := func(item uint64, key string, wall, busy time.Duration, want string) {
		t.Helper()
		f.now = f.now.Add(wall)
		b.Add(busy)
		r := f.answer(t, item, key)
		if r.Status != poll.OK || string(r.Value) != want {
			t.Fatalf("%s (item %d) after %v with %v busy over 2 goroutines: %v %q %q; want %s", key, item, wall, busy, r.Status, r.Value, r.Error, want)
		}
	}
	step(1, key, 10*time.Second, 5*time.Second, "25.000000")
	step(1, key, 10*time.Second, 10*time.Second, "50.000000")
	// Another item of the same key has its own interval: since start.
	step(2, key, 0, 0, "37.500000")
	step(1, key, 10*time.Second, 0, "0.000000")
	step(1, "zabbix[process,pipeline shard,avg,idle]", 10*time.Second, 5*time.Second, "75.000000")
	// More busy time than wall time (a meter's goroutine count too low)
	// is capped at 100 %.
	step(1, key, 10*time.Second, time.Minute, "100.000000")
	// Each stage has its own meter; mode and state default to avg, busy.
	step(3, "zabbix[process,poller]", 0, 0, "0.000000")
	f.busy["trapper"].Add(30 * time.Second)
	step(4, "zabbix[process,trapper,avg,busy]", 0, 0, "30.000000") // 30 s over 50 s of 2
}

// Check reports every check of a batch through done, off the caller's
// goroutine.
func TestCheckReportsEveryCheck(t *testing.T) {
	f := newFixture(t)
	batch := []poll.Check{{ItemID: 1, Key: "zabbix[hosts]"}, {ItemID: 2, Key: "zabbix[nonesuch]"}, {ItemID: 3, Key: "zabbix[version]"}}
	got := make(chan *poll.Result, len(batch))
	f.c.Check(t.Context(), batch, func(r *poll.Result) { got <- r })
	seen := map[uint64]*poll.Result{}
	for range batch {
		r := <-got
		seen[r.ItemID] = r
	}
	if r := seen[1]; r == nil || r.Status != poll.OK || string(r.Value) != "1" {
		t.Errorf("zabbix[hosts]: %+v", r)
	}
	if r := seen[2]; r == nil || r.Status != poll.NotSupported || r.Error != msgUnsupported {
		t.Errorf("zabbix[nonesuch]: %+v", r)
	}
	if r := seen[3]; r == nil || r.Status != poll.OK || string(r.Value) != "1.2.3" {
		t.Errorf("zabbix[version]: %+v", r)
	}
}

// A nil figure makes its keys not supported rather than panicking.
func TestMissingFigures(t *testing.T) {
	c := New(Options{})
	for _, key := range []string{"zabbix[wcache,values]", "zabbix[wcache,values,not supported]", "zabbix[queue]", "zabbix[items]",
		"zabbix[items_unsupported]", "zabbix[hosts]", "zabbix[requiredperformance]", "zabbix[process,poller,avg,busy]"} {
		if r := c.Answer(&poll.Check{ItemID: 1, Key: key}); r.Status != poll.NotSupported || r.Error != msgUnsupported {
			t.Errorf("%s without figures: %v %q", key, r.Status, r.Error)
		}
	}
}

// A key that cannot be answered is logged once a minute, with context,
// however often it is checked.
func TestNotSupportedLoggedOnce(t *testing.T) {
	var buf bytes.Buffer
	c := New(Options{Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	for i := 0; i < 5; i++ {
		c.Answer(&poll.Check{ItemID: 77, Key: "zabbix[nonesuch]"})
	}
	c.Answer(&poll.Check{ItemID: 1, Key: "zabbix[uptime]"}) // answered: not logged
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "itemid=77") || !strings.Contains(lines[0], `key=zabbix[nonesuch]`) ||
		!strings.Contains(lines[0], `err="Internal check is not supported."`) {
		t.Fatalf("log:\n%s", buf.String())
	}
}

// TestProxyKeys: zabbix[proxy,<name>,lastaccess|delay], answered as
// 6.0.14 answers them (recorded from the peer).
func TestProxyKeys(t *testing.T) {
	cat := catalogtest.Open(t, catalog.Spec{})
	var pid uint64
	if _, err := cat.Edit(context.Background(), func(e *catalog.Edit) error {
		ids, err := e.CreateProxies([]catalog.Proxy{{Name: "px", Status: catalog.ProxyActive, TLS: catalog.DefaultHostTLS}})
		if err == nil {
			pid = ids[0]
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_700_000_100, 0)
	c := New(Options{Figures: Figures{Snapshot: cat.Snapshot, ProxyLastAccess: func(id uint64) int64 {
		if id == pid {
			return 1_700_000_000
		}
		return 0
	}}, Now: func() time.Time { return now }})
	for _, tc := range []struct{ key, want, err string }{
		{"zabbix[proxy,px,lastaccess]", "1700000000", ""},
		{"zabbix[proxy,px,delay]", "100", ""},
		{"zabbix[proxy,nosuch,lastaccess]", "", `Proxy "nosuch" does not exist.`},
		{"zabbix[proxy,px,xyz]", "", "Invalid third parameter."},
		{"zabbix[proxy,px]", "", "Invalid number of parameters."},
		{"zabbix[proxy_history]", "", "Invalid first parameter."},
	} {
		r := c.Answer(&poll.Check{ItemID: 1, Key: tc.key})
		if string(r.Value) != tc.want || r.Error != tc.err {
			t.Errorf("%s: %q %q, want %q %q", tc.key, r.Value, r.Error, tc.want, tc.err)
		}
	}
}
