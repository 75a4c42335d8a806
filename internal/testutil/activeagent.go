package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// AgentKind names a real Zabbix agent program.
type AgentKind string

// The agents an active-agent test can start.
const (
	Agentd AgentKind = "zabbix_agentd" // C agent, Debian package zabbix-agent
	Agent2 AgentKind = "zabbix_agent2" // Go agent, Debian package zabbix-agent2
)

func (k AgentKind) debianPackage() string {
	if k == Agent2 {
		return "zabbix-agent2"
	}
	return "zabbix-agent"
}

// ActiveAgentOptions configures an active-only agent.
type ActiveAgentOptions struct {
	// ServerActive is the trapper's "host:port" on loopback.
	ServerActive string
	Hostname     string
	HostMetadata string // optional
	// BufferSend is how often the agent sends what it collected, in
	// seconds (1..3600); 0 means 1, so that tests see values quickly.
	BufferSend int
	// Extra lines are appended to the configuration (TLSConnect=cert,
	// TLSCAFile=..., ...).
	Extra []string
}

// ActiveAgent is a running (or stopped) real agent in active mode only:
// no passive listener (zabbix_agentd StartAgents=0; zabbix_agent2 with an
// empty Server=), so it opens no port and only talks to ServerActive.
//
// RefreshActiveChecks is 60 s, the minimum 6.0 accepts: the agent asks
// for its item list when it starts and then once a minute, so a test
// creates its items before starting the agent (or restarts it).
type ActiveAgent struct {
	t    testing.TB
	kind AgentKind
	bin  string
	dir  string
	conf string
	log  string

	mu  sync.Mutex
	cmd *exec.Cmd
}

// StartActiveAgent writes a configuration for kind into a temporary
// directory and starts the agent in the foreground. The test's cleanup
// stops it. A missing program skips the test (fails it under CI).
func StartActiveAgent(t testing.TB, kind AgentKind, o ActiveAgentOptions) *ActiveAgent {
	t.Helper()
	a := &ActiveAgent{t: t, kind: kind, bin: Need(t, string(kind), kind.debianPackage()), dir: t.TempDir()}
	if o.BufferSend <= 0 {
		o.BufferSend = 1
	}
	a.log = filepath.Join(a.dir, "agent.log")
	var conf strings.Builder
	fmt.Fprintf(&conf, "LogType=file\nLogFile=%s\nLogFileSize=0\nDebugLevel=3\n", a.log)
	fmt.Fprintf(&conf, "PidFile=%s\n", filepath.Join(a.dir, "agent.pid"))
	fmt.Fprintf(&conf, "ServerActive=%s\nHostname=%s\nRefreshActiveChecks=60\nBufferSend=%d\nTimeout=3\n", o.ServerActive, o.Hostname, o.BufferSend)
	if o.HostMetadata != "" {
		fmt.Fprintf(&conf, "HostMetadata=%s\n", o.HostMetadata)
	}
	switch kind {
	case Agentd:
		// No passive listener; tests run as root in CI containers.
		conf.WriteString("StartAgents=0\nAllowRoot=1\n")
	case Agent2:
		// An empty Server= disables agent 2's passive listener; the
		// control socket is per test.
		fmt.Fprintf(&conf, "Server=\nControlSocket=%s\n", filepath.Join(a.dir, "agent2.sock"))
	}
	for _, l := range o.Extra {
		conf.WriteString(l + "\n")
	}
	a.conf = filepath.Join(a.dir, "agent.conf")
	if err := os.WriteFile(a.conf, []byte(conf.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	a.Start()
	t.Cleanup(a.Stop)
	return a
}

// Start starts the agent (again, after Stop).
func (a *ActiveAgent) Start() {
	a.t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cmd != nil {
		a.t.Fatalf("%s already running", a.kind)
	}
	args := []string{"-c", a.conf}
	if a.kind == Agentd {
		args = append(args, "-f") // foreground: the test owns the process
	}
	cmd := exec.Command(a.bin, args...)
	// A file, not a buffer: the agent writes it directly, with no copying
	// goroutine to race with Log.
	out, err := os.OpenFile(filepath.Join(a.dir, "agent.out"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		a.t.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group: Stop signals the agent's children too
	// (zabbix_agentd forks its collector and active-check processes).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		a.t.Fatalf("cannot start %s: %v", a.kind, err)
	}
	a.cmd = cmd
}

// Stop stops the agent with SIGTERM (what systemd sends), waiting up to
// 10 s before SIGKILL. A stopped agent may be started again.
func (a *ActiveAgent) Stop() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cmd == nil {
		return
	}
	pgid := a.cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { a.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-done
	}
	a.cmd = nil
}

// SetServerActive points the agent at another trapper address (a
// restarted server on a new port); it takes effect at the next Start.
func (a *ActiveAgent) SetServerActive(addr string) {
	a.t.Helper()
	b, err := os.ReadFile(a.conf)
	if err != nil {
		a.t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "ServerActive=") {
			line = "ServerActive=" + addr
		}
		out = append(out, line)
	}
	if err := os.WriteFile(a.conf, []byte(strings.Join(out, "\n")), 0o644); err != nil {
		a.t.Fatal(err)
	}
}

// Log returns the agent's log file and what it printed, for failure
// messages.
func (a *ActiveAgent) Log() string {
	b, _ := os.ReadFile(a.log)
	out, _ := os.ReadFile(filepath.Join(a.dir, "agent.out"))
	return string(b) + string(out)
}
