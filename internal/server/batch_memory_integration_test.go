package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/engine"
)

// batchMemoryBound is how much a batch of four 2M-row history.get calls
// may raise `peregrine serve`'s peak RSS over its RSS before the batch
// (documented in internal/api/doc.go). Gathering the responses took about
// 110 MB per call; streaming them takes the buffers of one row at a
// time plus what one store read and the garbage collector's slack need.
const batchMemoryBound = 64 << 20

// TestIntegrationBatchMemoryBounded runs `peregrine serve` over a data
// directory holding one float item's 2M values (written with the engine
// beforehand, so the server starts idle), sends one JSON-RPC batch of four
// history.get calls for all of them, reads the whole answer, and checks
// that the server's peak RSS (VmHWM, reset just before the batch) stayed
// within batchMemoryBound of its RSS before the batch.
func TestIntegrationBatchMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: builds and runs the server with 2M values")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads the child's peak RSS from /proc")
	}
	const n = 2_000_000
	bin := buildBinary(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	cfgPath := filepath.Join(dir, "peregrine.yaml")
	os.WriteFile(cfgPath, []byte("data_dir: "+data+"\ntrapper:\n  listen: 127.0.0.1:0\nhttp:\n  listen: 127.0.0.1:0\nhistory:\n  store: engine\n"), 0o600)
	specPath := filepath.Join(dir, "spec.yaml")
	os.WriteFile(specPath, []byte("hosts:\n  - host: rss-test\n    groups: [RSS]\n    items:\n      - key: gauge\n        value_type: float\n"), 0o600)
	if out, err := exec.Command(bin, "import", "-config", cfgPath, specPath).CombinedOutput(); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	cat, err := catalog.Open(context.Background(), catalog.Options{Path: CatalogPath(data)})
	if err != nil {
		t.Fatal(err)
	}
	id := cat.Snapshot().Lookup("rss-test", "gauge").ID
	cat.Close()

	// One value a second up to a minute ago: 23 days, inside the item's
	// retention, flushed into blocks.
	eng, err := engine.Open(engine.Options{Dir: HistoryPath(data)})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Unix() - n - 60
	batch := make([]history.Sample, 0, 1<<14)
	for i := 0; i < n; i++ {
		batch = append(batch, history.Sample{ItemID: id, Clock: start + int64(i), Type: history.Float, F: math.Round(100*(20+math.Sin(float64(i)/500))) / 100})
		if len(batch) == cap(batch) || i == n-1 {
			if err := eng.Write(context.Background(), batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := eng.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(bin, "serve", "-config", cfgPath)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	url := "http://" + waitAddrs(t, stderr)["http"] + "/api_jsonrpc.php"
	post := func(body string, w io.Writer) {
		t.Helper()
		resp, err := http.Post(url, "application/json-rpc", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if _, err := io.Copy(w, resp.Body); err != nil {
			t.Fatal(err)
		}
	}
	pw, err := os.ReadFile(filepath.Join(data, "admin-password"))
	if err != nil {
		t.Fatal(err)
	}
	var login bytes.Buffer
	post(`{"jsonrpc":"2.0","method":"user.login","params":{"username":"Admin","password":`+strconv.Quote(strings.TrimSpace(string(pw)))+`},"id":1}`, &login)
	var sess struct{ Result string }
	if err := json.Unmarshal(login.Bytes(), &sess); err != nil || sess.Result == "" {
		t.Fatalf("login: %s", login.String())
	}

	pid := cmd.Process.Pid
	before := procStatusKB(t, pid, "VmRSS")
	// Reset the peak to the current RSS (Linux >= 4.0), so VmHWM is
	// the batch's own peak.
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		t.Fatalf("cannot reset the server's peak RSS: %v", err)
	}
	var calls []string
	for i := 1; i <= 4; i++ {
		calls = append(calls, fmt.Sprintf(`{"jsonrpc":"2.0","method":"history.get","params":{"history":0,"itemids":["%d"],"sortfield":"clock","sortorder":"ASC","output":"extend"},"auth":%q,"id":%d}`, id, sess.Result, i))
	}
	rows := &countingWriter{pattern: []byte(`{"itemid":`)}
	elems := &countingWriter{pattern: []byte(`"jsonrpc":"2.0"`)}
	var head bytes.Buffer
	t0 := time.Now()
	post("["+strings.Join(calls, ",")+"]", io.MultiWriter(rows, elems, &limitedBuffer{buf: &head, max: 256}))
	took := time.Since(t0)
	peak := procStatusKB(t, pid, "VmHWM")
	growth := (peak - before) << 10
	t.Logf("batch of 4 x %d rows: %d MB answered in %v; server RSS before %d MB, peak %d MB (+%.1f MB, bound %d MB)",
		n, rows.bytes/1e6, took.Round(time.Millisecond), before>>10, peak>>10, float64(growth)/(1<<20), batchMemoryBound>>20)
	if rows.n != 4*n || elems.n != 4 {
		t.Fatalf("answer has %d elements and %d rows, want 4 and %d; it starts %s", elems.n, rows.n, 4*n, head.String())
	}
	if growth > batchMemoryBound {
		t.Fatalf("serving the batch raised the server's RSS by %d MB, more than %d MB", growth>>20, batchMemoryBound>>20)
	}
}

// procStatusKB reads a "kB" field of /proc/<pid>/status.
func procStatusKB(t *testing.T, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", field, line, err)
			}
			return kb
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// countingWriter counts the occurrences of pattern in what is written,
// across writes, and the bytes written.
type countingWriter struct {
	pattern []byte
	tail    []byte
	n       int
	bytes   int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.bytes += int64(len(p))
	// The tail (shorter than the pattern) joins the previous write to
	// this one, so a pattern split between them is counted once.
	joined := append(c.tail, p[:min(len(p), len(c.pattern)-1)]...)
	c.n += bytes.Count(joined, c.pattern) + bytes.Count(p, c.pattern)
	keep := len(c.pattern) - 1
	if len(p) >= keep {
		c.tail = append(c.tail[:0], p[len(p)-keep:]...)
	} else {
		c.tail = append(c.tail, p...)
		c.tail = c.tail[max(0, len(c.tail)-keep):]
	}
	return len(p), nil
}

// limitedBuffer keeps the first max bytes written.
type limitedBuffer struct {
	buf *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
