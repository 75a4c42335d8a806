package tcpsvc

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/poll/polltest"
)

// TestContract holds the TCP service checker to poll.Checker's
// contract on loopback: an SSH-like greeter and a web server that
// answer, a peer that accepts and never speaks, and one that sends
// without end and without a line break.
func TestContract(t *testing.T) {
	ssh := polltest.ServeTCP(t, func(c net.Conn) {
		if _, err := io.WriteString(c, "SSH-2.0-OpenSSH_9.2p1 Debian\r\n"); err == nil {
			_, _ = io.Copy(io.Discard, c)
		}
	})
	web := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(web.Close)
	silent := polltest.SilentTCP(t)
	flood := polltest.FloodTCP(t, []byte("SSH-2.0-"))
	keyOf := func(item, svc, addr string) string {
		host, port, _ := net.SplitHostPort(addr)
		return item + "[" + svc + "," + host + "," + port + "]"
	}
	key := func(svc, addr string) string { return keyOf("net.tcp.service", svc, addr) }
	polltest.Run(t, func(t *testing.T) *polltest.Subject {
		check := func(id uint64, k string) poll.Check {
			return poll.Check{ItemID: id, HostID: 1, InterfaceID: 1, Key: k, Addr: "127.0.0.1:10050", Timeout: 3 * time.Second, Due: time.Now()}
		}
		return &polltest.Subject{
			Checker: New(Options{}),
			Answer: []poll.Check{check(1, key("ssh", ssh)), check(2, key("http", web.Listener.Addr().String())),
				check(3, key("tcp", silent)), check(4, keyOf("net.tcp.service.perf", "ssh", ssh))},
			Hang:     []poll.Check{check(5, key("ssh", silent)), check(6, key("http", silent))},
			Expire:   []poll.Check{check(7, key("smtp", silent))},
			Flood:    []poll.Check{check(8, key("ssh", flood)), check(9, key("smtp", flood))},
			MaxValue: 16,
			Markers:  []string{"tcpsvc.(*Checker)"},
		}
	})
}
