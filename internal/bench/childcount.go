package bench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The simulated agents' child (bench poll-agents) and the simulated SNMP
// devices' child (bench snmp-agents) report their counters through one
// protocol on their stdin and stdout: the parent writes the line "count"
// and the child answers one line of its counters, unsigned decimal
// numbers separated by single spaces, in an order fixed per child
// (poll-agents: checks answered with a value; snmp-agents: requests, then
// OIDs answered). Counters are totals since the child started: the
// parent takes differences over its measurement window.

// countRequest is the line that asks a child for its counters.
const countRequest = "count"

// serveChild reads the parent's lines from in until it closes: a
// countRequest is answered with counts(); any other line goes to other
// (nil: ignored), which writes its own answer to w.
func serveChild(in io.Reader, w *bufio.Writer, counts func() []uint64, other func(line string)) error {
	sc := bufio.NewScanner(in)
	var b []byte
	for sc.Scan() {
		if sc.Text() != countRequest {
			if other != nil {
				other(sc.Text())
			}
			continue
		}
		b = b[:0]
		for i, v := range counts() {
			if i > 0 {
				b = append(b, ' ')
			}
			b = strconv.AppendUint(b, v, 10)
		}
		b = append(b, '\n')
		if _, err := w.Write(b); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	return sc.Err()
}

// readCounts asks a child (who, for errors) for its n counters.
func readCounts(stdin io.Writer, out *bufio.Scanner, n int, who string) ([]uint64, error) {
	if _, err := io.WriteString(stdin, countRequest+"\n"); err != nil {
		return nil, fmt.Errorf("cannot ask %s for their counts: %w", who, err)
	}
	if !out.Scan() {
		return nil, errors.New(who + "' process exited")
	}
	fields := strings.Fields(out.Text())
	if len(fields) != n {
		return nil, fmt.Errorf("%s answered %q to count, want %d numbers", who, out.Text(), n)
	}
	vs := make([]uint64, n)
	for i, f := range fields {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s answered %q to count: %w", who, out.Text(), err)
		}
		vs[i] = v
	}
	return vs, nil
}
