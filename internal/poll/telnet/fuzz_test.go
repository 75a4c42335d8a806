package telnet

import (
	"bytes"
	"net"
	"testing"
	"time"
)

// FuzzServer feeds what a server might send, split at a random point,
// through the parser and the output cleaning: no panic, data and answers
// bounded, the same result however the bytes arrive.
func FuzzServer(f *testing.F) {
	f.Add([]byte("\xff\xfd\x18\xff\xfb\x01login: "), 3)
	f.Add([]byte("echo hi\r\nhi\r\n$ "), 5)
	f.Add([]byte("\xff\xfa\x18\x01\xff\xff\xff\xf0x\r\x00y\n\r$"), 7)
	f.Add(bytes.Repeat([]byte{cmdIAC, cmdWILL, 7}, 50), 1)
	f.Fuzz(func(t *testing.T, in []byte, split int) {
		run := func(chunks ...[]byte) ([]byte, []byte) {
			client, server := net.Pipe()
			defer client.Close()
			go func() {
				for _, c := range chunks {
					if _, err := server.Write(c); err != nil {
						break
					}
				}
				server.Close()
			}()
			var answers bytes.Buffer
			w := &recorder{}
			c := newConn(client, 1<<10)
			c.c = &splitConn{Conn: client, w: w}
			_ = client.SetDeadline(time.Now().Add(5 * time.Second))
			data, _ := c.readUntil(nil, func([]byte) bool { return false }, 0, time.Time{})
			answers.Write(w.b)
			return data, answers.Bytes()
		}
		if split < 0 || split > len(in) {
			split = len(in) / 2
		}
		d1, a1 := run(in)
		d2, a2 := run(in[:split], in[split:])
		if len(d1) > 1<<10 || len(a1) > 3*maxReplies {
			t.Fatalf("unbounded: %d data bytes, %d answer bytes", len(d1), len(a1))
		}
		if !bytes.Equal(d1, d2) || !bytes.Equal(a1, a2) {
			t.Fatalf("split at %d changed the result: %q %v / %q %v", split, d1, a1, d2, a2)
		}
		_ = output(d1, unixEOL(in), '$')
	})
}

// splitConn reads from its Conn and records writes.
type splitConn struct {
	net.Conn
	w *recorder
}

func (s *splitConn) Write(p []byte) (int, error) { return s.w.Write(p) }
