package ssh

import (
	"context"
	"sync"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/bench/sim/sshsim"
	"github.com/peregrine-mon/peregrine/internal/poll"
)

// BenchmarkCheck: one SSH check (connect, handshake, password login,
// "echo", close) at a time against an in-process simulated server, so
// the figures include the server's side of the exchange too: the default
// key exchange (x/crypto's first, ML-KEM hybrid) and curve25519, which
// Debian 12's sshd and Zabbix's libssh2 agree on.
//
//	go test -run '^$' -bench BenchmarkCheck -count 6 ./internal/poll/ssh/ | benchstat -
func BenchmarkCheck(b *testing.B) {
	for _, kex := range []string{"default", "curve25519-sha256"} {
		b.Run("kex="+kex, func(b *testing.B) {
			f, err := sshsim.Start(1, sshsim.Options{Passwords: map[string]string{"zbx": "secret"}})
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			its := items{1: pwItem("zbx", "secret", "echo 42")}
			c, err := New(Options{Item: its.item})
			if err != nil {
				b.Fatal(err)
			}
			k := key("b", f.Addr(0))
			if kex != "default" {
				k = key("b", f.Addr(0), "", "KexAlgorithms="+kex)
			}
			ch := []poll.Check{check(1, k)}
			b.ReportAllocs()
			b.ResetTimer()
			var wg sync.WaitGroup
			for range b.N {
				wg.Add(1)
				c.Check(context.Background(), ch, func(r *poll.Result) {
					if r.Status != poll.OK || string(r.Value) != "42" {
						b.Errorf("%s %q %q", r.Status, r.Value, r.Error)
					}
					wg.Done()
				})
				wg.Wait()
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "checks/s")
		})
	}
}
