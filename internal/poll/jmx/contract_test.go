package jmx

import (
	"encoding/binary"
	"encoding/json"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/poll/polltest"
	"github.com/peregrine-mon/peregrine/internal/testutil"
	"github.com/peregrine-mon/peregrine/internal/zbx"
)

var markers = []string{"poll/jmx.(*Checker)"}

// Endpoint ports the fake gateway acts on (the checks' Addr ports, in
// the default endpoint).
const (
	fakeAnswer   = 1 // one value per key
	fakeHang     = 2 // reads the request, never answers
	fakeHuge     = 3 // announces a 1 GiB reply
	fakeGarbage  = 4 // a frame of 900 KB that is not JSON, sent slowly
	fakeFailed   = 5 // {"response":"failed"} as the gateway words a dead JVM
	fakeRequests = 6 // answers with the request it got, as the value of every key
)

// fakeGateway speaks the gateway's protocol on loopback, acting on the
// request's endpoint: the misbehaving gateways the real one is not.
type fakeGateway struct {
	Addr string
	mu   sync.Mutex
	reqs []string // requests received, in order
}

func (g *fakeGateway) requests() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.reqs...)
}

func startFakeGateway(t testing.TB) *fakeGateway {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &fakeGateway{Addr: ln.Addr().String()}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				g.serve(c)
			}()
		}
	}()
	return g
}

func (g *fakeGateway) serve(c net.Conn) {
	rd := zbx.NewReader(c, zbx.ReaderOptions{MaxSize: 1 << 20})
	_, payload, err := rd.ReadFrame()
	if err != nil {
		return
	}
	g.mu.Lock()
	g.reqs = append(g.reqs, string(payload))
	g.mu.Unlock()
	var req struct {
		Endpoint string   `json:"jmx_endpoint"`
		Keys     []string `json:"keys"`
	}
	if err := json.Unmarshal(payload, &req); err != nil {
		return
	}
	port := 0
	if m := endpointPort.FindStringSubmatch(req.Endpoint); m != nil {
		port, _ = strconv.Atoi(m[1])
	}
	reply := func(v any) {
		b, _ := json.Marshal(v)
		c.Write(zbx.AppendFrame(nil, b, zbx.FlagProtocol))
	}
	switch port {
	case fakeAnswer, fakeRequests:
		type ans struct {
			Value string `json:"value"`
		}
		data := make([]ans, len(req.Keys))
		for i, k := range req.Keys {
			data[i].Value = "value of " + k
			if port == fakeRequests {
				data[i].Value = string(payload)
			}
		}
		reply(map[string]any{"response": "success", "data": data})
	case fakeFailed:
		reply(map[string]any{"response": "failed", "error": "Connection refused: " + req.Endpoint})
	case fakeHuge:
		h := []byte("ZBXD\x01\x00\x00\x00\x40\x00\x00\x00\x00")
		c.Write(h)
		buf := make([]byte, 64<<10)
		for {
			if _, err := c.Write(buf); err != nil {
				return
			}
		}
	case fakeGarbage:
		h := make([]byte, 13)
		copy(h, "ZBXD\x01")
		binary.LittleEndian.PutUint32(h[5:], 900<<10)
		c.Write(h)
		chunk := []byte(strings.Repeat("x", 30<<10))
		for range 30 {
			if _, err := c.Write(chunk); err != nil {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		// The reply's end, then silence: the checker has what it reads.
		var b [1]byte
		c.Read(b[:])
	default: // fakeHang and the rest: silent until the checker leaves
		var b [1]byte
		c.Read(b[:])
	}
}

var endpointPort = regexp.MustCompile(`:(\d+)/jmxrmi`)

func fakeCheck(id uint64, port int, key string) poll.Check {
	return poll.Check{ItemID: id, HostID: 1, InterfaceID: uint64(port), Key: key, Addr: "127.0.0.1:" + strconv.Itoa(port), Timeout: 3 * time.Second}
}

// TestContractFakeGateway runs polltest's suite against gateways that
// misbehave as the real one does not: silent after the request, a
// reply too large, an endless reply.
func TestContractFakeGateway(t *testing.T) {
	g := startFakeGateway(t)
	polltest.Run(t, func(t *testing.T) *polltest.Subject {
		c := New(Options{Gateway: g.Addr, MaxReplySize: 1 << 20})
		return &polltest.Subject{
			Checker: c,
			Answer: []poll.Check{fakeCheck(1, fakeAnswer, `jmx["java.lang:type=Memory","HeapMemoryUsage.used"]`),
				fakeCheck(2, fakeAnswer, "jmx.discovery")},
			Hang:     []poll.Check{fakeCheck(3, fakeHang, "jmx[a,b]")},
			Expire:   []poll.Check{fakeCheck(4, fakeHang, "jmx[c,d]")},
			Flood:    []poll.Check{fakeCheck(5, fakeHuge, "jmx[e,f]"), fakeCheck(6, fakeGarbage, "jmx[g,h]")},
			MaxValue: 1 << 20,
			Markers:  markers,
		}
	})
}

// TestContractRealGateway runs polltest's suite through the real Zabbix
// Java gateway against a real JVM: values, a JMX port that accepts and
// stays silent (held by the gateway for its 30 s timeout: Hang, and
// beyond the checks' 1 s timeout: Expire).
func TestContractRealGateway(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the Java gateway and a JVM")
	}
	app := testutil.StartJMXApp(t, testutil.JMXAppOptions{Beans: 2})
	gw := testutil.StartJavaGateway(t, testutil.JavaGatewayOptions{Pollers: 10, Timeout: 30})
	silent := silentListener(t)
	check := func(id uint64, addr, key string) poll.Check {
		return poll.Check{ItemID: id, HostID: 1, InterfaceID: id, Key: key, Addr: addr, Timeout: 10 * time.Second}
	}
	polltest.Run(t, func(t *testing.T) *polltest.Subject {
		return &polltest.Subject{
			Checker: New(Options{Gateway: gw.Addr}),
			Answer: []poll.Check{check(1, app.Addr, `jmx["peregrine:type=Test,name=t1",Count]`),
				check(2, app.Addr, `jmx["java.lang:type=Runtime",VmName]`),
				check(3, app.Addr, `jmx.discovery[beans,"peregrine:type=Test,*"]`)},
			Hang:    []poll.Check{check(4, silent, `jmx["java.lang:type=Runtime",VmName]`)},
			Expire:  []poll.Check{check(5, silent, `jmx["java.lang:type=Runtime",Uptime]`)},
			Markers: markers,
		}
	})
}

// silentListener accepts connections and never writes: a JVM (or
// gateway) that hangs. Closed with the test.
func silentListener(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return ln.Addr().String()
}
