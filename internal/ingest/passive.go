package ingest

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/zbx"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxpsk"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxtls"
)

// Passive proxies (status 6): Peregrine connects to them on their
// interface, as Zabbix 6.0's proxy pollers do. Every ConfigFrequency it
// sends {"request":"proxy config","data":{<the tables of ProxyConfig>}} and
// reads the proxy's {"response":"success"}; every DataFrequency it
// sends {"request":"proxy data"}, takes the data the proxy answers with
// exactly as an active proxy's (takeProxyData: same checks, same way
// into the pipeline, acknowledged only once durable) and then answers
// {"response":"success"} on the same connection, or failed, in which
// case the proxy keeps the data and sends it again. A proxy that says
// it has more ("more": 1) is asked again at once, up to
// maxPassiveRounds times a turn.

// PassiveOptions configures RunPassiveProxies.
type PassiveOptions struct {
	// ConfigFrequency and DataFrequency are Zabbix's
	// ProxyConfigFrequency and ProxyDataFrequency (defaults 10 s and
	// 1 s, as 6.0's).
	ConfigFrequency, DataFrequency time.Duration
	// Timeout bounds one exchange (default the trapper's Timeout).
	Timeout time.Duration
	// CertTLS returns the client configuration for a proxy with
	// tls_connect 4 (certificate); nil: such proxies are not contacted.
	CertTLS func(issuer, subject string) *tls.Config
	// Dial replaces net.Dialer.DialContext (tests).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

const maxPassiveRounds = 10

// passiveProxy is the poller's state of one passive proxy.
type passiveProxy struct {
	nextConfig, nextData time.Time
	busy                 bool
}

// RunPassiveProxies polls the passive proxies of the catalog until ctx
// ends. One exchange at a time per proxy; proxies are polled in
// parallel, so a slow one holds only itself.
func (s *Server) RunPassiveProxies(ctx context.Context, o PassiveOptions) {
	if o.ConfigFrequency <= 0 {
		o.ConfigFrequency = 10 * time.Second
	}
	if o.DataFrequency <= 0 {
		o.DataFrequency = time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = s.opts.Timeout
	}
	if o.Dial == nil {
		o.Dial = (&net.Dialer{}).DialContext
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	defer wg.Wait()
	state := map[uint64]*passiveProxy{}
	tick := time.NewTicker(min(o.DataFrequency, time.Second))
	defer tick.Stop()
	for {
		now := time.Now()
		snap := s.opts.Catalog.Snapshot()
		mu.Lock()
		seen := map[uint64]bool{}
		for i := range snap.Proxies() {
			p := &snap.Proxies()[i]
			if p.Status != catalog.ProxyPassive || p.Interface.Port == "" {
				continue
			}
			seen[p.ID] = true
			st := state[p.ID]
			if st == nil {
				st = &passiveProxy{}
				state[p.ID] = st
			}
			if st.busy {
				continue
			}
			doConfig, doData := !now.Before(st.nextConfig), !now.Before(st.nextData)
			if !doConfig && !doData {
				continue
			}
			if doConfig {
				st.nextConfig = now.Add(o.ConfigFrequency)
			}
			if doData {
				st.nextData = now.Add(o.DataFrequency)
			}
			st.busy = true
			wg.Add(1)
			go func(p *catalog.Proxy) {
				defer wg.Done()
				if doConfig {
					s.passiveConfig(ctx, &o, snap, p)
				}
				if doData {
					s.passiveData(ctx, &o, p)
				}
				mu.Lock()
				st.busy = false
				mu.Unlock()
			}(p)
		}
		for id := range state {
			if !seen[id] && !state[id].busy {
				delete(state, id)
			}
		}
		mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// passiveDial connects to proxy p as its tls_connect says.
func (s *Server) passiveDial(ctx context.Context, o *PassiveOptions, p *catalog.Proxy) (net.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	c, err := o.Dial(dctx, "tcp", p.Interface.Address())
	if err != nil {
		return nil, err
	}
	c.SetDeadline(time.Now().Add(o.Timeout))
	switch p.TLS.Connect {
	case zbxtls.PSK:
		k, ok := p.TLS.PSKKey()
		if !ok {
			c.Close()
			return nil, fmt.Errorf("proxy %q has tls_connect 2 (PSK) without a valid tls_psk_identity and tls_psk", p.Name)
		}
		pc, err := zbxpsk.Client(c, k)
		if err != nil {
			c.Close()
			return nil, err
		}
		if err := pc.Handshake(); err != nil {
			pc.Close()
			return nil, fmt.Errorf("TLS (PSK) handshake with proxy %q: %w", p.Name, err)
		}
		return pc, nil
	case zbxtls.Cert:
		if o.CertTLS == nil {
			c.Close()
			return nil, fmt.Errorf("proxy %q has tls_connect 4 (certificate): %w", p.Name, zbxtls.ErrNotConfigured)
		}
		tc := tls.Client(c, o.CertTLS(p.TLS.Issuer, p.TLS.Subject))
		if err := tc.HandshakeContext(dctx); err != nil {
			tc.Close()
			return nil, fmt.Errorf("TLS handshake with proxy %q: %w", p.Name, err)
		}
		return tc, nil
	}
	return c, nil
}

// exchange sends one request frame and reads the answer, its buffers
// counted against the trapper's memory budget through l; the caller
// releases rd once done with the payload.
func (s *Server) exchange(c net.Conn, req []byte, l *lease) (payload []byte, rd *zbx.Reader, err error) {
	rd = zbx.NewReader(c, zbx.ReaderOptions{MaxSize: uint64(s.opts.MaxFrameSize), AllowLarge: true, SizeSetting: "trapper.max_frame_size", Memory: l})
	if _, err := c.Write(zbx.AppendFrame(nil, req, zbx.FlagProtocol)); err != nil {
		return nil, rd, err
	}
	_, payload, err = rd.ReadFrame()
	return payload, rd, err
}

// passiveFail counts and logs (throttled) a failed exchange.
func (s *Server) passiveFail(kind string, p *catalog.Proxy, err error) {
	s.proxyCount(kind, "passive_error")
	if n, ok := s.throttle.Allow("proxy:passive:" + kind); ok {
		s.opts.Logger.Warn("passive proxy exchange failed", "request", kind, "proxy", p.Name, "addr", p.Interface.Address(), "err", err, "suppressed", n)
	}
}

func (s *Server) passiveConfig(ctx context.Context, o *PassiveOptions, snap *catalog.Snapshot, p *catalog.Proxy) {
	cfg := ProxyConfig(snap, p, s.opts.LogPositions, s.autoregSettings(), s.drules())
	// A passive proxy takes the tables under "data" (an active one's
	// reply has them at the top).
	req := append(append([]byte(`{"request":"proxy config","data":`), cfg...), '}')
	c, err := s.passiveDial(ctx, o, p)
	if err != nil {
		s.passiveFail("config", p, err)
		return
	}
	defer c.Close()
	l := &lease{b: s.budget, deadline: time.Now().Add(o.Timeout)}
	reply, rd, err := s.exchange(c, req, l)
	defer func() { rd.Release(); l.endFrame() }()
	if err != nil {
		s.passiveFail("config", p, err)
		return
	}
	var r struct {
		Response string `json:"response"`
		Info     string `json:"info"`
	}
	if json.Unmarshal(reply, &r) != nil || r.Response != "success" {
		s.passiveFail("config", p, fmt.Errorf("proxy answered %q", truncateForLog(string(reply))))
		return
	}
	s.SetProxyLastAccess(p.ID, time.Now())
	s.proxyCount("config", "ok")
}

func (s *Server) passiveData(ctx context.Context, o *PassiveOptions, p *catalog.Proxy) {
	for round := 0; round < maxPassiveRounds && ctx.Err() == nil; round++ {
		more, ok := s.passiveDataOnce(ctx, o, p)
		if !ok || !more {
			return
		}
	}
}

// passiveDataOnce asks proxy p for its data once; more: it has more.
func (s *Server) passiveDataOnce(ctx context.Context, o *PassiveOptions, p *catalog.Proxy) (more, ok bool) {
	c, err := s.passiveDial(ctx, o, p)
	if err != nil {
		s.passiveFail("data", p, err)
		return false, false
	}
	defer c.Close()
	l := &lease{b: s.budget, deadline: time.Now().Add(o.Timeout)}
	cs := newConnState(l)
	payload, rd, err := s.exchange(c, []byte(`{"request":"proxy data"}`), l)
	defer func() {
		rd.Release()
		cs.trim(-1)
		l.endFrame()
	}()
	if err != nil {
		s.passiveFail("data", p, err)
		return false, false
	}
	remote := p.Interface.Address()
	var reply []byte
	d, release, err := s.decodeProxyData(cs, payload)
	defer release()
	if err != nil {
		reply = s.proxyRefuse("data", proxyDecodeResult(err), remote, err.Error())
	} else {
		// The proxy's own name is what the catalog says: a passive
		// proxy need not send it.
		reply = s.takeProxyData(cs, s.opts.Catalog.Snapshot(), p, d, time.Now(), remote)
	}
	c.SetDeadline(time.Now().Add(o.Timeout))
	if _, err := c.Write(zbx.AppendFrame(nil, reply, zbx.FlagProtocol)); err != nil {
		s.passiveFail("data", p, err)
		return false, false
	}
	return err == nil && d.More, true
}
