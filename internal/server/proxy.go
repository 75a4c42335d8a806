package server

import (
	"context"
	"errors"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/ingest"
)

// proxyLastAccessEvery is how often proxies' lastaccess is saved to the
// catalog: a restart loses at most this much of it.
const proxyLastAccessEvery = 5 * time.Second

// saveProxyLastAccess saves the trapper's changed proxy lastaccess
// values every proxyLastAccessEvery and once more when ctx ends.
func (s *Server) saveProxyLastAccess(ctx context.Context) {
	save := s.saveLastAccessOnce
	t := time.NewTicker(proxyLastAccessEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			save(context.Background())
			return
		case <-t.C:
			save(ctx)
		}
	}
}

// runProxies runs what proxies need beside the trapper until ctx ends:
// the passive proxies polled, lastaccess saved.
func (s *Server) runProxies(ctx context.Context) {
	done := make(chan struct{})
	go func() { defer close(done); s.Trapper.RunPassiveProxies(ctx, s.passive) }()
	s.saveProxyLastAccess(ctx)
	<-done
	s.saveLastAccessOnce(context.Background()) // the last exchanges' too
}

// saveLastAccessOnce saves the lastaccess values changed since the last
// save; what cannot be saved is kept for the next.
func (s *Server) saveLastAccessOnce(ctx context.Context) {
	d := s.Trapper.TakeProxyLastAccess()
	if d == nil {
		return
	}
	if err := s.Catalog.SaveProxyLastAccess(ctx, d); err != nil {
		s.Trapper.ReturnProxyLastAccess(d)
		s.log.Warn("cannot save proxies' lastaccess; retrying", "err", err)
	}
}

// proxyCommand is the command runner's Proxy: the remote command goes
// to the host's proxy as a task, and its result is waited for (ctx
// bounds the wait: alerts.command_timeout).
func (s *Server) proxyCommand(ctx context.Context, sc *catalog.GlobalScript, host *catalog.Host, command string) (string, error) {
	if s.Trapper == nil {
		return "", errors.New("the trapper is not running: no proxy can be reached")
	}
	return s.Trapper.ProxyCommand(ctx, host.ProxyID, ingest.ProxyCommand{HostID: host.ID, CommandType: sc.Type, ExecuteOn: sc.ExecuteOn, Command: command})
}

// checkNow is the API's CheckNower: items of hosts behind a proxy go to
// their proxy as check-now tasks, the others to the poller.
type checkNow struct{ s *Server }

func (c checkNow) CheckNow(itemIDs []uint64) error {
	snap := c.s.Catalog.Snapshot()
	var own []uint64
	byProxy := map[uint64][]uint64{}
	for _, id := range itemIDs {
		if it := snap.Item(id); it != nil && it.Host != nil && it.Host.ProxyID != 0 {
			byProxy[it.Host.ProxyID] = append(byProxy[it.Host.ProxyID], id)
			continue
		}
		own = append(own, id)
	}
	if len(own) > 0 {
		if c.s.Poller == nil {
			return errors.New("this server does not poll items")
		}
		if err := c.s.Poller.CheckNow(own); err != nil {
			return err
		}
	}
	for p, ids := range byProxy {
		if c.s.Trapper == nil {
			return errors.New("the trapper is not running: no proxy can be reached")
		}
		if err := c.s.Trapper.ProxyCheckNow(p, ids); err != nil {
			return err
		}
	}
	return nil
}
