package event

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// clock is a settable Options.Now.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func open(t *testing.T, dir string, c *clock) *Store {
	t.Helper()
	s, err := Open(Options{Dir: dir, Now: c.now, Sync: wal.SyncNever, Retention: 2 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func commit(t *testing.T, s *Store, b Batch) Batch {
	t.Helper()
	if err := s.Commit(&b); err != nil {
		t.Fatal(err)
	}
	return b
}

func problem(trigger uint64, clock int64, name string) Event {
	return Event{ObjectID: trigger, Clock: clock, NS: 7, Value: ValueProblem, Severity: 3, Name: name, Tags: []Tag{{"scope", "x"}}}
}

// state is what a store shows, for comparing before and after a reopen.
type state struct {
	Open     []Event
	All      []Event
	Acks     map[uint64][]Ack
	Runtimes map[uint64]Runtime
}

func stateOf(s *Store) state {
	st := state{Open: s.OpenProblems(), All: s.Events(func(*Event) bool { return true }), Acks: map[uint64][]Ack{}, Runtimes: s.Runtimes()}
	for _, e := range st.All {
		if a := s.Acks(e.ID); len(a) > 0 {
			st.Acks[e.ID] = a
		}
	}
	return st
}

func TestCommitResolveAckReopen(t *testing.T) { eachBackend(t, testCommitResolveAckReopen) }

func testCommitResolveAckReopen(t *testing.T, open opener) {
	dir := t.TempDir()
	c := &clock{time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
	s := open(t, dir, c)
	b := commit(t, s, Batch{
		Events:   []Event{problem(10, 100, "a"), problem(10, 101, "a again"), problem(20, 102, "b")},
		Runtimes: []Runtime{{TriggerID: 10, Value: 1, LastChange: 100}, {TriggerID: 20, Value: 1, LastChange: 102}},
	})
	p1, p2, p3 := b.Events[0].ID, b.Events[1].ID, b.Events[2].ID
	if p1 != 1 || p2 != 2 || p3 != 3 {
		t.Fatalf("IDs %d %d %d, want 1 2 3", p1, p2, p3)
	}
	if got := s.OpenProblemsOf(10); len(got) != 2 || got[0].ID != p1 || got[1].ID != p2 {
		t.Fatalf("open problems of 10: %+v", got)
	}
	// Trigger 10 recovers: one OK event resolves both its problems.
	ok := commit(t, s, Batch{
		Events:   []Event{{ObjectID: 10, Clock: 200, NS: 9, Value: ValueOK, Name: "a", Resolves: []uint64{p1, p2}}},
		Runtimes: []Runtime{{TriggerID: 10, Value: 0, LastChange: 200}},
	}).Events[0].ID
	commit(t, s, Batch{Acks: []Ack{
		{EventID: p3, UserID: 1, Clock: 300, Action: ActionAcknowledge | ActionMessage | ActionSeverity, Message: "on it", OldSeverity: 3, NewSeverity: 5},
	}})
	commit(t, s, Batch{Acks: []Ack{{EventID: p3, UserID: 2, Clock: 301, Action: ActionUnacknowledge}}, Runtimes: []Runtime{{TriggerID: 20, Value: 1, State: 1, Error: "division by zero", LastChange: 102}}})
	if got := s.OpenProblems(); len(got) != 1 || got[0].ID != p3 || got[0].Severity != 5 || got[0].Acknowledged {
		t.Fatalf("open problems: %+v", got)
	}
	if e, _ := s.Event(p1); e.REventID != ok || e.RClock != 200 || e.RNS != 9 || e.Open() {
		t.Fatalf("resolved problem: %+v", e)
	}
	if got := s.Recent(150); len(got) != 2 || got[0].ID != p1 {
		t.Fatalf("recent: %+v", got)
	}
	if acks := s.Acks(p3); len(acks) != 2 || acks[0].Message != "on it" || acks[1].ID != 2 {
		t.Fatalf("acks: %+v", acks)
	}
	if st := s.Stats(); st.Events != 4 || st.OpenProblems != 1 || st.Commits != 4 || st.CommitErrors != 0 {
		t.Fatalf("stats %+v", st)
	}
	want := stateOf(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, dir, c)
	defer s2.Close()
	if d := cmp.Diff(want, stateOf(s2)); d != "" {
		t.Fatalf("state after reopen differs (-before +after):\n%s", d)
	}
	if id := commit(t, s2, Batch{Events: []Event{problem(30, 400, "c")}}).Events[0].ID; id != ok+1 {
		t.Fatalf("first ID after reopen %d, want %d", id, ok+1)
	}
}

// TestDaysAndRetention: each day gets its own directory starting with a
// carry record; retention deletes whole old days and forgets their
// closed events, while open problems, their acks, trigger runtimes and
// the ID sequence survive, also across a reopen.
func TestDaysAndRetention(t *testing.T) { eachBackend(t, testDaysAndRetention) }

func testDaysAndRetention(t *testing.T, open opener) {
	dir := t.TempDir()
	c := &clock{time.Date(2026, 11, 20, 23, 0, 0, 0, time.UTC)}
	s := open(t, dir, c)
	b := commit(t, s, Batch{Events: []Event{problem(1, 10, "stays open"), problem(2, 11, "closed")}, Runtimes: []Runtime{{TriggerID: 1, Value: 1, LastChange: 10}}})
	openID, closedID := b.Events[0].ID, b.Events[1].ID
	commit(t, s, Batch{Events: []Event{{ObjectID: 2, Clock: 12, Resolves: []uint64{closedID}}}})
	commit(t, s, Batch{Acks: []Ack{{EventID: openID, Clock: 13, Action: ActionAcknowledge}}})

	c.t = c.t.Add(2 * time.Hour) // 21 Nov
	late := commit(t, s, Batch{Events: []Event{problem(3, 20, "day two")}}).Events[0].ID
	days, _ := s.b.Days()
	if !slices.Equal(days, []string{"20261120", "20261121"}) {
		t.Fatalf("days %v", days)
	}
	if n, err := s.ApplyRetention(); err != nil || n != 0 {
		t.Fatalf("retention within the period dropped %d (%v)", n, err)
	}
	c.t = time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC) // 20 Nov ended 2 d 1 h ago
	if n, err := s.ApplyRetention(); err != nil || n != 1 {
		t.Fatalf("retention dropped %d days (%v), want 1", n, err)
	}
	if days, _ := s.b.Days(); !slices.Equal(days, []string{"20261121"}) {
		t.Fatalf("days after retention %v", days)
	}
	if s.opts.Postgres == nil {
		if _, err := os.Stat(filepath.Join(dir, "20261120")); !os.IsNotExist(err) {
			t.Fatalf("day directory still there: %v", err)
		}
	}
	if _, ok := s.Event(closedID); ok {
		t.Errorf("a closed event of a dropped day is still there")
	}
	check := func(s *Store, when string) {
		t.Helper()
		got := s.OpenProblems()
		if len(got) != 2 || got[0].ID != openID || !got[0].Acknowledged || got[1].ID != late {
			t.Errorf("%s: open problems %+v", when, got)
		}
		if acks := s.Acks(openID); len(acks) != 1 {
			t.Errorf("%s: acks of the carried problem %+v", when, acks)
		}
		if r, ok := s.Runtime(1); !ok || r.Value != 1 {
			t.Errorf("%s: runtime of trigger 1 %+v", when, r)
		}
	}
	check(s, "after retention")
	s.Close()
	s = open(t, dir, c)
	defer s.Close()
	check(s, "after reopen")
	if id := commit(t, s, Batch{Events: []Event{problem(4, 30, "new")}}).Events[0].ID; id <= late {
		t.Fatalf("ID %d reused after old days were dropped (last was %d)", id, late)
	}
}

func TestDecodeRefusesDamage(t *testing.T) {
	b := Batch{Events: []Event{problem(1, 2, "name")}, Acks: []Ack{{ID: 1, EventID: 1, Message: "m"}}, Runtimes: []Runtime{{TriggerID: 1, Error: "e"}}}
	b.Events[0].Resolves = []uint64{5}
	rec := encode(nil, kindCommit, 2, 2, &b)
	h, got, err := decode(rec)
	if err != nil || h.nextEvent != 2 || h.kind != kindCommit {
		t.Fatalf("decode: %+v %v", h, err)
	}
	if d := cmp.Diff(b, got); d != "" {
		t.Fatalf("round trip differs:\n%s", d)
	}
	for n := range len(rec) {
		if _, _, err := decode(rec[:n]); err == nil {
			t.Fatalf("a record cut to %d of %d bytes decoded", n, len(rec))
		}
	}
	if _, _, err := decode(append(slices.Clone(rec), 0)); err == nil {
		t.Fatal("trailing bytes accepted")
	}
}

func FuzzDecode(f *testing.F) {
	b := Batch{Events: []Event{problem(1, 2, "name")}, Acks: []Ack{{ID: 1, EventID: 1}}, Runtimes: []Runtime{{TriggerID: 1}}}
	f.Add(encode(nil, kindCommit, 2, 2, &b))
	f.Add(encode(nil, kindCarry, 1, 1, &Batch{}))
	f.Fuzz(func(t *testing.T, rec []byte) {
		h, b, err := decode(rec)
		if err != nil {
			return
		}
		// What decodes re-encodes to the same bytes.
		if again := encode(nil, h.kind, h.nextEvent, h.nextAck, &b); string(again) != string(rec) {
			// Varints have one canonical form in encode but several
			// accepted ones; compare by decoding again.
			h2, b2, err := decode(again)
			if err != nil || h2 != h || !cmp.Equal(b, b2) {
				t.Fatalf("re-encoding changed the record: %v", err)
			}
		}
	})
}

// The crash test: a child process commits batches in a loop and prints
// the IDs of each acknowledged batch; the parent kills it with SIGKILL
// mid-stream, reopens the store and checks every printed ID.
const crashChildEnv = "PEREGRINE_EVENT_CRASH_DIR"

func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashChildEnv)
	if dir == "" {
		t.Skip("the child of TestCrashKeepsAcknowledged")
	}
	s, err := Open(Options{Dir: dir, Sync: wal.SyncBatch})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	w := bufio.NewWriter(os.Stdout)
	for i := 0; i < 1_000_000; i++ {
		b := Batch{Events: []Event{problem(uint64(i%50), int64(i), "crash "+strconv.Itoa(i))}}
		if i > 0 && i%3 == 0 {
			b.Acks = []Ack{{EventID: uint64(i), Action: ActionAcknowledge | ActionMessage, Message: "ack " + strconv.Itoa(i)}}
		}
		if err := s.Commit(&b); err != nil {
			fmt.Fprintln(w, "commit:", err)
			w.Flush()
			os.Exit(2)
		}
		fmt.Fprintf(w, "E %d\n", b.Events[0].ID)
		for _, a := range b.Acks {
			fmt.Fprintf(w, "A %d %d\n", a.ID, a.EventID)
		}
		w.Flush()
	}
}

func TestCrashKeepsAcknowledged(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	for round := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		var events []uint64
		acks := map[uint64]uint64{}
		// Kill after a number of acknowledged commits that differs per
		// round, so the kill lands at different points of an append.
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			switch {
			case len(f) == 2 && f[0] == "E":
				id, _ := strconv.ParseUint(f[1], 10, 64)
				events = append(events, id)
			case len(f) == 3 && f[0] == "A":
				id, _ := strconv.ParseUint(f[1], 10, 64)
				ev, _ := strconv.ParseUint(f[2], 10, 64)
				acks[id] = ev
			default:
				t.Fatalf("child: %s", sc.Text())
			}
			if len(events) >= 200+round*137 {
				break
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		for sc.Scan() { // lines written before the kill were acknowledged too
			f := strings.Fields(sc.Text())
			if len(f) == 2 && f[0] == "E" {
				id, _ := strconv.ParseUint(f[1], 10, 64)
				events = append(events, id)
			} else if len(f) == 3 && f[0] == "A" {
				id, _ := strconv.ParseUint(f[1], 10, 64)
				ev, _ := strconv.ParseUint(f[2], 10, 64)
				acks[id] = ev
			}
		}
		cmd.Wait()
		s, err := Open(Options{Dir: dir})
		if err != nil {
			t.Fatalf("round %d: reopen after kill -9: %v", round, err)
		}
		for _, id := range events {
			if _, ok := s.Event(id); !ok {
				t.Fatalf("round %d: acknowledged event %d lost", round, id)
			}
		}
		for id, ev := range acks {
			if !slices.ContainsFunc(s.Acks(ev), func(a Ack) bool { return a.ID == id }) {
				t.Fatalf("round %d: acknowledged ack %d of event %d lost", round, id, ev)
			}
		}
		s.Close()
		t.Logf("round %d: %d acknowledged events and %d acks survived", round, len(events), len(acks))
	}
}

// TestConcurrentCommits: commits from many goroutines, with readers
// running, get unique consecutive IDs, are all applied, and replay to
// the same state.
func TestConcurrentCommits(t *testing.T) { eachBackend(t, testConcurrentCommits) }

func testConcurrentCommits(t *testing.T, open opener) {
	dir := t.TempDir()
	c := &clock{time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
	s := open(t, dir, c)
	const writers, per = 8, 50
	done := make(chan []uint64, writers)
	stop := make(chan struct{})
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		for {
			select {
			case <-stop:
				return
			default:
				s.OpenProblems()
				s.Stats()
				// Correlation's reads: the tag index is built under the
				// writers, dropped and built again.
				s.OpenTagged("scope", nil, nil)
				s.OpenTaggedValue("scope", "x", nil)
				if len(s.OpenIDs(nil))%7 == 0 {
					s.DropTagIndex()
				}
				time.Sleep(200 * time.Microsecond) // let the writers run
			}
		}
	}()
	for w := range writers {
		go func() {
			var ids []uint64
			for i := range per {
				b := Batch{Events: []Event{problem(uint64(w), int64(i), "w")}}
				if i > 0 {
					b.Acks = []Ack{{EventID: ids[len(ids)-1], Action: ActionAcknowledge}}
				}
				if err := s.Commit(&b); err != nil {
					t.Error(err)
					break
				}
				ids = append(ids, b.Events[0].ID)
			}
			done <- ids
		}()
	}
	seen := map[uint64]bool{}
	for range writers {
		for _, id := range <-done {
			if seen[id] {
				t.Fatalf("ID %d assigned twice", id)
			}
			seen[id] = true
		}
	}
	close(stop)
	<-readerDone
	for id := uint64(1); id <= writers*per; id++ {
		if !seen[id] {
			t.Fatalf("ID %d never assigned: IDs are not consecutive", id)
		}
	}
	if st := s.Stats(); st.OpenProblems != writers*per {
		t.Fatalf("stats %+v", st)
	}
	if got := s.OpenTaggedValue("scope", "x", nil); !slices.Equal(got, s.OpenIDs(nil)) || len(got) != writers*per {
		t.Fatalf("tag index after concurrent commits: %d problems tagged scope=x, want %d", len(got), writers*per)
	}
	want := stateOf(s)
	s.Close()
	s2 := open(t, dir, c)
	defer s2.Close()
	if d := cmp.Diff(want, stateOf(s2)); d != "" {
		t.Fatalf("replayed state differs:\n%s", d)
	}
}

// TestScanOpenOrder checks the ordered walk over open problems: both
// directions equal OpenProblems, stopping early works, and resolving
// most problems (compacting the order) keeps it exact, also after a
// reopen.
func TestScanOpenOrder(t *testing.T) { eachBackend(t, testScanOpenOrder) }

func testScanOpenOrder(t *testing.T, open opener) {
	dir := t.TempDir()
	c := &clock{t: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	s := open(t, dir, c)
	var b Batch
	for i := range 5000 {
		b.Events = append(b.Events, problem(uint64(i%700+1), 1000+int64(i), "p"))
	}
	b = commit(t, s, b)
	// Resolve the problems of every trigger but those ≡ 0 mod 3:
	// well over half, so the order is compacted.
	for tr := uint64(1); tr <= 700; tr++ {
		if tr%3 == 0 {
			continue
		}
		var ids []uint64
		for _, e := range b.Events {
			if e.ObjectID == tr {
				ids = append(ids, e.ID)
			}
		}
		commit(t, s, Batch{Events: []Event{{ObjectID: tr, Clock: 9000, Value: ValueOK, Resolves: ids}}})
	}
	commit(t, s, Batch{Events: []Event{problem(1, 9001, "late")}})
	check := func(s *Store) {
		t.Helper()
		want := s.OpenProblems()
		if len(want) != s.OpenCount() || len(want) < 1000 {
			t.Fatalf("%d open problems, OpenCount %d", len(want), s.OpenCount())
		}
		var asc, desc []uint64
		s.ScanOpen(false, func(e *Event) bool { asc = append(asc, e.ID); return true })
		s.ScanOpen(true, func(e *Event) bool { desc = append(desc, e.ID); return true })
		ids := make([]uint64, len(want))
		for i := range want {
			ids[i] = want[i].ID
			if !want[i].Open() {
				t.Fatalf("OpenProblems returned a resolved event %+v", want[i])
			}
		}
		slices.Reverse(desc)
		if !slices.Equal(asc, ids) || !slices.Equal(desc, ids) {
			t.Fatalf("ScanOpen: asc %d ids, desc %d, want %d in order", len(asc), len(desc), len(ids))
		}
		var first3 []uint64
		s.ScanOpen(true, func(e *Event) bool { first3 = append(first3, e.ID); return len(first3) < 3 })
		if !slices.Equal(first3, []uint64{ids[len(ids)-1], ids[len(ids)-2], ids[len(ids)-3]}) {
			t.Fatalf("newest 3: %v", first3)
		}
		var of []uint64
		s.ScanOpenOf([]uint64{1, 3, 2}, func(e *Event) bool { of = append(of, e.ID); return true })
		want13 := append(ids[:0:0], 0)[:0]
		for _, e := range want {
			if e.ObjectID == 1 || e.ObjectID == 3 {
				want13 = append(want13, e.ID)
			}
		}
		slices.Sort(of)
		if !slices.Equal(of, want13) {
			t.Fatalf("ScanOpenOf(1,3,2): %v, want %v", of, want13)
		}
		if n := s.OpenCountOf([]uint64{1, 3, 2}); n != len(want13) {
			t.Fatalf("OpenCountOf(1,3,2) = %d, want %d", n, len(want13))
		}
	}
	check(s)
	if len(s.order) > 2*s.OpenCount()+1024 {
		t.Errorf("order holds %d IDs for %d open problems: not compacted", len(s.order), s.OpenCount())
	}
	s.Close()
	s = open(t, dir, c)
	defer s.Close()
	check(s)
}
