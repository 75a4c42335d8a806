package server

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/engine"
	"github.com/peregrine-mon/peregrine/internal/history/historytest"
	"github.com/peregrine-mon/peregrine/internal/zbx"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// buildBinary builds cmd/peregrine once per test process.
func buildBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "peregrine-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "peregrine")
		out, err := exec.Command("go", "build", "-o", binPath, "../../cmd/peregrine").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

type sentValue struct {
	item  int
	clock int64
	value float64
}

// TestIntegrationCrashLosesNothingAcknowledged runs `peregrine serve` as a
// child, drives it with concurrent senders, kills it with SIGKILL at random
// moments several times and restarts it; then it opens the history engine
// on the data directory and checks that every value a sender saw
// acknowledged is there exactly once, with the value sent. The head is
// flushed into blocks every second or 50k values, so kills also land
// during flushes and WAL truncations.
func TestIntegrationCrashLosesNothingAcknowledged(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: kills and restarts the server")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	cfgPath := filepath.Join(dir, "peregrine.yaml")
	os.WriteFile(cfgPath, []byte("data_dir: "+data+"\ntrapper:\n  listen: 127.0.0.1:0\nhttp:\n  listen: 127.0.0.1:0\nhistory:\n  store: engine\n  fsync: batch\n  flush_interval: 1s\n  max_head_values: 50000\n"), 0o600)
	const items = 20
	var spec strings.Builder
	spec.WriteString("hosts:\n  - host: crash-test\n    groups: [Crash]\n    items:\n")
	for i := 0; i < items; i++ {
		fmt.Fprintf(&spec, "      - key: v[%d]\n", i)
	}
	specPath := filepath.Join(dir, "spec.yaml")
	os.WriteFile(specPath, []byte(spec.String()), 0o600)
	if out, err := exec.Command(bin, "import", "-config", cfgPath, specPath).CombinedOutput(); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}

	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	var mu sync.Mutex
	acked := map[int64]sentValue{} // clock -> value; clocks are unique across the run
	sent := map[int64]sentValue{}
	nextClock := time.Now().Add(-30 * 24 * time.Hour).Unix() // inside the items' 90-day retention: the retention loop runs too
	rounds := 4
	for round := 0; round < rounds; round++ {
		cmd := exec.Command(bin, "serve", "-config", cfgPath)
		stderr, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		addrs := waitAddrs(t, stderr)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var conn net.Conn
				for {
					select {
					case <-stop:
						if conn != nil {
							conn.Close()
						}
						return
					default:
					}
					if conn == nil {
						c, err := net.Dial("tcp", addrs["trapper"])
						if err != nil {
							time.Sleep(10 * time.Millisecond)
							continue
						}
						conn = c
					}
					// One frame of 100 values with clocks nobody else uses.
					mu.Lock()
					batch := make([]sentValue, 100)
					for i := range batch {
						batch[i] = sentValue{item: int(nextClock % items), clock: nextClock, value: float64(nextClock%1000) / 4}
						sent[nextClock] = batch[i]
						nextClock++
					}
					mu.Unlock()
					var b strings.Builder
					b.WriteString(`{"request":"sender data","data":[`)
					for i, v := range batch {
						if i > 0 {
							b.WriteByte(',')
						}
						fmt.Fprintf(&b, `{"host":"crash-test","key":"v[%d]","value":"%g","clock":%d,"ns":0}`, v.item, v.value, v.clock)
					}
					b.WriteString("]}")
					conn.SetDeadline(time.Now().Add(5 * time.Second))
					if _, err := conn.Write(zbx.AppendFrame(nil, []byte(b.String()), zbx.FlagProtocol)); err != nil {
						conn.Close()
						conn = nil
						continue
					}
					_, reply, err := zbx.NewReader(conn, zbx.ReaderOptions{}).ReadFrame()
					if err != nil {
						conn.Close()
						conn = nil
						continue
					}
					if strings.Contains(string(reply), "processed: 100;") {
						mu.Lock()
						for _, v := range batch {
							acked[v.clock] = v
						}
						mu.Unlock()
					} else {
						t.Errorf("unexpected reply %s", reply)
					}
				}
			}()
		}
		time.Sleep(time.Duration(500+r.IntN(2000)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL) // mid-flight: some frames were in the WAL, unanswered
		cmd.Wait()
		close(stop)
		wg.Wait()
		mu.Lock()
		t.Logf("round %d: %d values acknowledged so far, %d sent", round, len(acked), len(sent))
		mu.Unlock()
	}
	if len(acked) == 0 {
		t.Fatal("nothing was acknowledged")
	}

	// Read the data directory back with the engine itself.
	s, err := engine.Open(engine.Options{Dir: HistoryPath(data)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.BlockCount() == 0 {
		t.Fatal("no block was flushed: the test did not exercise flushes")
	}
	t.Logf("engine reopened: %d blocks, %d values replayed from the WAL", s.BlockCount(), s.Replayed())
	// The test's items by id, from the catalog: the self-monitoring host's
	// internal items store values in the same engine and are not ours.
	cat, err := catalog.Open(context.Background(), catalog.Options{Path: CatalogPath(data)})
	if err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	for i := 0; i < items; i++ {
		it := cat.Snapshot().Lookup("crash-test", fmt.Sprintf("v[%d]", i))
		if it == nil {
			t.Fatalf("item v[%d] is not in the catalog", i)
		}
		ids = append(ids, it.ID)
	}
	cat.Close()
	stored := map[int64]int{}
	for _, id := range ids {
		for _, v := range historytest.ReadAll(t, s, history.Query{ItemID: id, From: 0, Till: 1 << 40}) {
			stored[v.Clock]++
			want, ok := sent[v.Clock]
			if !ok {
				t.Fatalf("stored a value nobody sent: %+v", v)
			}
			if v.F != want.value {
				t.Fatalf("clock %d: stored %v, sent %v", v.Clock, v.F, want.value)
			}
		}
	}
	missing := 0
	for c := range acked {
		switch stored[c] {
		case 0:
			missing++
		case 1:
		default:
			t.Fatalf("clock %d stored %d times", c, stored[c])
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d acknowledged values are missing after %d SIGKILLs", missing, len(acked), rounds)
	}
	t.Logf("%d acknowledged values all present after %d SIGKILLs; %d stored in total (unacknowledged frames may or may not be)", len(acked), rounds, len(stored))
}
