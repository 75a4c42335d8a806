package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestIntegrationREADMEQuickStart runs the README's quick-start block, as a
// new user would paste it, on a copy of the source tree in a temporary
// directory. The only change made to the text is the ports: the defaults
// 10051 and 8080 may be taken on the machine running the tests, so both are
// replaced by free loopback ports and `serve` gets the matching flags.
func TestIntegrationREADMEQuickStart(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test (builds the binary, runs zabbix_sender)")
	}
	testutil.Need(t, "zabbix_sender", "zabbix-agent")
	testutil.Need(t, "curl", "curl")
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- quickstart:begin -->\\s*```sh\\n(.*?)```\\s*<!-- quickstart:end -->").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no quickstart block between <!-- quickstart:begin --> and <!-- quickstart:end -->")
	}
	script := string(m[1])
	for _, want := range []string{"go build -o bin/peregrine", "bin/peregrine import", "bin/peregrine serve", "zabbix_sender", "history.get"} {
		if !strings.Contains(script, want) {
			t.Fatalf("quick start lost %q", want)
		}
	}
	trapper, http := freePort(t), freePort(t)
	script = strings.ReplaceAll(script, "10051", trapper)
	script = strings.ReplaceAll(script, "8080", http)
	script = strings.Replace(script, "bin/peregrine serve",
		fmt.Sprintf("bin/peregrine serve -trapper.listen 127.0.0.1:%s -http.listen 127.0.0.1:%s", trapper, http), 1)

	dir := t.TempDir()
	for _, p := range []string{"go.mod", "go.sum", "cmd", "internal", "docs"} {
		if out, err := exec.Command("cp", "-r", filepath.Join("../..", p), dir).CombinedOutput(); err != nil {
			t.Fatalf("copy %s: %v: %s", p, err, out)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = dir
	// Its own process group, so a failure part-way cannot leave the
	// background server running after the test.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "peregrine.log"))
	if err != nil {
		t.Fatalf("quick start failed: %v\n--- output:\n%s\n--- peregrine.log:\n%s", err, out.String(), log)
	}
	got := out.String()
	t.Logf("quick start output:\n%s", got)
	for _, want := range []string{
		`processed: 1; failed: 0; total: 1`,
		`"value":"42"`,
		"peregrine_trapper_values_processed_total 1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("quick start output lacks %q:\n%s\n--- peregrine.log:\n%s", want, got, log)
		}
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	// Below Linux's ephemeral range (32768-60999): the script binds the
	// port minutes later (after a build), and a port the kernel hands
	// out for outgoing connections may be taken by then by any test on
	// the machine.
	for range 200 {
		port := 20000 + rand.IntN(12000)
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		ln.Close()
		return fmt.Sprint(port)
	}
	t.Fatal("no free loopback port in 20000-31999")
	return ""
}
