package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/config"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/historytest"
	"github.com/peregrine-mon/peregrine/internal/testutil"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// startServer runs a whole server in this process on loopback ports with
// spec applied to its catalog.
func startServer(t *testing.T, spec catalog.Spec) *Server {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Trapper.Listen = "127.0.0.1:0"
	cfg.HTTP.Listen = "127.0.0.1:0"
	ctx := context.Background()
	catalogtest.Write(t, CatalogPath(cfg.DataDir), spec)
	s, err := New(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(rctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server stopped with %v", err)
		}
	})
	return s
}

func (s *Server) readItem(t *testing.T, host, key string) []history.Sample {
	t.Helper()
	it := s.Catalog.Snapshot().Lookup(host, key)
	if it == nil {
		t.Fatalf("no item %s %s", host, key)
	}
	return historytest.ReadAll(t, s.Store, history.Query{ItemID: it.ID, From: 0, Till: 1 << 40})
}

func integrationSpec() catalog.Spec {
	items := []catalog.ItemSpec{
		{Key: "trap.float", ValueType: "float"},
		{Key: "trap.uint", ValueType: "unsigned"},
		{Key: "trap.str", ValueType: "character"},
		{Key: "trap.text", ValueType: "text"},
		{Key: "trap.log", ValueType: "log"},
		{Key: "agent.ping", Type: "zabbix_agent", ValueType: "unsigned"},
	}
	for i := 0; i < 100; i++ {
		items = append(items, catalog.ItemSpec{Key: fmt.Sprintf("bulk[%d]", i), ValueType: "float"})
	}
	return catalog.Spec{Hosts: []catalog.HostSpec{{Host: "peregrine-test", Groups: []string{"Integration"}, Items: items}}}
}

func TestIntegrationZabbixSender(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs the real zabbix_sender")
	}
	testutil.Need(t, "zabbix_sender", "zabbix-agent")
	s := startServer(t, integrationSpec())
	addr := s.TrapperAddr().String()
	dir := t.TempDir()

	t.Run("SingleValue", func(t *testing.T) {
		r := testutil.RunSender(t, addr, "-s", "peregrine-test", "-k", "trap.uint", "-o", "18446744073709551615")
		if r.ExitCode != 0 || r.Processed != 1 || r.Failed != 0 || r.Total != 1 || r.Sent != 1 {
			t.Fatalf("%+v", r)
		}
		got := s.readItem(t, "peregrine-test", "trap.uint")
		if len(got) != 1 || got[0].U != 18446744073709551615 {
			t.Fatalf("stored %+v", got)
		}
	})

	t.Run("Batch100k", func(t *testing.T) {
		path := filepath.Join(dir, "batch.txt")
		var b strings.Builder
		want := map[string]int{}
		for i := 0; i < 100000; i++ {
			key := fmt.Sprintf("bulk[%d]", i%100)
			fmt.Fprintf(&b, "peregrine-test %s %d.%d\n", key, i, i%10)
			want[key]++
		}
		os.WriteFile(path, []byte(b.String()), 0o600)
		r := testutil.RunSender(t, addr, "-i", path)
		if r.ExitCode != 0 || r.Processed != 100000 || r.Failed != 0 || r.Total != 100000 || r.Responses != 400 {
			t.Fatalf("exit %d processed %d failed %d total %d responses %d", r.ExitCode, r.Processed, r.Failed, r.Total, r.Responses)
		}
		var sum int64 // tenths, exact whatever the order
		n := 0
		for i := 0; i < 100; i++ {
			vals := s.readItem(t, "peregrine-test", fmt.Sprintf("bulk[%d]", i))
			if len(vals) != 1000 {
				t.Fatalf("bulk[%d]: %d values, want 1000", i, len(vals))
			}
			for _, v := range vals {
				sum += int64(math.Round(v.F * 10))
				n++
			}
		}
		var wantSum int64
		for i := 0; i < 100000; i++ {
			wantSum += int64(i)*10 + int64(i%10)
		}
		if n != 100000 || sum != wantSum {
			t.Fatalf("read back %d values summing to %v, want 100000 summing to %v", n, sum, wantSum)
		}
	})

	t.Run("Timestamps", func(t *testing.T) {
		path := filepath.Join(dir, "ts.txt")
		os.WriteFile(path, []byte(
			"peregrine-test trap.float 1700000000 1.5\n"+
				"peregrine-test trap.float 1700000001 2.5\n"+
				"peregrine-test trap.str 1700000002 \"hello world\"\n"), 0o600)
		r := testutil.RunSender(t, addr, "-T", "-i", path)
		if r.ExitCode != 0 || r.Processed != 3 {
			t.Fatalf("%+v\n%s", r, r.Output)
		}
		pathN := filepath.Join(dir, "tsn.txt")
		os.WriteFile(pathN, []byte("peregrine-test trap.float 1700000005 123456789 9.75\n"), 0o600)
		r = testutil.RunSender(t, addr, "-T", "-N", "-i", pathN)
		if r.ExitCode != 0 || r.Processed != 1 {
			t.Fatalf("%+v\n%s", r, r.Output)
		}
		f := s.readItem(t, "peregrine-test", "trap.float")
		if len(f) != 3 || f[0].Clock != 1700000000 || f[0].F != 1.5 || f[1].Clock != 1700000001 || f[2].Clock != 1700000005 || f[2].NS != 123456789 || f[2].F != 9.75 {
			t.Fatalf("trap.float %+v", f)
		}
		str := s.readItem(t, "peregrine-test", "trap.str")
		if len(str) != 1 || str[0].S != "hello world" || str[0].Clock != 1700000002 {
			t.Fatalf("trap.str %+v", str)
		}
	})

	t.Run("MixedFailures", func(t *testing.T) {
		path := filepath.Join(dir, "mix.txt")
		os.WriteFile(path, []byte(
			"peregrine-test trap.uint 5\n"+ // ok
				"nobody trap.uint 5\n"+ // unknown host
				"peregrine-test no.such.key 5\n"+ // unknown key
				"peregrine-test trap.uint abc\n"+ // wrong type: processed, item not supported (6.0)
				"peregrine-test trap.uint -3\n"+ // negative unsigned: the same
				"peregrine-test agent.ping 1\n"+ // not a trapper item
				"peregrine-test trap.text \"multi word text\"\n"+ // ok
				"peregrine-test trap.log \"a log line\"\n"), 0o600) // ok
		r := testutil.RunSender(t, addr, "-i", path)
		if r.ExitCode != 2 || r.Processed != 5 || r.Failed != 3 || r.Total != 8 {
			t.Fatalf("exit %d processed %d failed %d total %d\n%s", r.ExitCode, r.Processed, r.Failed, r.Total, r.Output)
		}
		if got := s.readItem(t, "peregrine-test", "trap.text"); len(got) != 1 || got[0].S != "multi word text" {
			t.Fatalf("trap.text %+v", got)
		}
		if got := s.readItem(t, "peregrine-test", "trap.log"); len(got) != 1 || got[0].S != "a log line" || got[0].Type != history.Log {
			t.Fatalf("trap.log %+v", got)
		}
		// All failed: exit code 2 as well, as with the real server.
		r = testutil.RunSender(t, addr, "-s", "nobody", "-k", "x", "-o", "1")
		if r.ExitCode != 2 || r.Processed != 0 || r.Failed != 1 {
			t.Fatalf("%+v", r)
		}
	})
}

// TestIntegrationBinary builds the peregrine binary, imports a spec with
// `peregrine import`, starts `peregrine serve` as a child process and
// checks a zabbix_sender value against /metrics.
func TestIntegrationBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: builds and runs the binary")
	}
	testutil.Need(t, "zabbix_sender", "zabbix-agent")
	dir := t.TempDir()
	bin := filepath.Join(dir, "peregrine")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/peregrine")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cfgPath := filepath.Join(dir, "peregrine.yaml")
	os.WriteFile(cfgPath, []byte("data_dir: "+filepath.Join(dir, "data")+"\ntrapper:\n  listen: 127.0.0.1:0\nhttp:\n  listen: 127.0.0.1:0\n"), 0o600)
	specPath := filepath.Join(dir, "spec.yaml")
	os.WriteFile(specPath, []byte("hosts:\n  - host: bin-test\n    groups: [Bin]\n    items:\n      - key: trap.x\n        value_type: unsigned\n"), 0o600)
	for i, want := range []string{"hosts created: 1", "items created: 0"} {
		out, err := exec.Command(bin, "import", "-config", cfgPath, specPath).CombinedOutput()
		if err != nil || !strings.Contains(string(out), want) {
			t.Fatalf("import #%d: %v\n%s", i+1, err, out)
		}
	}
	// A bad config is refused with the field named.
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("trapper:\n  max_connections: 0\n"), 0o600)
	out, err := exec.Command(bin, "serve", "-config", bad).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "trapper.max_connections") {
		t.Fatalf("bad config: %v\n%s", err, out)
	}

	cmd := exec.Command(bin, "serve", "-config", cfgPath)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	addrs := waitAddrs(t, stderr)
	r := testutil.RunSender(t, addrs["trapper"], "-s", "bin-test", "-k", "trap.x", "-o", "42")
	if r.ExitCode != 0 || r.Processed != 1 {
		t.Fatalf("%+v", r)
	}
	resp, err := http.Get("http://" + addrs["http"] + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"peregrine_trapper_values_processed_total 1\n", "peregrine_pipeline_values_committed_total 1\n", `peregrine_pipeline_queue_values{shard="0"} 0`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// SIGTERM stops it cleanly.
	cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve exited with %v after SIGINT", err)
	}
}

func waitAddrs(t *testing.T, r io.Reader) map[string]string {
	t.Helper()
	re := regexp.MustCompile(`msg="(trapper|http) listening".* addr=(\S+)`)
	found := make(chan map[string]string, 1)
	go func() {
		m := map[string]string{}
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if g := re.FindStringSubmatch(sc.Text()); g != nil {
				m[g[1]] = g[2]
				if len(m) == 2 {
					found <- m
				}
			}
		}
	}()
	select {
	case m := <-found:
		return m
	case <-time.After(time.Minute):
		t.Fatal("server did not report its listeners")
		return nil
	}
}

func TestAPIIsMounted(t *testing.T) {
	s := startServer(t, integrationSpec())
	url := "http://" + s.HTTPAddr().String() + "/api_jsonrpc.php"
	post := func(body string) string {
		resp, err := http.Post(url, "application/json-rpc", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if got := post(`{"jsonrpc":"2.0","method":"apiinfo.version","params":{},"id":1}`); got != `{"jsonrpc":"2.0","result":"6.0.14","id":1}` {
		t.Fatalf("apiinfo.version: %s", got)
	}
	if got := post(`{"jsonrpc":"2.0","method":"history.get","params":{},"id":2}`); !strings.Contains(got, `"data":"Not authorized."`) {
		t.Fatalf("history.get without auth: %s", got)
	}
}

// TestAPIAuthEndToEnd logs in with the first-start admin password, reads
// values a zabbix_sender-style frame stored, and logs out.
func TestAPIAuthEndToEnd(t *testing.T) {
	s := startServer(t, integrationSpec())
	pw, err := os.ReadFile(filepath.Join(s.cfg.DataDir, "admin-password"))
	if err != nil {
		t.Fatalf("first start must write the admin password file: %v", err)
	}
	if st, _ := os.Stat(filepath.Join(s.cfg.DataDir, "admin-password")); st.Mode().Perm() != 0o600 {
		t.Fatalf("password file mode %v, want 0600", st.Mode().Perm())
	}
	url := "http://" + s.HTTPAddr().String() + "/api_jsonrpc.php"
	post := func(body string) string {
		resp, err := http.Post(url, "application/json-rpc", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if got := post(`{"jsonrpc":"2.0","method":"user.login","params":{"username":"Admin","password":"wrong-password"},"id":1}`); !strings.Contains(got, "Incorrect user name or password") {
		t.Fatalf("wrong password: %s", got)
	}
	got := post(`{"jsonrpc":"2.0","method":"user.login","params":{"username":"Admin","password":"` + strings.TrimSpace(string(pw)) + `"},"id":1}`)
	var login struct{ Result string }
	if err := json.Unmarshal([]byte(got), &login); err != nil || len(login.Result) != 32 {
		t.Fatalf("login: %s", got)
	}
	it := s.Catalog.Snapshot().Lookup("peregrine-test", "trap.uint")
	if err := s.Store.Write(context.Background(), []history.Sample{{ItemID: it.ID, Clock: 1700000000, Type: history.Uint, U: 42}}); err != nil {
		t.Fatal(err)
	}
	got = post(fmt.Sprintf(`{"jsonrpc":"2.0","method":"history.get","params":{"itemids":"%d"},"auth":"%s","id":2}`, it.ID, login.Result))
	if !strings.Contains(got, `"value":"42"`) {
		t.Fatalf("history.get with a session: %s", got)
	}
	if got := post(`{"jsonrpc":"2.0","method":"user.logout","params":[],"auth":"` + login.Result + `","id":3}`); !strings.Contains(got, `"result":true`) {
		t.Fatalf("logout: %s", got)
	}
	if got := post(fmt.Sprintf(`{"jsonrpc":"2.0","method":"history.get","params":{"itemids":"%d"},"auth":"%s","id":4}`, it.ID, login.Result)); !strings.Contains(got, `"code":-32602`) {
		t.Fatalf("history.get after logout: %s", got)
	}
}
