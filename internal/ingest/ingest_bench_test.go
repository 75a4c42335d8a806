package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fastjson"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// discardSubmitter acknowledges everything at once: it isolates the
// trapper's own cost from the pipeline's and the store's.
type discardSubmitter struct{ n int }

func (d *discardSubmitter) Submit(v []history.Sample, _ *pipeline.Ticket) error {
	d.n += len(v)
	return nil
}

// handlerOnly builds a Server that is never Run: tests call handle directly.
func handlerOnly(t testing.TB, spec catalog.Spec) (*Server, *discardSubmitter) {
	t.Helper()
	cat := catalogtest.Open(t, spec)
	d := &discardSubmitter{}
	s, err := New(Options{Listen: "127.0.0.1:0", Catalog: cat, Pipeline: d})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.ln.Close() })
	return s, d
}

func benchSpec(hosts, items int) catalog.Spec {
	var spec catalog.Spec
	for h := 0; h < hosts; h++ {
		hs := catalog.HostSpec{Host: "host-" + strconv.Itoa(h), Groups: []string{"B"}}
		for i := 0; i < items; i++ {
			hs.Items = append(hs.Items, catalog.ItemSpec{Key: "item.float[" + strconv.Itoa(i) + "]", ValueType: "float"})
		}
		spec.Hosts = append(spec.Hosts, hs)
	}
	return spec
}

// senderPayload is a sender data request in zabbix_sender's exact layout.
func senderPayload(values, hosts, items int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"request":"sender data","data":[`)
	for i := 0; i < values; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"host":"host-%d","key":"item.float[%d]","value":"%.3f","clock":%d,"ns":%d}`,
			i%hosts, (i/hosts)%items, 20+float64(i%1000)/7, 1700000000+i/1000, i%1000)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// go test -run '^$' -bench 'Decode|Handle' -count 6 ./internal/ingest/
//
// BenchmarkDecode measures frame decoding plus JSON parsing of the rows
// (host, key, value, clock, ns extracted), nothing else: with the trapper's
// own scanner, and with fastjson as the general-parser baseline it replaced.
func BenchmarkDecode(b *testing.B) {
	for _, n := range []int{250, 10000} {
		frame := zbx.AppendFrame(nil, senderPayload(n, 10, 1000), zbx.FlagProtocol)
		b.Run("parser=scanner/values="+strconv.Itoa(n), func(b *testing.B) {
			var req senderRequest
			r := bytes.NewReader(frame)
			rd := zbx.NewReader(r, zbx.ReaderOptions{})
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			for b.Loop() {
				r.Reset(frame)
				_, payload, err := rd.ReadFrame()
				if err != nil {
					b.Fatal(err)
				}
				if err := parseSenderRequest(payload, &req); err != nil || len(req.rows) != n || req.rows[n-1].has&hasNS == 0 {
					b.Fatal("bad parse", err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "values/s")
		})
		b.Run("parser=fastjson/values="+strconv.Itoa(n), func(b *testing.B) {
			var p fastjson.Parser
			r := bytes.NewReader(frame)
			rd := zbx.NewReader(r, zbx.ReaderOptions{})
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			for b.Loop() {
				r.Reset(frame)
				_, payload, err := rd.ReadFrame()
				if err != nil {
					b.Fatal(err)
				}
				v, err := p.ParseBytes(payload)
				if err != nil {
					b.Fatal(err)
				}
				rows := v.GetArray("data")
				for _, row := range rows {
					if len(row.GetStringBytes("host")) == 0 || len(row.GetStringBytes("key")) == 0 || row.GetStringBytes("value") == nil || row.GetInt64("clock") == 0 {
						b.Fatal("bad row")
					}
					_ = row.GetInt("ns")
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "values/s")
		})
	}
}

// BenchmarkHandle measures the whole trapper request path short of the
// socket: JSON parse, catalog lookup, checks, conversion, reply encoding.
func BenchmarkHandle(b *testing.B) {
	s, _ := handlerOnly(b, benchSpec(10, 1000))
	for _, n := range []int{250, 10000} {
		payload := senderPayload(n, 10, 1000)
		b.Run("values="+strconv.Itoa(n), func(b *testing.B) {
			cs := &connState{ticket: pipeline.NewTicket()}
			b.SetBytes(int64(len(payload)))
			b.ReportAllocs()
			for b.Loop() {
				reply, _ := s.handle(cs, payload, time.Now(), "bench")
				if !bytes.Contains(reply, []byte("processed: "+strconv.Itoa(n)+";")) {
					b.Fatalf("reply %s", reply)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "values/s")
		})
	}
}

func FuzzSenderData(f *testing.F) {
	for _, name := range []string{"sender-single-req", "sender-batch3-req", "sender-batch3-T-req", "sender-batch3-TN-req", "agentd-agent-data-req", "agent2-active-checks-req"} {
		rd := zbx.NewReader(bytes.NewReader(fixture(f, name)), zbx.ReaderOptions{})
		_, p, err := rd.ReadFrame()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(append([]byte(nil), p...))
	}
	f.Add([]byte(`{"request":"sender data","data":[{"host":"peregrine-test","key":"trap.a","value":1e400,"clock":1e20}]}`))
	f.Add([]byte(`{"request":"sender data","data":[null,1,"x",{"host":1}]}`))
	s, _ := handlerOnly(f, testSpec())
	cs := &connState{ticket: pipeline.NewTicket()}
	f.Fuzz(func(t *testing.T, payload []byte) {
		// handle unescapes strings in place: keep the corpus entry intact.
		reply, _ := s.handle(cs, bytes.Clone(payload), time.Now(), "fuzz")
		if reply == nil {
			return
		}
		var r struct {
			Response, Info string
			Data           []struct{ Key string }
		}
		if err := json.Unmarshal(reply, &r); err != nil {
			t.Fatalf("reply is not JSON: %q", reply)
		}
		if r.Response == "success" && r.Data != nil {
			// an "active checks" reply: an item list, no counts
		} else if r.Response == "success" && strings.HasPrefix(r.Info, "unknown host") {
			// "agent data" of an unknown host, acknowledged as Zabbix does
		} else if r.Response == "success" {
			var p, fl, tot int
			var secs float64
			if _, err := fmt.Sscanf(r.Info, "processed: %d; failed: %d; total: %d; seconds spent: %f", &p, &fl, &tot, &secs); err != nil || p+fl != tot {
				t.Fatalf("inconsistent info %q", r.Info)
			}
		} else if r.Response != "failed" || !strings.Contains(string(reply), "info") {
			t.Fatalf("reply %s", reply)
		}
	})
}
