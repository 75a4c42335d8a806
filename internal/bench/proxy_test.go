package bench

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/ingest"
	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// TestProxyBenchFrame: the simulated proxy's request is a compressed
// frame whose payload Peregrine's own decoder reads as proxy data with
// the rows the real proxy sends.
func TestProxyBenchFrame(t *testing.T) {
	b := &ProxyBench{Compress: true}
	p := &simProxy{name: "p1", session: "0123456789abcdef0123456789abcdef"}
	rows := `{"id":1,"itemid":7,"clock":1700000000,"ns":5,"value":"1.5"},{"id":2,"itemid":8,"clock":1700000000,"ns":6,"value":"2"}`
	f := b.frame([]byte(b.request(p, rows, time.Unix(1700000001, 9))))
	flags, payload, err := zbx.NewReader(bytes.NewReader(f), zbx.ReaderOptions{}).ReadFrame()
	if err != nil || flags&zbx.FlagCompressed == 0 {
		t.Fatalf("frame: flags %x, %v", flags, err)
	}
	d, err := ingest.DecodeProxyData(payload)
	if err != nil {
		t.Fatal(err)
	}
	if d.Host != "p1" || d.Version != "6.0.14" || len(d.History) != 2 || d.History[1].ItemID != 8 || *d.History[0].Value != "1.5" {
		t.Fatalf("decoded %+v", d)
	}
}

func TestProxyMainFlags(t *testing.T) {
	for _, args := range [][]string{{}, {"--target", "http://x/api_jsonrpc.php", "--rates", "fast"}, {"--target", "http://x/api_jsonrpc.php", "--proxies", "0"}} {
		var out bytes.Buffer
		if code := proxyMain(t.Context(), args, io.Discard, &out); code != 2 || !strings.Contains(out.String(), "bench proxy:") {
			t.Errorf("%v: exit %d, %q", args, code, out.String())
		}
	}
}
