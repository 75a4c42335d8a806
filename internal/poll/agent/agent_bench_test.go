package agent

import (
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/bench/sim/agentsim"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/zbx"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxpsk"
)

// BenchmarkCheck runs passive checks against simulated agents on
// loopback, 64 in flight; one op is one check (connect, ask, read,
// close), the agents' side included in the CPU.
//
//	go test -run '^$' -bench Check -benchmem -count 6 ./internal/poll/agent/
func BenchmarkCheck(b *testing.B) {
	fleet, err := agentsim.Start(16, func(int, string) agentsim.Reply { return agentsim.Reply{Value: "1"} })
	if err != nil {
		b.Fatal(err)
	}
	defer fleet.Close()
	c := New(Options{})
	const inFlight = 64
	slots := make(chan struct{}, inFlight)
	done := func(r *poll.Result) {
		if r.Status != poll.OK {
			b.Errorf("check failed: %s", r.Error)
		}
		<-slots
	}
	batch := make([][]poll.Check, 16)
	for i := range batch {
		batch[i] = []poll.Check{{ItemID: uint64(i), Key: "agent.ping", Addr: fleet.Addr(i), Timeout: 5 * time.Second}}
	}
	// A context that can end, as the scheduler's: the path checks take
	// in the server (context.Background would skip the stop's hooks).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		slots <- struct{}{}
		c.Check(ctx, batch[i%len(batch)], done)
	}
	for i := 0; i < inFlight; i++ {
		slots <- struct{}{}
	}
	b.ReportMetric(float64(processCPU()-cpu0)/1e3/float64(b.N), "cpu-µs/op")
}

// processCPU is this process's user+system CPU: a shared machine makes
// ns/op noisy, the CPU per op much less so.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkBareConn is BenchmarkCheck's floor: the same agents and
// in-flight count, each op a bare connect, write, read, close with
// nothing of the checker (no timeouts, classification or result).
//
//	go test -run '^$' -bench 'Check|BareConn' -count 6 ./internal/poll/agent/
func BenchmarkBareConn(b *testing.B) {
	fleet, err := agentsim.Start(16, func(int, string) agentsim.Reply { return agentsim.Reply{Value: "1"} })
	if err != nil {
		b.Fatal(err)
	}
	defer fleet.Close()
	addrs := make([]*net.TCPAddr, fleet.Len())
	for i := range addrs {
		addrs[i] = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: fleet.Port(i)}
	}
	req := zbx.AppendFrame(nil, []byte("agent.ping"), zbx.FlagProtocol)
	const inFlight = 64
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	cpu0 := processCPU()
	for w := 0; w < inFlight; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var reply [64]byte
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				c, err := net.DialTCP("tcp", nil, addrs[i%int64(len(addrs))])
				if err != nil {
					b.Error(err)
					return
				}
				if _, err := c.Write(req); err != nil {
					b.Error(err)
				}
				if _, err := io.ReadAtLeast(c, reply[:], 14); err != nil {
					b.Error(err)
				}
				c.Close()
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(processCPU()-cpu0)/1e3/float64(b.N), "cpu-µs/op")
}

// BenchmarkCheckPSK is BenchmarkCheck over TLS with a pre-shared key
// (TLS 1.3, TLS_CHACHA20_POLY1305_SHA256, what zabbix_agent2 agrees):
// a full handshake per check, as Zabbix makes one per connection; the
// agent's side (an in-process OpenSSL server) included in the CPU.
//
//	go test -run '^$' -bench 'Check$|CheckPSK' -benchmem -count 6 ./internal/poll/agent/
func BenchmarkCheckPSK(b *testing.B) {
	if !zbxpsk.Available {
		b.Skip("this build has no PSK")
	}
	key, _ := zbxpsk.ParseKey("1f87b595725ac58dd977beef14b97461a7c1045b9a1c923453302c5473193478")
	addr := pskAgent(b, func(string) ([]byte, bool) { return key, true })
	sec := Security{PSK: &zbxpsk.Key{Identity: "PSK 001", Secret: key}}
	c := New(Options{TLS: func(uint64) (Security, error) { return sec, nil }})
	const inFlight = 16
	slots := make(chan struct{}, inFlight)
	done := func(r *poll.Result) {
		if r.Status != poll.OK {
			b.Errorf("check failed: %s", r.Error)
		}
		<-slots
	}
	batch := []poll.Check{{ItemID: 1, HostID: 1, Key: "agent.ping", Addr: addr, Timeout: 5 * time.Second}}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		slots <- struct{}{}
		c.Check(context.Background(), batch, done)
	}
	for i := 0; i < inFlight; i++ {
		slots <- struct{}{}
	}
	b.ReportMetric(float64(processCPU()-cpu0)/1e3/float64(b.N), "cpu-µs/op")
}
