package bench

import (
	"bufio"
	"io"
	"strings"
	"sync/atomic"
	"testing"
)

// child runs serveChild over pipes, as a child process's stdin and
// stdout, and returns the parent's ends.
func child(t *testing.T, counts func() []uint64, other func(string, *bufio.Writer)) (io.WriteCloser, *bufio.Scanner) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	w := bufio.NewWriter(outW)
	go func() {
		serveChild(inR, w, counts, func(line string) {
			if other != nil {
				other(line, w)
			}
		})
		outW.Close() // the child exits
	}()
	t.Cleanup(func() { inW.Close() })
	return inW, bufio.NewScanner(outR)
}

// TestChildCountProtocol: both children's counters go through one
// protocol; each "count" reads the totals at that moment, other lines
// keep their own answers, and a wrong number of counters or an exited
// child is an error naming the child.
func TestChildCountProtocol(t *testing.T) {
	var replies atomic.Uint64
	// bench poll-agents: one counter, and "profile" lines answered "ok".
	in, out := child(t, func() []uint64 { return []uint64{replies.Load()} }, func(line string, w *bufio.Writer) {
		if strings.HasPrefix(line, "profile ") {
			w.WriteString("ok\n")
			w.Flush()
		}
	})
	for _, want := range []uint64{0, 7, 1 << 40} {
		replies.Store(want)
		vs, err := readCounts(in, out, 1, "the simulated agents")
		if err != nil || len(vs) != 1 || vs[0] != want {
			t.Fatalf("count = %v, %v; want [%d]", vs, err, want)
		}
	}
	io.WriteString(in, "profile \n")
	if !out.Scan() || out.Text() != "ok" {
		t.Fatalf("profile answered %q", out.Text())
	}
	if _, err := readCounts(in, out, 2, "the simulated agents"); err == nil || !strings.Contains(err.Error(), `the simulated agents answered "1099511627776" to count, want 2 numbers`) {
		t.Fatalf("two counters of a one-counter child: %v", err)
	}

	// bench snmp-agents: requests, then OIDs.
	in, out = child(t, func() []uint64 { return []uint64{12, 340} }, nil)
	io.WriteString(in, "unknown\n") // ignored, no answer
	vs, err := readCounts(in, out, 2, "the simulated devices")
	if err != nil || len(vs) != 2 || vs[0] != 12 || vs[1] != 340 {
		t.Fatalf("counts = %v, %v; want [12 340]", vs, err)
	}
	in.Close()
	if _, err := readCounts(in, out, 2, "the simulated devices"); err == nil {
		t.Fatal("count of an exited child: no error")
	}
}

// TestChildCountExited: a child that exits before answering.
func TestChildCountExited(t *testing.T) {
	var stdin strings.Builder
	_, err := readCounts(&stdin, bufio.NewScanner(strings.NewReader("")), 1, "the simulated agents")
	if err == nil || err.Error() != "the simulated agents' process exited" || stdin.String() != "count\n" {
		t.Fatalf("err %v, sent %q", err, stdin.String())
	}
}
