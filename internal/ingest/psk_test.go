package ingest

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/zbx"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxpsk"
)

const (
	pskKeyA = "1f87b595725ac58dd977beef14b97461a7c1045b9a1c923453302c5473193478"
	pskKeyB = "2f87b595725ac58dd977beef14b97461"
)

// startPSKTrapper serves tlsSpec with psk-host (PSK only, identity
// "PSK 001" with key A) and psk-both (PSK or plain, "PSK 002" with key
// B), keys found as the server finds them (Snapshot.PSKKey).
func startPSKTrapper(t testing.TB) *testServer {
	t.Helper()
	spec := tlsSpec()
	for _, h := range []string{"psk-host", "psk-both"} {
		spec.Hosts = append(spec.Hosts, catalog.HostSpec{Host: h, Groups: []string{"G"}, Items: spec.Hosts[0].Items})
	}
	var cat func() *catalog.Snapshot
	ts := startTrapper(t, spec, func(o *Options) {
		o.PSK = func(id string) ([]byte, bool) { return cat().PSKKey(id) }
	})
	cat = ts.cat.Snapshot
	s := ts.cat.Snapshot()
	ups := []catalog.HostUpdate{
		{ID: s.Host("psk-host").ID, TLS: catalog.SetTLS(catalog.HostTLS{Connect: 1, Accept: 2, PSKIdentity: "PSK 001", PSK: pskKeyA})},
		{ID: s.Host("psk-both").ID, TLS: catalog.SetTLS(catalog.HostTLS{Connect: 1, Accept: 3, PSKIdentity: "PSK 002", PSK: pskKeyB})},
	}
	if _, err := ts.cat.Edit(context.Background(), func(e *catalog.Edit) error { return e.UpdateHosts(ups) }); err != nil {
		t.Fatal(err)
	}
	return ts
}

// pskRoundTrip sends one frame with a pre-shared key and returns the
// reply payload, or the error.
func pskRoundTrip(t testing.TB, addr, identity, keyHex string, raw []byte) ([]byte, error) {
	t.Helper()
	key, err := zbxpsk.ParseKey(keyHex)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c, err := zbxpsk.Client(rc, zbxpsk.Key{Identity: identity, Secret: key})
	if err != nil {
		rc.Close()
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(raw); err != nil {
		return nil, err
	}
	_, p, err := zbx.NewReader(c, zbx.ReaderOptions{}).ReadFrame()
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), p...), nil
}

func needPSK(t *testing.T) {
	t.Helper()
	if !zbxpsk.Available {
		t.Skip("this build has no PSK (built without cgo or with the nopsk tag); TestPSKUnavailable covers it")
	}
}

// TestPSKSenderPolicy: per row, the identity and key must be the host's
// and the host must accept PSK; PSK hosts refuse plain and certificate
// rows. Unknown identities and wrong keys are refused at the handshake,
// counted by kind and logged with the identity, never the key.
func TestPSKSenderPolicy(t *testing.T) {
	needPSK(t)
	ts := startPSKTrapper(t)
	all := rowsFor("plain-host", "cert-host", "psk-host", "psk-both")[0]
	raw := senderFrame(t, zbx.FlagProtocol, all...)
	f := func(name, identity, key string, wantProcessed, wantFailed int) {
		t.Helper()
		reply, err := pskRoundTrip(t, ts.addr, identity, key, raw)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p, fl, _ := infoCounts(t, reply)
		if p != wantProcessed || fl != wantFailed {
			t.Errorf("%s: processed %d failed %d, want %d and %d (%s)", name, p, fl, wantProcessed, wantFailed, reply)
		}
	}
	f("PSK 001", "PSK 001", pskKeyA, 1, 3) // psk-host only
	f("PSK 002", "PSK 002", pskKeyB, 1, 3) // psk-both only
	_, reply := roundTrip(t, ts.addr, raw)
	if p, fl, _ := infoCounts(t, reply); p != 3 || fl != 1 { // all but psk-host
		t.Errorf("plain: processed %d failed %d, want 3 and 1", p, fl)
	}
	if n := len(ts.read(t, "psk-host", "trap.a")); n != 1 {
		t.Errorf("psk-host stored %d values, want 1", n)
	}
	if got := ts.metric(t, `peregrine_trapper_values_failed_total{reason="tls_refused"}`); got != 7 {
		t.Errorf("tls_refused %v, want 7", got)
	}
	// The first refusal is logged, the others counted in the window.
	logs := ts.logs.String()
	if want := `connection of type \"PSK\" is not allowed for host \"plain-host\"`; !strings.Contains(logs, want) {
		t.Errorf("no log %s in:\n%s", want, logs)
	}

	// Refused handshakes.
	if _, err := pskRoundTrip(t, ts.addr, "nobody", pskKeyA, raw); err == nil {
		t.Error("unknown identity: a reply")
	}
	if _, err := pskRoundTrip(t, ts.addr, "PSK 001", pskKeyB, raw); err == nil {
		t.Error("wrong key: a reply")
	}
	waitMetric(t, ts, `peregrine_trapper_bad_requests_total{reason="tls_psk_unknown_identity"}`, 1)
	waitMetric(t, ts, `peregrine_trapper_bad_requests_total{reason="tls_psk_wrong_key"}`, 1)
	if got := ts.metric(t, `peregrine_trapper_tls_psk_connections_total{cipher="TLS_CHACHA20_POLY1305_SHA256"}`); got != 2 {
		t.Errorf("PSK connections %v, want 2", got)
	}
	logs = ts.logs.String()
	if !strings.Contains(logs, "nobody") || !strings.Contains(logs, "psk-host") {
		t.Errorf("refusals logged without the identity or its host:\n%s", logs)
	}
	for _, k := range []string{pskKeyA[:12], pskKeyB[:12]} {
		if strings.Contains(strings.ToLower(logs), k) {
			t.Errorf("a key in the log:\n%s", logs)
		}
	}
}

// TestPSKActiveChecks: "active checks" over PSK for a PSK host, and
// refused for it over plain.
func TestPSKActiveChecks(t *testing.T) {
	needPSK(t)
	ts := startPSKTrapper(t)
	ac := zbx.AppendFrame(nil, []byte(`{"request":"active checks","host":"psk-host"}`), zbx.FlagProtocol)
	reply, err := pskRoundTrip(t, ts.addr, "PSK 001", pskKeyA, ac)
	if err != nil || !strings.Contains(string(reply), `"key":"agent.x"`) {
		t.Errorf("active checks over PSK: %s (%v)", reply, err)
	}
	_, reply = roundTrip(t, ts.addr, ac)
	if !strings.Contains(string(reply), `"response":"failed"`) || !strings.Contains(string(reply), `connection of type \"unencrypted\" is not allowed for host \"psk-host\"`) {
		t.Errorf("plain active checks: %s", reply)
	}
	reply, err = pskRoundTrip(t, ts.addr, "PSK 002", pskKeyB, ac)
	if err != nil || !strings.Contains(string(reply), `PSK identity \"PSK 002\" is not the one of host \"psk-host\"`) {
		t.Errorf("another host's identity: %s (%v)", reply, err)
	}
}

// TestPSKUnavailable: a client that asks for a pre-shared key (the
// ClientHello of Debian's zabbix_sender 6.0.14, GnuTLS, PSK suites only)
// is refused as tls_psk_unsupported by a build without OpenSSL, and goes
// on to the PSK handshake in a build with it (counted as a handshake
// failure when the client then goes away).
func TestPSKUnavailable(t *testing.T) {
	hello, err := os.ReadFile(filepath.Join("..", "zbx", "zbxtls", "testdata", "hello", "sender_psk.bin"))
	if err != nil {
		t.Fatal(err)
	}
	ts := startTrapper(t, tlsSpec(), nil)
	c, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write(hello)
	if !zbxpsk.Available {
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Error("the trapper answered a PSK hello without PSK")
		}
		c.Close()
		waitMetric(t, ts, `peregrine_trapper_bad_requests_total{reason="tls_psk_unsupported"}`, 1)
		if !strings.Contains(ts.logs.String(), "not available in this build") {
			t.Errorf("the refusal does not say why:\n%s", ts.logs.String())
		}
		return
	}
	// With OpenSSL the server answers (ServerHello; no identity yet).
	if _, err := c.Read(make([]byte, 1)); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("no answer to a PSK hello: %v", err)
	}
	c.Close()
	waitMetric(t, ts, `peregrine_trapper_bad_requests_total{reason="tls_handshake"}`, 1)
}
