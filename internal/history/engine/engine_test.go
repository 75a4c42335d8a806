package engine

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/historytest"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

func open(t testing.TB, dir string, chunkValues int) *Store {
	t.Helper()
	s, err := Open(Options{Dir: dir, ChunkValues: chunkValues, Sync: wal.SyncNever}) // unit tests: Close syncs; durability is the crash tests' job
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestContract(t *testing.T) {
	historytest.Run(t, func(t *testing.T) history.Store {
		s := open(t, t.TempDir(), 16) // small chunks: reads cross many
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// model is the reference. It keeps every version of a value with where
// it lives (head, a 2-hour block or a day block), because retention and
// compaction act on locations: dropping a block can uncover nothing, but
// a head version always survives them.
type model struct {
	vals map[uint64]map[int64][]ver
	seq  int
}

type ver struct {
	s   history.Sample
	loc int // locHead, loc2h or locDay
	seq int
}

const (
	locHead = iota
	loc2h
	locDay
)

func newModel() *model { return &model{vals: map[uint64]map[int64][]ver{}} }

func (m *model) write(v []history.Sample) {
	for _, s := range v {
		if m.vals[s.ItemID] == nil {
			m.vals[s.ItemID] = map[int64][]ver{}
		}
		ts := s.Clock*1e9 + int64(s.NS)
		vs := m.vals[s.ItemID][ts]
		kept := vs[:0]
		for _, x := range vs {
			if x.loc != locHead { // the head holds one version per timestamp
				kept = append(kept, x)
			}
		}
		m.seq++
		m.vals[s.ItemID][ts] = append(kept, ver{s: s, loc: locHead, seq: m.seq})
	}
}

func (m *model) flush() {
	for _, byTS := range m.vals {
		for _, vs := range byTS {
			for i := range vs {
				if vs[i].loc == locHead {
					vs[i].loc = loc2h
				}
			}
		}
	}
}

// dropBefore mirrors DropBefore: block versions whose partition ended by
// cutoff go.
func (m *model) dropBefore(cutoff int64) {
	limit := cutoff * 1e9
	day := int64(DayPartition)
	for _, byTS := range m.vals {
		for ts, vs := range byTS {
			kept := vs[:0]
			for _, x := range vs {
				switch {
				case x.loc == loc2h && partitionOf(ts)+int64(PartitionDuration) <= limit:
				case x.loc == locDay && floorDiv(ts, day)*day+day <= limit:
				default:
					kept = append(kept, x)
				}
			}
			byTS[ts] = kept
		}
	}
}

// compact mirrors Compact: in every finished day the newest block version
// moves to the day block; item's block versions older than now-keep go.
func (m *model) compact(now time.Time, withToday bool, item uint64, keep int64) {
	day := int64(DayPartition)
	today := floorDiv(now.UnixNano(), day) * day
	if withToday {
		today += day
	}
	for id, byTS := range m.vals {
		for ts, vs := range byTS {
			if floorDiv(ts, day)*day+day > today {
				continue
			}
			best := -1
			var kept []ver
			for i, x := range vs {
				if x.loc == locHead {
					kept = append(kept, x)
				} else if best < 0 || x.seq > vs[best].seq {
					best = i
				}
			}
			if best >= 0 && !(id == item && ts < nanos(now.Unix()-keep)) {
				b := vs[best]
				b.loc = locDay
				kept = append(kept, b)
			}
			byTS[ts] = kept
		}
	}
}

func (m *model) read(q history.Query) []history.Sample {
	var out []history.Sample
	for _, vs := range m.vals[q.ItemID] {
		best := -1
		for i, x := range vs {
			if best < 0 || x.seq > vs[best].seq {
				best = i
			}
		}
		if best < 0 {
			continue
		}
		if s := vs[best].s; s.Clock >= q.From && s.Clock <= q.Till {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if q.Desc {
			return out[j].Before(&out[i])
		}
		return out[i].Before(&out[j])
	})
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out
}

// TestRandomOperationsMatchModel runs random sequences of writes (in
// order, late, duplicate), reads and restarts, and checks every read
// against the reference model.
func TestRandomOperationsMatchModel(t *testing.T) {
	seeds := 10
	if testing.Short() {
		seeds = 5
	}
	for seed := 0; seed < seeds; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(seed), 7))
			dir := t.TempDir()
			s := open(t, dir, 8)
			defer func() { s.Close() }()
			m := newModel()
			types := []history.ValueType{history.Float, history.Uint, history.Str, history.Text, history.Log}
			clock := map[uint64]int64{}
			for op := 0; op < 200; op++ {
				switch k := r.IntN(10); {
				case k < 6: // write a batch
					var batch []history.Sample
					for n := r.IntN(50) + 1; n > 0; n-- {
						item := uint64(r.IntN(5) + 1)
						vt := types[item%5]
						c := clock[item] + int64(r.IntN(3))
						clock[item] = c
						if r.IntN(5) == 0 {
							c -= int64(r.IntN(40)) // late or duplicate
						}
						v := history.Sample{ItemID: item, Clock: 1000 + c*600, NS: int32(r.IntN(3)), Type: vt} // 10-minute steps: data spans many partitions
						switch vt {
						case history.Float:
							v.F = float64(r.IntN(1000)) / 100
						case history.Uint:
							v.U = r.Uint64()
						case history.Log:
							v.S = fmt.Sprint("line ", r.IntN(100))
							v.Log = &history.LogMeta{Timestamp: int64(r.IntN(9)), Source: "src", Severity: int32(r.IntN(5)), EventID: int64(r.IntN(99))}
						default:
							v.S = fmt.Sprint("s", r.IntN(20))
						}
						batch = append(batch, v)
					}
					if err := s.Write(context.Background(), batch); err != nil {
						t.Fatal(err)
					}
					m.write(batch)
				case k < 9: // read
					q := history.Query{ItemID: uint64(r.IntN(6) + 1), From: 1000 + int64(r.IntN(100)-10)*600, Desc: r.IntN(2) == 0}
					q.Till = q.From + int64(r.IntN(150))*600
					if r.IntN(3) == 0 {
						q.Limit = r.IntN(10) + 1
					}
					got := historytest.ReadAll(t, s, q)
					want := m.read(q)
					if d := cmp.Diff(want, got, cmp.Comparer(func(a, b *history.LogMeta) bool {
						return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
					})); d != "" {
						t.Fatalf("op %d read %+v (-model +engine):\n%s", op, q, d)
					}
				case k < 10 && r.IntN(2) == 0: // flush the head into blocks, maybe drop old partitions
					if err := s.Flush(); err != nil {
						t.Fatal(err)
					}
					m.flush()
					if r.IntN(3) == 0 {
						cutoff := 1000 + int64(r.IntN(60))*600
						if _, err := s.DropBefore(cutoff); err != nil {
							t.Fatal(err)
						}
						m.dropBefore(cutoff)
					}
					if r.IntN(2) == 0 {
						// Compact every finished day; item 2 keeps only
						// what is newer than a random retention.
						now := time.Unix(1000+int64(r.IntN(200))*600, 0)
						keep := int64(r.IntN(100)) * 600
						ret := func(item uint64) (int64, bool) { return keep, item == 2 }
						// CompactNow takes the current day too.
						withToday := r.IntN(2) == 0
						compact := s.Compact
						if withToday {
							compact = s.CompactNow
						}
						if _, err := compact(context.Background(), now, ret); err != nil {
							t.Fatal(err)
						}
						m.compact(now, withToday, 2, keep)
					}
				default: // restart
					if err := s.Close(); err != nil {
						t.Fatal(err)
					}
					s = open(t, dir, 8)
				}
			}
		})
	}
}

func TestReopenReplaysEverything(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, 64)
	var all []history.Sample
	for b := 0; b < 50; b++ {
		var batch []history.Sample
		for i := 0; i < 100; i++ {
			batch = append(batch, history.Sample{ItemID: uint64(i%10 + 1), Clock: int64(b*100 + i), Type: history.Float, F: float64(b*100 + i)})
		}
		if err := s.Write(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
		all = append(all, batch...)
	}
	before := s.Stats()
	s.Close()
	s = open(t, dir, 64)
	defer s.Close()
	if s.Replayed() != int64(len(all)) {
		t.Fatalf("replayed %d values, wrote %d", s.Replayed(), len(all))
	}
	after := s.Stats()
	if before.Samples != after.Samples || after.Samples != len(all) {
		t.Fatalf("samples before %d after %d, wrote %d", before.Samples, after.Samples, len(all))
	}
	got := historytest.ReadAll(t, s, history.Query{ItemID: 3, From: 0, Till: 1 << 40})
	if len(got) != 500 {
		t.Fatalf("item 3 has %d values after reopen, want 500", len(got))
	}
}

func TestFlushReopenAndCorruptBlockQuarantine(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, 32)
	var batch []history.Sample
	for i := 0; i < 3000; i++ {
		batch = append(batch, history.Sample{ItemID: uint64(i%3 + 1), Clock: 1_700_000_000 + int64(i)*10, Type: history.Float, F: float64(i)})
	}
	if err := s.Write(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if s.BlockCount() < 2 {
		t.Fatalf("3000 values over 8.3 hours should make several partition blocks, got %d", s.BlockCount())
	}
	first, _, err := s.wal.Segments()
	if err != nil {
		t.Fatal(err)
	}
	if first < 2 {
		t.Fatalf("WAL not truncated after the flush: first segment %d", first)
	}
	s.Close()
	s = open(t, dir, 32)
	if s.Replayed() != 0 {
		t.Fatalf("replayed %d values that were already in blocks", s.Replayed())
	}
	if n := len(historytest.ReadAll(t, s, history.Query{ItemID: 2, From: 0, Till: 1 << 40})); n != 1000 {
		t.Fatalf("item 2: %d values after flush and reopen, want 1000", n)
	}
	// Damage one block: it is quarantined by name at the next open, the
	// rest stays readable.
	victim := s.blocks[0].path
	s.Close()
	data, _ := os.ReadFile(victim)
	data[len(data)-30] ^= 0xff // inside the index
	os.WriteFile(victim, data, 0o640)
	var logs bytes.Buffer
	s, err = Open(Options{Dir: dir, ChunkValues: 32, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatalf("open with a corrupt block must not fail: %v", err)
	}
	defer s.Close()
	if s.Quarantined() != 1 || !strings.Contains(logs.String(), filepath.Base(victim)) {
		t.Fatalf("quarantined %d; log:\n%s", s.Quarantined(), logs.String())
	}
	n := len(historytest.ReadAll(t, s, history.Query{ItemID: 2, From: 0, Till: 1 << 40}))
	if n == 0 || n >= 1000 {
		t.Fatalf("item 2: %d values, want the ones outside the quarantined block", n)
	}
}
