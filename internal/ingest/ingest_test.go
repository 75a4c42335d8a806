package ingest

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/historytest"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
	"github.com/peregrine-mon/peregrine/internal/zbx"
)

const wireDir = "../../../shared/testdata/zabbix-wire"

// testSpec is the catalog every trapper test runs against.
func testSpec() catalog.Spec {
	return catalog.Spec{
		Hosts: []catalog.HostSpec{
			{Host: "peregrine-test", Groups: []string{"Test"}, Items: []catalog.ItemSpec{
				{Key: "trap.one", ValueType: "float"},
				{Key: "trap.a", ValueType: "unsigned"},
				{Key: "trap.b", ValueType: "character"},
				{Key: "trap.c", ValueType: "float"},
				{Key: "trap.t", ValueType: "text"},
				{Key: "trap.log", ValueType: "log"},
				{Key: "trap.off", ValueType: "float", Status: "disabled"},
				{Key: "agent.ping", Type: "zabbix_agent", ValueType: "unsigned"},
			}},
			{Host: "down-host", Status: "disabled", Groups: []string{"Test"}, Items: []catalog.ItemSpec{{Key: "trap.a"}}},
		},
	}
}

type testServer struct {
	srv   *Server
	store *memstore.Store
	cat   *catalog.Catalog
	reg   *selfmon.Registry
	logs  *syncBuffer
	addr  string
	rt    *itemstate.Registry // the item states the pipeline's preprocessing sets
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startTrapper(t testing.TB, spec catalog.Spec, tweak func(*Options)) *testServer {
	t.Helper()
	ctx := context.Background()
	cat := catalogtest.Open(t, spec)
	ts := &testServer{store: memstore.New(), cat: cat, reg: selfmon.NewRegistry(), logs: &syncBuffer{}, rt: itemstate.New()}
	p, err := pipeline.New(pipeline.Options{Shards: 2, Store: ts.store, Metrics: ts.reg, Catalog: cat.Snapshot, ItemStates: ts.rt})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{
		Listen: "127.0.0.1:0", Timeout: 2 * time.Second, IdleTimeout: time.Second,
		Catalog: cat, Pipeline: p, Metrics: ts.reg, ItemStates: ts.rt,
		Logger: slog.New(slog.NewTextHandler(ts.logs, nil)),
	}
	if tweak != nil {
		tweak(&opts)
	}
	ts.srv, err = New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts.addr = ts.srv.Addr().String()
	rctx, cancel := context.WithCancel(ctx)
	pdone, tdone := make(chan struct{}), make(chan struct{})
	go func() { p.Run(context.Background()); close(pdone) }()
	go func() { ts.srv.Run(rctx); close(tdone) }()
	t.Cleanup(func() {
		cancel()
		<-tdone
		// Every connection gave back what it took.
		if n := ts.srv.budget.inUse(); n != 0 {
			t.Errorf("%d budget bytes still in use after every connection closed", n)
		}
		p.Stop()
		<-pdone
	})
	return ts
}

func (ts *testServer) item(t testing.TB, host, key string) *catalog.Item {
	t.Helper()
	it := ts.cat.Snapshot().Lookup(host, key)
	if it == nil {
		t.Fatalf("no item %s:%s", host, key)
	}
	return it
}

func (ts *testServer) read(t testing.TB, host, key string) []history.Sample {
	t.Helper()
	return historytest.ReadAll(t, ts.store, history.Query{ItemID: ts.item(t, host, key).ID, From: 0, Till: 1 << 40})
}

// metric returns the value of one exposition line, e.g.
// `peregrine_trapper_bad_requests_total{reason="bad_json"}`.
func (ts *testServer) metric(t testing.TB, series string) float64 {
	t.Helper()
	var b bytes.Buffer
	ts.reg.WriteText(&b)
	for _, line := range strings.Split(b.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			var v float64
			fmt.Sscan(rest, &v)
			return v
		}
	}
	t.Fatalf("series %s not exposed", series)
	return 0
}

// roundTrip sends raw bytes on a new connection and returns the decoded
// reply payload (nil if the server closed without replying).
func roundTrip(t testing.TB, addr string, raw []byte) (flags byte, reply []byte) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(raw); err != nil {
		t.Fatal(err)
	}
	rd := zbx.NewReader(c, zbx.ReaderOptions{Timeout: 5 * time.Second})
	flags, p, err := rd.ReadFrame()
	if err != nil {
		return 0, nil
	}
	return flags, append([]byte(nil), p...)
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	s, err := os.ReadFile(filepath.Join(wireDir, name+".hex"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := hex.DecodeString(strings.TrimSpace(string(s)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var secondsRe = regexp.MustCompile(`seconds spent: \d+\.\d{6}`)

func TestSenderFixtures(t *testing.T) {
	ts := startTrapper(t, testSpec(), nil)
	f := func(req, resp string, wantValues map[string]int) {
		t.Helper()
		_, got := roundTrip(t, ts.addr, fixture(t, req))
		r := zbx.NewReader(bytes.NewReader(fixture(t, resp)), zbx.ReaderOptions{})
		_, want, err := r.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		norm := func(b []byte) string { return secondsRe.ReplaceAllString(string(b), "seconds spent: X") }
		if norm(got) != norm(want) {
			t.Fatalf("%s: reply\n got %s\nwant %s", req, got, want)
		}
		for key, n := range wantValues {
			if got := len(ts.read(t, "peregrine-test", key)); got != n {
				t.Fatalf("%s: %s has %d values, want %d", req, key, got, n)
			}
		}
	}
	// The fixtures' replies all say processed 1 or 3; ours must be byte-identical
	// but for the time spent.
	f("sender-single-req", "sender-single-resp", map[string]int{"trap.one": 1})
	f("sender-batch3-req", "sender-batch3-resp", map[string]int{"trap.a": 1, "trap.b": 1, "trap.c": 1})
	f("sender-batch3-T-req", "sender-batch3-T-resp", map[string]int{"trap.a": 2, "trap.b": 2, "trap.c": 2})
	f("sender-batch3-TN-req", "sender-batch3-TN-resp", map[string]int{"trap.a": 3, "trap.b": 3, "trap.c": 3})
	// -T -N values keep the clock and ns the sender gave.
	var in struct {
		Data []struct {
			Key   string `json:"key"`
			Value string `json:"value"`
			Clock int64  `json:"clock"`
			NS    int32  `json:"ns"`
		} `json:"data"`
	}
	r := zbx.NewReader(bytes.NewReader(fixture(t, "sender-batch3-TN-req")), zbx.ReaderOptions{})
	_, p, _ := r.ReadFrame()
	if err := json.Unmarshal(p, &in); err != nil {
		t.Fatal(err)
	}
	for _, d := range in.Data {
		found := false
		for _, v := range ts.read(t, "peregrine-test", d.Key) {
			found = found || (v.Clock == d.Clock && v.NS == d.NS)
		}
		if !found {
			t.Errorf("value %+v not stored with its clock and ns", d)
		}
	}
	// 600 values in three packets: the item keys there are not in the
	// catalog, so all fail but are still answered with success.
	for _, part := range []string{"sender-batch600-part1-req", "sender-batch600-part2-req", "sender-batch600-part3-req"} {
		_, got := roundTrip(t, ts.addr, fixture(t, part))
		if !bytes.HasPrefix(got, []byte(`{"response":"success","info":"processed: `)) {
			t.Fatalf("%s: reply %s", part, got)
		}
	}
}

func senderFrame(t testing.TB, flags byte, rows ...string) []byte {
	t.Helper()
	payload := `{"request":"sender data","data":[` + strings.Join(rows, ",") + `]}`
	return zbx.AppendFrame(nil, []byte(payload), flags)
}

func infoCounts(t testing.TB, reply []byte) (processed, failed, total int) {
	t.Helper()
	var r struct{ Response, Info string }
	if err := json.Unmarshal(reply, &r); err != nil {
		t.Fatalf("reply %q: %v", reply, err)
	}
	if r.Response != "success" {
		t.Fatalf("reply %s", reply)
	}
	var secs float64
	if _, err := fmt.Sscanf(r.Info, "processed: %d; failed: %d; total: %d; seconds spent: %f", &processed, &failed, &total, &secs); err != nil {
		t.Fatalf("info %q: %v", r.Info, err)
	}
	return
}

func TestPerValueChecks(t *testing.T) {
	ts := startTrapper(t, testSpec(), nil)
	rows := []string{
		`{"host":"peregrine-test","key":"trap.a","value":"18446744073709551615"}`,             // ok: max uint64
		`{"host":"peregrine-test","key":"trap.a","value":"12.000"}`,                           // ok: zero fraction
		`{"host":"peregrine-test","key":"trap.a","value":"12.5"}`,                             // bad value: processed, not supported
		`{"host":"peregrine-test","key":"trap.a","value":"-1"}`,                               // bad value: processed, not supported
		`{"host":"peregrine-test","key":"trap.a","value":"18446744073709551616"}`,             // overflow: processed, not supported
		`{"host":"peregrine-test","key":"trap.c","value":" -1.5e+3\r\n"}`,                     // ok
		`{"host":"peregrine-test","key":"trap.c","value":"nan"}`,                              // bad value: processed, not supported
		`{"host":"peregrine-test","key":"trap.c","value":"1e309"}`,                            // out of range: processed, not supported
		`{"host":"peregrine-test","key":"trap.c","value":2.5}`,                                // ok: unquoted number
		`{"host":"peregrine-test","key":"trap.b","value":"` + strings.Repeat("é", 300) + `"}`, // ok, truncated
		`{"host":"nobody","key":"trap.a","value":"1"}`,                                        // unknown host
		`{"host":"peregrine-test","key":"nope","value":"1"}`,                                  // unknown key
		`{"host":"peregrine-test","key":"agent.ping","value":"1"}`,                            // not a trapper item
		`{"host":"peregrine-test","key":"trap.off","value":"1"}`,                              // disabled item
		`{"host":"down-host","key":"trap.a","value":"1"}`,                                     // host not monitored
		`{"host":"peregrine-test","value":"1"}`,                                               // no key
		`{"host":"peregrine-test","key":"trap.a","value":"1","clock":-5}`,                     // bad clock
		`{"host":"peregrine-test","key":"trap.a","value":"1","clock":100,"ns":1000000000}`,    // bad ns
		`"not an object"`,
	}
	_, reply := roundTrip(t, ts.addr, senderFrame(t, zbx.FlagProtocol, rows...))
	p, f, tot := infoCounts(t, reply)
	// Values that do not fit their item's type are processed, as Zabbix
	// 6.0 counts them, and make the item not supported.
	if p != 10 || f != 9 || tot != 19 {
		t.Fatalf("processed %d failed %d total %d, want 10/9/19 (%s)", p, f, tot, reply)
	}
	a := ts.read(t, "peregrine-test", "trap.a")
	if len(a) != 2 || a[0].U != 18446744073709551615 || a[1].U != 12 {
		t.Fatalf("trap.a = %+v", a)
	}
	c := ts.read(t, "peregrine-test", "trap.c")
	if len(c) != 2 || c[0].F != -1500 || c[1].F != 2.5 {
		t.Fatalf("trap.c = %+v", c)
	}
	b := ts.read(t, "peregrine-test", "trap.b")
	if len(b) != 1 || b[0].S != strings.Repeat("é", 255) {
		t.Fatalf("trap.b not truncated to 255 characters: %d bytes", len(b[0].S))
	}
	for reason, want := range map[string]float64{
		"unknown_host": 1, "unknown_item": 1, "wrong_item_type": 1, "item_disabled": 1, "host_disabled": 1,
		"bad_value": 0, "missing_field": 2, "bad_clock": 2,
	} {
		if got := ts.metric(t, `peregrine_trapper_values_failed_total{reason="`+reason+`"}`); got != want {
			t.Errorf("failed{reason=%s} = %v, want %v", reason, got, want)
		}
	}
	if got := ts.metric(t, "peregrine_trapper_values_processed_total"); got != 10 {
		t.Errorf("processed_total = %v", got)
	}
	if got := ts.metric(t, "peregrine_trapper_values_not_supported_total"); got != 5 {
		t.Errorf("not_supported_total = %v, want 5", got)
	}
	if st, _ := ts.rt.ItemState(ts.item(t, "peregrine-test", "trap.a").ID); !st.NotSupported || st.Error != `Value of type "string" is not suitable for value type "Numeric (unsigned)". Value "18446744073709551616"` {
		t.Errorf("trap.a state %+v (its last value overflowed)", st)
	}
	if !strings.Contains(ts.logs.String(), "reason=unknown_host host=nobody key=trap.a") {
		t.Errorf("unknown host not logged with context:\n%s", ts.logs.String())
	}
}

func TestTimestamps(t *testing.T) {
	now := time.Unix(1700000000, 999999990)
	ts := startTrapper(t, testSpec(), func(o *Options) { o.Now = func() time.Time { return now } })
	rows := []string{
		`{"host":"peregrine-test","key":"trap.c","value":"1"}`,
		`{"host":"peregrine-test","key":"trap.c","value":"2"}`,
		`{"host":"peregrine-test","key":"trap.c","value":"3","clock":1600000000}`,
		`{"host":"peregrine-test","key":"trap.c","value":"4","clock":1600000000}`,
		`{"host":"peregrine-test","key":"trap.c","value":"5","clock":1600000001,"ns":7}`,
	}
	roundTrip(t, ts.addr, senderFrame(t, zbx.FlagProtocol, rows...))
	got := ts.read(t, "peregrine-test", "trap.c")
	type tsv struct {
		c int64
		n int32
		v float64
	}
	var g []tsv
	for _, s := range got {
		g = append(g, tsv{s.Clock, s.NS, s.F})
	}
	want := []tsv{{1600000000, 0, 3}, {1600000000, 1, 4}, {1600000001, 7, 5}, {1700000000, 999999990, 1}, {1700000000, 999999991, 2}}
	if fmt.Sprint(g) != fmt.Sprint(want) {
		t.Fatalf("timestamps %v, want %v", g, want)
	}
}

func TestCompressedRequestGetsCompressedReply(t *testing.T) {
	ts := startTrapper(t, testSpec(), nil)
	flags, reply := roundTrip(t, ts.addr, senderFrame(t, zbx.FlagProtocol|zbx.FlagCompressed, `{"host":"peregrine-test","key":"trap.a","value":"7"}`))
	if flags&zbx.FlagCompressed == 0 {
		t.Fatalf("reply flags %#x, want compression mirrored", flags)
	}
	if p, _, _ := infoCounts(t, reply); p != 1 {
		t.Fatalf("reply %s", reply)
	}
}

func TestPersistentConnection(t *testing.T) {
	ts := startTrapper(t, testSpec(), nil)
	c, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rd := zbx.NewReader(c, zbx.ReaderOptions{Timeout: 5 * time.Second})
	for i := 0; i < 10; i++ {
		if _, err := c.Write(senderFrame(t, zbx.FlagProtocol, fmt.Sprintf(`{"host":"peregrine-test","key":"trap.a","value":"%d","clock":%d}`, i, 1000+i))); err != nil {
			t.Fatal(err)
		}
		_, p, err := rd.ReadFrame()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if n, _, _ := infoCounts(t, p); n != 1 {
			t.Fatalf("frame %d: %s", i, p)
		}
	}
	if n := len(ts.read(t, "peregrine-test", "trap.a")); n != 10 {
		t.Fatalf("stored %d, want 10", n)
	}
}

// TestBadInputKeepsServing sends every kind of broken input while a
// well-behaved sender keeps sending; each broken request is answered or
// dropped, counted and logged, and the good sender loses nothing.
func TestBadInputKeepsServing(t *testing.T) {
	ts := startTrapper(t, testSpec(), func(o *Options) { o.MaxFrameSize = 1 << 20; o.Timeout = 300 * time.Millisecond })
	stop := make(chan struct{})
	var good sync.WaitGroup
	var sent int
	good.Add(1)
	go func() {
		defer good.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			_, reply := roundTrip(t, ts.addr, senderFrame(t, zbx.FlagProtocol, fmt.Sprintf(`{"host":"peregrine-test","key":"trap.a","value":"%d","clock":%d}`, i, 5000+i)))
			if p, _, _ := infoCounts(t, reply); p != 1 {
				t.Errorf("good sender: %s", reply)
				return
			}
			sent++
		}
	}()

	header := func(flags byte, datalen, reserved uint32) []byte {
		b := []byte("ZBXD")
		b = append(b, flags)
		b = append(b, byte(datalen), byte(datalen>>8), byte(datalen>>16), byte(datalen>>24))
		b = append(b, byte(reserved), byte(reserved>>8), byte(reserved>>16), byte(reserved>>24))
		return b
	}
	cases := []struct {
		name   string
		raw    []byte
		reason string
		reply  string // substring of a failed reply; "" = connection closed without reply
		stall  bool   // keep the connection open after writing
	}{
		{"garbage", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), "bad_header", "", false},
		{"no protocol flag", append(header(0x00, 2, 0), "{}"...), "bad_flags", "", false},
		{"too large", header(0x01, 2<<20, 0), "too_large", "", false},
		{"truncated body", append(header(0x01, 100, 0), `{"request":"sender data"`...), "truncated", "", false},
		{"invalid json", zbx.AppendFrame(nil, []byte(`{"request":"sender data","data":[`), 0x01), "bad_json", "cannot parse request as JSON", false},
		{"not json", zbx.AppendFrame(nil, []byte(`peregrine-test:trap.a:1`), 0x01), "not_json", "not a JSON object", false},
		{"no data", zbx.AppendFrame(nil, []byte(`{"request":"sender data"}`), 0x01), "no_data", `cannot find the \"data\" array`, false},
		{"unknown request", zbx.AppendFrame(nil, []byte(`{"request":"no such request"}`), 0x01), "unsupported_request", "unsupported request", false},
		{"bad zlib", append(header(0x03, 5, 10), "hello"...), "bad_compression", "", false},
		{"stalls mid-frame", append(header(0x01, 100, 0), `{"req`...), "timeout", "", true},
		{"stalls mid-header", []byte("ZBXD\x01\x10"), "timeout", "", true},
	}
	for _, tc := range cases {
		before := ts.metric(t, `peregrine_trapper_bad_requests_total{reason="`+tc.reason+`"}`)
		c, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Write(tc.raw)
		if !tc.stall {
			if tcp, ok := c.(*net.TCPConn); ok {
				tcp.CloseWrite()
			}
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		rd := zbx.NewReader(c, zbx.ReaderOptions{})
		_, p, err := rd.ReadFrame()
		switch {
		case tc.reply == "" && err == nil:
			t.Errorf("%s: got reply %s, want the connection closed", tc.name, p)
		case tc.reply == "" && err != io.EOF && !isReset(err):
			t.Errorf("%s: read error %v, want a clean close", tc.name, err)
		case tc.reply != "" && err != nil:
			t.Errorf("%s: no reply: %v", tc.name, err)
		case tc.reply != "" && !strings.Contains(string(p), `"response":"failed"`) || !strings.Contains(string(p), tc.reply):
			t.Errorf("%s: reply %s, want failed with %q", tc.name, p, tc.reply)
		}
		c.Close()
		deadline := time.Now().Add(2 * time.Second)
		for ts.metric(t, `peregrine_trapper_bad_requests_total{reason="`+tc.reason+`"}`) != before+1 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if got := ts.metric(t, `peregrine_trapper_bad_requests_total{reason="`+tc.reason+`"}`); got != before+1 {
			t.Errorf("%s: counter %s went %v -> %v", tc.name, tc.reason, before, got)
		}
		if !strings.Contains(ts.logs.String(), "reason="+tc.reason) {
			t.Errorf("%s: no log line with reason=%s", tc.name, tc.reason)
		}
	}
	close(stop)
	good.Wait()
	if sent == 0 {
		t.Fatal("good sender sent nothing")
	}
	if n := len(ts.read(t, "peregrine-test", "trap.a")); n != sent {
		t.Fatalf("good sender: %d acknowledged, %d stored", sent, n)
	}
}

func isReset(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "broken pipe"))
}

func TestConnectionLimit(t *testing.T) {
	ts := startTrapper(t, testSpec(), func(o *Options) { o.MaxConnections = 2; o.Timeout = 5 * time.Second })
	// The accept loop already holds a slot while it waits in Accept; the
	// gauge must not count it as a connection.
	waitMetric(t, ts, "peregrine_trapper_connections_active", 0)
	// Two idle connections take both slots.
	var idle []net.Conn
	for i := 0; i < 2; i++ {
		c, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte("ZB")) // started a frame
		idle = append(idle, c)
	}
	time.Sleep(50 * time.Millisecond)
	if got := ts.metric(t, "peregrine_trapper_connections_active"); got != 2 {
		t.Fatalf("active = %v, want 2", got)
	}
	// A third is accepted by the kernel but not served until a slot frees.
	done := make(chan []byte, 1)
	go func() {
		_, r := roundTrip(t, ts.addr, senderFrame(t, zbx.FlagProtocol, `{"host":"peregrine-test","key":"trap.a","value":"1"}`))
		done <- r
	}()
	select {
	case r := <-done:
		t.Fatalf("served beyond the connection limit: %s", r)
	case <-time.After(200 * time.Millisecond):
	}
	idle[0].Close()
	select {
	case r := <-done:
		if p, _, _ := infoCounts(t, r); p != 1 {
			t.Fatalf("reply %s", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiting connection never served after a slot freed")
	}
	idle[1].Close()
	waitMetric(t, ts, "peregrine_trapper_connections_active", 0)
}

// waitMetric waits (up to 5 s) for a series to reach want: the server
// updates gauges from its connection goroutines, after the client side
// has already seen the close. It fails the test if want is not reached.
func waitMetric(t testing.TB, ts *testServer, series string, want float64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for ts.metric(t, series) != want && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := ts.metric(t, series); got != want {
		t.Fatalf("%s = %v, want %v", series, got, want)
	}
}

// TestManyConnections serves 2,000 concurrent senders at once, each
// holding its connection open until all have connected, under a buffer
// budget far smaller than their frames together: every value is stored
// and the bytes held never exceed the budget.
func TestManyConnections(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 2,000 connections")
	}
	const clients = 2000
	const budget = 256 << 10
	ts := startTrapper(t, testSpec(), func(o *Options) {
		o.MaxBufferedBytes = budget
		o.MaxFrameSize = 64 << 10
		o.Timeout = 20 * time.Second
	})
	pad := strings.Repeat("x", 4000) // ~4 KB per frame: 2,000 frames = 8 MB > 256 KiB
	var ready, done sync.WaitGroup
	ready.Add(clients)
	start := make(chan struct{})
	errs := make(chan error, clients)
	for i := 0; i < clients; i++ {
		done.Add(1)
		go func(i int) {
			defer done.Done()
			c, err := net.Dial("tcp", ts.addr)
			ready.Done()
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			<-start
			frame := zbx.AppendFrame(nil, []byte(fmt.Sprintf(`{"request":"sender data","pad":"%s","data":[{"host":"peregrine-test","key":"trap.a","value":"%d","clock":%d}]}`, pad, i, 100000+i)), zbx.FlagProtocol)
			if _, err := c.Write(frame); err != nil {
				errs <- err
				return
			}
			rd := zbx.NewReader(c, zbx.ReaderOptions{Timeout: 30 * time.Second})
			_, p, err := rd.ReadFrame()
			if err != nil {
				errs <- err
				return
			}
			if !bytes.Contains(p, []byte("processed: 1;")) {
				errs <- fmt.Errorf("reply %s", p)
			}
		}(i)
	}
	ready.Wait()
	close(start)
	done.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := len(ts.read(t, "peregrine-test", "trap.a")); n != clients {
		t.Fatalf("stored %d values, want %d", n, clients)
	}
	ts.srv.budget.mu.Lock()
	peak := ts.srv.budget.peak
	ts.srv.budget.mu.Unlock()
	if peak > budget || peak == 0 {
		t.Fatalf("buffered bytes peaked at %d, budget %d", peak, budget)
	}
}

// TestPersistentConnectionKeepsBuffersWhileBusy: a client sending big
// frames back to back finds its buffers kept from one frame to the next
// (they stay in the budget), and once it pauses longer than keepIdle
// they are trimmed to keepBytes each; frames after the trim decode as
// before, with nothing of an earlier frame leaking into them.
func TestPersistentConnectionKeepsBuffersWhileBusy(t *testing.T) {
	for _, idle := range []time.Duration{time.Hour, 50 * time.Millisecond} {
		t.Run("idle="+idle.String(), func(t *testing.T) {
			ts := startTrapper(t, benchSpec(10, 1000), func(o *Options) { o.IdleTimeout = time.Minute; o.keepIdle = idle })
			c, err := net.Dial("tcp", ts.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			rd := zbx.NewReader(c, zbx.ReaderOptions{Timeout: 5 * time.Second})
			send := func(payload []byte, want int) {
				t.Helper()
				if _, err := c.Write(zbx.AppendFrame(nil, payload, zbx.FlagProtocol)); err != nil {
					t.Fatal(err)
				}
				_, p, err := rd.ReadFrame()
				if err != nil {
					t.Fatal(err)
				}
				if n, failed, _ := infoCounts(t, p); n != want || failed != 0 {
					t.Fatalf("reply %s, want %d processed", p, want)
				}
			}
			big := senderPayload(4000, 10, 1000)
			send(big, 4000)
			// A second, one-value frame: once it is answered the first
			// frame's end (its trim) is behind us.
			send([]byte(`{"request":"sender data","data":[{"host":"host-1","key":"item.float[7]","value":"1.5","clock":1800000000}]}`), 1)
			if idle == time.Hour {
				if n := ts.srv.budget.inUse(); n < int64(len(big)) {
					t.Fatalf("budget in use %d after a %d-byte frame: its buffers were not kept", n, len(big))
				}
			} else {
				deadline := time.Now().Add(10 * time.Second)
				for ts.srv.budget.inUse() > 4*keepBytes {
					if time.Now().After(deadline) {
						t.Fatalf("budget in use %d: the buffers were not trimmed to %d bytes each once idle", ts.srv.budget.inUse(), keepBytes)
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			// After the trim (or without it) frames decode as before.
			send(senderPayload(3000, 10, 1000), 3000)
			send([]byte(`{"request":"sender data","data":[{"host":"host-2","key":"item.float[8]","value":"2.5","clock":1800000001}]}`), 1)
			got := ts.read(t, "host-2", "item.float[8]")
			if last := got[len(got)-1]; last.Clock != 1800000001 || last.F != 2.5 {
				t.Fatalf("host-2 item.float[8]: %+v", got)
			}
		})
	}
}
