package event

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// TestTagIndex compares the tag index's answers with a scan of the open
// problems, over random problems opened and resolved, before and after
// the index is dropped and built again, and after a reopen.
func TestTagIndex(t *testing.T) {
	dir := t.TempDir()
	c := &clock{time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s := open(t, dir, c)
	defer func() { s.Close() }()
	rng := rand.New(rand.NewPCG(1, 2))
	tags := []string{"svc", "env", "pair"}
	vals := []string{"db", "web", "mydb1", "x"}
	check := func(when string) {
		t.Helper()
		for _, tag := range tags {
			for _, v := range vals {
				var want, wantLike []uint64
				s.ScanOpen(false, func(e *Event) bool {
					if slices.Contains(e.Tags, Tag{tag, v}) {
						want = append(want, e.ID)
					}
					if slices.ContainsFunc(e.Tags, func(x Tag) bool { return x.Tag == tag && strings.Contains(x.Value, v) }) {
						wantLike = append(wantLike, e.ID)
					}
					return true
				})
				if got := s.OpenTaggedValue(tag, v, nil); !slices.Equal(got, want) {
					t.Fatalf("%s: OpenTaggedValue(%s, %s) = %v, want %v", when, tag, v, got, want)
				}
				like := func(x string) bool { return strings.Contains(x, v) }
				if got := s.OpenTagged(tag, like, nil); !slices.Equal(got, wantLike) {
					t.Fatalf("%s: OpenTagged(%s, contains %s) = %v, want %v", when, tag, v, got, wantLike)
				}
			}
		}
	}
	var open []uint64
	for round := range 300 {
		if len(open) > 0 && rng.IntN(3) == 0 {
			k := rng.IntN(len(open))
			id := open[k]
			open = slices.Delete(open, k, k+1)
			ev, _ := s.Event(id)
			commit(t, s, Batch{Events: []Event{{ObjectID: ev.ObjectID, Clock: int64(round), Value: ValueOK, Resolves: []uint64{id}}}})
		} else {
			p := Event{ObjectID: uint64(rng.IntN(20)), Clock: int64(round), Value: ValueProblem}
			for _, tag := range tags {
				if rng.IntN(2) == 0 {
					p.Tags = append(p.Tags, Tag{tag, vals[rng.IntN(len(vals))]})
				}
			}
			b := commit(t, s, Batch{Events: []Event{p}})
			open = append(open, b.Events[0].ID)
		}
		if round%50 == 0 {
			check(fmt.Sprintf("round %d", round))
		}
		if round == 150 {
			s.DropTagIndex()
		}
	}
	check("end")
	if got := s.OpenIDs(nil); !slices.Equal(got, open) {
		t.Fatalf("OpenIDs = %v, want %v", got, open)
	}
	s.Close()
	s = open2(t, dir, c)
	check("after reopen")
}

func open2(t *testing.T, dir string, c *clock) *Store { return open(t, dir, c) }

// TestCommitCause: an OK event naming its cause gets the cause's ID as
// CEventID and, without Resolves, resolves it ("close new event"); the
// correlation fields and NoAction are stored and replayed.
func TestCommitCause(t *testing.T) {
	dir := t.TempDir()
	c := &clock{time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s := open(t, dir, c)
	old := commit(t, s, Batch{Events: []Event{problem(1, 10, "old")}}).Events[0]
	b := commit(t, s, Batch{Events: []Event{
		problem(2, 20, "new"),
		{ObjectID: 2, Clock: 20, Value: ValueOK, CorrelationID: 9, NoAction: true, Cause: 1},
		{ObjectID: 1, Clock: 20, Value: ValueOK, CorrelationID: 9, Resolves: []uint64{old.ID}, Cause: 1},
	}})
	nw, closeNew, closeOld := b.Events[0], b.Events[1], b.Events[2]
	if closeNew.CEventID != nw.ID || !slices.Equal(closeNew.Resolves, []uint64{nw.ID}) || closeOld.CEventID != nw.ID {
		t.Fatalf("close new %+v, close old %+v", closeNew, closeOld)
	}
	want := stateOf(s)
	for _, id := range []uint64{old.ID, nw.ID} {
		if e, _ := s.Event(id); e.Open() || e.CorrelationID != 9 {
			t.Fatalf("problem %d after commit: %+v", id, e)
		}
	}
	if err := s.Commit(&Batch{Events: []Event{{Value: ValueOK, Cause: 1}}}); err == nil {
		t.Fatal("an event naming itself as its cause was committed")
	}
	s.Close()
	s = open(t, dir, c)
	defer s.Close()
	if d := cmp.Diff(want, stateOf(s)); d != "" {
		t.Fatalf("after reopen (-before +after):\n%s", d)
	}
	if e, _ := s.Event(closeNew.ID); !e.NoAction || e.CorrelationID != 9 || e.CEventID != nw.ID {
		t.Fatalf("replayed close-new event %+v", e)
	}
}

// The crash test of correlation: a child commits batches as correlation
// makes them (a new problem, the OK event closing it, the OK event
// closing an older problem) and prints each acknowledged batch; after
// kill -9 every acknowledged batch is there whole, and no batch is there
// in part: no problem closed twice, no OK event without its cause.
const corrCrashEnv = "PEREGRINE_EVENT_CORR_CRASH_DIR"

func TestCorrelationCrashChild(t *testing.T) {
	dir := os.Getenv(corrCrashEnv)
	if dir == "" {
		t.Skip("the child of TestCorrelationCrash")
	}
	s, err := Open(Options{Dir: dir, Sync: wal.SyncBatch})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	w := bufio.NewWriter(os.Stdout)
	var prev uint64
	for i := 0; i < 1_000_000; i++ {
		b := Batch{Events: []Event{problem(uint64(i%7), int64(i), "p"+strconv.Itoa(i))}}
		if prev != 0 {
			b.Events = append(b.Events,
				Event{ObjectID: uint64(i % 7), Clock: int64(i), Value: ValueOK, CorrelationID: 3, NoAction: i%2 == 0, Cause: 1},
				Event{ObjectID: 99, Clock: int64(i), Value: ValueOK, CorrelationID: 4, Resolves: []uint64{prev}, Cause: 1})
		}
		if err := s.Commit(&b); err != nil {
			fmt.Fprintln(w, "commit:", err)
			w.Flush()
			os.Exit(2)
		}
		// The next batch closes a problem left open by this one.
		ids := make([]string, len(b.Events))
		for j, e := range b.Events {
			ids[j] = strconv.FormatUint(e.ID, 10)
		}
		fmt.Fprintln(w, strings.Join(ids, " "))
		w.Flush()
		extra := commitOpen(s, uint64(i))
		prev = extra
	}
}

// commitOpen commits one problem that stays open until the next batch
// of the child closes it.
func commitOpen(s *Store, i uint64) uint64 {
	b := Batch{Events: []Event{{ObjectID: 99, Clock: int64(i), Value: ValueProblem, Tags: []Tag{{"pair", "x"}}}}}
	if err := s.Commit(&b); err != nil {
		fmt.Println("commit:", err)
		os.Exit(2)
	}
	return b.Events[0].ID
}

func TestCorrelationCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	for round := range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCorrelationCrashChild$")
		cmd.Env = append(os.Environ(), corrCrashEnv+"="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		var acked [][]uint64
		read := func() {
			var ids []uint64
			for _, f := range strings.Fields(sc.Text()) {
				id, err := strconv.ParseUint(f, 10, 64)
				if err != nil {
					t.Fatalf("child: %s", sc.Text())
				}
				ids = append(ids, id)
			}
			acked = append(acked, ids)
		}
		for sc.Scan() {
			read()
			if len(acked) >= 150+round*91 {
				break
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		for sc.Scan() {
			read()
		}
		cmd.Wait()
		s, err := Open(Options{Dir: dir})
		if err != nil {
			t.Fatalf("round %d: reopen after kill -9: %v", round, err)
		}
		for _, ids := range acked {
			for _, id := range ids {
				if _, ok := s.Event(id); !ok {
					t.Fatalf("round %d: event %d of an acknowledged batch lost", round, id)
				}
			}
		}
		closedBy := map[uint64]uint64{}
		for _, e := range s.Events(func(*Event) bool { return true }) {
			if e.Value != ValueOK || e.CorrelationID == 0 {
				continue
			}
			if _, ok := s.Event(e.CEventID); !ok {
				t.Fatalf("round %d: OK event %d without its cause %d", round, e.ID, e.CEventID)
			}
			for _, pid := range e.Resolves {
				if by, dup := closedBy[pid]; dup {
					t.Fatalf("round %d: problem %d closed by %d and %d", round, pid, by, e.ID)
				}
				closedBy[pid] = e.ID
				if p, _ := s.Event(pid); p.REventID != e.ID || p.CorrelationID != e.CorrelationID {
					t.Fatalf("round %d: problem %+v, closed by %+v", round, p, e)
				}
			}
		}
		s.Close()
		t.Logf("round %d: %d acknowledged correlation batches survived whole", round, len(acked))
	}
}
