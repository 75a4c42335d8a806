package tcpsvc

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// server is a listener on 127.0.0.x that runs serve on every connection.
func server(t *testing.T, ip string, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conn.Close()
				conn.SetDeadline(time.Now().Add(10 * time.Second))
				serve(conn)
			}()
		}
	}()
	return ln.Addr().String()
}

// greeter sends greeting, then reads until the client closes (so that a
// QUIT reaches it).
func greeter(greeting string) func(net.Conn) {
	return func(c net.Conn) {
		fmt.Fprint(c, greeting)
		buf := make([]byte, 256)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
		}
	}
}

// silent accepts and never says a word until the client gives up.
func silent(c net.Conn) {
	buf := make([]byte, 256)
	for {
		if _, err := c.Read(buf); err != nil {
			return
		}
	}
}

// ldapServer answers any request with a successful BindResponse to
// message 1.
func ldapServer(c net.Conn) {
	buf := make([]byte, 64)
	if _, err := c.Read(buf); err != nil {
		return
	}
	c.Write([]byte{0x30, 0x0c, 0x02, 0x01, 0x01, 0x61, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00})
}

func refusedAddr(t *testing.T, ip string) string {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	a := ln.Addr().String()
	ln.Close() // nothing listens there now: connections are refused
	return a
}

func portOf(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

func run(t *testing.T, c *Checker, iface string, timeout time.Duration, keys ...string) map[string]*poll.Result {
	t.Helper()
	batch := make([]poll.Check, len(keys))
	for i, k := range keys {
		batch[i] = poll.Check{ItemID: uint64(i + 1), Key: k, Addr: iface, Timeout: timeout}
	}
	var mu sync.Mutex
	got := map[string]*poll.Result{}
	var wg sync.WaitGroup
	wg.Add(len(keys))
	c.Check(context.Background(), batch, func(r *poll.Result) {
		mu.Lock()
		got[r.Key] = r
		mu.Unlock()
		wg.Done()
	})
	wg.Wait()
	return got
}

func TestServices(t *testing.T) {
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound) // any response is a running server
	}))
	defer web.Close()
	tlsWeb := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer tlsWeb.Close()
	up := map[string]string{ // service → address of a server speaking it
		"ssh":    server(t, "127.0.0.2", greeter("SSH-2.0-OpenSSH_9.2p1 Debian\r\n")),
		"smtp":   server(t, "127.0.0.3", greeter("220 mail.example ESMTP\r\n")),
		"ftp":    server(t, "127.0.0.4", greeter("220 (vsFTPd 3.0.3)\r\n")),
		"pop":    server(t, "127.0.0.5", greeter("+OK Dovecot ready.\r\n")),
		"imap":   server(t, "127.0.0.6", greeter("* OK [CAPABILITY IMAP4rev1] ready\r\n")),
		"nntp":   server(t, "127.0.0.7", greeter("201 news.example ready (no posting)\r\n")),
		"telnet": server(t, "127.0.0.8", greeter("\xff\xfd\x18\xff\xfd\x20")),
		"ldap":   server(t, "127.0.0.9", ldapServer),
		"tcp":    server(t, "127.0.0.10", silent),
		"http":   web.Listener.Addr().String(),
		"https":  tlsWeb.Listener.Addr().String(),
	}
	wrong := server(t, "127.0.0.11", greeter("554 go away\r\n"))
	mute := server(t, "127.0.0.12", silent)
	refused := refusedAddr(t, "127.0.0.13")

	m := selfmon.NewRegistry()
	c := New(Options{Metrics: m})
	var keys []string
	want := map[string]string{}
	for svc, addr := range up {
		host, port, _ := net.SplitHostPort(addr)
		k := fmt.Sprintf("net.tcp.service[%s,%s,%s]", svc, host, port)
		keys = append(keys, k, strings.Replace(k, "service[", "service.perf[", 1))
		want[k] = "1"
		for _, bad := range []string{wrong, mute, refused} {
			if svc == "tcp" && bad != refused {
				continue // tcp only asks whether the port accepts
			}
			if svc == "telnet" && bad == wrong {
				continue // any first bytes will do for telnet
			}
			host, port, _ := net.SplitHostPort(bad)
			k := fmt.Sprintf("net.tcp.service[%s,%s,%s]", svc, host, port)
			keys = append(keys, k, strings.Replace(k, "service[", "service.perf[", 1))
			want[k] = "0"
		}
	}
	got := run(t, c, "127.0.0.1:10050", 2*time.Second, keys...)
	for _, k := range keys {
		r := got[k]
		if r.Status != poll.OK {
			t.Errorf("%s: %s %q", k, r.Status, r.Error)
			continue
		}
		// A 0 from a silent service ran out the check's time: marked
		// so, for the scheduler's "server behind" test (issue 30);
		// a refusal or a wrong greeting is the service's answer.
		if timedOut := strings.Contains(k, "127.0.0.12"); r.TimedOut != timedOut {
			t.Errorf("%s: TimedOut %v, want %v", k, r.TimedOut, timedOut)
		}
		if w, ok := want[k]; ok {
			if string(r.Value) != w {
				t.Errorf("%s = %s, want %s", k, r.Value, w)
			}
			continue
		}
		// perf: the time when up, 0 when down.
		plain := strings.Replace(k, "service.perf[", "service[", 1)
		v, err := strconv.ParseFloat(string(r.Value), 64)
		switch {
		case err != nil:
			t.Errorf("%s = %q, not a number", k, r.Value)
		case want[plain] == "1" && (v < 0.0001 || v >= 2):
			t.Errorf("%s = %v, want the check's seconds", k, v)
		case want[plain] == "0" && v != 0:
			t.Errorf("%s = %v, want 0 (down)", k, v)
		}
	}
	for _, reason := range []string{"connect_failed", "timeout", "bad_greeting"} {
		var b strings.Builder
		m.WriteText(&b)
		if !strings.Contains(b.String(), `peregrine_poll_tcpsvc_down_total{reason="`+reason+`"} `) ||
			strings.Contains(b.String(), `peregrine_poll_tcpsvc_down_total{reason="`+reason+`"} 0`+"\n") {
			t.Errorf("no %s counted:\n%s", reason, b.String())
		}
	}
}

// TestDefaults: an empty ip is the interface's host, an empty port the
// service's default (here tcp's required port is given, ssh's is 22 and
// nothing listens there on 127.0.0.14).
func TestDefaults(t *testing.T) {
	addr := server(t, "127.0.0.15", greeter("SSH-2.0-x\r\n"))
	c := New(Options{})
	got := run(t, c, addr, time.Second, "net.tcp.service[ssh,,"+portOf(addr)+"]", "net.tcp.service[tcp,,"+portOf(addr)+"]")
	for k, r := range got {
		if string(r.Value) != "1" {
			t.Errorf("%s = %s %q %s", k, r.Status, r.Value, r.Error)
		}
	}
	var dialed string
	c = New(Options{Dial: func(ctx context.Context, network, a string) (net.Conn, error) {
		dialed = a
		return nil, fmt.Errorf("refused")
	}})
	got = run(t, c, "127.0.0.14:10050", time.Second, "net.tcp.service[ssh]")
	if dialed != "127.0.0.14:22" || string(got["net.tcp.service[ssh]"].Value) != "0" {
		t.Errorf("ssh default: dialed %q, value %q", dialed, got["net.tcp.service[ssh]"].Value)
	}
}

func TestBadKeys(t *testing.T) {
	c := New(Options{})
	f := map[string]string{
		"net.tcp.service":                 "the service is required",
		"net.tcp.service[]":               "the service is required",
		"net.tcp.service[tcp]":            "the port is required",
		"net.tcp.service[ntp]":            "UDP service",
		"net.tcp.service[gopher]":         `invalid first parameter "gopher"`,
		"net.tcp.service[ssh,,0]":         "the port must be 1..65535",
		"net.tcp.service[ssh,,x]":         "the port must be 1..65535",
		"net.tcp.service[ssh,,22,1]":      "too many parameters",
		"net.tcp.service.perf[ssh,[a,b]]": "must not be an array",
		"net.tcp.service[":                "invalid item key",
	}
	var keys []string
	for k := range f {
		keys = append(keys, k)
	}
	got := run(t, c, "127.0.0.1:10050", time.Second, keys...)
	for k, want := range f {
		if r := got[k]; r.Status != poll.NotSupported || !strings.Contains(r.Error, want) {
			t.Errorf("%s = %s %q, want not supported with %q", k, r.Status, r.Error, want)
		}
	}
}

func TestIsKey(t *testing.T) {
	for k, want := range map[string]bool{"net.tcp.service[ssh]": true, "net.tcp.service.perf[tcp,,1]": true, "net.udp.service[ntp]": false, "icmpping": false} {
		if IsKey(k) != want {
			t.Errorf("IsKey(%q) = %v", k, !want)
		}
	}
}
