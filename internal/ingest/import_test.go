package ingest

import (
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// TestCheckImport: history.import's values (peregrine migrate) are taken
// for items the trapper refuses (not trappers, disabled, on a disabled
// host), keep their clock, skip preprocessing, and are refused only when
// the item is unknown, the value does not convert or the clock is bad.
func TestCheckImport(t *testing.T) {
	cat := catalogtest.Open(t, catalog.Spec{Hosts: []catalog.HostSpec{
		{Host: "on", Items: []catalog.ItemSpec{
			{Key: "agent.item", Type: "zabbix_agent", ValueType: "unsigned"},
			{Key: "off.item", Status: "disabled", ValueType: "float"},
			{Key: "steps", ValueType: "float", Preprocessing: []catalog.PreprocSpec{catalog.StepSpec("MULTIPLIER", "10", "", "")}},
		}},
		{Host: "off", Status: "disabled", Items: []catalog.ItemSpec{{Key: "text", ValueType: "text"}}},
	}})
	snap := cat.Snapshot()
	id := func(host, key string) uint64 { return snap.Lookup(host, key).ID }
	f := func(v pipeline.RawValue, wantErr bool, want history.Sample) {
		t.Helper()
		var s history.Sample
		_, msg := checkImport(snap, &v, &s)
		if (msg != "") != wantErr {
			t.Fatalf("%+v: refusal %q, want refused: %v", v, msg, wantErr)
		}
		if !wantErr && (s.ItemID != want.ItemID || s.Type != want.Type || s.U != want.U || s.F != want.F || s.S != want.S) {
			t.Errorf("%+v: sample %+v, want %+v", v, s, want)
		}
	}
	f(pipeline.RawValue{ItemID: id("on", "agent.item"), Value: []byte("42"), Clock: 1700000000, NS: 5}, false,
		history.Sample{ItemID: id("on", "agent.item"), Type: history.Uint, U: 42})
	f(pipeline.RawValue{ItemID: id("on", "off.item"), Value: []byte("1.5"), Clock: 1, NS: 0}, false,
		history.Sample{ItemID: id("on", "off.item"), Type: history.Float, F: 1.5})
	// Not multiplied: the source ran the steps.
	f(pipeline.RawValue{ItemID: id("on", "steps"), Value: []byte("2"), Clock: 1, NS: 0}, false,
		history.Sample{ItemID: id("on", "steps"), Type: history.Float, F: 2})
	f(pipeline.RawValue{ItemID: id("off", "text"), Value: []byte("hello"), Clock: 1, NS: 0}, false,
		history.Sample{ItemID: id("off", "text"), Type: history.Text, S: "hello"})
	f(pipeline.RawValue{ItemID: id("on", "agent.item"), Value: []byte("x"), Clock: 1, NS: 0}, true, history.Sample{})
	f(pipeline.RawValue{ItemID: 999999, Value: []byte("1"), Clock: 1, NS: 0}, true, history.Sample{})
	f(pipeline.RawValue{ItemID: id("on", "agent.item"), Value: []byte("1"), Clock: -1, NS: 0}, true, history.Sample{})
}
