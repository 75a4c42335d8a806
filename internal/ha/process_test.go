package ha

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// childNode is the test binary run as a separate node process
// (PEREGRINE_HA_CHILD set, from TestIntegrationStoppedProcess): it
// becomes active, opens a fenced transaction with a row in it, says
// READY, and on "COMMIT" from its parent commits it and tries a second
// fenced write, printing what happened to each.
func childNode() int {
	ctx := context.Background()
	delay, _ := time.ParseDuration(os.Getenv("PEREGRINE_HA_CHILD_DELAY"))
	n, err := Open(ctx, Options{DSN: os.Getenv("PEREGRINE_HA_CHILD"), Name: "child", Address: "127.0.0.1", Port: 10051, FailoverDelay: delay, Version: "test"})
	if err != nil {
		fmt.Println("OPEN", err)
		return 1
	}
	go n.Run(ctx)
	for n.Lease() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	l := n.Lease()
	tx, err := n.pool.Begin(ctx)
	if err == nil {
		if err = l.Fence(ctx, tx); err == nil {
			_, err = tx.Exec(ctx, `INSERT INTO t VALUES ('child, before the pause')`)
		}
	}
	if err != nil {
		fmt.Println("SETUP", err)
		return 1
	}
	fmt.Println("READY")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() && in.Text() != "COMMIT" {
	}
	fmt.Println("COMMIT", tx.Commit(ctx))
	fmt.Println("WRITE", l.Write(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO t VALUES ('child, after the pause')`)
		return err
	}))
	return 0
}

// A real process, active with a fenced transaction open, is stopped
// (SIGSTOP: no heartbeats, no timers, its connections open); a node in
// this process takes over; the stopped one is continued and commits:
// neither its open transaction nor a new fenced write commits.
func TestIntegrationStoppedProcess(t *testing.T) {
	c := newTestCluster(t)
	const delay = 2 * time.Second
	ctx := context.Background()
	c.pg.Exec(`CREATE TABLE t (v text)`)
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "PEREGRINE_HA_CHILD="+c.dsn, "PEREGRINE_HA_CHILD_DELAY="+delay.String())
	stdin, _ := child.StdinPipe()
	stdout, _ := child.StdoutPipe()
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	lines := bufio.NewScanner(stdout)
	next := func(prefix string) string {
		t.Helper()
		got := make(chan string, 1)
		go func() {
			for lines.Scan() {
				if strings.HasPrefix(lines.Text(), prefix) {
					got <- lines.Text()
					return
				}
				fmt.Fprintln(os.Stderr, "child:", lines.Text())
			}
			got <- ""
		}()
		select {
		case l := <-got:
			if l == "" {
				t.Fatalf("child ended before %q", prefix)
			}
			return l
		case <-time.After(30 * time.Second):
			t.Fatalf("no %q from the child", prefix)
		}
		return ""
	}
	next("READY")
	b := c.start("node-b", delay)
	time.Sleep(2 * Heartbeat(delay))
	if b.Lease() != nil {
		t.Fatal("node-b took over from a running active node")
	}
	if err := child.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "node-b takes over from the stopped process", 20*delay, func() bool { return b.Lease() != nil })
	if err := child.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, "COMMIT\n")
	if l := next("COMMIT"); l == "COMMIT <nil>" {
		t.Fatalf("the stopped process's transaction committed after the takeover: %s", l)
	} else {
		t.Logf("%s", l)
	}
	if l := next("WRITE"); !strings.Contains(l, "no longer holds the active lease") {
		t.Fatalf("the continued process's fenced write: %s, want ErrFenced", l)
	}
	var n int
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d rows (%v): the old active's writes reached the table", n, err)
	}
}
