package pipeline

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
)

func testSnapshot(t testing.TB) *catalog.Snapshot {
	t.Helper()
	cat, err := catalog.Open(t.Context(), catalog.Options{Path: filepath.Join(t.TempDir(), "catalog.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	_, err = cat.Apply(t.Context(), catalog.Spec{Hosts: []catalog.HostSpec{
		{Host: "web", Groups: []string{"G"}, Items: []catalog.ItemSpec{
			{Key: "trap.f", ValueType: "float"},
			{Key: "trap.u", ValueType: "unsigned"},
			{Key: "trap.off", Status: "disabled"},
			{Key: "agent.ping", Type: "zabbix_agent", ValueType: "unsigned"},
		}},
		{Host: "down", Status: "disabled", Groups: []string{"G"}, Items: []catalog.ItemSpec{{Key: "trap.f"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return cat.Snapshot()
}

func TestItemByKeyAndID(t *testing.T) {
	snap := testSnapshot(t)
	agentTypes := TypesOf(catalog.ZabbixAgent, catalog.SimpleCheck)
	f := func(host, key string, types Types, want Refusal) {
		t.Helper()
		it, got := ItemByKey(snap, host, key, types)
		if got != want {
			t.Fatalf("ItemByKey(%q, %q, %b) = %v, want %v", host, key, types, got, want)
		}
		if want == Accepted && (it == nil || it.Key != key || it.Host.Host != host) {
			t.Fatalf("ItemByKey(%q, %q) = %+v", host, key, it)
		}
		if it == nil {
			return
		}
		// The same item by ID gets the same answer.
		byID, got := ItemByID(snap, it.ID, types)
		if got != want || byID != it {
			t.Fatalf("ItemByID(%d) = %v, %v; by key %v", it.ID, byID, got, want)
		}
	}
	f("web", "trap.f", TrapperTypes, Accepted)
	f("web", "trap.u", TrapperTypes, Accepted)
	f("web", "agent.ping", TrapperTypes, WrongItemType)
	f("web", "agent.ping", agentTypes, Accepted) // a poller's way in
	f("web", "trap.f", agentTypes, WrongItemType)
	f("web", "trap.off", TrapperTypes, ItemDisabled)
	f("web", "nope", TrapperTypes, UnknownItem)
	f("nobody", "trap.f", TrapperTypes, UnknownHost)
	f("down", "trap.f", TrapperTypes, HostDisabled)
	f("down", "nope", TrapperTypes, HostDisabled) // the host is checked first, as Zabbix does

	downItem := snap.Lookup("down", "trap.f")
	if _, r := ItemByID(snap, downItem.ID, TrapperTypes); r != HostDisabled {
		t.Fatalf("ItemByID of a disabled host's item: %v", r)
	}
	if _, r := ItemByID(snap, 1<<40, TrapperTypes); r != UnknownItem {
		t.Fatalf("ItemByID of an unknown id: %v", r)
	}
}

func TestPrepare(t *testing.T) {
	snap := testSnapshot(t)
	it := snap.Lookup("web", "trap.u")
	var s history.Sample
	if err := Prepare(it, []byte("7"), &s); err != nil || s.ItemID != it.ID || s.Type != history.Uint || s.U != 7 {
		t.Fatalf("Prepare = %+v, %v", s, err)
	}
	if err := Prepare(it, []byte("7.5"), &s); err == nil {
		t.Fatal("7.5 accepted for an unsigned item")
	}
}

func TestRefusalAndTypes(t *testing.T) {
	seen := map[string]bool{}
	for r := Refusal(0); r < NumRefusals; r++ {
		n := r.String()
		if n == "" || seen[n] || strings.Contains(n, " ") {
			t.Fatalf("refusal %d has name %q", r, n)
		}
		seen[n] = true
	}
	if NumRefusals.String() != "refusal(8)" {
		t.Fatalf("out of range refusal: %q", NumRefusals.String())
	}
	s := TypesOf(catalog.Trapper, catalog.SNMPAgent)
	if !s.Has(catalog.Trapper) || !s.Has(catalog.SNMPAgent) || s.Has(catalog.ZabbixAgent) || s.Has(catalog.ItemType(200)) {
		t.Fatalf("TypesOf = %b", s)
	}
	if TrapperTypes != TypesOf(catalog.Trapper) {
		t.Fatal("TrapperTypes is not the set of the trapper type")
	}
}
