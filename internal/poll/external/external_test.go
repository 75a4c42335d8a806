package external

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// pluginDir returns the directory of Debian's monitoring-plugins,
// skipping (or failing under CI) if check_dummy is not there.
func pluginDir(t testing.TB) string {
	t.Helper()
	old := os.Getenv("PATH")
	t.Setenv("PATH", "/usr/lib/nagios/plugins:"+old)
	p := testutil.Need(t, "check_dummy", "monitoring-plugins-basic")
	return filepath.Dir(p)
}

// runOne runs one check through c and returns its result.
func runOne(t testing.TB, c *Checker, key string, timeout time.Duration) *poll.Result {
	t.Helper()
	got := make(chan *poll.Result, 1)
	c.Check(context.Background(), []poll.Check{{ItemID: 7, Key: key, Timeout: timeout, Due: time.Now()}}, func(r *poll.Result) { got <- r })
	select {
	case r := <-got:
		return r
	case <-time.After(time.Minute):
		t.Fatalf("%s: no result within a minute", key)
		return nil
	}
}

// writeScript writes an executable shell script into dir.
func writeScript(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestCheckDummyExitCodes(t *testing.T) {
	dir := pluginDir(t)
	c := New(Options{Dirs: []string{t.TempDir(), dir}})
	for code, name := range stateNames {
		t.Run(name, func(t *testing.T) {
			// Plain external check: Zabbix's rule, only exit 0 is a value.
			r := runOne(t, c, fmt.Sprintf(`check_dummy["%d","some text"]`, code), 5*time.Second)
			want := name + ": some text"
			if code == 0 {
				if r.Status != poll.OK || string(r.Value) != want {
					t.Fatalf("external: got %v %q %q, want OK %q", r.Status, r.Value, r.Error, want)
				}
			} else if r.Status != poll.NotSupported || r.Error != want {
				t.Fatalf("external: got %v %q, want not supported %q", r.Status, r.Error, want)
			}
			// nagios[] key: the exit code is the state.
			r = runOne(t, c, fmt.Sprintf(`nagios[check_dummy,%d,"some text"]`, code), 5*time.Second)
			if r.Status != poll.OK {
				t.Fatalf("nagios: got %v %q", r.Status, r.Error)
			}
			var v Result
			if err := json.Unmarshal(r.Value, &v); err != nil {
				t.Fatalf("nagios value %q: %v", r.Value, err)
			}
			if v.State != code || v.Status != name || v.Output != want || v.ExitCode != code {
				t.Fatalf("nagios: got %+v, want state %d %s %q", v, code, name, want)
			}
		})
	}
	// An exit code outside 0-3 is UNKNOWN, keeping the code.
	r := runOne(t, c, `nagios[check_dummy,4]`, 5*time.Second)
	var v Result
	if err := json.Unmarshal(r.Value, &v); err != nil || v.State != StateUnknown {
		t.Fatalf("check_dummy 4: got %q (%v), want state 3", r.Value, err)
	}
}

func TestCheckTCPLoopback(t *testing.T) {
	dir := pluginDir(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	c := New(Options{Dirs: []string{dir}})
	r := runOne(t, c, `nagios[check_tcp,-H,127.0.0.1,-p,`+port+`]`, 5*time.Second)
	var v Result
	if err := json.Unmarshal(r.Value, &v); err != nil {
		t.Fatalf("value %q (%v %q): %v", r.Value, r.Status, r.Error, err)
	}
	if v.State != StateOK || !strings.HasPrefix(v.Output, "TCP OK") {
		t.Fatalf("check_tcp against a listener: got %+v", v)
	}
	tm, ok := v.Perfdata["time"]
	if !ok || tm.Value == nil || tm.UOM != "s" || *tm.Value < 0 {
		t.Fatalf("check_tcp perfdata: got %+v, want time in seconds", v.Perfdata)
	}
	// The same port closed: CRITICAL.
	ln.Close()
	r = runOne(t, c, `nagios[check_tcp,-H,127.0.0.1,-p,`+port+`]`, 5*time.Second)
	if err := json.Unmarshal(r.Value, &v); err != nil || v.State != StateCritical {
		t.Fatalf("check_tcp against a closed port: got %q (%v), want CRITICAL", r.Value, err)
	}
	// As a plain external check the output is the value.
	ln2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln2.Close()
	go func() {
		for {
			conn, err := ln2.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()
	r = runOne(t, c, fmt.Sprintf(`check_tcp[-H,127.0.0.1,-p,%d]`, ln2.Addr().(*net.TCPAddr).Port), 5*time.Second)
	if r.Status != poll.OK || !bytes.HasPrefix(r.Value, []byte("TCP OK")) {
		t.Fatalf("check_tcp as an external check: got %v %q %q", r.Status, r.Value, r.Error)
	}
}

func TestArgumentsWithoutShell(t *testing.T) {
	dir := t.TempDir()
	writeScript(t, dir, "args.sh", `for a in "$@"; do printf '<%s>' "$a"; done; echo`)
	c := New(Options{Dirs: []string{dir}})
	r := runOne(t, c, `args.sh["a b",";echo x","$HOME",,'q']`, 5*time.Second)
	if want := `<a b><;echo x><$HOME><><'q'>`; r.Status != poll.OK || string(r.Value) != want {
		t.Fatalf("got %v %q %q, want %q", r.Status, r.Value, r.Error, want)
	}
	// {HOST.CONN} and {HOST.PORT} come from the item's interface.
	got := make(chan *poll.Result, 1)
	c.Check(context.Background(), []poll.Check{{ItemID: 8, Key: `args.sh["-H{HOST.CONN}",{HOST.PORT},{HOST.NAME}]`,
		Addr: "[::1]:10050", Timeout: 5 * time.Second}}, func(r *poll.Result) { got <- r })
	if r := <-got; r.Status != poll.OK || string(r.Value) != `<-H::1><10050><{HOST.NAME}>` {
		t.Fatalf("macros: got %v %q %q", r.Status, r.Value, r.Error)
	}
	r = runOne(t, c, `args.sh`, 5*time.Second)
	if r.Status != poll.OK || string(r.Value) != "" {
		t.Fatalf("no parameters: got %v %q %q", r.Status, r.Value, r.Error)
	}
	// The second directory is searched when the first lacks the script.
	dir2 := t.TempDir()
	writeScript(t, dir2, "second.sh", `echo second; echo err >&2`)
	c = New(Options{Dirs: []string{dir, dir2}})
	if r := runOne(t, c, `second.sh`, 5*time.Second); r.Status != poll.OK || string(r.Value) != "second\nerr" {
		t.Fatalf("second directory: got %v %q %q", r.Status, r.Value, r.Error)
	}
}

func TestRefusedNames(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	// A script one level up that must never run.
	writeScript(t, dir, "outside.sh", `echo ran`)
	writeScript(t, sub, "notexec.sh", `echo ran`)
	if err := os.Chmod(filepath.Join(sub, "notexec.sh"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := New(Options{Dirs: []string{sub}})
	for _, tc := range []struct{ key, want string }{
		{`nagios["../outside.sh"]`, "must not contain '/'"},
		{`nagios[..]`, "must not contain '..'"},
		{`nagios["..outside.sh"]`, "must not contain '..'"},
		{`nagios["/bin/sh","-c","echo ran"]`, "must not contain '/'"},
		{`../outside.sh`, "invalid"},
		{`missing.sh`, "not found"},
		{`notexec.sh`, "not executable"},
		{`nagios[]`, "needs the plugin's name"},
		{`notexec.sh[[a,b]]`, "must not be an array"},
	} {
		r := runOne(t, c, tc.key, 5*time.Second)
		if r.Status != poll.NotSupported || !strings.Contains(r.Error, tc.want) {
			t.Errorf("%s: got %v %q %q, want not supported with %q", tc.key, r.Status, r.Value, r.Error, tc.want)
		}
	}
}

func TestHangingPluginKilledWithChildren(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	// The plugin starts a child that would outlive it, then hangs.
	writeScript(t, dir, "hang.sh", `sleep 300 & echo $! > `+pidFile+`; echo started; sleep 300`)
	reg := selfmon.NewRegistry()
	c := New(Options{Dirs: []string{dir}, Metrics: reg})
	r := runOne(t, c, `hang.sh`, time.Second)
	if r.Status != poll.NotSupported || !strings.Contains(r.Error, "Timeout") || !r.TimedOut {
		t.Fatalf("got %v %q %q TimedOut %v, want not supported by timeout, marked TimedOut", r.Status, r.Value, r.Error, r.TimedOut)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// The child was in the plugin's group: it is gone (or a zombie of
	// init's about to be reaped), never still sleeping.
	deadline := time.Now().Add(10 * time.Second)
	for alive(child) {
		if time.Now().After(deadline) {
			t.Fatalf("the plugin's child %d is still running after the timeout", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := c.results[resTimeout].Load(); n != 1 {
		t.Fatalf("timeouts counted: %d, want 1", n)
	}
	// The nagios[] key makes the same timeout UNKNOWN.
	r = runOne(t, c, `nagios[hang.sh]`, time.Second)
	var v Result
	if err := json.Unmarshal(r.Value, &v); err != nil || v.State != StateUnknown || !strings.Contains(v.Output, "timed out") || !r.TimedOut {
		t.Fatalf("nagios timeout: got %v %q (%v)", r.Status, r.Value, err)
	}
}

// alive reports whether pid runs (a zombie does not count).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

func TestMegabytesOfOutputBounded(t *testing.T) {
	dir := t.TempDir()
	// 10 MB of output, then more for as long as it can write.
	writeScript(t, dir, "chatty.sh", `head -c 10000000 /dev/zero | tr '\0' x; while :; do echo more; done`)
	writeScript(t, dir, "fits.sh", `head -c 8000 /dev/zero | tr '\0' y`)
	c := New(Options{Dirs: []string{dir}, MaxOutput: MinMaxOutput})
	r := runOne(t, c, `chatty.sh`, 20*time.Second)
	if r.Status != poll.NotSupported || !strings.Contains(r.Error, "more than 8192 bytes") {
		t.Fatalf("got %v (%d bytes) %q, want not supported for too much output", r.Status, len(r.Value), r.Error)
	}
	if n := c.results[resTooLarge].Load(); n != 1 {
		t.Fatalf("too large counted: %d, want 1", n)
	}
	if n := c.running.Load(); n != 0 {
		t.Fatalf("%d processes still counted running", n)
	}
	// Output under the bound is the value.
	if r := runOne(t, c, `fits.sh`, 5*time.Second); r.Status != poll.OK || len(r.Value) != 8000 {
		t.Fatalf("8000 bytes: got %v %d bytes %q", r.Status, len(r.Value), r.Error)
	}
}

func TestExitCodeWithoutOutput(t *testing.T) {
	dir := t.TempDir()
	writeScript(t, dir, "fail.sh", `exit 5`)
	writeScript(t, dir, "value.sh", `printf '42 \n\n'`)
	c := New(Options{Dirs: []string{dir}})
	if r := runOne(t, c, `fail.sh`, 5*time.Second); r.Status != poll.NotSupported || r.Error != "Process exited with code: 5." {
		t.Fatalf("exit 5: got %v %q", r.Status, r.Error)
	}
	if r := runOne(t, c, `value.sh`, 5*time.Second); r.Status != poll.OK || string(r.Value) != "42" {
		t.Fatalf("value: got %v %q", r.Status, r.Value)
	}
}

func TestProcessPoolBound(t *testing.T) {
	dir := t.TempDir()
	lock := filepath.Join(dir, "count")
	// Each run records how many runs were active at its start (by files),
	// holds its slot a moment, then removes its mark.
	writeScript(t, dir, "slot.sh", `touch `+lock+`.$$; set -- `+lock+`.*; echo $#; sleep 0.2; rm -f `+lock+`.$$`)
	c := New(Options{Dirs: []string{dir}, MaxProcesses: 3})
	const n = 12
	got := make(chan *poll.Result, n)
	batch := make([]poll.Check, n)
	for i := range batch {
		batch[i] = poll.Check{ItemID: uint64(i), Key: "slot.sh", Timeout: 20 * time.Second, Due: time.Now()}
	}
	c.Check(context.Background(), batch, func(r *poll.Result) { got <- r })
	most := 0
	for range n {
		r := <-got
		if r.Status != poll.OK {
			t.Fatalf("got %v %q", r.Status, r.Error)
		}
		k, err := strconv.Atoi(strings.TrimSpace(string(r.Value)))
		if err != nil {
			t.Fatal(err)
		}
		most = max(most, k)
	}
	if most > 3 || most < 1 {
		t.Fatalf("at most %d processes ran at once with a pool of 3", most)
	}
	if c.latency.Count() != n || c.exec.Count() != n {
		t.Fatalf("latency observed %d, execution %d, want %d each", c.latency.Count(), c.exec.Count(), n)
	}
}

func TestParseOutput(t *testing.T) {
	out := "DISK OK - free space: / 3326 MB (56%); | /=2643MB;5948;5958;0;5968\n" +
		"/ 15272 MB (77%);\n" +
		"/boot 68 MB (69%); | /boot=68MB;88;93;0;98\n" +
		"/home=69357MB;253404;253409;0;253414 \n" +
		"'a label''s'=U;~:10;@1:2 time=0,5s bad=12abc3 x==1 util=3%;;;;\n"
	text, long, perf, bad := ParseOutput(out)
	if text != "DISK OK - free space: / 3326 MB (56%);" {
		t.Errorf("text %q", text)
	}
	if long != "/ 15272 MB (77%);\n/boot 68 MB (69%);" {
		t.Errorf("long %q", long)
	}
	if bad != 2 {
		t.Errorf("bad entries %d, want 2 (bad=12abc3, x==1)", bad)
	}
	f := func(v float64) *float64 { return &v }
	want := map[string]Perfdata{
		"/":         {Value: f(2643), UOM: "MB", Warn: "5948", Crit: "5958", Min: f(0), Max: f(5968)},
		"/boot":     {Value: f(68), UOM: "MB", Warn: "88", Crit: "93", Min: f(0), Max: f(98)},
		"/home":     {Value: f(69357), UOM: "MB", Warn: "253404", Crit: "253409", Min: f(0), Max: f(253414)},
		"a label's": {Warn: "~:10", Crit: "@1:2"},
		"time":      {Value: f(0.5), UOM: "s"},
		"util":      {Value: f(3), UOM: "%"},
	}
	gb, _ := json.Marshal(perf)
	wb, _ := json.Marshal(want)
	if !bytes.Equal(gb, wb) {
		t.Errorf("perfdata\n got %s\nwant %s", gb, wb)
	}
	// Text only.
	text, long, perf, bad = ParseOutput("OK\n")
	if text != "OK" || long != "" || len(perf) != 0 || bad != 0 {
		t.Errorf("plain OK: %q %q %v %d", text, long, perf, bad)
	}
}

func TestShutdownKillsRunning(t *testing.T) {
	dir := t.TempDir()
	writeScript(t, dir, "hang.sh", `sleep 300`)
	c := New(Options{Dirs: []string{dir}, MaxProcesses: 1})
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan *poll.Result, 2)
	c.Check(ctx, []poll.Check{{ItemID: 1, Key: "hang.sh", Timeout: 5 * time.Minute}, {ItemID: 2, Key: "hang.sh", Timeout: 5 * time.Minute}},
		func(r *poll.Result) { got <- r })
	for c.running.Load() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	for range 2 {
		select {
		case r := <-got:
			if r.Status == poll.OK {
				t.Fatalf("a cancelled check gave a value %q", r.Value)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("checks did not end after the context did")
		}
	}
}

// A process killed because the server is stopping is an abandoned
// check, not a timeout: nagios[] made it an UNKNOWN value "plugin timed
// out after 5m0s", stored at every shutdown, and a plain check a not
// supported item (found by polltest's CancelInFlight).
func TestShutdownAbandonsRatherThanTimesOut(t *testing.T) {
	dir := t.TempDir()
	writeScript(t, dir, "hang.sh", `sleep 300`)
	c := New(Options{Dirs: []string{dir}})
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan *poll.Result, 2)
	c.Check(ctx, []poll.Check{{ItemID: 1, Key: "hang.sh", Timeout: 5 * time.Minute}, {ItemID: 2, Key: "nagios[hang.sh]", Timeout: 5 * time.Minute}},
		func(r *poll.Result) { got <- r })
	for c.running.Load() < 2 {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	for range 2 {
		select {
		case r := <-got:
			if r.Status != poll.NetworkError || r.Error != "check abandoned: the server is stopping" {
				t.Errorf("%s after cancel: %v %q %q, want abandoned", r.Key, r.Status, r.Value, r.Error)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("checks did not end after the context did")
		}
	}
}

func TestCheckHTTPLoopback(t *testing.T) {
	dir := pluginDir(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/broken" {
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		io.WriteString(w, "hello from the test")
	}))
	defer srv.Close()
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	c := New(Options{Dirs: []string{dir}})
	for _, tc := range []struct {
		path  string
		state int
	}{{"/", StateOK}, {"/broken", StateCritical}} {
		r := runOne(t, c, `nagios[check_http,-H,127.0.0.1,-p,`+port+`,-u,`+tc.path+`]`, 5*time.Second)
		var v Result
		if err := json.Unmarshal(r.Value, &v); err != nil {
			t.Fatalf("%s: value %q (%v %q): %v", tc.path, r.Value, r.Status, r.Error, err)
		}
		if v.State != tc.state || !strings.HasPrefix(v.Output, "HTTP "+stateNames[tc.state]) {
			t.Fatalf("%s: got %+v, want state %d", tc.path, v, tc.state)
		}
		if size, ok := v.Perfdata["size"]; !ok || size.Value == nil || size.UOM != "B" || *size.Value <= 0 {
			t.Fatalf("%s: perfdata %+v, want the size in bytes", tc.path, v.Perfdata)
		}
	}
}
