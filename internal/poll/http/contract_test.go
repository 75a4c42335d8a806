package http

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/poll/polltest"
)

// httpMarkers are the goroutines of the checker and of its transports'
// connections (the test servers' are net/http.(*conn)).
var httpMarkers = []string{"poll/http.(*Checker)", "net/http.(*persistConn)", "net/http.(*Transport)"}

// TestContract holds the HTTP agent checker to poll.Checker's contract
// on loopback: a web server that answers, a peer that accepts and never
// answers, and peers that send an endless body or an endless header.
func TestContract(t *testing.T) {
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }))
	t.Cleanup(web.Close)
	silent := "http://" + polltest.SilentTCP(t) + "/"
	body := "http://" + polltest.FloodTCP(t, []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n")) + "/"
	header := "http://" + polltest.FloodTCP(t, []byte("HTTP/1.1 200 OK\r\nX-Endless: ")) + "/"
	// Headers, the start of a body, then silence: a server that hangs
	// while the checker reads the body. It answers only once the request
	// is in: bytes sent before it reach net/http's idle-connection check
	// ("unsolicited response") and the check fails instead of hanging.
	stall := "http://" + polltest.ServeTCP(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			if line == "\r\n" {
				break
			}
		}
		if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial"); err == nil {
			_, _ = io.Copy(io.Discard, br)
		}
	}) + "/"
	const maxBody = 64 << 10
	polltest.Run(t, func(t *testing.T) *polltest.Subject {
		urls := items{1: get(web.URL + "/a"), 2: get(web.URL + "/b"), 3: get(silent), 4: get(stall), 5: get(silent), 6: get(body), 7: get(header), 8: get(stall)}
		c := New(Options{Item: urls.item, MaxBodySize: maxBody, MaxHeaderSize: 16 << 10})
		check := func(id uint64) poll.Check {
			return poll.Check{ItemID: id, Key: "http.item", Timeout: 3 * time.Second, Due: time.Now()}
		}
		return &polltest.Subject{
			Checker:  c,
			Close:    c.Close,
			Answer:   []poll.Check{check(1), check(2)},
			Hang:     []poll.Check{check(3), check(4)},
			Expire:   []poll.Check{check(5), check(8)},
			Flood:    []poll.Check{check(6), check(7)},
			MaxValue: maxBody,
			Markers:  httpMarkers,
		}
	})
}

// TestContractWebPage holds the web.page.* simple checks to the same
// contract, through the same clients.
func TestContractWebPage(t *testing.T) {
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("<html>ok</html>")) }))
	t.Cleanup(web.Close)
	page := func(key, addr string) string {
		host, port, _ := net.SplitHostPort(addr)
		return key + "[" + host + ",/," + port + "]"
	}
	webAddr := web.Listener.Addr().String()
	silent := polltest.SilentTCP(t)
	flood := polltest.FloodTCP(t, []byte("HTTP/1.1 200 OK\r\n\r\n"))
	const maxBody = 64 << 10
	polltest.Run(t, func(t *testing.T) *polltest.Subject {
		c := New(Options{Item: items{}.item, MaxBodySize: maxBody})
		check := func(id uint64, key string) poll.Check {
			return poll.Check{ItemID: id, Key: key, Addr: "127.0.0.1:10050", Timeout: 3 * time.Second, Due: time.Now()}
		}
		return &polltest.Subject{
			Checker:  c.WebPage(),
			Close:    c.Close,
			Answer:   []poll.Check{check(1, page("web.page.get", webAddr)), check(2, page("web.page.perf", webAddr))},
			Hang:     []poll.Check{check(3, page("web.page.get", silent))},
			Expire:   []poll.Check{check(4, page("web.page.perf", silent))},
			Flood:    []poll.Check{check(5, page("web.page.get", flood))},
			MaxValue: maxBody + 4<<10, // the body and the header block
			Markers:  httpMarkers,
		}
	})
}
