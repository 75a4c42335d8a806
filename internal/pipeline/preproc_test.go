package pipeline

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/fsutil"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/historytest"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

func step(typ string, params ...string) catalog.PreprocSpec {
	return catalog.PreprocSpec{Type: typ, Parameters: params}
}

func dep(key, master, vt string, steps ...catalog.PreprocSpec) catalog.ItemSpec {
	return catalog.ItemSpec{Key: key, Type: "dependent", ValueType: vt, MasterItem: &catalog.MasterItemSpec{Key: master}, Preprocessing: steps}
}

// preprocSpec: a numeric item with the typical two-step chain, a JSON
// master with a tree of dependents, and a plain item without steps.
func preprocSpec() catalog.Spec {
	return catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h", Groups: []string{"G"}, Items: []catalog.ItemSpec{
		{Key: "num", Preprocessing: []catalog.PreprocSpec{step("MULTIPLIER", "2"), step("DISCARD_UNCHANGED_HEARTBEAT", "1h")}},
		{Key: "rate", Preprocessing: []catalog.PreprocSpec{step("CHANGE_PER_SECOND", "")}},
		{Key: "json", ValueType: "text"},
		dep("json.a", "json", "unsigned", step("JSONPATH", "$.a")),
		dep("json.obj", "json", "text", step("JSONPATH", "$.obj")),
		dep("json.obj.b", "json.obj", "float", step("JSONPATH", "$.b"), step("MULTIPLIER", "10")),
		dep("json.whole", "json", "text"),
		{Key: "plain"},
	}}}}
}

type fixture struct {
	p     *Pipeline
	store *memstore.Store
	rt    *itemstate.Registry
	snap  *catalog.Snapshot
}

func newFixture(t *testing.T, cat *catalog.Catalog, statePath string) *fixture {
	f := &fixture{store: memstore.New(), rt: itemstate.New(), snap: cat.Snapshot()}
	f.p = start(t, Options{Shards: 3, Store: f.store, Catalog: cat.Snapshot, ItemStates: f.rt, StatePath: statePath})
	return f
}

// send submits one value per key at clock, the way the ways in do.
func (f *fixture) send(t *testing.T, clock int64, kv ...string) {
	t.Helper()
	var v []history.Sample
	for i := 0; i < len(kv); i += 2 {
		it := f.snap.Lookup("h", kv[i])
		var s history.Sample
		if err := Prepare(it, []byte(kv[i+1]), &s); err != nil {
			t.Fatalf("Prepare(%s, %q): %v", kv[i], kv[i+1], err)
		}
		s.Clock = clock
		v = append(v, s)
	}
	if err := f.p.Submit(v, nil); err != nil {
		t.Fatal(err)
	}
}

// values returns the stored values of key as text, oldest first.
func (f *fixture) values(t *testing.T, key string) []string {
	t.Helper()
	var out []string
	for _, s := range historytest.ReadAll(t, f.store, history.Query{ItemID: f.snap.Lookup("h", key).ID, From: 0, Till: 1 << 40}) {
		switch s.Type {
		case history.Float:
			out = append(out, trimFloat(s.F))
		case history.Uint:
			out = append(out, "u"+itoa(s.U))
		default:
			out = append(out, s.S)
		}
	}
	return out
}

func trimFloat(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(strings.TrimRight(ftoa(f), "0"), "."), ".")
}

func (f *fixture) state(key string) itemstate.Item {
	st, _ := f.rt.ItemState(f.snap.Lookup("h", key).ID)
	return st
}

func TestPreprocessInShard(t *testing.T) {
	cat := catalogtest.Open(t, preprocSpec())
	f := newFixture(t, cat, "")
	doc := `{"a":7,"obj":{"b":1.5}}`
	f.send(t, 1000, "num", "5", "json", doc, "plain", "1", "rate", "100")
	f.send(t, 1010, "num", "5", "json", `{"a":8,"obj":{"b":2}}`, "rate", "150")
	f.send(t, 1020, "num", "6", "json", `{"obj":{"b":"x"}}`)
	f.send(t, 5000, "num", "6")
	check := func(key string, want ...string) {
		t.Helper()
		got := f.values(t, key)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: stored %q, want %q", key, got, want)
		}
	}
	// Multiplied; the unchanged 10 discarded until the heartbeat (1h).
	check("num", "10", "12", "12")
	check("rate", "5")
	check("plain", "1")
	check("json", doc, `{"a":8,"obj":{"b":2}}`, `{"obj":{"b":"x"}}`)
	check("json.a", "u7", "u8")
	check("json.obj", `{"b":1.5}`, `{"b":2}`, `{"b":"x"}`)
	check("json.obj.b", "15", "20")
	check("json.whole", doc, `{"a":8,"obj":{"b":2}}`, `{"obj":{"b":"x"}}`)
	// The missing member and the string that is no number made their
	// items not supported, with Zabbix's messages.
	if st := f.state("json.a"); !st.NotSupported || !strings.Contains(st.Error, `cannot extract value from json by path "$.a"`) || st.Clock != 1020 {
		t.Errorf("json.a state %+v", st)
	}
	if st := f.state("json.obj.b"); !st.NotSupported || !strings.Contains(st.Error, "cannot apply multiplier") {
		t.Errorf("json.obj.b state %+v", st)
	}
	if st := f.state("json.obj"); st.NotSupported {
		t.Errorf("json.obj state %+v", st)
	}
	// The next good value makes them supported again.
	f.send(t, 1030, "json", `{"a":9,"obj":{"b":3}}`)
	if st := f.state("json.a"); st.NotSupported {
		t.Errorf("json.a after a good value: %+v", st)
	}
	if st := f.state("json.obj.b"); st.NotSupported {
		t.Errorf("json.obj.b after a good value: %+v", st)
	}
	// Last finds the dependents' values in their master's shard.
	if last, _, ok := f.p.Last(f.snap.Lookup("h", "json.obj.b").ID); !ok || last.F != 30 || last.Clock != 1030 {
		t.Errorf("Last(json.obj.b) = %+v, %v", last, ok)
	}
}

// TestPreprocessCheckFailure: a failed check (RawError) of a master
// makes its dependents not supported with the same message; a "Check
// for not supported value" step turns it into a value.
func TestPreprocessCheckFailure(t *testing.T) {
	spec := catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h", Groups: []string{"G"}, Items: []catalog.ItemSpec{
		{Key: "m", ValueType: "text"},
		dep("d", "m", "text"),
		dep("fallback", "m", "text", catalog.PreprocSpec{Type: "CHECK_NOT_SUPPORTED", Parameters: []string{""}, ErrorHandler: "CUSTOM_VALUE", ErrorHandlerParams: "down"}),
	}}}}
	cat := catalogtest.Open(t, spec)
	f := newFixture(t, cat, "")
	var s history.Sample
	if !PrepareError(f.snap.Lookup("h", "m"), "connection refused", &s) {
		t.Fatal("PrepareError refused an item with dependents")
	}
	s.Clock = 50
	if err := f.p.Submit([]history.Sample{s}, nil); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"m", "d"} {
		if st := f.state(key); !st.NotSupported || st.Error != "connection refused" {
			t.Errorf("%s state %+v", key, st)
		}
	}
	if got := f.values(t, "fallback"); len(got) != 1 || got[0] != "down" {
		t.Errorf("fallback stored %q", got)
	}
	if PrepareError(f.snap.Lookup("h", "d"), "x", &s) {
		t.Error("PrepareError took an item without steps or dependents")
	}
}

// TestPreprocessStateSurvivesRestart: the change step's previous value
// is saved at stop and restored by the next pipeline, so the first
// value after a restart yields a change instead of being discarded.
func TestPreprocessStateSurvivesRestart(t *testing.T) {
	cat := catalogtest.Open(t, preprocSpec())
	path := filepath.Join(t.TempDir(), "preprocess.state")
	run := func(statePath string, clock int64, v string) (stored []string) {
		store := memstore.New()
		p, err := New(Options{Shards: 2, Store: store, Catalog: cat.Snapshot, StatePath: statePath})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- p.Run(context.Background()) }()
		it := cat.Snapshot().Lookup("h", "rate")
		var s history.Sample
		if err := Prepare(it, []byte(v), &s); err != nil {
			t.Fatal(err)
		}
		s.Clock = clock
		if err := p.Submit([]history.Sample{s}, nil); err != nil {
			t.Fatal(err)
		}
		p.Stop()
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
		for _, s := range historytest.ReadAll(t, store, history.Query{ItemID: it.ID, From: 0, Till: 1 << 40}) {
			stored = append(stored, trimFloat(s.F))
		}
		return stored
	}
	if got := run(path, 100, "10"); len(got) != 0 {
		t.Fatalf("first value ever: stored %q, want it discarded", got)
	}
	if got := run(path, 110, "30"); len(got) != 1 || got[0] != "2" {
		t.Fatalf("after a restart with state: stored %q, want 2 per second", got)
	}
	// The control: without the file the first value is discarded again.
	if got := run("", 120, "50"); len(got) != 0 {
		t.Fatalf("after a restart without state: stored %q, want nothing", got)
	}
	// A damaged file is refused as a whole and the pipeline starts anyway.
	fsutil.WriteFileAtomic(path, []byte("PRGNPPS1garbage!"), 0o600)
	if got := run(path, 130, "70"); len(got) != 0 {
		t.Fatalf("with a damaged state file: stored %q, want the first value discarded", got)
	}
}

func itoa(u uint64) string  { return strconv.FormatUint(u, 10) }
func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', 6, 64) }

// TestPreprocessUserMacros: a step parameter that is a user macro takes
// the host's value, again after the macro changes; a value that makes
// the step invalid makes the item not supported.
func TestPreprocessUserMacros(t *testing.T) {
	spec := catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h", Groups: []string{"G"},
		Macros: []catalog.MacroSpec{{Macro: "{$MULT}", Value: "2"}},
		Items:  []catalog.ItemSpec{{Key: "m", Preprocessing: []catalog.PreprocSpec{step("MULTIPLIER", "{$MULT}")}}},
	}}}
	cat := catalogtest.Open(t, spec)
	f := newFixture(t, cat, "")
	f.send(t, 1000, "m", "21")
	setMult := func(v string) {
		t.Helper()
		h := cat.Snapshot().Host("h").ID
		if _, err := cat.Edit(context.Background(), func(e *catalog.Edit) error {
			_, err := e.SetMacros(h, []catalog.MacroFields{{Macro: "{$MULT}", Value: v}}, "macros")
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	setMult("3")
	f.send(t, 1010, "m", "10")
	if got := strings.Join(f.values(t, "m"), " "); got != "42 30" {
		t.Fatalf("stored %q, want 42 (x2) then 30 (x3)", got)
	}
	setMult("x")
	f.send(t, 1020, "m", "10")
	if st := f.state("m"); !st.NotSupported || !strings.Contains(st.Error, "x") {
		t.Fatalf("state with {$MULT}=x: %+v", st)
	}
}
