package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Secret formats: a session id is 16 random bytes, an API token secret
// 32, both written as lowercase hex. Authenticate tells them apart by
// length alone.
const (
	sessionIDLen   = 32
	tokenSecretLen = 64
)

// secretHash is the SHA-256 of a session id or token secret. The caches
// and the database are keyed by it, so the secret itself is kept nowhere
// once it has been returned to its owner.
type secretHash [sha256.Size]byte

func hashSecret(s string) secretHash {
	// Copy well-formed secrets to the stack so that the hot path does
	// not allocate for the []byte conversion.
	var buf [tokenSecretLen]byte
	if len(s) <= len(buf) {
		n := copy(buf[:], s)
		return sha256.Sum256(buf[:n])
	}
	return sha256.Sum256([]byte(s))
}

func (h secretHash) String() string { return hex.EncodeToString(h[:]) }

// isLowerHex reports whether s is n lowercase hex digits.
func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// randomHex returns n random bytes from crypto/rand as lowercase hex.
func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("auth: cannot read random bytes: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// accessClock tracks the last access of a cached session or token, and
// the value last written to the database. Both are Unix milliseconds on
// the injected clock.
//
// Why not write every access: Authenticate runs on every API request,
// and a synchronous, fsynced SQLite write per request would make the
// database the bottleneck of the whole API (Grafana sends bursts of
// requests with one session). Instead the cache holds the exact time
// and the database is updated at most once per AccessWriteInterval per
// session or token, by the request that finds the write due. The cost: a
// crash loses up to AccessWriteInterval of last-access time, so after a
// crash (not a Close, which writes everything) a session may expire up
// to that much early and a token's LastAccess may lag. Token listings
// read the cache, so they are exact while the process runs.
type accessClock struct {
	last    atomic.Int64
	written atomic.Int64
}

func (c *accessClock) init(ms int64) {
	c.last.Store(ms)
	c.written.Store(ms)
}

// touch raises the last access to ms (never lowers it, should the clock
// step back).
func (c *accessClock) touch(ms int64) {
	for {
		old := c.last.Load()
		if ms <= old || c.last.CompareAndSwap(old, ms) {
			return
		}
	}
}

// claimWrite reports whether the caller should write ms to the database
// now; of concurrent callers at most one wins per interval.
func (c *accessClock) claimWrite(ms int64, interval time.Duration) bool {
	w := c.written.Load()
	return ms-w >= interval.Milliseconds() && c.written.CompareAndSwap(w, ms)
}

// sessionEntry is a cached live session. user is a copy taken when the
// entry was made; operations that change a user (UpdatePassword,
// DeleteUser) drop the user's entries.
type sessionEntry struct {
	user User
	accessClock
}

func (s *Store) sessionExpired(lastMs int64, now time.Time) bool {
	return now.UnixMilli()-lastMs >= s.opts.SessionIdle.Milliseconds()
}

// startSession creates a session for u after its password was verified,
// unless the account is blocked. It clears the failed-login counter.
func (s *Store) startSession(ctx context.Context, pol loginPolicy, u User, now time.Time) (string, error) {
	id, err := randomHex(sessionIDLen / 2)
	if err != nil {
		return "", err
	}
	h := hashSecret(id)
	nowMs := now.UnixMilli()

	// fillMu: a DeleteUser or UpdatePassword that commits between our
	// commit and our cache insert must not miss the new entry.
	s.fillMu.Lock()
	defer s.fillMu.Unlock()
	tx, err := s.tx(ctx)
	if err != nil {
		return "", fmt.Errorf("auth: cannot create session for user %d: %w", u.ID, err)
	}
	defer tx.Rollback()
	var failed, atMs int64
	err = tx.QueryRowContext(ctx, "SELECT attempt_failed, attempt_ms FROM users WHERE id = ?", int64(u.ID)).Scan(&failed, &atMs)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrBadCredentials // deleted while we were hashing
	}
	if err != nil {
		return "", fmt.Errorf("auth: cannot create session for user %d: %w", u.ID, err)
	}
	if pol.blocked(failed, atMs, now) {
		return "", ErrBlocked
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO sessions (id_hash, user_id, created_ms, last_access_ms) VALUES (?, ?, ?, ?)",
		h.String(), int64(u.ID), nowMs, nowMs); err != nil {
		return "", fmt.Errorf("auth: cannot create session for user %d: %w", u.ID, err)
	}
	// The last attempt, as Zabbix's user object shows it: its time and
	// address, and no failure since.
	if _, err := tx.ExecContext(ctx, "UPDATE users SET attempt_failed = 0, attempt_ms = ?, attempt_ip = ? WHERE id = ?", nowMs, clientIP(ctx), int64(u.ID)); err != nil {
		return "", fmt.Errorf("auth: cannot record the login of user %d: %w", u.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return "", fmt.Errorf("auth: cannot create session for user %d: %w", u.ID, err)
	}
	e := &sessionEntry{user: u}
	e.init(nowMs)
	s.mu.Lock()
	s.sessions[h] = e
	s.mu.Unlock()
	return id, nil
}

// Logout ends a session. An id that is not a session (unknown, already
// ended, or an API token) gives ErrNotAuthorized. An expired session can
// still be logged out.
func (s *Store) Logout(ctx context.Context, session string) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	if !isLowerHex(session, sessionIDLen) {
		return ErrNotAuthorized
	}
	h := hashSecret(session)
	s.fillMu.Lock()
	defer s.fillMu.Unlock()
	del := s.exec
	if s.readOnly {
		del = s.db.ExecContext // unfenced, on a standby: logout.go says why
	}
	res, err := del(ctx, "DELETE FROM sessions WHERE id_hash = ?", h.String())
	if err != nil {
		return fmt.Errorf("auth: cannot end session: %w", err)
	}
	s.mu.Lock()
	delete(s.sessions, h)
	delete(s.seen, h)
	s.mu.Unlock()
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("auth: cannot end session: %w", err)
	} else if n == 0 {
		return ErrNotAuthorized
	}
	return nil
}

// Authenticate returns the user behind a session id (32 hex digits) or an
// API token secret (64 hex digits).
//
// A session is live if it was used within Options.SessionIdle; using it
// refreshes that. An expired session gives ErrSessionExpired (for a day
// after expiry; later, like any unknown secret, ErrNotAuthorized). A
// token must be enabled and not past its ExpiresAt, else
// ErrNotAuthorized. Anything else gives ErrNotAuthorized.
//
// A cache hit takes two read locks and no database access, except the
// throttled last-access write described at accessClock.
func (s *Store) Authenticate(ctx context.Context, secret string) (User, error) {
	if err := s.begin(); err != nil {
		return User{}, err
	}
	defer s.end()
	switch {
	case isLowerHex(secret, sessionIDLen):
		return s.authSession(ctx, hashSecret(secret))
	case isLowerHex(secret, tokenSecretLen):
		return s.authToken(ctx, hashSecret(secret))
	}
	return User{}, ErrNotAuthorized
}

func (s *Store) authSession(ctx context.Context, h secretHash) (User, error) {
	now := s.opts.Now()
	s.mu.RLock()
	e := s.sessions[h]
	s.mu.RUnlock()
	if e == nil {
		var err error
		if e, err = s.loadSession(ctx, h, now); err != nil {
			return User{}, err
		}
	}
	if s.sessionExpired(e.last.Load(), now) {
		// The row stays until pruned, so that the owner is told the
		// session expired rather than that it never existed.
		s.mu.Lock()
		if s.sessions[h] == e {
			delete(s.sessions, h)
		}
		s.mu.Unlock()
		return User{}, ErrSessionExpired
	}
	ms := now.UnixMilli()
	e.touch(ms)
	if !s.readOnly && e.claimWrite(ms, s.opts.AccessWriteInterval) {
		// Not bound to ctx: a client that hangs up must not make the
		// write it triggered fail.
		_, err := s.exec(context.WithoutCancel(ctx),
			"UPDATE sessions SET last_access_ms = max(last_access_ms, ?) WHERE id_hash = ?", ms, h.String())
		if err != nil {
			s.log.Warn("auth: cannot save session last access; will retry", "userid", e.user.ID, "err", err)
		}
	}
	return e.user, nil
}

// loadSession fills the cache from the database on a miss (after a
// restart, or for a secret that is no session at all).
func (s *Store) loadSession(ctx context.Context, h secretHash, now time.Time) (*sessionEntry, error) {
	s.fillMu.Lock()
	defer s.fillMu.Unlock()
	s.mu.RLock()
	e := s.sessions[h]
	s.mu.RUnlock()
	if e != nil {
		return e, nil // filled by another caller while we waited
	}
	var (
		u    User
		last int64
	)
	err := s.db.QueryRowContext(ctx, `SELECT s.last_access_ms, `+userCols+`
		FROM sessions s JOIN users u ON u.id = s.user_id `+userJoin+` WHERE s.id_hash = ? AND `+userEnabled, h.String()).
		Scan(append([]any{&last}, scanUser(&u)...)...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotAuthorized
	}
	if err != nil {
		return nil, fmt.Errorf("auth: cannot read session: %w", err)
	}
	if s.readOnly {
		s.mu.RLock()
		last = max(last, s.seen[h]) // used on this standby since (reload.go)
		s.mu.RUnlock()
	}
	if s.sessionExpired(last, now) {
		return nil, ErrSessionExpired
	}
	e = &sessionEntry{user: u}
	e.init(last)
	s.mu.Lock()
	s.sessions[h] = e
	s.mu.Unlock()
	return e, nil
}

// maybePrune prunes expired sessions if pruneEvery has passed since the
// last prune. Logins call it, since only logins make sessions.
func (s *Store) maybePrune(ctx context.Context, now time.Time) {
	ms := now.UnixMilli()
	last := s.lastPrune.Load()
	if ms-last < pruneEvery.Milliseconds() || !s.lastPrune.CompareAndSwap(last, ms) {
		return
	}
	if err := s.pruneSessions(context.WithoutCancel(ctx), now); err != nil {
		s.log.Warn("auth: cannot prune expired sessions", "err", err)
	}
}

// pruneSessions drops expired sessions from the cache, and deletes rows
// of sessions that expired more than expiredSessionRetention ago. The
// database's last access lags the cache's by less than
// AccessWriteInterval, so subtracting that too can never delete a live
// session's row.
func (s *Store) pruneSessions(ctx context.Context, now time.Time) error {
	s.mu.Lock()
	for h, e := range s.sessions {
		if s.sessionExpired(e.last.Load(), now) {
			delete(s.sessions, h)
		}
	}
	s.mu.Unlock()
	cutoff := now.Add(-s.opts.SessionIdle - s.opts.AccessWriteInterval - expiredSessionRetention).UnixMilli()
	res, err := s.exec(ctx, "DELETE FROM sessions WHERE last_access_ms < ?", cutoff)
	if err != nil {
		return fmt.Errorf("auth: cannot delete expired sessions: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n > 0 {
		s.log.Debug("auth: expired sessions deleted", "count", n)
	}
	return nil
}

// dropUserSessionsLocked removes a user's sessions from the cache. s.mu
// must be held for writing.
func (s *Store) dropUserSessionsLocked(userID uint64) {
	for h, e := range s.sessions {
		if e.user.ID == userID {
			delete(s.sessions, h)
		}
	}
}

// flushAccess writes the last-access times that only the caches hold.
// Close calls it with no other call running.
func (s *Store) flushAccess(ctx context.Context) error {
	if s.readOnly {
		return nil
	}
	tx, err := s.tx(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	s.mu.RLock()
	defer s.mu.RUnlock()
	for h, e := range s.sessions {
		if last := e.last.Load(); last > e.written.Load() {
			if _, err := tx.ExecContext(ctx, "UPDATE sessions SET last_access_ms = max(last_access_ms, ?) WHERE id_hash = ?", last, h.String()); err != nil {
				return err
			}
		}
	}
	for _, e := range s.tokens {
		if last := e.last.Load(); last > e.written.Load() {
			if _, err := tx.ExecContext(ctx, "UPDATE tokens SET last_access = max(last_access, ?) WHERE id = ?", last/1000, int64(e.id)); err != nil {
				return err
			}
		}
	}
	return tx.Commit()
}
