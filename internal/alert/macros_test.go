package alert

import (
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

func TestExpand(t *testing.T) {
	p := &event.Event{ID: 42, ObjectID: 9, Value: 1, Severity: 4, Name: "CPU high", Opdata: "95 %", Clock: 1_800_000_000,
		Tags: []event.Tag{{Tag: "svc", Value: "web"}, {Tag: "crit"}}}
	r := &event.Event{ID: 43, Value: 0, Clock: 1_800_000_061}
	d := &MacroData{Problem: p, Trigger: &catalog.Trigger{ID: 9, Description: "CPU high on {HOST.NAME}", Priority: 4, Comments: "see runbook", URL: "http://x"},
		Action: &catalog.Action{ID: 3, Name: "Notify"}, SendTo: "ops@x", Subject: "S", Message: "M", Loc: time.UTC}
	f := func(in, want string) {
		t.Helper()
		if got := Expand(in, d); got != want {
			t.Errorf("Expand(%q) = %q, want %q", in, got, want)
		}
	}
	f("{EVENT.ID} {EVENT.NAME} {EVENT.SEVERITY} {EVENT.NSEVERITY}", "42 CPU high High 4")
	f("{EVENT.STATUS} {EVENT.VALUE} {EVENT.DATE} {EVENT.TIME}", "PROBLEM 1 2027.01.15 08:00:00")
	f("{EVENT.TAGS}|{EVENT.TAGSJSON}", `svc:web, crit|[{"tag":"svc","value":"web"},{"tag":"crit","value":""}]`)
	f("{EVENT.OPDATA} {EVENT.ACK.STATUS}", "95 % No")
	f("{TRIGGER.ID} {TRIGGER.NAME} {TRIGGER.SEVERITY} {TRIGGER.STATUS} {TRIGGER.DESCRIPTION} {TRIGGER.URL}", "9 CPU high High PROBLEM see runbook http://x")
	f("{ALERT.SENDTO} {ALERT.SUBJECT} {ALERT.MESSAGE} {ACTION.NAME} {ACTION.ID}", "ops@x S M Notify 3")
	f("{EVENT.RECOVERY.ID} {HOST.NAME} {ITEM.LASTVALUE} {EVENT.UPDATE.MESSAGE}", "*UNKNOWN* *UNKNOWN* *UNKNOWN* *UNKNOWN*")
	f("{NOT.A.MACRO} {$USER} { } {", "{NOT.A.MACRO} {$USER} { } {")
	f("{{EVENT.ID}}", "{42}")
	f("no macros", "no macros")
	d.Recovery = r
	f("{EVENT.STATUS} {EVENT.VALUE} {EVENT.RECOVERY.ID} {EVENT.RECOVERY.TIME} {EVENT.RECOVERY.STATUS} {TRIGGER.STATUS}", "RESOLVED 0 43 08:01:01 RESOLVED OK")
	d.Ack = &event.Ack{Message: "looking", Action: event.ActionAcknowledge | event.ActionMessage, Clock: 1_800_000_120}
	f("{EVENT.UPDATE.ACTION}: {EVENT.UPDATE.MESSAGE} at {EVENT.UPDATE.TIME}", "acknowledged, commented: looking at 08:02:00")
}

// FuzzExpand: any text expands without panicking, text without braces
// is returned as is, and an expansion never loses the text between
// macros.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"{EVENT.NAME}", "{{HOST.NAME}", "{HOST.NAME9}", "{ITEM.LASTVALUE2}", "a{b", "}{", "{EVENT.RECOVERY.}", "{EVENT.UPDATE.X}", "{TRIGGER.}"} {
		f.Add(s)
	}
	p := &event.Event{ID: 1, Name: "n", Tags: []event.Tag{{Tag: "t", Value: "v"}}}
	d := &MacroData{Problem: p, Trigger: &catalog.Trigger{ID: 2, HostIDs: []uint64{1}, ItemIDs: []uint64{1}}, Loc: time.UTC}
	f.Fuzz(func(t *testing.T, s string) {
		got := Expand(s, d)
		if !strings.Contains(s, "{") && got != s {
			t.Fatalf("Expand(%q) = %q, changed text without macros", s, got)
		}
		if !strings.Contains(s, "}") && got != s {
			t.Fatalf("Expand(%q) = %q, changed text without a closing brace", s, got)
		}
	})
}

// {ITEM.LASTVALUE} and {ITEM.VALUE} in alert texts carry the item's
// units as Zabbix 6.0 writes them (package zbx/units has the recorded
// rules); a text item's value stays as it is.
func TestExpandItemValueUnits(t *testing.T) {
	cat := catalogtest.Open(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h", Groups: []string{"G"}, Items: []catalog.ItemSpec{
		{Key: "mem", ValueType: "unsigned", Units: "B"},
		{Key: "up", ValueType: "unsigned", Units: "uptime"},
		{Key: "msg", ValueType: "text", Units: "B"},
	}}}})
	snap := cat.Snapshot()
	mem, up, msg := snap.Lookup("h", "mem").ID, snap.Lookup("h", "up").ID, snap.Lookup("h", "msg").ID
	vals := map[uint64]string{mem: "1500000000", up: "90061", msg: "2048"}
	d := &MacroData{Trigger: &catalog.Trigger{ID: 1, ItemIDs: []uint64{mem, up, msg}}, Snap: snap, Loc: time.UTC,
		LastValue: func(id uint64) (string, bool) { v, ok := vals[id]; return v, ok }}
	if got, want := Expand("{ITEM.LASTVALUE} {ITEM.VALUE2} {ITEM.VALUE3}", d), "1.4 GB 1 day, 01:01:01 2048"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
