package internalev

import (
	"sync"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/event"
)

type fakeStore struct {
	mu  sync.Mutex
	evs []event.Event
	id  uint64
}

func (f *fakeStore) Commit(b *event.Batch) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range b.Events {
		f.id++
		b.Events[i].ID = f.id
		for _, r := range b.Events[i].Resolves {
			for j := range f.evs {
				if f.evs[j].ID == r {
					f.evs[j].REventID = f.id
				}
			}
		}
		f.evs = append(f.evs, b.Events[i])
	}
	return nil
}

func (f *fakeStore) Events(keep func(*event.Event) bool) []event.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []event.Event
	for i := range f.evs {
		if keep(&f.evs[i]) {
			out = append(out, f.evs[i])
		}
	}
	return out
}

// TestTransitions: only changes make events; normal again resolves the
// problem; a restart reads the open problems; a flap before storing
// makes nothing.
func TestTransitions(t *testing.T) {
	st := &fakeStore{}
	p, err := New(Options{Events: st})
	if err != nil {
		t.Fatal(err)
	}
	p.ItemState(10, true, "Unsupported item key.")
	p.ItemState(10, true, "Unsupported item key.")
	p.TriggerState(20, true, "Cannot evaluate function.")
	p.flush()
	p.ItemState(10, false, "")
	p.ItemState(10, false, "")
	p.flush()
	if len(st.evs) != 3 {
		t.Fatalf("events %+v", st.evs)
	}
	item, trig, ok := st.evs[0], st.evs[1], st.evs[2]
	if item.Source != event.SourceInternal || item.Object != event.ObjectItem || item.Value != 1 || item.Name != "Unsupported item key." {
		t.Errorf("item problem %+v", item)
	}
	if trig.Object != event.ObjectTrigger || trig.ObjectID != 20 {
		t.Errorf("trigger problem %+v", trig)
	}
	if ok.Value != 0 || len(ok.Resolves) != 1 || ok.Resolves[0] != item.ID {
		t.Errorf("recovery %+v", ok)
	}
	// A restart: the trigger's problem is still open.
	p2, _ := New(Options{Events: st})
	p2.TriggerState(20, true, "again")
	p2.flush()
	if len(st.evs) != 3 {
		t.Fatalf("the open problem was made again: %+v", st.evs[3:])
	}
	p2.LLDRuleState(30, true, "x")
	p2.LLDRuleState(30, false, "")
	p2.flush()
	if len(st.evs) != 3 {
		t.Fatalf("a flap before storing made events: %+v", st.evs[3:])
	}
}
