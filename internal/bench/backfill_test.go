package bench

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Backfill against an in-process Peregrine: three phases of the same
// size, every value readable, the in-order phase the baseline, the late
// phases older than it; and one item's late values, read back in clock
// order, are its series in time order although they were sent shuffled.
func TestBackfillInProcess(t *testing.T) {
	tg, _ := startPeregrine(t)
	env := newEnv(t, tg)
	env.Keep = true // read an item back after the run
	env.Data = Data{Seed: 11}
	bf := &Backfill{Items: 200, ItemsPerHost: 100, Values: 2000, Stall: 5 * time.Second, DrainTimeout: 30 * time.Second}
	sec, err := bf.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	c := csvRows(t, sec)
	if len(c.Rows) != 3 {
		t.Fatalf("rows %v (notes %v)", c.Rows, sec.Notes)
	}
	now := time.Now().Unix()
	for i, ph := range []string{PhaseInOrder, PhaseInsideHead, PhaseOutside} {
		if c.Get(i, "phase") != ph || c.Get(i, "sent") != "2000" || c.Get(i, "processed") != "2000" || c.Get(i, "readable") != "2000" || c.Get(i, "loss") != "0" {
			t.Errorf("row %d: %v (notes %v)", i, c.Rows[i], sec.Notes)
		}
		if got := c.Float(i, "clock_till") - c.Float(i, "clock_from"); got != 9 {
			t.Errorf("%s: clocks span %v s, want 10 rounds", ph, got)
		}
	}
	if c.Get(0, "readable_vs_in_order") != "1" {
		t.Errorf("in order against itself: %s", c.Get(0, "readable_vs_in_order"))
	}
	if !(c.Float(1, "clock_till") < c.Float(0, "clock_from")) {
		t.Errorf("the inside phase is not older than the in-order phase: %v %v", c.Rows[1], c.Rows[0])
	}
	if age := float64(now) - c.Float(2, "clock_from"); age < 72*3600 || age > 72*3600+600 {
		t.Errorf("outside phase starts %v s ago, want 72 h", age)
	}

	// Item pb-bf-0/bench.item.3 in the inside phase: sent shuffled, read
	// ascending, equal to the item's sequence.
	var hosts []struct {
		HostID string `json:"hostid"`
	}
	if err := env.API.Call(context.Background(), "host.get", map[string]any{"filter": map[string]any{"host": []string{"pb-bf-0"}}, "output": []string{"hostid"}}, &hosts); err != nil || len(hosts) != 1 {
		t.Fatalf("host.get: %v %v", hosts, err)
	}
	itemid, err := ItemID(context.Background(), env.API, hosts[0].HostID, "bench.item.3")
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		Clock string `json:"clock"`
		Value string `json:"value"`
	}
	from, till := int64(c.Float(1, "clock_from")), int64(c.Float(1, "clock_till"))
	if err := env.API.Call(context.Background(), "history.get", map[string]any{"itemids": []string{itemid}, "history": 0, "output": "extend",
		"time_from": from, "time_till": till, "sortfield": "clock", "sortorder": "ASC"}, &rows); err != nil {
		t.Fatal(err)
	}
	seq := NewValueSeq(env.Data, "pb-bf-0", "bench.item.3")
	if len(rows) != 10 {
		t.Fatalf("read %d rows of the inside phase, want 10", len(rows))
	}
	for i, r := range rows {
		want, _, _ := seq.Next()
		if r.Value != want || r.Clock != strconv.FormatInt(from+int64(i), 10) {
			t.Errorf("row %d: clock %s value %s, want clock %d value %s", i, r.Clock, r.Value, from+int64(i), want)
		}
	}
	if !slices.ContainsFunc(sec.Text, func(s string) bool { return strings.HasPrefix(s, "No warm-up") }) {
		t.Errorf("no warm-up note (env.Warmup 0 must say so): %q", sec.Text)
	}
}
