package testutil

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ClickHouse is a private clickhouse-server (Debian's clickhouse-server
// package, 18.16 on bookworm) started by StartClickHouse: its own
// configuration and data under the test's temporary directory, HTTP and
// native ports on 127.0.0.1 only. Stop and Start kill and restart it on
// the same ports and data, for outage tests.
//
// Users: "default" (no password, full rights), "ro" (password "ro",
// readonly=1: every INSERT and DDL is refused with code 164) and
// "limited" (password "limited", a quota of QuotaQueries queries per
// hour, then code 201).
type ClickHouse struct {
	URL  string // http://127.0.0.1:port/
	HTTP int
	TCP  int

	t    testing.TB
	bin  string
	dir  string
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	out  *bytes.Buffer
}

// QuotaQueries is the hourly query quota of the "limited" user.
const QuotaQueries = 30

// StartClickHouse starts a private ClickHouse server and stops it when
// the test ends.
func StartClickHouse(t testing.TB) *ClickHouse {
	t.Helper()
	ports := freePorts(t, 2)
	return startClickHouse(t, ports[0], ports[1], "")
}

// ClusterName is the cluster StartClickHouseCluster defines in every
// server's remote_servers, for Distributed tables.
const ClusterName = "peregrine"

// StartClickHouseCluster starts n private servers that each know the
// cluster ClusterName of n shards (one server each, in the order
// returned), so that a Distributed table on any of them spans all.
// There is no ZooKeeper: no replication and no ON CLUSTER DDL.
func StartClickHouseCluster(t testing.TB, n int) []*ClickHouse {
	t.Helper()
	ports := freePorts(t, 2*n)
	var rs bytes.Buffer
	fmt.Fprintf(&rs, "<remote_servers><%s>", ClusterName)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&rs, "<shard><replica><host>127.0.0.1</host><port>%d</port></replica></shard>", ports[2*i+1])
	}
	fmt.Fprintf(&rs, "</%s></remote_servers>", ClusterName)
	out := make([]*ClickHouse, n)
	for i := range out {
		out[i] = startClickHouse(t, ports[2*i], ports[2*i+1], rs.String())
	}
	return out
}

func startClickHouse(t testing.TB, httpPort, tcpPort int, extra string) *ClickHouse {
	t.Helper()
	bin := Need(t, "clickhouse-server", "clickhouse-server")
	ch := &ClickHouse{t: t, bin: bin, dir: t.TempDir()}
	ch.HTTP, ch.TCP = httpPort, tcpPort
	ch.URL = fmt.Sprintf("http://127.0.0.1:%d/", ch.HTTP)
	for _, d := range []string{"data", "tmp", "user_files", "log", "format_schemas"} {
		if err := os.MkdirAll(filepath.Join(ch.dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// Small caches and a quiet log: 8 engineers share 2 cores and the
	// box's memory. No query_log: it would write a table per second.
	cfg := fmt.Sprintf(`<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>%[1]s/log/server.log</log><errorlog>%[1]s/log/server.err.log</errorlog><size>10M</size><count>1</count></logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>%[2]d</http_port>
  <tcp_port>%[3]d</tcp_port>
  <max_connections>64</max_connections>
  <keep_alive_timeout>10</keep_alive_timeout>
  <max_concurrent_queries>32</max_concurrent_queries>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
  <mark_cache_size>67108864</mark_cache_size>
  <path>%[1]s/data/</path>
  <tmp_path>%[1]s/tmp/</tmp_path>
  <user_files_path>%[1]s/user_files/</user_files_path>
  <format_schema_path>%[1]s/format_schemas/</format_schema_path>
  <users_config>%[1]s/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mlock_executable>false</mlock_executable>
  %[4]s
</yandex>
`, ch.dir, ch.HTTP, ch.TCP, extra)
	users := fmt.Sprintf(`<?xml version="1.0"?>
<yandex>
  <profiles>
    <default><max_memory_usage>2000000000</max_memory_usage><max_threads>2</max_threads></default>
    <ro><readonly>1</readonly><max_threads>2</max_threads></ro>
  </profiles>
  <users>
    <default><password></password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></default>
    <ro><password>ro</password><networks><ip>127.0.0.1</ip></networks><profile>ro</profile><quota>default</quota></ro>
    <limited><password>limited</password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>limited</quota></limited>
  </users>
  <quotas>
    <default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default>
    <limited><interval><duration>3600</duration><queries>%d</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></limited>
  </quotas>
</yandex>
`, QuotaQueries)
	if err := os.WriteFile(filepath.Join(ch.dir, "config.xml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ch.dir, "users.xml"), []byte(users), 0o600); err != nil {
		t.Fatal(err)
	}
	ch.Start()
	t.Cleanup(ch.Stop)
	return ch
}

// freePorts returns n distinct free ports of 127.0.0.1, holding each
// while asking for the next.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	out := make([]int, n)
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			l.Close()
		}
	}()
	for i := range out {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		out[i] = ln.Addr().(*net.TCPAddr).Port
	}
	return out
}

// Start starts the server (again) and waits until it answers /ping.
func (ch *ClickHouse) Start() {
	ch.t.Helper()
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.cmd != nil {
		return
	}
	cmd := exec.Command(ch.bin, "--config-file="+filepath.Join(ch.dir, "config.xml"))
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Dir = ch.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		ch.t.Fatalf("starting clickhouse-server: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	ch.cmd, ch.done, ch.out = cmd, done, out
	// 18.16 loads its tables before it opens the ports: a second or two
	// for a test's few parts.
	end := time.Now().Add(60 * time.Second)
	cl := &http.Client{Timeout: time.Second}
	for {
		resp, err := cl.Get(ch.URL + "ping")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-done:
			log, _ := os.ReadFile(filepath.Join(ch.dir, "log", "server.err.log"))
			ch.t.Fatalf("clickhouse-server exited at start:\n%s\n%s", out.String(), tail(log, 2000))
		default:
		}
		if time.Now().After(end) {
			ch.t.Fatalf("clickhouse-server not answering on %s after 60 s", ch.URL)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Stop kills the server (SIGKILL: an outage, not a shutdown) and waits
// for it to exit. Stop on a stopped server does nothing.
func (ch *ClickHouse) Stop() {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.cmd == nil {
		return
	}
	syscall.Kill(-ch.cmd.Process.Pid, syscall.SIGKILL)
	<-ch.done
	ch.cmd = nil
}

// Pid is the running server's process id, 0 when stopped.
func (ch *ClickHouse) Pid() int {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.cmd == nil {
		return 0
	}
	return ch.cmd.Process.Pid
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// UserURL returns a URL with credentials for one of the server's
// users (see ClickHouse).
func (ch *ClickHouse) UserURL(user, password string) string {
	return "http://" + user + ":" + password + "@127.0.0.1:" + strconv.Itoa(ch.HTTP) + "/"
}
