package ingest

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// patientRequest is request with a minute for the reply (a 7 MB batch
// under -race takes seconds to decode) and a short failure message.
func patientRequest(t *testing.T, addr string, payload []byte) []byte {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(zbx.AppendFrame(nil, payload, zbx.FlagProtocol)); err != nil {
		t.Fatal(err)
	}
	_, reply, err := zbx.NewReader(c, zbx.ReaderOptions{Timeout: time.Minute}).ReadFrame()
	if err != nil {
		t.Fatalf("no reply to %.200s (%d bytes): %v", payload, len(payload), err)
	}
	return append([]byte(nil), reply...)
}

// TestProxyBadInput: each kind of bad proxy input is refused clearly
// (or its rows counted as failed), counted, logged once however often it
// comes, with the proxy and the reason; the proxy's good data and a
// sender feeding another host are served all along.
func TestProxyBadInput(t *testing.T) {
	ts := startTrapper(t, proxySpec(), func(o *Options) {
		o.MaxFrameSize = 16 << 20
		o.MaxBufferedBytes = 40 << 20 // one connection: 35 MiB: a frame and three times its size to decode
		o.Timeout = time.Minute       // decoding 100,001 rows under -race takes seconds
	})
	addProxy(t, ts, "px-bad")
	trap := ts.item(t, "px-host", "px.trap").ID
	other := ts.item(t, "direct-host", "px.trap").ID
	row := func(id, item uint64, v string) string {
		return fmt.Sprintf(`{"id":%d,"itemid":%d,"clock":1700000000,"ns":%d,"value":%q}`, id, item, id, v)
	}
	rows := func(n int, first uint64, v string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = row(first+uint64(i), trap, v)
		}
		return out
	}
	var next uint64 = 1 // the proxy's row ids, increasing as a proxy's do
	id := func() uint64 { next++; return next }
	stored := 0
	good := func() {
		t.Helper()
		stored++
		if got := string(request(t, ts.addr, proxyData("px-bad", sess, "6.0.14", row(id(), trap, "5")))); !strings.Contains(got, `"response":"success"`) {
			t.Fatalf("good proxy data refused: %s", got)
		}
		if got := string(request(t, ts.addr, []byte(`{"request":"sender data","data":[{"host":"direct-host","key":"px.trap","value":"1"}]}`))); !strings.Contains(got, "processed: 1") {
			t.Fatalf("a sender was affected: %s", got)
		}
	}
	huge := proxyData("px-bad", sess, "6.0.14", rows(maxProxyRows+1, 1_000_000, "1")...)                // 7 MB
	budget := proxyData("px-bad", sess, "6.0.14", rows(50_000, 2_000_000, strings.Repeat("7", 190))...) // 13 MB, 39 MB to decode
	fixed := func(b []byte) func() []byte { return func() []byte { return b } }
	for _, tc := range []struct {
		name    string
		payload func() []byte
		reply   string // part of the reply
		metric  string
		log     string // part of the one log line
	}{
		{"unknown proxy", fixed(proxyData("no-such-proxy", sess, "6.0.14", row(1, trap, "1"))), `proxy \"no-such-proxy\" not found`,
			`peregrine_trapper_proxy_requests_total{kind="data",result="unknown_proxy"}`, `reason=unknown_proxy remote=127.0.0.1`},
		{"unknown proxy config", fixed([]byte(`{"request":"proxy config","host":"no-such-proxy","version":"6.0.14"}`)), `proxy \"no-such-proxy\" not found`,
			`peregrine_trapper_proxy_requests_total{kind="config",result="unknown_proxy"}`, `request=config reason=unknown_proxy`},
		{"host it does not monitor", func() []byte { return proxyData("px-bad", sess, "6.0.14", row(id(), other, "1")) }, `"response":"success"`,
			`peregrine_trapper_values_failed_total{reason="unknown_item"}`, fmt.Sprintf(`msg="proxy sent values of a host it does not monitor" proxy=px-bad host=direct-host itemid=%d`, other)},
		{"unknown itemid", func() []byte { return proxyData("px-bad", sess, "6.0.14", row(id(), 987654321, "1")) }, `"response":"success"`,
			`peregrine_trapper_values_failed_total{reason="unknown_item"}`, `itemid=987654321`},
		{"malformed JSON", fixed([]byte(`{"request":"proxy data","host":"px-bad","history data":[{"id":1,`)), `cannot parse request as JSON`,
			`peregrine_trapper_bad_requests_total{reason="bad_json"}`, `reason=bad_json`},
		{"history not rows", fixed(proxyData("px-bad", sess, "6.0.14", `{"itemid":"x"}`)), `not an array of history rows`,
			`peregrine_trapper_proxy_requests_total{kind="data",result="bad_request"}`, `reason=bad_request`},
		{"too many rows", fixed(huge), `more than 100000`,
			`peregrine_trapper_proxy_requests_total{kind="data",result="bad_request"}`, `reason=bad_request`}, // once a minute for every bad_request
		{"over the memory budget", fixed(budget), `trapper.max_buffered_bytes`,
			`peregrine_trapper_proxy_requests_total{kind="data",result="over_budget"}`, `reason=over_budget`},
	} {
		before := ts.metric(t, tc.metric)
		for range 3 {
			if got := string(patientRequest(t, ts.addr, tc.payload())); !strings.Contains(got, tc.reply) {
				t.Fatalf("%s: reply %.300s, want %s", tc.name, got, tc.reply)
			}
		}
		if got := ts.metric(t, tc.metric); got < before+3 {
			t.Errorf("%s: %s went from %v to %v, want +3", tc.name, tc.metric, before, got)
		}
		if n := strings.Count(ts.logs.String(), tc.log); n < 1 {
			t.Errorf("%s: %q not logged:\n%s", tc.name, tc.log, ts.logs.String())
		}
		good()
	}
	// Each reason was logged once for its three repeats (once per window).
	for _, reason := range []string{"reason=unknown_proxy", "reason=over_budget", `reason=unknown_item`, `host it does not monitor`} {
		if n := strings.Count(ts.logs.String(), reason); n > 2 {
			t.Errorf("%s logged %d times, want once per kind", reason, n)
		}
	}
	if n := len(ts.read(t, "px-host", "px.trap")); n != stored {
		t.Errorf("stored %d values of the good requests, want %d", n, stored)
	}
}
