package jmx

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/valyala/fastjson"

	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// The request encoder and reply decoder, per request of a realistic
// size: the 32 keys the 6.0 server puts in one request at most
// (testdata/wire/max-keys-req.bin) and nine keys with two discoveries
// (testdata/wire/batch-req.bin, a 60 KB reply).
//
//	go test ./internal/poll/jmx -run '^$' -bench 'Request|Reply' -count 6 | benchstat -

func BenchmarkAppendRequest(b *testing.B) {
	for _, name := range []string{"max-keys-req.bin", "batch-req.bin", "credentials-req.bin"} {
		_, payload := wire(b, name)
		var in struct {
			Username, Password string
			Endpoint           string `json:"jmx_endpoint"`
			Keys               []string
		}
		if err := json.Unmarshal(payload, &in); err != nil {
			b.Fatal(err)
		}
		r := &Request{Username: in.Username, Password: in.Password, Endpoint: in.Endpoint, Keys: in.Keys}
		b.Run(fmt.Sprintf("keys=%d", len(in.Keys)), func(b *testing.B) {
			var buf, frame []byte
			b.SetBytes(int64(len(payload)))
			b.ReportAllocs()
			for b.Loop() {
				buf = AppendRequest(buf[:0], r)
				frame = zbx.AppendFrame(frame[:0], buf, zbx.FlagProtocol)
			}
			b.ReportMetric(float64(b.N*len(in.Keys))/b.Elapsed().Seconds(), "keys/s")
		})
	}
}

func BenchmarkDecodeReply(b *testing.B) {
	// 32 values as the gateway writes them for jmx[...] keys of numbers.
	var v32 []byte
	v32 = append(v32, `{"response":"success","data":[`...)
	for i := range 32 {
		if i > 0 {
			v32 = append(v32, ',')
		}
		v32 = fmt.Appendf(v32, `{"value":"%d"}`, 12505088+i*4099)
	}
	v32 = append(v32, "]}"...)
	_, batch := wire(b, "batch-resp.bin")
	_, badkeys := wire(b, "badkeys-resp.bin")
	for _, c := range []struct {
		name    string
		payload []byte
		keys    int
	}{{"reply=values32", v32, 32}, {"reply=errors7", badkeys, 7}, {"reply=discovery9", batch, 9}} {
		b.Run(c.name, func(b *testing.B) {
			var p fastjson.Parser
			var r Reply
			b.SetBytes(int64(len(c.payload)))
			b.ReportAllocs()
			for b.Loop() {
				if err := DecodeReply(&p, c.payload, c.keys, &r); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*c.keys)/b.Elapsed().Seconds(), "values/s")
		})
	}
}

// BenchmarkCheck is the checker's whole cost per check through the fake
// gateway on loopback (both ends in this process): batches of 32 keys
// of one interface, one request each.
//
//	go test ./internal/poll/jmx -run '^$' -bench Check -count 6 | benchstat -
func BenchmarkCheck(b *testing.B) {
	g := startFakeGateway(b)
	c := New(Options{Gateway: g.Addr, MaxConns: 8})
	batch := make([]poll.Check, 32)
	for i := range batch {
		batch[i] = fakeCheck(uint64(i+1), fakeAnswer, fmt.Sprintf(`jmx["peregrine:type=Test,name=t%d",Count]`, i))
	}
	ctx := context.Background()
	const inFlight = 8 * 32
	sem := make(chan struct{}, inFlight)
	done := func(r *poll.Result) {
		if r.Status != poll.OK {
			b.Errorf("%s: %v %s", r.Key, r.Status, r.Error)
		}
		<-sem
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; {
		n := min(len(batch), b.N-i)
		for range n {
			sem <- struct{}{}
		}
		c.Check(ctx, batch[:n], done)
		i += n
	}
	for range inFlight {
		sem <- struct{}{}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "checks/s")
}
