package api

import (
	"fmt"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/trigger"
)

// TestEventGetNewest: event.get newest first with a limit (the web UI's
// watermark) walks the store from the newest event and stops at the
// limit; its answers equal the full scan's (the same request sorted
// ascending, cut from the end) with and without filters.
func TestEventGetNewest(t *testing.T) {
	f := newEventFixture(t)
	ids := f.ids(t, "trigger.create", `[{"description":"Load","expression":"last(/web-1/load)>2","type":1},
		{"description":"DB load","expression":"last(/db-1/load)>5"}]`, "triggerids")
	tid := func(i int) uint64 {
		var v uint64
		fmt.Sscan(ids[i], &v)
		return v
	}
	for c := int64(0); c < 5; c++ {
		f.feed(trigger.Result{TriggerID: tid(0), Value: trigger.Problem, Clock: 1000 + c})
	}
	f.feed(trigger.Result{TriggerID: tid(1), Value: trigger.Problem, Clock: 1010})
	f.feed(trigger.Result{TriggerID: tid(0), Value: trigger.OK, Clock: 1020})
	f.feed(trigger.Result{TriggerID: tid(1), Value: trigger.Problem, Clock: 1030}) // no change: no event
	all := fields(f.get(t, "event.get", `{"sortfield":"eventid"}`), "eventid")
	if len(all) != 7 {
		t.Fatalf("events: %v, want 5 problems, 1 problem, 1 recovery", all)
	}
	for _, tc := range []struct {
		params string
		want   []string
	}{
		{`{"sortfield":["eventid"],"sortorder":"DESC","limit":1}`, all[6:]},
		{`{"sortfield":"eventid","sortorder":"DESC","limit":3}`, []string{all[6], all[5], all[4]}},
		{`{"sortfield":"eventid","sortorder":"DESC","limit":100}`, reversed(all)},
		{`{"sortfield":"eventid","sortorder":"DESC","limit":1,"value":1}`, all[5:6]},
		{`{"sortfield":"eventid","sortorder":"DESC","limit":2,"objectids":` + ids[0] + `,"value":1}`, []string{all[4], all[3]}},
	} {
		if got := fields(f.get(t, "event.get", tc.params), "eventid"); strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("event.get %s: %v, want %v", tc.params, got, tc.want)
		}
	}
}

func reversed(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

// TestTriggerGetByFewIDs: trigger.get naming a few of many triggers
// looks them up; the answer equals the full list cut to those IDs, in
// the same order, with duplicates and unknown IDs ignored.
func TestTriggerGetByFewIDs(t *testing.T) {
	f := newEventFixture(t)
	var b strings.Builder
	b.WriteString("[")
	for i := range 20 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"description":"t%d","expression":"last(/web-1/load)>%d"}`, i, i)
	}
	b.WriteString("]")
	ids := f.ids(t, "trigger.create", b.String(), "triggerids")
	all := f.get(t, "trigger.get", `{"selectHosts":["name"]}`)
	want := []map[string]any{}
	for _, o := range all {
		if o["triggerid"] == ids[2] || o["triggerid"] == ids[15] {
			want = append(want, o)
		}
	}
	got := f.get(t, "trigger.get", `{"selectHosts":["name"],"triggerids":["`+ids[15]+`","`+ids[2]+`","`+ids[15]+`","999999"]}`)
	if mustJSON(t, got) != mustJSON(t, want) || len(got) != 2 {
		t.Errorf("trigger.get by two IDs:\n got %s\nwant %s", mustJSON(t, got), mustJSON(t, want))
	}
}
