package agent

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
)

// FuzzReply feeds arbitrary bytes as an agent's reply, split at a random
// point (two writes, so frames arrive in pieces): every reply ends in
// exactly one result with a status and, unless it is a value, an error
// message; nothing panics, and a value is never larger than the limit.
func FuzzReply(f *testing.F) {
	frame := func(p string) []byte {
		b := []byte{'Z', 'B', 'X', 'D', 1, byte(len(p)), 0, 0, 0, 0, 0, 0, 0}
		return append(b, p...)
	}
	for _, seed := range [][]byte{
		frame("1"), frame("ZBX_NOTSUPPORTED\x00Unsupported item key."), frame("ZBX_NOTSUPPORTED"), frame("ZBX_ERROR\x00x"),
		[]byte("garbage"), {'Z', 'B', 'X', 'D', 1, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0}, frame("12345")[:15],
		{'Z', 'B', 'X', 'D', 3, 5, 0, 0, 0, 5, 0, 0, 0, 'x', 'x', 'x', 'x', 'x'}, {},
	} {
		f.Add(seed, uint8(3))
	}
	f.Fuzz(func(t *testing.T, reply []byte, cut uint8) {
		c := New(Options{MaxReplySize: 1024, Dial: func(context.Context, string, string) (net.Conn, error) {
			ours, theirs := net.Pipe()
			go func() {
				io.CopyN(io.Discard, theirs, 13+4) // the request: header and "test"
				k := min(int(cut), len(reply))
				theirs.Write(reply[:k])
				theirs.Write(reply[k:])
				theirs.Close()
			}()
			return ours, nil
		}})
		got := make(chan *poll.Result, 1)
		c.Check(context.Background(), []poll.Check{{ItemID: 1, Key: "test", Addr: "pipe", Timeout: 2 * time.Second}}, func(r *poll.Result) { got <- r })
		r := <-got
		switch r.Status {
		case poll.OK:
			if len(r.Value) > 1024 || r.Error != "" {
				t.Fatalf("value of %d bytes, error %q", len(r.Value), r.Error)
			}
		case poll.NotSupported, poll.NetworkError:
			if r.Error == "" {
				t.Fatalf("status %v without an error message", r.Status)
			}
		default:
			t.Fatalf("status %v for reply %q", r.Status, reply)
		}
	})
}
