package server

import (
	"context"
	"time"
)

// proxyLastAccessEvery is how often proxies' lastaccess is saved to the
// catalog: a restart loses at most this much of it.
const proxyLastAccessEvery = 5 * time.Second

// saveProxyLastAccess saves the trapper's changed proxy lastaccess
// values every proxyLastAccessEvery and once more when ctx ends.
func (s *Server) saveProxyLastAccess(ctx context.Context) {
	save := func(ctx context.Context) {
		d := s.Trapper.TakeProxyLastAccess()
		if d == nil {
			return
		}
		if err := s.Catalog.SaveProxyLastAccess(ctx, d); err != nil {
			s.Trapper.ReturnProxyLastAccess(d)
			s.log.Warn("cannot save proxies' lastaccess; retrying", "err", err)
		}
	}
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

// runProxies runs what proxies need beside the trapper: lastaccess
// saved, until ctx ends.
func (s *Server) runProxies(ctx context.Context) {
	s.saveProxyLastAccess(ctx)
}
