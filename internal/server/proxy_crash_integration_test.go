package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/testutil"
	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// TestIntegrationProxyCrash: the real zabbix_proxy 6.0 (active) gets a
// steady stream of values (sender data into its trapper, as
// zabbix_sender sends them) and forwards them to a child `peregrine
// serve`, which is killed with SIGKILL mid-stream three times and
// restarted on the same data directory and port. Once the proxy has
// sent everything again, every value the proxy acknowledged to the
// sender is in history exactly once, nothing else is, and proxy.get
// shows the proxy's lastaccess.
func TestIntegrationProxyCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: kills and restarts the server")
	}
	testutil.ProxyBinary(t)
	bin := buildBinary(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	port := loopbackPort(t)
	cfgPath := filepath.Join(dir, "peregrine.yaml")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf("data_dir: %s\ntrapper:\n  listen: 127.0.0.1:%d\nhttp:\n  listen: 127.0.0.1:0\nhistory:\n  store: engine\n  fsync: batch\n  flush_interval: 1s\n", data, port)), 0o600)
	specPath := filepath.Join(dir, "spec.yaml")
	os.WriteFile(specPath, []byte("hosts:\n  - host: pxc-host\n    groups: [Crash]\n    items:\n      - key: pxc.v\n        value_type: unsigned\n"), 0o600)
	if out, err := exec.Command(bin, "import", "-config", cfgPath, specPath).CombinedOutput(); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	var api *childAPI
	start := func() *exec.Cmd {
		t.Helper()
		cmd := exec.Command(bin, "serve", "-config", cfgPath)
		stderr, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		api = newChildAPI(t, waitAddrs(t, stderr)["http"], data)
		return cmd
	}
	cmd := start()
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var created struct{ ProxyIDs []string }
	api.call("proxy.create", `{"host":"pxc-proxy","status":5}`, &created)
	var hosts []struct{ HostID string }
	api.call("host.get", `{"filter":{"host":["pxc-host"]}}`, &hosts)
	api.call("host.update", fmt.Sprintf(`{"hostid":%q,"proxy_hostid":%q}`, hosts[0].HostID, created.ProxyIDs[0]), nil)
	px := testutil.StartProxy(t, testutil.ProxyOptions{Name: "pxc-proxy", Server: fmt.Sprintf("127.0.0.1:%d", port)})

	// The stream: frames of 50 values, each value unique, into the
	// proxy's trapper; a value counts as sent once the proxy took it.
	var mu sync.Mutex
	acked := map[uint64]bool{}
	next := uint64(1)
	stop := make(chan struct{})
	streamed := make(chan struct{})
	clock0 := time.Now().Unix()
	go func() {
		defer close(streamed)
		for {
			select {
			case <-stop:
				return
			default:
			}
			mu.Lock()
			first := next
			next += 50
			mu.Unlock()
			var b strings.Builder
			b.WriteString(`{"request":"sender data","data":[`)
			for i := range uint64(50) {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"host":"pxc-host","key":"pxc.v","value":"%d","clock":%d,"ns":%d}`, first+i, clock0, first+i)
			}
			b.WriteString("]}")
			if n := sendFrame(px.Addr, b.String()); n == 50 {
				mu.Lock()
				for i := range uint64(50) {
					acked[first+i] = true
				}
				mu.Unlock()
			}
			time.Sleep(20 * time.Millisecond) // about 2,500 values a second
		}
	}()
	waitUntil(t, 60*time.Second, "the proxy to take values (its configuration from Peregrine)", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(acked) > 0
	})
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	for round := range 3 {
		time.Sleep(time.Duration(1500+r.IntN(2000)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL) // mid-stream: the proxy's last batch may be stored and unanswered
		cmd.Wait()
		time.Sleep(time.Duration(500+r.IntN(1500)) * time.Millisecond) // the proxy keeps collecting
		cmd = start()
		mu.Lock()
		t.Logf("round %d: %d values taken by the proxy so far", round, len(acked))
		mu.Unlock()
	}
	time.Sleep(2 * time.Second)
	close(stop)
	<-streamed
	want := len(acked)

	itemID := func() string {
		var items []struct{ ItemID string }
		api.call("item.get", `{"host":"pxc-host","filter":{"key_":"pxc.v"}}`, &items)
		return items[0].ItemID
	}()
	var got []struct{ Value string }
	waitUntil(t, 90*time.Second, "the proxy's values in history", func() bool {
		got = nil
		api.call("history.get", fmt.Sprintf(`{"history":3,"itemids":[%q],"output":"extend","limit":10000000}`, itemID), &got)
		return len(got) >= want
	})
	seen := map[uint64]int{}
	for _, v := range got {
		n, err := strconv.ParseUint(v.Value, 10, 64)
		if err != nil || n == 0 || n >= next {
			t.Fatalf("stored a value nobody sent: %q", v.Value)
		}
		seen[n]++
	}
	missing, twice := 0, 0
	for n := range acked {
		switch seen[n] {
		case 0:
			missing++
		case 1:
		default:
			twice++
		}
	}
	for n, c := range seen {
		if c > 1 && !acked[n] {
			twice++
		}
	}
	if missing > 0 || twice > 0 {
		t.Fatalf("after 3 SIGKILLs: %d of %d values the proxy took are missing, %d stored more than once (%d rows stored)", missing, want, twice, len(got))
	}
	var proxies []struct{ LastAccess string }
	api.call("proxy.get", `{"output":["host","lastaccess"],"filter":{"host":["pxc-proxy"]}}`, &proxies)
	if la, _ := strconv.ParseInt(proxies[0].LastAccess, 10, 64); la < clock0 {
		t.Fatalf("proxy.get lastaccess %q, want after %d", proxies[0].LastAccess, clock0)
	}
	t.Logf("%d values taken by the proxy, all stored once after 3 SIGKILLs of Peregrine", want)
}

// loopbackPort returns a port free on 127.0.0.1 now.
func loopbackPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// sendFrame sends one sender data request and returns how many values
// the reply says were processed (0 on any error).
func sendFrame(addr, payload string) int {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return 0
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(zbx.AppendFrame(nil, []byte(payload), zbx.FlagProtocol)); err != nil {
		return 0
	}
	_, reply, err := zbx.NewReader(c, zbx.ReaderOptions{}).ReadFrame()
	if err != nil {
		return 0
	}
	var n int
	if i := bytes.Index(reply, []byte("processed: ")); i >= 0 {
		fmt.Sscanf(string(reply[i+len("processed: "):]), "%d", &n)
	}
	return n
}

func waitUntil(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// childAPI calls the API of a child `peregrine serve` as Admin.
type childAPI struct {
	t    *testing.T
	url  string
	auth string
}

func newChildAPI(t *testing.T, httpAddr, data string) *childAPI {
	t.Helper()
	a := &childAPI{t: t, url: "http://" + httpAddr + "/api_jsonrpc.php"}
	pw, err := os.ReadFile(filepath.Join(data, "admin-password"))
	if err != nil {
		t.Fatal(err)
	}
	a.call("user.login", `{"username":"Admin","password":`+strconv.Quote(strings.TrimSpace(string(pw)))+`}`, &a.auth)
	return a
}

func (a *childAPI) call(method, params string, out any) {
	a.t.Helper()
	auth := "null"
	if a.auth != "" {
		auth = strconv.Quote(a.auth)
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":%s,"auth":%s,"id":1}`, method, params, auth)
	resp, err := http.Post(a.url, "application/json-rpc", strings.NewReader(body))
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var r struct {
		Result json.RawMessage
		Error  *struct{ Data string }
	}
	if err := json.Unmarshal(b, &r); err != nil || r.Error != nil {
		a.t.Fatalf("%s: %s", method, b)
	}
	if out != nil {
		if err := json.Unmarshal(r.Result, out); err != nil {
			a.t.Fatalf("%s: %v: %s", method, err, b)
		}
	}
}
