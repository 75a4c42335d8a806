package ingest

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// rssChildEnv makes the test binary a trapper child for
// TestIntegrationInflateMemory instead of running the test.
const rssChildEnv = "PEREGRINE_INGEST_RSS_CHILD"

// The child's settings: a small budget so the test is quick, and frames
// as large as the budget (the configuration allows no larger).
const (
	rssBudget   = 64 << 20
	rssMaxFrame = 64 << 20
)

// rssTimeout is the child's trapper.timeout, which also bounds how long
// a frame waits for memory. The big frames of a load take turns (each
// claims what it may need once its body is in), so on a starved CI core
// the youngest of 48 waits for the 47 before it; the test is about
// memory, not latency, and must not fail because a frame waited longer
// than a minute on a slow machine.
const rssTimeout = 5 * time.Minute

// TestIntegrationInflateMemory runs a trapper in a child process (this
// test binary, re-executed) with max_buffered_bytes 64 MiB and reads its
// peak RSS (VmHWM) after two loads of 48 concurrent compressed frames:
// 48 that honestly announce the maximum frame size of inflated JSON (a
// 64 KiB zlib stream each, refused once they need more than one
// connection may hold), then 48 that inflate to 4 MiB of 80,000 values
// each and are processed. Peak RSS must stay within the RSS at start +
// max_buffered_bytes + rssConstant (ingest/doc.go).
func TestIntegrationInflateMemory(t *testing.T) {
	if os.Getenv(rssChildEnv) != "" {
		rssChild(t)
		return
	}
	if testing.Short() {
		t.Skip("runs a trapper child process and 96 frames of 64 MiB or 4 MiB inflated")
	}
	if raceEnabled {
		t.Skip("the race detector's shadow memory multiplies RSS")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestIntegrationInflateMemory$", "-test.count=1")
	cmd.Env = append(os.Environ(), rssChildEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}()
	lines := bufio.NewScanner(stdout)
	var addr string
	for addr == "" && lines.Scan() {
		addr, _ = strings.CutPrefix(lines.Text(), "ADDR ")
	}
	if addr == "" {
		t.Fatalf("child did not report its address; stderr:\n%s", stderr.String())
	}
	go io.Copy(io.Discard, stdout)
	base := vmHWM(t, cmd.Process.Pid)

	// Load 1: 48 frames announcing 64 MiB of inflated JSON each.
	big := rssFrame(t, `{"request":"sender data","data":[{"host":"peregrine-test","key":"trap.t","value":"`, `"}]}`, "a", rssMaxFrame)
	refused := rssLoad(t, addr, big, 48)
	afterBig := vmHWM(t, cmd.Process.Pid)

	// Load 2: 48 frames of 4 MiB inflated, 80,000-odd values each.
	row := `{"host":"peregrine-test","key":"trap.a","value":"1"},`
	small := rssFrame(t, `{"request":"sender data","data":[`, `{"host":"peregrine-test","key":"trap.a","value":"1"}]}`, row, 4<<20)
	failed := rssLoad(t, addr, small, 48)
	peak := vmHWM(t, cmd.Process.Pid)
	t.Logf("child VmHWM: %d MiB at start, %d MiB after 48 frames of 64 MiB inflated (%d refused), %d MiB after 48 frames of 4 MiB inflated (%d not processed); bound %d MiB",
		base>>20, afterBig>>20, refused, peak>>20, failed, (base+rssBudget+rssConstant)>>20)
	if refused != 48 {
		t.Errorf("%d of 48 maximum-size frames refused, want all: one connection may hold at most 7/8 of the budget", refused)
	}
	if failed != 0 {
		t.Errorf("%d of 48 4 MiB frames not processed; child log:\n%s", failed, stderr.String())
	}
	if peak > base+rssBudget+rssConstant {
		t.Fatalf("peak RSS %d MiB, over the %d MiB at start + max_buffered_bytes %d MiB + %d MiB", peak>>20, base>>20, rssBudget>>20, rssConstant>>20)
	}
}

// rssConstant is the documented allowance over max_buffered_bytes for the
// process beside the trapper's buffers: Go runtime, code, catalog and
// allocator slack (see ingest/doc.go; the 48 connections here add well
// under 1 MiB of per-connection state).
const rssConstant = 48 << 20

// rssFrame builds a compressed frame whose payload is head, then fill
// repeated, then tail, exactly size bytes long.
func rssFrame(t *testing.T, head, tail, fill string, size int) []byte {
	t.Helper()
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	zw.Write([]byte(head))
	// Whole fills only, so the JSON stays valid: up to len(fill)-1 bytes
	// short of size.
	body := (size - len(head) - len(tail)) / len(fill) * len(fill)
	chunk := []byte(strings.Repeat(fill, 64<<10/len(fill)))
	for n := body; n > 0; {
		m := min(n, len(chunk))
		zw.Write(chunk[:m])
		n -= m
	}
	zw.Write([]byte(tail))
	zw.Close()
	inflated := len(head) + body + len(tail)
	var h [13]byte
	copy(h[:], "ZBXD")
	h[4] = zbx.FlagProtocol | zbx.FlagCompressed
	putLE32(h[5:], uint32(z.Len()))
	putLE32(h[9:], uint32(inflated))
	return append(h[:], z.Bytes()...)
}

func putLE32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

// rssLoad sends frame on n connections at once and returns how many were
// not answered with values processed.
func rssLoad(t *testing.T, addr string, frame []byte, n int) int {
	t.Helper()
	var wg sync.WaitGroup
	var notProcessed atomic.Int64
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(rssTimeout + time.Minute))
			if _, err := c.Write(frame); err != nil && !isReset(err) {
				t.Error(err)
				return
			}
			_, p, err := zbx.NewReader(c, zbx.ReaderOptions{}).ReadFrame()
			if err != nil || !bytes.Contains(p, []byte(`"success"`)) || bytes.Contains(p, []byte("processed: 0;")) {
				notProcessed.Add(1)
			}
		}()
	}
	wg.Wait()
	return int(notProcessed.Load())
}

// vmHWM reads a process's peak resident set size.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("cannot read peak RSS: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM line %q: %v", line, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// countingSubmitter acknowledges values at once and keeps none: the
// child measures the trapper, not a store.
type countingSubmitter struct{ n atomic.Int64 }

func (c *countingSubmitter) Submit(v []history.Sample, _ *pipeline.Ticket) error {
	c.n.Add(int64(len(v)))
	return nil
}

// rssChild serves a trapper until its stdin closes.
func rssChild(t *testing.T) {
	cat, err := catalog.Open(context.Background(), catalog.Options{Path: filepath.Join(t.TempDir(), "catalog.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	if _, err := cat.Apply(context.Background(), testSpec()); err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{
		Listen: "127.0.0.1:0", MaxFrameSize: rssMaxFrame, MaxBufferedBytes: rssBudget,
		Timeout: rssTimeout, Catalog: cat, Pipeline: &countingSubmitter{},
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Run(ctx); close(done) }()
	fmt.Printf("ADDR %s\n", srv.Addr())
	io.Copy(io.Discard, os.Stdin)
	cancel()
	<-done
}
