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
