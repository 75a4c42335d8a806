package external

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/zbx/itemkey"
)

// Defaults of Options.
const (
	DefaultMaxProcesses = 32
	DefaultMaxOutput    = 64 << 10
	// MinMaxOutput is the least output kept: the Nagios plugin
	// guidelines ask a server to keep at least 8 KiB of it.
	MinMaxOutput = 8 << 10
)

// DefaultDirs are Zabbix's external scripts directory and the one where
// Debian's monitoring-plugins put the Nagios plugins.
var DefaultDirs = []string{"/usr/lib/zabbix/externalscripts", "/usr/lib/nagios/plugins"}

// Options configures a Checker.
type Options struct {
	// Dirs are searched in order for a key's script; nothing outside
	// them is ever run. Default DefaultDirs.
	Dirs []string
	// MaxProcesses bounds the plugin processes running at once; checks
	// beyond it wait for a slot (the wait is their latency). Default
	// DefaultMaxProcesses.
	MaxProcesses int
	// MaxOutput bounds what is read of a process's output (stdout and
	// stderr together); a process that writes more is killed and its
	// item is not supported. Default DefaultMaxOutput.
	MaxOutput int
	// DefaultTimeout applies to checks that come without one.
	DefaultTimeout time.Duration
	Metrics        *selfmon.Registry
	Logger         *slog.Logger
}

// Results of a check, as the "result" label.
const (
	resOK = iota
	resNotSupported
	resTimeout
	resTooLarge
	resLocalError
	numResults
)

var resultNames = [numResults]string{"ok", "not_supported", "timeout", "output_too_large", "local_error"}

// Checker runs external checks and nagios[...] checks. Safe for
// concurrent use.
type Checker struct {
	opts     Options
	slots    chan struct{}
	throttle *selfmon.LogThrottle

	running, waiting *selfmon.Gauge
	results          [numResults]*selfmon.Counter
	badPerfdata      *selfmon.Counter
	latency, exec    *selfmon.Histogram
}

// Buckets of the latency and execution time histograms, in seconds: a
// fork and exec is about a millisecond, a plugin's timeout several
// seconds, and a saturated pool makes minutes of latency.
var buckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}

// New returns a Checker.
func New(opts Options) *Checker {
	if len(opts.Dirs) == 0 {
		opts.Dirs = DefaultDirs
	}
	if opts.MaxProcesses <= 0 {
		opts.MaxProcesses = DefaultMaxProcesses
	}
	if opts.MaxOutput <= 0 {
		opts.MaxOutput = DefaultMaxOutput
	}
	if opts.DefaultTimeout <= 0 {
		opts.DefaultTimeout = 3 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Metrics == nil {
		opts.Metrics = selfmon.NewRegistry()
	}
	m := opts.Metrics
	c := &Checker{
		opts:     opts,
		slots:    make(chan struct{}, opts.MaxProcesses),
		throttle: selfmon.NewLogThrottle(opts.Logger, time.Minute),
		running:  m.Gauge("peregrine_poll_external_processes", "External check and Nagios plugin processes running."),
		waiting:  m.Gauge("peregrine_poll_external_waiting", "External checks waiting for a process slot (poll.external_max_processes)."),
		badPerfdata: m.Counter("peregrine_poll_external_bad_perfdata_total",
			"Nagios plugin performance data entries that did not parse (left out of the value)."),
		latency: m.Histogram("peregrine_poll_external_latency_seconds",
			"Check latency as Nagios defines it: from the check's scheduled time to its process's start.", buckets),
		exec: m.Histogram("peregrine_poll_external_execution_seconds",
			"Execution time of external check and Nagios plugin processes, from start to exit.", buckets),
	}
	for r := range c.results {
		c.results[r] = m.Counter("peregrine_poll_external_checks_total", "External and nagios[] checks done, by result.", "result", resultNames[r])
	}
	return c
}

// Check starts one goroutine per check and returns; each waits for a
// process slot, then runs its process within the check's timeout. The
// scheduler bounds how many checks are in flight, so the waiting
// goroutines are bounded too.
func (c *Checker) Check(ctx context.Context, batch []poll.Check, done func(*poll.Result)) {
	for i := range batch {
		go func(ch *poll.Check) { done(c.check(ctx, ch)) }(&batch[i])
	}
}

// request is one parsed key.
type request struct {
	nagios bool
	path   string
	args   []string
}

// parseKey resolves a key to the program it runs and its arguments; the
// error is the item's not supported message.
func (c *Checker) parseKey(key, addr string) (request, error) {
	var r request
	k, err := itemkey.Parse(key)
	if err != nil {
		return r, err
	}
	name := k.Name
	params := k.Params
	if name == "nagios" {
		r.nagios = true
		if len(params) == 0 || params[0].Value == "" {
			return r, errors.New("invalid first parameter: nagios[plugin,<arg>,...] needs the plugin's name")
		}
		if params[0].Array != nil {
			return r, errors.New("invalid first parameter: the plugin's name must not be an array")
		}
		name, params = params[0].Value, params[1:]
	}
	if err := checkName(name); err != nil {
		return r, err
	}
	for i, p := range params {
		if p.Array != nil {
			return r, fmt.Errorf("parameter %d must not be an array", i+1)
		}
		if strings.IndexByte(p.Value, 0) >= 0 {
			return r, fmt.Errorf("parameter %d contains a NUL byte", i+1)
		}
		r.args = append(r.args, expandMacros(p.Value, addr))
	}
	r.path, err = c.find(name)
	return r, err
}

// expandMacros resolves {HOST.CONN} and {HOST.PORT} in a parameter from
// the item's interface ("host:port", by its useip), as Zabbix does for
// external check keys; other macros, and these without an interface,
// stay as written.
func expandMacros(v, addr string) string {
	if addr == "" || !strings.Contains(v, "{HOST.") {
		return v
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return v
	}
	return strings.NewReplacer("{HOST.CONN}", host, "{HOST.PORT}", port).Replace(v)
}

// checkName refuses names that could leave the configured directories.
func checkName(name string) error {
	switch {
	case name == "":
		return errors.New("the script's name is empty")
	case strings.ContainsRune(name, '/'):
		return fmt.Errorf("script name %q must not contain '/': only scripts in the configured directories (poll.external_scripts) run", name)
	case strings.Contains(name, ".."):
		return fmt.Errorf("script name %q must not contain '..': only scripts in the configured directories (poll.external_scripts) run", name)
	case strings.IndexByte(name, 0) >= 0:
		return errors.New("the script's name contains a NUL byte")
	}
	return nil
}

// find returns the first executable regular file called name in the
// configured directories. It looks every time: scripts are added and
// removed while the server runs, as with Zabbix.
func (c *Checker) find(name string) (string, error) {
	for _, dir := range c.opts.Dirs {
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		if !fi.Mode().IsRegular() {
			return "", fmt.Errorf("%s is not a regular file", p)
		}
		if fi.Mode().Perm()&0o111 == 0 {
			return "", fmt.Errorf("%s is not executable", p)
		}
		return p, nil
	}
	return "", fmt.Errorf("script %q not found in %s", name, strings.Join(c.opts.Dirs, ", "))
}

func (c *Checker) check(ctx context.Context, ch *poll.Check) *poll.Result {
	res := &poll.Result{Check: *ch}
	req, err := c.parseKey(ch.Key, ch.Addr)
	if err != nil {
		return c.notSupported(res, resNotSupported, "bad_key", err.Error())
	}
	c.waiting.Add(1)
	select {
	case c.slots <- struct{}{}:
		c.waiting.Add(-1)
	case <-ctx.Done():
		c.waiting.Add(-1)
		res.Status, res.Error, res.Clock = poll.LocalError, "server stopping", time.Now()
		c.results[resLocalError].Inc()
		return res
	}
	defer func() { <-c.slots }()
	timeout := ch.Timeout
	if timeout <= 0 {
		timeout = c.opts.DefaultTimeout
	}
	out := c.run(ctx, req, timeout, ch.Due)
	res.Clock = time.Now()
	switch {
	case out.startErr != nil:
		if isLocal(out.startErr) {
			c.throttle.Warn("start", "cannot start external check", "path", req.path, "error", out.startErr)
			c.results[resLocalError].Inc()
			res.Status, res.Error = poll.LocalError, out.startErr.Error()
			return res
		}
		return c.notSupported(res, resNotSupported, "start", fmt.Sprintf("cannot execute %s: %v", req.path, out.startErr))
	case out.tooLarge:
		return c.notSupported(res, resTooLarge, "too_large",
			fmt.Sprintf("%s wrote more than %d bytes of output: killed", req.path, c.opts.MaxOutput))
	case out.abandoned:
		// Neither a value (nagios[]'s UNKNOWN "timed out") nor not
		// supported (which an item's "check for not supported value"
		// step would turn into a stored value): the process was killed
		// because the server is stopping, as the other checkers say.
		c.results[resLocalError].Inc()
		res.Status, res.Error = poll.NetworkError, "check abandoned: the server is stopping"
		return res
	}
	// A process killed at its timeout: if this server was behind, its
	// lateness, not the script's (see poll.Result.TimedOut).
	res.TimedOut = out.timedOut
	if req.nagios {
		return c.nagiosResult(res, req, out, timeout)
	}
	switch {
	case out.timedOut:
		return c.notSupported(res, resTimeout, "timeout", fmt.Sprintf("Timeout while executing %s (%s): killed", req.path, timeout))
	case out.signal != 0:
		return c.notSupported(res, resNotSupported, "exit", fmt.Sprintf("%s was killed by signal %d", req.path, out.signal))
	case out.code != 0:
		// Zabbix's external check rule: a non-zero exit makes the item
		// not supported, with the output (or the code) as the error.
		msg := strings.TrimRight(string(out.output), " \t\r\n")
		if msg == "" {
			msg = fmt.Sprintf("Process exited with code: %d.", out.code)
		}
		c.results[resNotSupported].Inc()
		res.Status, res.Error = poll.NotSupported, msg
		return res
	}
	c.results[resOK].Inc()
	res.Status, res.Value = poll.OK, bytes.TrimRight(out.output, " \t\r\n")
	return res
}

// notSupported sets res not supported with msg, counts it under result
// and logs it (at most once a minute per reason).
func (c *Checker) notSupported(res *poll.Result, result int, reason, msg string) *poll.Result {
	c.results[result].Inc()
	c.throttle.Warn(reason, "external check not supported", "item", res.ItemID, "key", res.Key, "error", msg)
	if res.Clock.IsZero() {
		res.Clock = time.Now()
	}
	res.Status, res.Error = poll.NotSupported, msg
	return res
}

// isLocal reports whether a start error is this server's (out of
// processes, memory or descriptors) rather than the script's.
func isLocal(err error) bool {
	return errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.ENOMEM) ||
		errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// outcome is what one process did.
type outcome struct {
	startErr error
	output   []byte
	tooLarge bool
	timedOut bool
	// abandoned: killed because ctx ended (the server stopping).
	abandoned bool
	code      int
	signal    syscall.Signal
}

// run starts req's program in a process group of its own, with stdout
// and stderr on one pipe (as Zabbix runs scripts) and no stdin, reads at
// most MaxOutput bytes and waits for it, all within timeout. A timeout,
// too much output or ctx ending kills the whole group, so a plugin's
// children die with it.
func (c *Checker) run(ctx context.Context, req request, timeout time.Duration, due time.Time) (out outcome) {
	r, w, err := os.Pipe()
	if err != nil {
		out.startErr = err
		return out
	}
	defer r.Close()
	cmd := exec.Command(req.path, req.args...)
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	err = cmd.Start()
	w.Close()
	if err != nil {
		out.startErr = err
		return out
	}
	if !due.IsZero() {
		c.latency.Observe(max(start.Sub(due), 0).Seconds())
	}
	c.running.Add(1)
	defer c.running.Add(-1)
	pid := cmd.Process.Pid

	// The group is killed only while its leader is not reaped: reaped
	// is set under mu after waitExited (which never reaps) and before
	// cmd.Wait, so the pid, which is the group's id, cannot have been
	// reused by another process when it is signalled. The timer and
	// ctx may fire at any moment, even after Stop.
	var mu sync.Mutex
	killed, reaped := false, false
	killLocked := func() bool {
		if killed || reaped {
			return false
		}
		killed = true
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		return true
	}
	kill := func() {
		mu.Lock()
		killLocked()
		mu.Unlock()
	}
	timer := time.AfterFunc(timeout, func() {
		mu.Lock()
		if killLocked() {
			out.timedOut = true
		}
		mu.Unlock()
		// A child that escaped the group may still hold the pipe.
		_ = r.SetReadDeadline(time.Now())
	})
	stopCtx := context.AfterFunc(ctx, func() {
		mu.Lock()
		if killLocked() {
			out.abandoned = true
		}
		mu.Unlock()
		_ = r.SetReadDeadline(time.Now())
	})
	// A backstop only: the timer ends the read at the timeout.
	_ = r.SetReadDeadline(start.Add(timeout + time.Second))

	buf, rerr := io.ReadAll(io.LimitReader(r, int64(c.opts.MaxOutput)+1))
	if len(buf) > c.opts.MaxOutput {
		buf = buf[:c.opts.MaxOutput]
		mu.Lock()
		out.tooLarge = killLocked()
		mu.Unlock()
	} else if rerr != nil && errors.Is(rerr, os.ErrDeadlineExceeded) {
		kill()
	}
	out.output = buf
	waitExited(pid)
	mu.Lock()
	reaped = true
	mu.Unlock()
	timer.Stop()
	stopCtx()
	_ = cmd.Wait()
	c.exec.Observe(time.Since(start).Seconds())
	mu.Lock()
	defer mu.Unlock()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		if ws.Signaled() {
			out.signal = ws.Signal()
		} else {
			out.code = ws.ExitStatus()
		}
	}
	return out
}

// waitExited blocks until process pid has exited without reaping it
// (waitid with WNOWAIT), so the group can still be killed safely.
func waitExited(pid int) {
	const pPID = 1
	var info [128]byte // siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|0x1000000 /* WNOWAIT */, 0, 0)
		if errno != syscall.EINTR {
			return
		}
	}
}
