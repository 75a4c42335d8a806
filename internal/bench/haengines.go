package bench

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// haEngines are the private PostgreSQL and ClickHouse servers of `bench
// ha`: Debian's postgresql-15 and clickhouse-server, each with its own
// data under dir, listening on 127.0.0.1 only, stopped and removed by
// stop. PostgreSQL runs with its defaults (fsync on: a cluster node's
// acknowledged state is durable there); as root it runs as the
// "postgres" user, which it requires.
type haEngines struct {
	DSN    string // the superuser's connection string
	CHURL  string // http://127.0.0.1:port/
	Ports  []int  // every port the two listen on (their CPU is the cluster's)
	PGDesc string // the servers' versions, for the report
	CHDesc string

	dir, pgDir     string
	pg, ch         *exec.Cmd
	pgDone, chDone chan struct{} // closed when each has exited
	cred           *syscall.Credential
}

// freePort is a port of 127.0.0.1 free when asked.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// postgresBinDir is the newest installed PostgreSQL server's bin
// directory.
func postgresBinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return vb - va
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("PostgreSQL's server is not installed (Debian: apt-get install postgresql-15)")
}

// startHAEngines starts both servers under dir (made if missing).
func startHAEngines(dir string) (*haEngines, error) {
	pgBin, err := postgresBinDir()
	if err != nil {
		return nil, err
	}
	chBin, err := exec.LookPath("clickhouse-server")
	if err != nil {
		return nil, fmt.Errorf("clickhouse-server is not installed (Debian: apt-get install clickhouse-server)")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	e := &haEngines{dir: dir}
	if err := e.startPostgres(pgBin); err != nil {
		e.stop()
		return nil, err
	}
	if err := e.startClickHouse(chBin); err != nil {
		e.stop()
		return nil, err
	}
	return e, nil
}

func (e *haEngines) pgCommand(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: e.cred}
	return cmd
}

func (e *haEngines) startPostgres(bin string) error {
	// A directory of its own in the system's temporary directory: as
	// root, the postgres user must reach it, and e.dir may be private.
	dir, err := os.MkdirTemp("", "peregrine-bench-pg-")
	if err != nil {
		return err
	}
	e.pgDir = dir
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return fmt.Errorf("running as root, PostgreSQL must run as the postgres user: %w", err)
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		e.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, int(uid), int(gid)); err != nil {
			return err
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := e.pgCommand(filepath.Join(bin, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8",
		"--locale=C.UTF-8").CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %v\n%s", err, out)
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	cmd := e.pgCommand(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port), "-k", dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200")
	log, err := os.Create(filepath.Join(e.dir, "postgres.log"))
	if err != nil {
		return err
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	e.pg, e.pgDone = cmd, exited
	deadline := time.Now().Add(time.Minute)
	for exec.Command(filepath.Join(bin, "pg_isready"), "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-q").Run() != nil {
		select {
		case <-exited:
			b, _ := os.ReadFile(log.Name())
			return fmt.Errorf("postgres exited at start:\n%s", b)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres not ready in a minute (see %s)", log.Name())
		}
		time.Sleep(100 * time.Millisecond)
	}
	e.DSN = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	e.Ports = append(e.Ports, port)
	v, _ := exec.Command(filepath.Join(bin, "postgres"), "--version").Output()
	e.PGDesc = string(bytes.TrimSpace(v)) + " (defaults: fsync on)"
	return nil
}

func (e *haEngines) startClickHouse(bin string) error {
	dir := filepath.Join(e.dir, "clickhouse")
	for _, d := range []string{"data", "tmp", "user_files", "log", "format_schemas"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return err
		}
	}
	httpPort, err := freePort()
	if err != nil {
		return err
	}
	tcpPort, err := freePort()
	if err != nil {
		return err
	}
	// The package's defaults, with its own paths and loopback ports.
	cfg := fmt.Sprintf(`<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>%[1]s/log/server.log</log><errorlog>%[1]s/log/server.err.log</errorlog><size>10M</size><count>1</count></logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>%[2]d</http_port>
  <tcp_port>%[3]d</tcp_port>
  <max_concurrent_queries>100</max_concurrent_queries>
  <uncompressed_cache_size>8589934592</uncompressed_cache_size>
  <mark_cache_size>5368709120</mark_cache_size>
  <path>%[1]s/data/</path>
  <tmp_path>%[1]s/tmp/</tmp_path>
  <user_files_path>%[1]s/user_files/</user_files_path>
  <format_schema_path>%[1]s/format_schemas/</format_schema_path>
  <users_config>%[1]s/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mlock_executable>false</mlock_executable>
</yandex>
`, dir, httpPort, tcpPort)
	users := `<?xml version="1.0"?>
<yandex>
  <profiles><default></default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
`
	if err := os.WriteFile(filepath.Join(dir, "config.xml"), []byte(cfg), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "users.xml"), []byte(users), 0o600); err != nil {
		return err
	}
	cmd := exec.Command(bin, "--config-file="+filepath.Join(dir, "config.xml"))
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("clickhouse-server: %w", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	e.ch, e.chDone = cmd, exited
	e.CHURL = fmt.Sprintf("http://127.0.0.1:%d/", httpPort)
	cl := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := cl.Get(e.CHURL + "ping")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-exited:
			b, _ := os.ReadFile(filepath.Join(dir, "log", "server.err.log"))
			return fmt.Errorf("clickhouse-server exited at start:\n%s", tailBytes(b, 2000))
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("clickhouse-server not answering on %s after 2 minutes", e.CHURL)
		}
		time.Sleep(100 * time.Millisecond)
	}
	e.Ports = append(e.Ports, httpPort, tcpPort)
	if resp, err := cl.Get(e.CHURL + "?query=SELECT%20version()"); err == nil {
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		resp.Body.Close()
		e.CHDesc = "ClickHouse " + string(bytes.TrimSpace(b.Bytes()))
	}
	return nil
}

func tailBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// stop stops both servers (PostgreSQL with a fast shutdown, ClickHouse
// with SIGTERM, each killed after 30 s) and removes their data.
func (e *haEngines) stop() {
	stopOne := func(c *exec.Cmd, done chan struct{}, sig syscall.Signal) {
		if c == nil {
			return
		}
		syscall.Kill(-c.Process.Pid, sig)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	stopOne(e.ch, e.chDone, syscall.SIGTERM)
	stopOne(e.pg, e.pgDone, syscall.SIGINT)
	os.RemoveAll(e.dir)
	if e.pgDir != "" {
		os.RemoveAll(e.pgDir)
	}
}
