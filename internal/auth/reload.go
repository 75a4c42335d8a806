package auth

// Reload drops the caches (sessions, tokens, rights, roles, settings),
// so that the next calls read the database again. A read-only store (an
// HA standby, sqlitedb.PG.ReadOnly) sees none of the active node's
// changes otherwise — a logout, a changed password or role, a group's
// rights, a disabled user — and the server calls it on the catalog's
// poll (every 2 s). A writer's caches follow its own changes; Reload is
// harmless there but not needed.
//
// Sessions used on this node keep the last access seen here across a
// Reload (never written: the standby writes nothing, so the active
// node's row keeps the last use there): a session in use on a standby
// stays live on it, while the other nodes count its idle time from its
// last use on them, and it ends when its row does (a logout, or the
// active node's prune of sessions idle there for SessionIdle and a day).
func (s *Store) Reload() {
	if err := s.begin(); err != nil {
		return
	}
	defer s.end()
	now := s.opts.Now()
	s.fillMu.Lock()
	defer s.fillMu.Unlock()
	s.mu.Lock()
	if s.readOnly {
		if s.seen == nil {
			s.seen = map[secretHash]int64{}
		}
		for h, e := range s.sessions {
			s.seen[h] = max(s.seen[h], e.last.Load())
		}
		for h, ms := range s.seen {
			if s.sessionExpired(ms, now) {
				delete(s.seen, h)
			}
		}
	}
	clear(s.sessions)
	clear(s.tokens)
	clear(s.tokenByID)
	s.mu.Unlock()
	s.rightsMu.Lock()
	s.rightsGen++
	clear(s.rights)
	s.rightsMu.Unlock()
	s.rolesChanged()
	s.settingsGen.Add(1)
	s.settings.Store(nil)
}
