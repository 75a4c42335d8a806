package ingest

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
)

// go test -run '^$' -bench 'AgentData|ActiveChecks' -count 6 ./internal/ingest/
//
// BenchmarkAgentData measures an agent 2 style "agent data" request (rows
// by itemid, session dedup) short of the socket: parse, item lookup,
// session check, conversion, reply. Each iteration uses a new session
// token (so that the ids are new), which also measures making a session
// (and, past 100,000, evicting one).
func BenchmarkAgentData(b *testing.B) {
	const items = 1000
	spec := catalog.Spec{Hosts: []catalog.HostSpec{{Host: "agent-host", Groups: []string{"B"}}}}
	for i := range items {
		spec.Hosts[0].Items = append(spec.Hosts[0].Items, catalog.ItemSpec{Key: "item[" + strconv.Itoa(i) + "]", Type: "zabbix_agent_active", ValueType: "float", Delay: "1m"})
	}
	s, _ := handlerOnly(b, spec)
	snap := s.opts.Catalog.Snapshot()
	// seq numbers the session tokens; it lives outside b.Run because a
	// sub-benchmark's function runs more than once against this server.
	seq := 0
	for _, n := range []int{50, 1000} {
		var buf bytes.Buffer
		buf.WriteString(`{"request":"agent data","data":[`)
		for i := range n {
			if i > 0 {
				buf.WriteByte(',')
			}
			id := snap.Lookup("agent-host", "item["+strconv.Itoa(i%items)+"]").ID
			fmt.Fprintf(&buf, `{"id":%d,"itemid":%d,"value":"%.3f","clock":%d,"ns":%d}`, i+1, id, float64(i)/7, 1700000000+i/100, i)
		}
		buf.WriteString(`],"session":"00000000000000000000000000000000","host":"agent-host","version":"6.0"}`)
		template := buf.Bytes()
		tok := bytes.Index(template, []byte(`"session":"`)) + len(`"session":"`)
		b.Run("values="+strconv.Itoa(n), func(b *testing.B) {
			cs := &connState{ticket: pipeline.NewTicket()}
			payload := make([]byte, len(template))
			b.SetBytes(int64(len(template)))
			b.ReportAllocs()
			for b.Loop() {
				copy(payload, template)
				seq++
				copy(payload[tok:tok+32], fmt.Sprintf("%032x", seq))
				reply, _ := s.handle(cs, payload, time.Now(), "bench")
				if !bytes.Contains(reply, []byte("processed: "+strconv.Itoa(n)+";")) {
					b.Fatalf("reply %s", reply)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "values/s")
		})
	}
}
