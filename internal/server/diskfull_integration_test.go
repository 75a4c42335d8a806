package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/config"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/engine"
	"github.com/peregrine-mon/peregrine/internal/history/historytest"
	"github.com/peregrine-mon/peregrine/internal/testutil"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// The disk-full tests of issue 25 (fault 3) run a server whose data
// directory is a real tmpfs of 48 MiB (testutil.InTmpfs: unshare -rm and
// mount, skipped only where user namespaces are not permitted), fill it,
// and check the whole story: values are refused (senders told "failed"),
// /healthz says not ready and why, nothing refused is stored; once the
// filler is deleted intake resumes by itself within seconds, without a
// restart, /healthz says ok again; and after a restart every value that
// was acknowledged is in history exactly once and no refused one is.
//
// Before the fix, intake stayed off after the space came back (the
// history WAL refused every append until it was reopened) and /healthz
// said "ok" throughout.

// TestIntegrationDiskFullWAL runs without history.min_free_space: the
// disk fills for real under the history WAL, whose writes fail with
// ENOSPC, and which takes appends again by itself once there is room.
func TestIntegrationDiskFullWAL(t *testing.T) {
	diskFull(t, 0, "no space left on device")
}

// TestIntegrationDiskFullThreshold runs with history.min_free_space at
// 8 MiB and fills the disk to 4 MiB free: values are refused before any
// write, with the setting named in the sender's reply.
func TestIntegrationDiskFullThreshold(t *testing.T) {
	diskFull(t, 8<<20, "less than history.min_free_space")
}

func diskFull(t *testing.T, minFree int64, reason string) {
	if testing.Short() {
		t.Skip("integration test: mounts a tmpfs in a namespace of its own and fills it")
	}
	mnt, inside := testutil.InTmpfs(t, 48<<20)
	if !inside {
		return
	}
	cfg := config.Default()
	cfg.DataDir = filepath.Join(mnt, "data")
	if err := os.Mkdir(cfg.DataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg.Trapper.Listen = "127.0.0.1:0"
	cfg.HTTP.Listen = "127.0.0.1:0"
	cfg.History.MinFreeSpace = config.ByteSize(minFree)
	cfg.History.FlushInterval = config.Duration(24 * time.Hour) // no flush in the middle of the story
	catalogtest.Write(t, CatalogPath(cfg.DataDir), catalog.Spec{Hosts: []catalog.HostSpec{{
		Host: "disk-host", Groups: []string{"Disk"}, Items: []catalog.ItemSpec{{Key: "v", ValueType: "float"}}}}})
	s, stop := runServer(t, cfg)
	item := s.Catalog.Snapshot().Lookup("disk-host", "v").ID
	trapper, healthURL := s.TrapperAddr().String(), "http://"+s.HTTPAddr().String()+"/healthz"

	// Frames of 50 values, each value with a clock of its own.
	const perFrame = 50
	clock := time.Now().Add(-24 * time.Hour).Unix()
	acked, refused := map[int64]bool{}, map[int64]bool{}
	send := func() (ok bool, info string) {
		t.Helper()
		var b strings.Builder
		b.WriteString(`{"request":"sender data","data":[`)
		first := clock
		for i := range perFrame {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"host":"disk-host","key":"v","value":"%d","clock":%d,"ns":0}`, clock, clock)
			clock++
		}
		b.WriteString("]}")
		reply := trapperRequest(t, trapper, b.String())
		ok = strings.Contains(reply, `"response":"success","info":"processed: 50; failed: 0;`)
		for c := first; c < clock; c++ {
			if ok {
				acked[c] = true
			} else {
				refused[c] = true
			}
		}
		return ok, reply
	}
	health := func() (int, string) {
		t.Helper()
		r, err := http.Get(healthURL)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return r.StatusCode, string(b)
	}

	for range 10 {
		if ok, reply := send(); !ok {
			t.Fatalf("before the disk filled: %s", reply)
		}
	}
	if code, body := health(); code != http.StatusOK {
		t.Fatalf("/healthz before the disk filled: %d %s", code, body)
	}

	filler := filepath.Join(mnt, "filler")
	fill(t, filler, uint64(minFree/2))
	t.Logf("disk filled: %s free", freeOf(t, mnt))

	// Refused within seconds (the threshold is measured once a second;
	// the WAL fails at its first write), and /healthz says why.
	deadline := time.Now().Add(15 * time.Second)
	var reply string
	for {
		var ok bool
		if ok, reply = send(); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("values still acknowledged 15 s after the disk filled (%s free)", freeOf(t, mnt))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(reply, `"response":"failed"`) || !strings.Contains(reply, reason) {
		t.Fatalf("reply while the disk is full: %s; want failed, saying %q", reply, reason)
	}
	t.Logf("refused: %s", reply)
	code, body := health()
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "values are refused") {
		t.Fatalf("/healthz while values are refused: %d %q; want 503 with the reason", code, body)
	}
	if strings.Contains(body, mnt) {
		t.Errorf("/healthz names a path to anyone: %q", body)
	}
	t.Logf("/healthz: %d %s", code, strings.TrimSpace(body))
	// It stays so while the disk is full: refused, not lost, not half
	// stored.
	for range 20 {
		if ok, reply := send(); ok {
			t.Fatalf("a frame was acknowledged while the disk is full: %s", reply)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Space comes back: intake resumes by itself within seconds.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	freed := time.Now()
	for {
		if ok, _ := send(); ok {
			break
		}
		if time.Since(freed) > 15*time.Second {
			code, body := health()
			t.Fatalf("values still refused 15 s after the space came back (%s free); /healthz %d %s", freeOf(t, mnt), code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("intake resumed %v after the space came back", time.Since(freed).Round(time.Millisecond))
	if code, body := health(); code != http.StatusOK {
		t.Fatalf("/healthz after the space came back: %d %s", code, body)
	}
	for range 10 {
		if ok, reply := send(); !ok {
			t.Fatalf("after the space came back: %s", reply)
		}
	}
	stop()

	// Restart: every acknowledged value once, no refused one.
	st, err := engine.Open(engine.Options{Dir: HistoryPath(cfg.DataDir)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stored := map[int64]int{}
	for _, v := range historytest.ReadAll(t, st, history.Query{ItemID: item, From: 0, Till: 1 << 40}) {
		stored[v.Clock]++
		if v.F != float64(v.Clock) {
			t.Fatalf("clock %d: stored %v", v.Clock, v.F)
		}
	}
	missing, dup, leaked := 0, 0, 0
	for c := range acked {
		switch stored[c] {
		case 0:
			missing++
		case 1:
		default:
			dup++
		}
	}
	for c := range refused {
		if stored[c] > 0 {
			leaked++
		}
	}
	t.Logf("%d values acknowledged, %d refused; after the restart %d missing, %d stored twice, %d refused ones stored", len(acked), len(refused), missing, dup, leaked)
	if missing > 0 || dup > 0 || leaked > 0 {
		t.Fatal("history after the restart does not match what the senders were told")
	}
}

// trapperRequest sends one sender-data payload and returns the reply.
func trapperRequest(t *testing.T, addr, payload string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(zbx.AppendFrame(nil, []byte(payload), zbx.FlagProtocol)); err != nil {
		t.Fatal(err)
	}
	_, reply, err := zbx.NewReader(c, zbx.ReaderOptions{}).ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	return string(reply)
}

// fill writes path until the file system has at most leave bytes free
// (0: until it is full).
func fill(t *testing.T, path string, leave uint64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		var st syscall.Statfs_t
		if err := syscall.Statfs(filepath.Dir(path), &st); err != nil {
			t.Fatal(err)
		}
		free := st.Bavail * uint64(st.Bsize)
		if free <= leave || free == 0 {
			return
		}
		n := min(uint64(len(chunk)), free-leave)
		if _, err := f.Write(chunk[:n]); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return
			}
			t.Fatal(err)
		}
	}
}

func freeOf(t *testing.T, dir string) string {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d KiB", st.Bavail*uint64(st.Bsize)>>10)
}
