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
// the figures include the server's side of the exchange too: with a
// server offering Debian 12's key exchanges (curve25519 is agreed, as
// Zabbix's libssh2 agrees it) and one offering x/crypto's (its ML-KEM
// hybrid is agreed).
//
//	go test -run '^$' -bench BenchmarkCheck -count 6 ./internal/poll/ssh/ | benchstat -
func BenchmarkCheck(b *testing.B) {
	for _, kex := range []string{"curve25519", "mlkem768x25519"} {
		b.Run("kex="+kex, func(b *testing.B) {
			var kexs []string // Debian's
			if kex == "mlkem768x25519" {
				kexs = []string{"mlkem768x25519-sha256"}
			}
			f, err := sshsim.Start(1, sshsim.Options{Passwords: map[string]string{"zbx": "secret"}, KeyExchanges: kexs})
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			its := items{1: pwItem("zbx", "secret", "echo 42")}
			c, err := New(Options{Item: its.item})
			if err != nil {
				b.Fatal(err)
			}
			ch := []poll.Check{check(1, key("b", f.Addr(0)))}
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
