package autoreg

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestStoreRestart: registrations kept in the data directory survive a
// restart: a known host with unchanged details does not register again
// (no second event, as 6.0 with its autoreg_host table), its ID stays,
// and the file is bounded by MaxHosts (least recent forgotten).
func TestStoreRestart(t *testing.T) {
	c, _, _ := setup(t)
	path := filepath.Join(t.TempDir(), "autoreg.db")
	open := func(maxHosts int) (*Registrar, *Store, *fakeEvents) {
		t.Helper()
		st, err := OpenStore(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		ev := &fakeEvents{}
		r, err := New(Options{Catalog: c, Events: ev, Store: st, MaxHosts: maxHosts})
		if err != nil {
			t.Fatal(err)
		}
		return r, st, ev
	}
	r, st, ev := open(3)
	clock := time.Unix(1700000000, 5)
	for _, h := range []string{"a", "b", "c", "d"} { // "a" forgotten: MaxHosts 3
		r.Register(Request{Host: h, HostMetadata: "linux " + h, IP: "127.0.0.1", Port: 10050, Flag: ConnIP, Clock: clock})
		drain(r)
	}
	if len(ev.evs) != 4 {
		t.Fatalf("events %d, want 4", len(ev.evs))
	}
	idB := ev.evs[1].ObjectID
	if _, err := OpenStore(context.Background(), path); err == nil {
		t.Fatal("a second owner opened the file")
	}
	st.Close()

	r, st, ev = open(3)
	defer st.Close()
	for _, h := range []string{"b", "c", "d"} {
		if r.Register(Request{Host: h, HostMetadata: "linux " + h, IP: "127.0.0.1", Port: 10050, Flag: ConnIP}) {
			t.Errorf("host %s registered again after a restart with the same details", h)
		}
	}
	if h, ok := r.Lookup(idB); !ok || h.Host != "b" || h.HostMetadata != "linux b" || !h.Clock.Equal(clock) || h.Port != 10050 {
		t.Errorf("Lookup(%d) after restart: %+v %v", idB, h, ok)
	}
	if !r.Register(Request{Host: "a", HostMetadata: "linux a", IP: "127.0.0.1", Port: 10050, Flag: ConnIP}) {
		t.Error("forgotten host a did not register")
	}
	drain(r)
	if len(ev.evs) != 1 || ev.evs[0].ObjectID <= idB+2 {
		t.Fatalf("events after restart %+v: want one, with a new ID", ev.evs)
	}
	hosts, err := st.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, h := range hosts {
		names = append(names, h.Host)
	}
	if len(names) != 3 || names[0] != "c" || names[2] != "a" {
		t.Fatalf("kept %v, want [c d a] (b forgotten: MaxHosts)", names)
	}
}
