package wal

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCrashCycles runs cycles of open, replay, concurrent appends and a
// crash at a random moment, continuing each cycle on the crashed
// filesystem. Every cycle checks that replay succeeds, that no record is
// duplicated or invented, and that nothing that must be durable is lost:
// under SyncBatch every record whose Append returned before the crash, and
// under every policy every record a previous replay returned (replay's cut
// is fsynced, and later segments never touch earlier ones).
func TestCrashCycles(t *testing.T) {
	f := func(mode SyncMode, torn crashTorn) {
		t.Run(fmt.Sprintf("sync=%s/torn=%v", mode, torn == keepTorn), func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, uint64(mode)))
			fs := newMemFS()
			logs := &logCapture{}
			o := Options{Sync: mode, SegmentSize: 2048, SyncInterval: time.Millisecond, Logger: slog.New(logs)}
			// Slow fsyncs down a little, so that the crash often finds
			// written but unsynced bytes to tear.
			var nsync atomic.Int64
			slowSyncs := func(op fsOp, _ string) error {
				if op == opSync && nsync.Add(1)%2 == 0 {
					time.Sleep(100 * time.Microsecond)
				}
				return nil
			}
			fs.setInject(slowSyncs)
			known := map[string]bool{}    // every record ever appended
			required := map[string]bool{} // records that must replay
			cycles, writers, perWriter := 12, 4, 40
			cuts := 0
			if testing.Short() {
				cycles = 6
			}
			for cycle := range cycles {
				w := openMem(t, fs, o)
				got := replayAll(t, w)
				seen := map[string]bool{}
				for _, rec := range got {
					s := string(rec)
					switch {
					case seen[s]:
						t.Fatalf("cycle %d: record %q replayed twice", cycle, s)
					case !known[s]:
						t.Fatalf("cycle %d: replay invented record %q", cycle, s)
					}
					seen[s] = true
				}
				for s := range required {
					if !seen[s] {
						t.Fatalf("cycle %d: record %q was durable and is lost (%d replayed)", cycle, s, len(got))
					}
				}
				required = seen

				// Appends from several goroutines; crash after a random
				// number of acknowledgements, while they are still running.
				var mu sync.Mutex
				acked := map[string]bool{}
				crashAt := r.IntN(writers * perWriter)
				var crashed *memFS
				ackedBefore := 0
				crash := func() { // with mu held
					ackedBefore = len(acked)
					if mode == SyncBatch {
						for s := range acked {
							required[s] = true
						}
					}
					crashed = fs.CrashClone(torn, r)
				}
				var wg sync.WaitGroup
				for g := range writers {
					for i := range perWriter {
						known[fmt.Sprintf("c%02d-w%d-%03d", cycle, g, i)] = true
					}
					wg.Go(func() {
						for i := range perWriter {
							rec := fmt.Sprintf("c%02d-w%d-%03d", cycle, g, i)
							if err := w.Append([]byte(rec)); err != nil {
								t.Errorf("Append: %v", err)
								return
							}
							mu.Lock()
							acked[rec] = true
							if len(acked) > crashAt && crashed == nil {
								crash() // the other writers are mid-Append
							}
							mu.Unlock()
						}
					})
				}
				wg.Wait()
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				cuts += len(logs.take())
				t.Logf("cycle %d: replayed %d, %d acknowledged before the crash, %d torn tails cut so far", cycle, len(got), ackedBefore, cuts)
				fs = crashed
				fs.setInject(slowSyncs)
			}
			w := openMem(t, fs, o)
			defer w.Close()
			got := replayAll(t, w)
			have := map[string]bool{}
			for _, rec := range got {
				have[string(rec)] = true
			}
			for s := range required {
				if !have[s] {
					t.Fatalf("final: durable record %q lost", s)
				}
			}
		})
	}
	f(SyncBatch, keepSynced)
	f(SyncBatch, keepTorn)
	f(SyncInterval, keepTorn)
	f(SyncNever, keepSynced)
}
