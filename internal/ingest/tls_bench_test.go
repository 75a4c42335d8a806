package ingest

import (
	"testing"

	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// BenchmarkSenderConnTLS is the cost of one zabbix_sender-like request
// (a new connection, one value) over plain TCP and over TLS with client
// certificates (RSA 2048, as Zabbix requires), both sides in this
// process. The TLS handshake dominates: senders that send often should
// batch values.
//
//	go test -run '^$' -bench BenchmarkSenderConnTLS -benchtime 200x -count 6 ./internal/ingest/
func BenchmarkSenderConnTLS(b *testing.B) {
	ts, certs := startTLSTrapper(b)
	raw := senderFrame(b, zbx.FlagProtocol, `{"host":"both-host","key":"trap.a","value":"1"}`)
	b.Run("conn=plain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, reply := roundTrip(b, ts.addr, raw); reply == nil {
				b.Fatal("no reply")
			}
		}
	})
	b.Run("conn=tls", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := tlsRoundTrip(b, ts.addr, &certs.Sender, raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}
