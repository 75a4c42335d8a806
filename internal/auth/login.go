package auth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/peregrine-mon/peregrine/internal/sqlitedb"
)

// Login checks a user name and password and starts a session. It returns
// the session id: 32 lowercase hex digits (128 bits from crypto/rand).
//
// Failures:
//   - ErrBadCredentials if the user does not exist or the password is
//     wrong. Both cases do the same work, one argon2id derivation with the
//     current parameters (a dummy one for an unknown user), and are held
//     until Options.FailDelay has passed since the call began, so neither
//     the answer nor its timing tells them apart.
//   - ErrDisabled if the password is right but the user is in a user
//     group whose users_status is 1 (disabled).
//   - ErrBlocked once the account has had Options.MaxFailures consecutive
//     failures, until Options.BlockFor has passed since the last one,
//     whatever the password. Attempts during a block are not counted, so
//     they do not extend it. A success resets the count.
//
// The block is checked after the password was hashed, in the same
// transaction that records the outcome, so a burst of parallel guesses is
// cut off as soon as MaxFailures of them have been counted rather than
// all being judged against the count from before the burst.
//
// Other errors are internal (database, cancelled context) and wrapped.
func (s *Store) Login(ctx context.Context, username, password string) (session string, u User, err error) {
	if err := s.begin(); err != nil {
		return "", User{}, err
	}
	defer s.end()
	if s.readOnly {
		// An HA standby: the session row, the failed-login count and the
		// last login are the active node's writes.
		return "", User{}, sqlitedb.ErrReadOnly
	}
	start := time.Now() // the real clock: FailDelay is real time
	pol, err := s.loginPolicy(ctx)
	if err != nil {
		return "", User{}, err
	}

	u, stored, found, err := s.lookupLogin(ctx, username)
	if err != nil {
		return "", User{}, err
	}
	if !found {
		if err := s.h.burn(ctx, password); err != nil {
			return "", User{}, err
		}
		s.failWait(ctx, start)
		return "", User{}, ErrBadCredentials
	}
	var ok, stale bool
	if stored == "" {
		// No password (the guest user): no password opens it. The
		// answer costs what a wrong password costs.
		err = s.h.burn(ctx, password)
	} else {
		ok, stale, err = s.h.verify(ctx, stored, password)
	}
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			return "", User{}, err // context ended while waiting to hash
		}
		s.log.Error("auth: stored password hash is unreadable; set a new password for the user", "userid", u.ID, "err", err)
		ok = false
	}
	now := s.opts.Now()
	if !ok {
		// Record the failure even if the client has gone: hanging up
		// must not be a way around the counter.
		blocked, err := s.recordFailure(context.WithoutCancel(ctx), pol, u, now)
		s.failWait(ctx, start)
		if err != nil {
			return "", User{}, err
		}
		if blocked {
			return "", User{}, ErrBlocked
		}
		return "", User{}, ErrBadCredentials
	}
	if disabled, err := s.userDisabled(ctx, u.ID); err != nil {
		return "", User{}, err
	} else if disabled {
		s.failWait(ctx, start)
		return "", User{}, ErrDisabled
	}
	session, err = s.startSession(ctx, pol, u, now)
	if err != nil {
		if errors.Is(err, ErrBlocked) || errors.Is(err, ErrBadCredentials) {
			s.failWait(ctx, start)
		}
		return "", User{}, err
	}
	if stale {
		s.rehash(ctx, u.ID, stored, password)
	}
	s.maybePrune(ctx, now)
	return session, u, nil
}

// lookupLogin reads the account and stored hash for a user name.
func (s *Store) lookupLogin(ctx context.Context, username string) (u User, stored string, found bool, err error) {
	err = s.db.QueryRowContext(ctx, "SELECT "+userCols+", u.passwd FROM users u "+userJoin+" WHERE u.username = ?", username).
		Scan(append(scanUser(&u), &stored)...)
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, "", false, nil
	}
	if err != nil {
		return User{}, "", false, fmt.Errorf("auth: cannot read user: %w", err)
	}
	return u, stored, true, nil
}

// blocked reports whether an account with these counters is blocked now.
func (p loginPolicy) blocked(failed, lastMs int64, now time.Time) bool {
	return failed >= p.maxFailures && now.UnixMilli()-lastMs < p.blockMs
}

// clientIPKey is the context key of WithClientIP.
type clientIPKey struct{}

// WithClientIP returns ctx carrying the address of the client that
// logs in: Login records it as the user's attempt_ip, as Zabbix does.
func WithClientIP(ctx context.Context, ip string) context.Context {
	return context.WithValue(ctx, clientIPKey{}, ip)
}

func clientIP(ctx context.Context) string {
	ip, _ := ctx.Value(clientIPKey{}).(string)
	return ip
}

// recordFailure counts a failed login. It reports whether the account
// was blocked already, in which case nothing is counted.
func (s *Store) recordFailure(ctx context.Context, pol loginPolicy, u User, now time.Time) (blocked bool, err error) {
	tx, err := s.tx(ctx)
	if err != nil {
		return false, fmt.Errorf("auth: cannot record failed login of user %d: %w", u.ID, err)
	}
	defer tx.Rollback()
	var failed, lastMs int64
	err = tx.QueryRowContext(ctx, "SELECT attempt_failed, attempt_ms FROM users WHERE id = ?", int64(u.ID)).Scan(&failed, &lastMs)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil // deleted meanwhile
	}
	if err != nil {
		return false, fmt.Errorf("auth: cannot record failed login of user %d: %w", u.ID, err)
	}
	if pol.blocked(failed, lastMs, now) {
		return true, nil
	}
	if failed >= pol.maxFailures {
		failed = 0 // an earlier block has run out: a new series starts
	}
	failed++
	if _, err := tx.ExecContext(ctx, "UPDATE users SET attempt_failed = ?, attempt_ms = ?, attempt_ip = ? WHERE id = ?", failed, now.UnixMilli(), clientIP(ctx), int64(u.ID)); err != nil {
		return false, fmt.Errorf("auth: cannot record failed login of user %d: %w", u.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("auth: cannot record failed login of user %d: %w", u.ID, err)
	}
	if failed == pol.maxFailures {
		s.log.Warn("auth: account blocked after consecutive failed logins",
			"userid", u.ID, "username", u.Username, "failures", failed, "for", time.Duration(pol.blockMs)*time.Millisecond)
	}
	return false, nil
}

// UnblockUsers clears the failed-login count of each user (user.unblock):
// a blocked account can log in again at once, and its next failures
// count from zero. The time and address of the last failure stay, as
// Zabbix keeps them. All or nothing: an unknown user is ErrNotFound and
// nobody is changed.
func (s *Store) UnblockUsers(ctx context.Context, ids []uint64) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	tx, err := s.tx(ctx)
	if err != nil {
		return fmt.Errorf("auth: cannot unblock users: %w", err)
	}
	defer tx.Rollback()
	for _, id := range ids {
		res, err := tx.ExecContext(ctx, "UPDATE users SET attempt_failed = 0 WHERE id = ?", int64(id))
		if err != nil {
			return fmt.Errorf("auth: cannot unblock user %d: %w", id, err)
		}
		if err := affectedOne(res, "user", id); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("auth: cannot unblock users: %w", err)
	}
	s.log.Info("auth: users unblocked", "userids", ids)
	return nil
}

// failWait holds a failed login's answer until FailDelay has passed since
// start. It returns early if ctx ends: the client is gone, and nobody
// sees the answer.
func (s *Store) failWait(ctx context.Context, start time.Time) {
	d := s.opts.FailDelay - time.Since(start)
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// rehash replaces a hash made with other parameters than the current
// ones, now that the password is known to be right. It is best effort:
// the compare-and-set on the old hash keeps it from undoing a password
// change that happened meanwhile, and a failure only means the old hash
// stays in use.
func (s *Store) rehash(ctx context.Context, userID uint64, old, password string) {
	hash, err := s.h.hash(ctx, password)
	if err != nil {
		return
	}
	_, err = s.exec(ctx, "UPDATE users SET passwd = ? WHERE id = ? AND passwd = ?", hash, int64(userID), old)
	if err != nil {
		s.log.Warn("auth: cannot upgrade password hash parameters", "userid", userID, "err", err)
		return
	}
	s.log.Info("auth: password hash upgraded to the current parameters", "userid", userID)
}
