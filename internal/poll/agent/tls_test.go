package agent

import (
	"context"
	"crypto/tls"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/testutil"
	"github.com/peregrine-mon/peregrine/internal/zbx"
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
	configs := map[uint64]func() (*tls.Config, error){
		1: func() (*tls.Config, error) { return srv.ClientConfig(certs.Issuer, certs.Agent.Subject), nil },
		2: func() (*tls.Config, error) { return srv.ClientConfig("", "CN=someone else"), nil },
		3: func() (*tls.Config, error) { return nil, zbxtls.ErrPSK },
		4: func() (*tls.Config, error) { return nil, nil }, // plain to a TLS agent
		5: func() (*tls.Config, error) { return load(certs.Rogue).ClientConfig("", ""), nil },
	}
	m := selfmon.NewRegistry()
	c := New(Options{Metrics: m, TLS: func(host uint64) (*tls.Config, error) { return configs[host]() }})
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
		3: {poll.NetworkError, "pre-shared key"},
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
