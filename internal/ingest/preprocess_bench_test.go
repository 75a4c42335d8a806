package ingest

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history/engine"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
	"github.com/peregrine-mon/peregrine/internal/wal"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxtls"
)

// go test -run '^$' -bench IngestPreprocessing -benchtime 2s -count 6 ./internal/ingest/
//
// BenchmarkIngestPreprocessing measures the whole trapper request path
// short of the socket (parse, lookups, checks, Prepare, reply) plus the
// real pipeline (two shards, as on two cores) into the embedded engine
// (WAL fsync on an interval, so the figure is the CPU path, not the
// disk), with senders in parallel:
//   - steps=none: 10,000 float items without steps, today's path;
//   - steps=mult+heartbeat: the same items, each with a custom
//     multiplier and "discard unchanged with heartbeat" (values change
//     every request, so none is discarded: the worst case);
//   - steps=jsonpath-dependents: 100 text masters on 10 hosts, each
//     with 100 dependent items taking one member of the master's JSON
//     document (100 members, ≈2 KB) with a JSONPath step; "values/s"
//     counts the values stored (the dependents'), "in-values/s" those
//     received.
//
// Each request carries 1000 values (10 for the masters, so that one
// request again stores ≈1000 values) in zabbix_sender's layout.
func BenchmarkIngestPreprocessing(b *testing.B) {
	for _, bc := range []struct {
		name  string
		spec  catalog.Spec
		reqs  [][]byte // rotated so that values change between requests
		in    int      // values per request
		store int      // values stored per request
	}{
		{"steps=none", itemsSpec(10, 1000, nil), floatRequests(8, 1000, 10, 1000), 1000, 1000},
		{"steps=mult+heartbeat", itemsSpec(10, 1000, []catalog.PreprocSpec{
			{Type: "MULTIPLIER", Parameters: []string{"8"}}, {Type: "DISCARD_UNCHANGED_HEARTBEAT", Parameters: []string{"1h"}},
		}), floatRequests(8, 1000, 10, 1000), 1000, 1000},
		{"steps=jsonpath-dependents", dependentsSpec(10, 10, 100), jsonRequests(8, 10, 10, 100), 10, 1000},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := ingestWithEngine(b, bc.spec)
			var next atomic.Int64
			b.SetBytes(int64(len(bc.reqs[0])))
			b.ReportAllocs()
			b.SetParallelism(4) // senders per core: requests wait for their shards
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				cs := &connState{ticket: pipeline.NewTicket(), peer: zbxtls.Peer{Type: zbxtls.Unencrypted}}
				buf := make([]byte, 0, len(bc.reqs[0])+64)
				want := []byte("processed: " + strconv.Itoa(bc.in) + ";")
				for pb.Next() {
					i := int(next.Add(1)) % len(bc.reqs)
					buf = append(buf[:0], bc.reqs[i]...) // handle unescapes in place
					reply, _ := s.handle(cs, buf, time.Now(), "bench")
					if !bytes.Contains(reply, want) {
						b.Errorf("reply %s", reply)
						return
					}
				}
			})
			secs := b.Elapsed().Seconds()
			b.ReportMetric(float64(bc.store)*float64(b.N)/secs, "values/s")
			b.ReportMetric(float64(bc.in)*float64(b.N)/secs, "in-values/s")
		})
	}
}

// ingestWithEngine is a trapper server (not listening for the
// benchmark) on the real pipeline and engine.
func ingestWithEngine(b *testing.B, spec catalog.Spec) *Server {
	b.Helper()
	cat := catalogtest.Open(b, spec)
	eng, err := engine.Open(engine.Options{Dir: b.TempDir(), Sync: wal.SyncInterval, SyncInterval: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	p, err := pipeline.New(pipeline.Options{Shards: 2, Store: eng, Catalog: cat.Snapshot})
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() { p.Run(context.Background()); close(done) }()
	s, err := New(Options{Listen: "127.0.0.1:0", Catalog: cat, Pipeline: p})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		s.ln.Close()
		p.Stop()
		<-done
		eng.Close()
	})
	return s
}

func itemsSpec(hosts, items int, steps []catalog.PreprocSpec) catalog.Spec {
	spec := benchSpec(hosts, items)
	for h := range spec.Hosts {
		for i := range spec.Hosts[h].Items {
			spec.Hosts[h].Items[i].Preprocessing = steps
		}
	}
	return spec
}

// floatRequests returns n requests of values values each over the items
// of benchSpec(hosts, items), every request with other values.
func floatRequests(n, values, hosts, items int) [][]byte {
	out := make([][]byte, n)
	for r := range out {
		var b bytes.Buffer
		b.WriteString(`{"request":"sender data","data":[`)
		for i := 0; i < values; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"host":"host-%d","key":"item.float[%d]","value":"%.3f","clock":%d,"ns":%d}`,
				i%hosts, (i/hosts)%items, float64(r*1000+i)/7, 1700000000+r, i)
		}
		b.WriteString(`]}`)
		out[r] = b.Bytes()
	}
	return out
}

// dependentsSpec: masters text items per host, each with deps dependent
// float items taking member mK of the master's document.
func dependentsSpec(hosts, masters, deps int) catalog.Spec {
	var spec catalog.Spec
	for h := 0; h < hosts; h++ {
		hs := catalog.HostSpec{Host: "host-" + strconv.Itoa(h), Groups: []string{"B"}}
		for m := 0; m < masters; m++ {
			mk := "stats[" + strconv.Itoa(m) + "]"
			hs.Items = append(hs.Items, catalog.ItemSpec{Key: mk, ValueType: "text", Trends: "0"})
			for d := 0; d < deps; d++ {
				hs.Items = append(hs.Items, catalog.ItemSpec{
					Key: "dep[" + strconv.Itoa(m) + "," + strconv.Itoa(d) + "]", Type: "dependent",
					MasterItem:    &catalog.MasterItemSpec{Key: mk},
					Preprocessing: []catalog.PreprocSpec{{Type: "JSONPATH", Parameters: []string{"$.m" + strconv.Itoa(d)}}},
				})
			}
		}
		spec.Hosts = append(spec.Hosts, hs)
	}
	return spec
}

// jsonRequests returns n requests, each with one document per master of
// values masters, members m0..m(deps-1).
func jsonRequests(n, values, hosts, deps int) [][]byte {
	out := make([][]byte, n)
	for r := range out {
		var b bytes.Buffer
		b.WriteString(`{"request":"sender data","data":[`)
		for i := 0; i < values; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			var doc bytes.Buffer
			doc.WriteByte('{')
			for d := 0; d < deps; d++ {
				if d > 0 {
					doc.WriteByte(',')
				}
				fmt.Fprintf(&doc, `\"m%d\":%.3f`, d, float64(r*1000+i*deps+d)/7)
			}
			doc.WriteByte('}')
			fmt.Fprintf(&b, `{"host":"host-%d","key":"stats[%d]","value":"%s","clock":%d,"ns":%d}`,
				i%hosts, (i/hosts)%10, doc.String(), 1700000000+r, i)
		}
		b.WriteString(`]}`)
		out[r] = b.Bytes()
	}
	return out
}
