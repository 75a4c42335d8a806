package testutil

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Postgres is a private PostgreSQL server (Debian's postgresql-15)
// started by StartPostgres: initdb into a temporary directory, listening
// on 127.0.0.1 only (and a Unix socket in that directory), fsync off.
// As root it runs as the "postgres" user (PostgreSQL refuses root).
// Stop and Start kill and restart it on the same port and data, for
// outage tests.
//
// Users: "postgres" (superuser, trusted from loopback, no password) and
// PostgresUser, who must give PostgresPassword (scram-sha-256).
type Postgres struct {
	Port int

	t    testing.TB
	bin  string // the server's bin directory
	dir  string
	cred *syscall.Credential // nil unless root
	mu   sync.Mutex
	// started: the server ran once, so its port is the test's.
	started bool
	cmd     *exec.Cmd
	done    chan struct{}
	out     *bytes.Buffer
}

// The password-checked user of StartPostgres's servers. The password
// holds ';', '{' and '}', which a connection string must brace.
const (
	PostgresUser     = "mon"
	PostgresPassword = "s3;cr{e}t"
)

// postgresBin finds the newest PostgreSQL server's bin directory.
func postgresBin(t testing.TB) string {
	t.Helper()
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return va - vb
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
			return dirs[i]
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("PostgreSQL's server not found under CI: .ci/run must install the Debian package postgresql-15")
	}
	t.Skip("PostgreSQL's server not installed (apt-get install postgresql-15)")
	return ""
}

// StartPostgres starts a private PostgreSQL server and stops it when the
// test ends.
func StartPostgres(t testing.TB) *Postgres {
	t.Helper()
	p := &Postgres{t: t, bin: postgresBin(t), Port: freePorts(t, 1)[0]}
	dir, err := os.MkdirTemp("", "peregrine-pg-")
	if err != nil {
		t.Fatal(err)
	}
	p.dir = dir
	t.Cleanup(func() { os.RemoveAll(dir) })
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			u, err = user.Lookup("nobody")
		}
		if err != nil {
			t.Fatalf("running as root, and neither a postgres nor a nobody user to run PostgreSQL as: %v", err)
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		p.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, int(uid), int(gid)); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(dir, "data")
	init := p.command(filepath.Join(p.bin, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync")
	if out, err := init.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	hba := "local all all trust\nhost all " + PostgresUser + " 127.0.0.1/32 scram-sha-256\nhost all all 127.0.0.1/32 trust\n"
	if err := os.WriteFile(filepath.Join(data, "pg_hba.conf"), []byte(hba), 0o600); err != nil {
		t.Fatal(err)
	}
	if p.cred != nil {
		os.Chown(filepath.Join(data, "pg_hba.conf"), int(p.cred.Uid), int(p.cred.Gid))
	}
	p.Start()
	t.Cleanup(p.Stop)
	p.Exec(fmt.Sprintf("CREATE ROLE %s LOGIN PASSWORD '%s'", PostgresUser, PostgresPassword))
	quietPsqlODBC(t, dir)
	return p
}

// quietPsqlODBC points unixODBC's system configuration (ODBCSYSINI, for
// the rest of the test) at an odbcinst.ini in dir naming psqlODBC's
// driver with its communication log off: Debian's odbcinst.ini turns it
// on (CommLog=1), and every process then leaves a
// /tmp/psqlodbc_<program>_<user><pid>.log behind. Without psqlODBC
// installed nothing changes (the test skips where it needs it).
func quietPsqlODBC(t testing.TB, dir string) {
	libs, _ := filepath.Glob("/usr/lib/*/odbc/psqlodbcw.so")
	if len(libs) == 0 {
		return
	}
	ini := fmt.Sprintf("[PostgreSQL Unicode]\nDriver = %s\nCommLog = 0\nDebug = 0\n", libs[0])
	if err := os.WriteFile(filepath.Join(dir, "odbcinst.ini"), []byte(ini), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ODBCSYSINI", dir)
}

// command is a PostgreSQL program run as the server's user.
func (p *Postgres) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
	if p.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
	}
	return cmd
}

// Start starts the server (again) and waits until it takes connections.
// At the first start a port that another process took between its
// choice and the bind (other tests on the machine) is swapped for a new
// one, up to three times; a restart keeps the port.
func (p *Postgres) Start() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return
	}
	for try := 0; ; try++ {
		out, ok := p.startOnce()
		if ok {
			p.started = true
			return
		}
		if p.started || try == 3 || !bytes.Contains(out, []byte("Address already in use")) {
			p.t.Fatalf("postgres exited at start:\n%s", out)
		}
		p.Port = freePorts(p.t, 1)[0]
	}
}

// startOnce starts the server on p.Port and waits until it takes
// connections (true), or until it exits (false, with its output).
func (p *Postgres) startOnce() ([]byte, bool) {
	cmd := p.command(filepath.Join(p.bin, "postgres"), "-D", filepath.Join(p.dir, "data"), "-p", strconv.Itoa(p.Port),
		"-k", p.dir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off",
		"-c", "full_page_writes=off", "-c", "shared_buffers=16MB", "-c", "max_connections=200", "-c", "logging_collector=off")
	p.out = &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		p.t.Fatalf("postgres: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ready := exec.Command(filepath.Join(p.bin, "pg_isready"), "-h", "127.0.0.1", "-p", strconv.Itoa(p.Port), "-q")
		// Ready, and the postmaster is ours (its pid file names it): a
		// server of another test on the port would answer too.
		if ready.Run() == nil && p.ownsPidFile(cmd.Process.Pid) {
			p.cmd, p.done = cmd, done
			return nil, true
		}
		select {
		case <-done:
			return p.out.Bytes(), false
		default:
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-done
			p.t.Fatalf("postgres not ready within 30s:\n%s", p.out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ownsPidFile reports whether the data directory's postmaster.pid
// names pid.
func (p *Postgres) ownsPidFile(pid int) bool {
	b, err := os.ReadFile(filepath.Join(p.dir, "data", "postmaster.pid"))
	first, _, _ := bytes.Cut(b, []byte("\n"))
	return err == nil && string(first) == strconv.Itoa(pid)
}

// Stop stops the server (a fast shutdown: sessions are ended) and waits
// for it to exit.
func (p *Postgres) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return
	}
	p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
	p.cmd = nil
}

// Exec runs SQL as the superuser with psql, failing the test on an
// error, and returns what psql printed (unaligned, tuples only).
func (p *Postgres) Exec(sql string) string {
	p.t.Helper()
	psql := filepath.Join(p.bin, "psql")
	if _, err := os.Stat(psql); err != nil {
		psql = Need(p.t, "psql", "postgresql-client-15")
	}
	out, err := exec.Command(psql, "-h", "127.0.0.1", "-p", strconv.Itoa(p.Port), "-U", "postgres", "-d", "postgres",
		"-v", "ON_ERROR_STOP=1", "-X", "-q", "-A", "-t", "-c", sql).CombinedOutput()
	if err != nil {
		p.t.Fatalf("psql %q: %v\n%s", sql, err, out)
	}
	return string(bytes.TrimRight(out, "\n"))
}

// PsqlODBCDriver returns the path of psqlODBC's Unicode driver (Debian's
// odbc-postgresql), skipping the test without it (failing under CI).
func PsqlODBCDriver(t testing.TB) string {
	t.Helper()
	libs, _ := filepath.Glob("/usr/lib/*/odbc/psqlodbcw.so")
	if len(libs) == 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("psqlodbcw.so not found under CI: .ci/run must install the Debian package odbc-postgresql")
		}
		t.Skip("psqlODBC not installed (apt-get install unixodbc odbc-postgresql)")
	}
	return libs[0]
}

// ODBCConnString is a connection string for psqlODBC to database db of
// p, without a login.
func (p *Postgres) ODBCConnString(t testing.TB, db string) string {
	return fmt.Sprintf("Driver=%s;Server=127.0.0.1;Port=%d;Database=%s", PsqlODBCDriver(t), p.Port, db)
}

// WriteODBCIni writes an odbc.ini of data sources (name to its
// attributes, in order) into a temporary directory and points unixODBC
// at it for the rest of the test (ODBCINI, through t.Setenv: the test
// may not be parallel). The drivers stay those of the system's
// odbcinst.ini, or a Driver given as a library's path.
func WriteODBCIni(t *testing.T, dsns map[string][][2]string) string {
	t.Helper()
	var b bytes.Buffer
	names := make([]string, 0, len(dsns))
	for n := range dsns {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, "[%s]\n", n)
		for _, kv := range dsns[n] {
			fmt.Fprintf(&b, "%s = %s\n", kv[0], kv[1])
		}
		b.WriteByte('\n')
	}
	path := filepath.Join(t.TempDir(), "odbc.ini")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ODBCINI", path)
	return path
}
