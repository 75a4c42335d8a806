package calc

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/expr"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// fixture: host "a" with trapper items cpu (float), free and total
// (unsigned), name (character), off (disabled), and calculated items
// with formulas; hosts "b" (group g) and "d" (group g2) monitored with
// item x; host "c" not monitored.
type fixture struct {
	c    *Checker
	snap *catalog.Snapshot
	now  time.Time
}

func newFixture(t testing.TB) *fixture {
	calc := func(key, formula string) catalog.ItemSpec {
		return catalog.ItemSpec{Key: key, Type: "calculated", Delay: "1m", Params: formula}
	}
	cat := catalogtest.Open(t, catalog.Spec{Hosts: []catalog.HostSpec{
		{Host: "a", Groups: []string{"g"}, Items: []catalog.ItemSpec{
			{Key: "cpu"},
			{Key: "free", ValueType: "unsigned"},
			{Key: "total", ValueType: "unsigned"},
			{Key: "name", ValueType: "character"},
			{Key: "off", Status: "disabled"},
			calc("pused", "100-last(//free)/last(//total)*100"),
			calc("cpu.avg", "avg(/a/cpu,5m)"),
			calc("cross", "last(/b/x)+last(/{HOST.HOST}/cpu)"),
			calc("label", `concat(last(//name),"!")`),
			calc("limit", "last(//cpu)>{$LIMIT}"),
			calc("missing", "last(//nope)"),
			calc("disabled", "last(//off)"),
			calc("stopped", "last(/c/y)"),
			calc("nodata", "avg(//cpu,10s)"),
			calc("div", "last(//cpu)/(last(//free)-last(//free))"),
			calc("trend", "trendavg(//cpu,1h:now/h)"),
			{Key: "lat_bucket[0.5]"},
			{Key: "lat_bucket[+Inf]"},
			{Key: "lat_bucket[9]", Status: "disabled"},
			calc("p50", "bucket_percentile(//lat_bucket[*],5m,50)"),
			calc("buckets", "item_count(//lat_bucket[*])+item_count(/*/x)*10"),
			calc("filtered", `item_count(/*/x?[tag="t"])`),
			calc("grouped", `item_count(/*/x?[group="g2"])*10+item_count(/*/x?[group="g"])`),
			calc("allx", "sum(last_foreach(/*/x))+count(last_foreach(//lat_bucket[*]))"),
		}},
		{Host: "b", Groups: []string{"g"}, Items: []catalog.ItemSpec{{Key: "x"}}},
		{Host: "d", Groups: []string{"g2"}, Items: []catalog.ItemSpec{{Key: "x"}, {Key: "x2"}}},
		{Host: "c", Groups: []string{"g"}, Status: "disabled", Items: []catalog.ItemSpec{{Key: "y"}}},
	}})
	f := &fixture{snap: cat.Snapshot(), now: time.Unix(1_700_000_000, 0)}
	id := func(host, key string) uint64 { return f.snap.Lookup(host, key).ID }
	store := memstore.New()
	t0 := f.now.Unix()
	err := store.Write(context.Background(), []history.Sample{
		{ItemID: id("a", "cpu"), Clock: t0 - 120, Type: history.Float, F: 10},
		{ItemID: id("a", "cpu"), Clock: t0 - 60, Type: history.Float, F: 20},
		{ItemID: id("a", "cpu"), Clock: t0 - 30, Type: history.Float, F: 60},
		{ItemID: id("a", "free"), Clock: t0 - 10, Type: history.Uint, U: 25},
		{ItemID: id("a", "total"), Clock: t0 - 10, Type: history.Uint, U: 100},
		{ItemID: id("a", "name"), Clock: t0 - 10, Type: history.Str, S: "db"},
		{ItemID: id("b", "x"), Clock: t0 - 5, Type: history.Float, F: 1.5},
		// 100 observations in the period, 40 of them <= 0.5.
		{ItemID: id("a", "lat_bucket[0.5]"), Clock: t0 - 200, Type: history.Float, F: 0},
		{ItemID: id("a", "lat_bucket[0.5]"), Clock: t0, Type: history.Float, F: 40},
		{ItemID: id("a", "lat_bucket[+Inf]"), Clock: t0 - 200, Type: history.Float, F: 0},
		{ItemID: id("a", "lat_bucket[+Inf]"), Clock: t0, Type: history.Float, F: 100},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.c, err = New(Options{
		Snapshot: func() *catalog.Snapshot { return f.snap },
		Store:    store,
		Macros: func(uint64) expr.Macros {
			return expr.MacroLevels{{{Name: "LIMIT", Value: "50"}}}
		},
		Location: time.UTC,
		Now:      func() time.Time { return f.now },
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) answer(t *testing.T, key string) *poll.Result {
	t.Helper()
	it := f.snap.Lookup("a", key)
	if it == nil {
		t.Fatalf("no item a/%s", key)
	}
	return f.c.Answer(context.Background(), f.snap, &poll.Check{ItemID: it.ID, HostID: it.HostID, Key: key})
}

func TestAnswerValues(t *testing.T) {
	f := newFixture(t)
	for key, want := range map[string]string{
		"pused":   "75",
		"cpu.avg": "30",
		"cross":   "61.5",
		"label":   "db!",
		"limit":   "1",
		// 50 % falls in the +Inf bucket: the bound below it.
		"p50": "0.5",
		// Two enabled buckets; x on hosts b and d (c is not monitored).
		"buckets": "22",
		// x of b (1.5; x of d has no data) plus the two buckets with values.
		"allx": "3.5",
		// x on d in g2; x on b in g.
		"grouped": "11",
	} {
		r := f.answer(t, key)
		if r.Status != poll.OK || string(r.Value) != want {
			t.Errorf("%s: status %v value %q error %q, want OK %q", key, r.Status, r.Value, r.Error, want)
		}
		if !r.Clock.Equal(f.now) {
			t.Errorf("%s: clock %v, want the evaluation time %v", key, r.Clock, f.now)
		}
	}
}

// TestAnswerNotSupported: an unknown result makes the item not
// supported with the reason.
func TestAnswerNotSupported(t *testing.T) {
	f := newFixture(t)
	for key, want := range map[string]string{
		"missing":  `item "/a/nope" does not exist`,
		"disabled": `item "/a/off" is disabled`,
		"stopped":  `host "c" is not monitored`,
		"nodata":   "no data in the evaluation period",
		"div":      "division by zero",
		"trend":    "the history store keeps no trends",
		"filtered": "item filters on tags (?[tag=\"t\"]) are not supported yet",
	} {
		r := f.answer(t, key)
		if r.Status != poll.NotSupported || !strings.Contains(r.Error, want) || r.Value != nil {
			t.Errorf("%s: status %v value %q error %q, want not supported with %q", key, r.Status, r.Value, r.Error, want)
		}
	}
}

// TestCheckReportsEveryItem runs a batch through Check, the scheduler's
// entry point, and waits for every result.
func TestCheckReportsEveryItem(t *testing.T) {
	f := newFixture(t)
	var batch []poll.Check
	for _, key := range []string{"pused", "missing", "label"} {
		it := f.snap.Lookup("a", key)
		batch = append(batch, poll.Check{ItemID: it.ID, HostID: it.HostID, Key: key})
	}
	got := make(chan *poll.Result, len(batch))
	f.c.Check(context.Background(), batch, func(r *poll.Result) { got <- r })
	seen := map[string]poll.Status{}
	for range batch {
		r := <-got
		seen[r.Key] = r.Status
	}
	if seen["pused"] != poll.OK || seen["missing"] != poll.NotSupported || seen["label"] != poll.OK {
		t.Fatalf("statuses %v", seen)
	}
}

// TestFormulaCache: a formula is parsed once however many items share it,
// and an invalid one is reported as such.
func TestFormulaCache(t *testing.T) {
	f := newFixture(t)
	e1, err1 := f.c.parse("last(//cpu)")
	e2, err2 := f.c.parse("last(//cpu)")
	if err1 != nil || err2 != nil || e1 != e2 {
		t.Fatalf("parse twice: %p %v, %p %v; want one cached *Expr", e1, err1, e2, err2)
	}
	if _, err := f.c.parse("last(//cpu"); err == nil {
		t.Fatal("a bad formula parsed")
	}
	if _, err := f.c.parse("last(//cpu"); err == nil || !strings.Contains(err.Error(), "incorrect expression") {
		t.Fatalf("cached error %v", err)
	}
}

func TestNewRequiresSnapshotAndStore(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Fatal("New accepted empty options")
	}
}
