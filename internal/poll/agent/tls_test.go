package agent

import (
	"context"
	"crypto/tls"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/testutil"
	"github.com/peregrine-mon/peregrine/internal/zbx"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxpsk"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxtls"
)

// tlsAgent is a passive agent that speaks TLS only, requiring a client
// certificate of the CA (as zabbix_agentd with TLSAccept=cert), and
// answers every key with "1".
func tlsAgent(t *testing.T, m *zbxtls.Material) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", m.ServerConfig())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				if _, _, err := zbx.NewReader(c, zbx.ReaderOptions{}).ReadFrame(); err != nil {
					return
				}
				c.Write(zbx.AppendFrame(nil, []byte("1"), zbx.FlagProtocol))
			}()
		}
	}()
	return ln.Addr().String()
}

// TestCheckTLS: a host with tls_connect 4 is checked over TLS with the
// server's certificate; a wrong subject, a refused certificate and a
// setting that cannot be served fail as network errors, reason tls.
func TestCheckTLS(t *testing.T) {
	certs := testutil.MakeCerts(t)
	load := func(f testutil.CertFiles) *zbxtls.Material {
		m, err := zbxtls.Load(zbxtls.Files{CAFile: certs.CAFile, CertFile: f.Cert, KeyFile: f.Key})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	srv, agentM := load(certs.Server), load(certs.Agent)
	addr := tlsAgent(t, agentM)
	configs := map[uint64]func() (Security, error){
		1: func() (Security, error) {
			return Security{Cert: srv.ClientConfig(certs.Issuer, certs.Agent.Subject)}, nil
		},
		2: func() (Security, error) { return Security{Cert: srv.ClientConfig("", "CN=someone else")}, nil },
		3: func() (Security, error) { return Security{}, zbxpsk.ErrUnavailable },
		4: func() (Security, error) { return Security{}, nil }, // plain to a TLS agent
		5: func() (Security, error) { return Security{Cert: load(certs.Rogue).ClientConfig("", "")}, nil },
	}
	m := selfmon.NewRegistry()
	c := New(Options{Metrics: m, TLS: func(host uint64) (Security, error) { return configs[host]() }})
	var batch []poll.Check
	for h := uint64(1); h <= 5; h++ {
		batch = append(batch, poll.Check{ItemID: h, HostID: h, Key: "agent.ping", Addr: addr, Timeout: 3 * time.Second})
	}
	col := newCollect(len(batch))
	c.Check(context.Background(), batch, col.done)
	col.wait(t, len(batch))
	want := map[uint64]struct {
		status poll.Status
		errHas string
	}{
		1: {poll.OK, ""},
		2: {poll.NetworkError, "subject does not match"},
		3: {poll.NetworkError, "pre-shared key (PSK) is not available in this build"},
		4: {poll.NetworkError, ""},
		5: {poll.NetworkError, "cannot establish TLS"},
	}
	for id, w := range want {
		r := col.got[id]
		if r.Status != w.status || !strings.Contains(r.Error, w.errHas) {
			t.Errorf("host %d: status %v error %q, want %v with %q", id, r.Status, r.Error, w.status, w.errHas)
		}
	}
	if v := string(col.got[1].Value); v != "1" {
		t.Errorf("value over TLS %q", v)
	}
	if got := counter(t, m, `peregrine_poll_agent_errors_total{reason="tls"}`); got != "3" {
		t.Errorf("tls errors %s, want 3", got)
	}
}

// pskAgent is a passive agent that speaks TLS with a pre-shared key
// only (as zabbix_agentd with TLSAccept=psk), with the keys of lookup,
// and answers every key with "1".
func pskAgent(t testing.TB, lookup zbxpsk.Lookup) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			raw, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := zbxpsk.Server(raw, lookup)
				if err != nil {
					raw.Close()
					return
				}
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				if _, _, err := zbx.NewReader(c, zbx.ReaderOptions{}).ReadFrame(); err != nil {
					return
				}
				c.Write(zbx.AppendFrame(nil, []byte("1"), zbx.FlagProtocol))
			}()
		}
	}()
	return ln.Addr().String()
}

// TestCheckPSK: a host with tls_connect 2 is checked over TLS with its
// pre-shared key; an identity the agent does not know, a key that
// differs, and plain to a PSK agent fail as network errors, reason tls
// for the first two; the suite agreed is counted.
func TestCheckPSK(t *testing.T) {
	if !zbxpsk.Available {
		t.Skip("this build has no PSK (built without cgo or with the nopsk tag); TestCheckTLS covers the refusal")
	}
	key, _ := zbxpsk.ParseKey("1f87b595725ac58dd977beef14b97461a7c1045b9a1c923453302c5473193478")
	other, _ := zbxpsk.ParseKey("2f87b595725ac58dd977beef14b97461")
	addr := pskAgent(t, func(id string) ([]byte, bool) { return key, id == "PSK 001" })
	keys := map[uint64]Security{
		1: {PSK: &zbxpsk.Key{Identity: "PSK 001", Secret: key}},
		2: {PSK: &zbxpsk.Key{Identity: "nobody", Secret: key}},
		3: {PSK: &zbxpsk.Key{Identity: "PSK 001", Secret: other}},
		4: {},
	}
	m := selfmon.NewRegistry()
	c := New(Options{Metrics: m, TLS: func(host uint64) (Security, error) { return keys[host], nil }})
	var batch []poll.Check
	for h := uint64(1); h <= 4; h++ {
		batch = append(batch, poll.Check{ItemID: h, HostID: h, Key: "agent.ping", Addr: addr, Timeout: 3 * time.Second})
	}
	col := newCollect(len(batch))
	c.Check(context.Background(), batch, col.done)
	col.wait(t, len(batch))
	want := map[uint64]struct {
		status poll.Status
		errHas string
	}{
		1: {poll.OK, ""},
		2: {poll.NetworkError, `cannot establish TLS with PSK identity "nobody"`},
		3: {poll.NetworkError, `cannot establish TLS with PSK identity "PSK 001"`},
		4: {poll.NetworkError, ""},
	}
	for id, w := range want {
		r := col.got[id]
		if r.Status != w.status || !strings.Contains(r.Error, w.errHas) {
			t.Errorf("host %d: status %v error %q, want %v with %q", id, r.Status, r.Error, w.status, w.errHas)
		}
		if strings.Contains(r.Error, "1f87b5") || strings.Contains(r.Error, "2f87b5") {
			t.Errorf("host %d: a key in %q", id, r.Error)
		}
	}
	if v := string(col.got[1].Value); v != "1" {
		t.Errorf("value over PSK %q", v)
	}
	if got := counter(t, m, `peregrine_poll_agent_errors_total{reason="tls"}`); got != "2" {
		t.Errorf("tls errors %s, want 2", got)
	}
	if got := counter(t, m, `peregrine_poll_agent_tls_psk_total{cipher="TLS_CHACHA20_POLY1305_SHA256"}`); got != "1" {
		t.Errorf("PSK handshakes %s, want 1", got)
	}
}
