package testutil

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// Need returns the path of program, skipping the test if it is missing
// (failing it under CI).
func Need(t testing.TB, program, debianPackage string) string {
	t.Helper()
	p, err := exec.LookPath(program)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not found under CI: .ci/run must install the Debian package %s", program, debianPackage)
		}
		t.Skipf("%s not installed (apt-get install %s)", program, debianPackage)
	}
	return p
}

// NeedPythonModule returns Debian's Python interpreter, /usr/bin/python3,
// once it can import module; without it the test fails under CI (where
// .ci/run installs debianPackage) and is skipped elsewhere. Debian's
// python3-* packages install into /usr/lib/python3/dist-packages, which
// a python3 earlier in PATH (pyenv, a venv) does not see.
func NeedPythonModule(t testing.TB, module, debianPackage string) string {
	t.Helper()
	const python = "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import "+module).Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("python3 module %s not importable by %s under CI: .ci/run must install the Debian package %s: %v", module, python, debianPackage, err)
		}
		t.Skipf("%s not installed (apt-get install %s): %v", debianPackage, debianPackage, err)
	}
	return python
}

// SenderResult is what one zabbix_sender run reported.
type SenderResult struct {
	ExitCode  int
	Processed int // summed over every "Response from" line
	Failed    int
	Total     int
	Responses int
	Sent      int // from the final "sent: N; skipped: M; total: T" line
	Skipped   int
	Output    string
}

var (
	respRe  = regexp.MustCompile(`Response from "[^"]*": "processed: (\d+); failed: (\d+); total: (\d+); seconds spent: \d+\.\d{6}"`)
	finalRe = regexp.MustCompile(`(?m)^sent: (\d+); skipped: (\d+); total: (\d+)$`)
)

// RunSender runs the real zabbix_sender against addr ("host:port") with the
// extra args (for example "-s", "host", "-k", "key", "-o", "1" or "-i",
// file) and parses its verbose output.
func RunSender(t testing.TB, addr string, args ...string) SenderResult {
	t.Helper()
	bin := Need(t, "zabbix_sender", "zabbix-agent")
	host, port, err := splitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	full := append([]string{"-z", host, "-p", port, "-vv"}, args...)
	cmd := exec.CommandContext(ctx, bin, full...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	res := SenderResult{Output: out.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
	default:
		t.Fatalf("zabbix_sender %v: %v\n%s", full, err, out.String())
	}
	for _, m := range respRe.FindAllStringSubmatch(res.Output, -1) {
		res.Processed += atoi(m[1])
		res.Failed += atoi(m[2])
		res.Total += atoi(m[3])
		res.Responses++
	}
	if m := finalRe.FindStringSubmatch(res.Output); m != nil {
		res.Sent, res.Skipped = atoi(m[1]), atoi(m[2])
	}
	return res
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func splitHostPort(addr string) (string, string, error) {
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			return addr[:i], addr[i+1:], nil
		}
	}
	return "", "", fmt.Errorf("address %q has no port", addr)
}
