package auth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Token status values, as in Zabbix.
const (
	TokenEnabled  = 0
	TokenDisabled = 1
)

// Token is an API token's metadata; the secret is never part of it. A
// token is created without a secret (like Zabbix's token.create) and
// cannot be used until GenerateToken gave it one.
type Token struct {
	ID          uint64
	Name        string
	UserID      uint64
	Description string
	ExpiresAt   int64 // Unix seconds; 0 = never. Expired from that second on.
	Status      int   // TokenEnabled or TokenDisabled
	CreatedAt   int64 // Unix seconds
	LastAccess  int64 // Unix seconds of the last successful use; 0 = never
}

// tokenEntry is a cached usable token: enabled, with a secret, and not
// expired when cached.
type tokenEntry struct {
	id        uint64
	user      User
	expiresAt int64
	accessClock
}

func tokenExpired(expiresAt, nowSec int64) bool { return expiresAt != 0 && nowSec >= expiresAt }

func checkTokenName(name string) error {
	n := utf8.RuneCountInString(name)
	switch {
	case n == 0:
		return fmt.Errorf("auth: token name is empty: %w", ErrInvalid)
	case n > maxTokenNameLen:
		return &TooLongError{What: "token name", Len: n, Max: maxTokenNameLen}
	case !utf8.ValidString(name):
		return fmt.Errorf("auth: token name is not valid UTF-8: %w", ErrInvalid)
	case strings.TrimSpace(name) != name:
		return fmt.Errorf("auth: token name %q starts or ends with white space: %w", name, ErrInvalid)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return fmt.Errorf("auth: token name %q contains a control character: %w", name, ErrInvalid)
	}
	return nil
}

// checkTokenDescription, checkTokenStatus and checkTokenExpiry are the
// checks CreateToken, SetTokenStatus and UpdateToken share.
func checkTokenDescription(d string) error {
	if len(d) > maxDescriptionLen || !utf8.ValidString(d) {
		return fmt.Errorf("auth: token description must be valid UTF-8 of at most %d bytes: %w", maxDescriptionLen, ErrInvalid)
	}
	return nil
}

func checkTokenStatus(status int) error {
	if status != TokenEnabled && status != TokenDisabled {
		return fmt.Errorf("auth: token status %d is not 0 (enabled) or 1 (disabled): %w", status, ErrInvalid)
	}
	return nil
}

func checkTokenExpiry(expiresAt int64) error {
	if expiresAt < 0 {
		return fmt.Errorf("auth: token expiry %d is negative; use 0 for never: %w", expiresAt, ErrInvalid)
	}
	return nil
}

// CreateToken creates an enabled API token for a user, without a secret
// (call GenerateToken). Names are unique per user (ErrExists); a name has
// 1 to 64 characters. expiresAt is Unix seconds, 0 for never.
func (s *Store) CreateToken(ctx context.Context, userID uint64, name, description string, expiresAt int64) (Token, error) {
	if err := s.begin(); err != nil {
		return Token{}, err
	}
	defer s.end()
	if err := checkTokenName(name); err != nil {
		return Token{}, err
	}
	if err := checkTokenDescription(description); err != nil {
		return Token{}, err
	}
	if err := checkTokenExpiry(expiresAt); err != nil {
		return Token{}, err
	}
	t := Token{Name: name, UserID: userID, Description: description, ExpiresAt: expiresAt, Status: TokenEnabled, CreatedAt: s.opts.Now().Unix()}
	tx, err := s.tx(ctx)
	if err != nil {
		return Token{}, fmt.Errorf("auth: cannot create token %q: %w", name, err)
	}
	defer tx.Rollback()
	var one int
	err = tx.QueryRowContext(ctx, "SELECT 1 FROM users WHERE id = ?", int64(userID)).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return Token{}, fmt.Errorf("auth: user %d: %w", userID, ErrNotFound)
	}
	if err != nil {
		return Token{}, fmt.Errorf("auth: cannot create token %q: %w", name, err)
	}
	err = tx.QueryRowContext(ctx, "SELECT 1 FROM tokens WHERE user_id = ? AND name = ?", int64(userID), name).Scan(&one)
	if err == nil {
		return Token{}, fmt.Errorf("auth: token %q of user %d: %w", name, userID, ErrExists)
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return Token{}, fmt.Errorf("auth: cannot create token %q: %w", name, err)
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO tokens (user_id, name, description, token_hash, status, expires_at, created_at, last_access)
		VALUES (?, ?, ?, NULL, ?, ?, ?, 0)`, int64(userID), name, description, t.Status, t.ExpiresAt, t.CreatedAt)
	if err != nil {
		return Token{}, fmt.Errorf("auth: cannot create token %q: %w", name, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return Token{}, fmt.Errorf("auth: cannot create token %q: %w", name, err)
	}
	if err := tx.Commit(); err != nil {
		return Token{}, fmt.Errorf("auth: cannot create token %q: %w", name, err)
	}
	t.ID = uint64(id)
	s.log.Info("auth: token created", "tokenid", t.ID, "userid", userID, "name", name)
	return t, nil
}

// GenerateToken gives a token a new secret (64 lowercase hex digits, 256
// bits from crypto/rand) and returns it. It is shown only this once: the
// database keeps its SHA-256. The previous secret, if any, stops working
// at once.
func (s *Store) GenerateToken(ctx context.Context, tokenID uint64) (secret string, err error) {
	if err := s.begin(); err != nil {
		return "", err
	}
	defer s.end()
	secret, err = randomHex(tokenSecretLen / 2)
	if err != nil {
		return "", err
	}
	s.fillMu.Lock()
	defer s.fillMu.Unlock()
	res, err := s.exec(ctx, "UPDATE tokens SET token_hash = ? WHERE id = ?", hashSecret(secret).String(), int64(tokenID))
	if err != nil {
		return "", fmt.Errorf("auth: cannot generate token %d: %w", tokenID, err)
	}
	if err := affectedOne(res, "token", tokenID); err != nil {
		return "", err
	}
	s.mu.Lock()
	s.dropTokenLocked(tokenID)
	s.mu.Unlock()
	s.log.Info("auth: token secret generated", "tokenid", tokenID)
	return secret, nil
}

// SetTokenStatus enables (TokenEnabled) or disables (TokenDisabled) a
// token. A disabled token gives ErrNotAuthorized at once.
func (s *Store) SetTokenStatus(ctx context.Context, tokenID uint64, status int) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	if err := checkTokenStatus(status); err != nil {
		return err
	}
	s.fillMu.Lock()
	defer s.fillMu.Unlock()
	res, err := s.exec(ctx, "UPDATE tokens SET status = ? WHERE id = ?", status, int64(tokenID))
	if err != nil {
		return fmt.Errorf("auth: cannot update token %d: %w", tokenID, err)
	}
	if err := affectedOne(res, "token", tokenID); err != nil {
		return err
	}
	s.mu.Lock()
	s.dropTokenLocked(tokenID)
	s.mu.Unlock()
	return nil
}

// TokenChange changes the fields of a token that are set; the owner,
// the secret and the creation time never change.
type TokenChange struct {
	Name, Description *string
	Status            *int
	ExpiresAt         *int64 // Unix seconds, 0 for never
}

// UpdateToken changes token tokenID (token.update). A new name is unique
// among the owner's tokens (ErrExists); a status or expiry change holds
// for the next request made with the token.
func (s *Store) UpdateToken(ctx context.Context, tokenID uint64, ch TokenChange) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	if ch.Name != nil {
		if err := checkTokenName(*ch.Name); err != nil {
			return err
		}
	}
	if ch.Description != nil {
		if err := checkTokenDescription(*ch.Description); err != nil {
			return err
		}
	}
	if ch.Status != nil {
		if err := checkTokenStatus(*ch.Status); err != nil {
			return err
		}
	}
	if ch.ExpiresAt != nil {
		if err := checkTokenExpiry(*ch.ExpiresAt); err != nil {
			return err
		}
	}
	s.fillMu.Lock()
	defer s.fillMu.Unlock()
	tx, err := s.tx(ctx)
	if err != nil {
		return fmt.Errorf("auth: cannot update token %d: %w", tokenID, err)
	}
	defer tx.Rollback()
	var t Token
	var userID int64
	err = tx.QueryRowContext(ctx, "SELECT user_id, name, description, status, expires_at FROM tokens WHERE id = ?", int64(tokenID)).
		Scan(&userID, &t.Name, &t.Description, &t.Status, &t.ExpiresAt)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("auth: token %d: %w", tokenID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("auth: cannot update token %d: %w", tokenID, err)
	}
	if ch.Name != nil && *ch.Name != t.Name {
		var one int
		err := tx.QueryRowContext(ctx, "SELECT 1 FROM tokens WHERE user_id = ? AND name = ? AND id <> ?", userID, *ch.Name, int64(tokenID)).Scan(&one)
		if err == nil {
			return fmt.Errorf("auth: token %q of user %d: %w", *ch.Name, userID, ErrExists)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("auth: cannot update token %d: %w", tokenID, err)
		}
		t.Name = *ch.Name
	}
	if ch.Description != nil {
		t.Description = *ch.Description
	}
	if ch.Status != nil {
		t.Status = *ch.Status
	}
	if ch.ExpiresAt != nil {
		t.ExpiresAt = *ch.ExpiresAt
	}
	if _, err := tx.ExecContext(ctx, "UPDATE tokens SET name = ?, description = ?, status = ?, expires_at = ? WHERE id = ?",
		t.Name, t.Description, t.Status, t.ExpiresAt, int64(tokenID)); err != nil {
		return fmt.Errorf("auth: cannot update token %d: %w", tokenID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("auth: cannot update token %d: %w", tokenID, err)
	}
	s.mu.Lock()
	s.dropTokenLocked(tokenID)
	s.mu.Unlock()
	s.log.Info("auth: token updated", "tokenid", tokenID)
	return nil
}

// DeleteToken deletes a token; its secret stops working at once.
func (s *Store) DeleteToken(ctx context.Context, tokenID uint64) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	s.fillMu.Lock()
	defer s.fillMu.Unlock()
	res, err := s.exec(ctx, "DELETE FROM tokens WHERE id = ?", int64(tokenID))
	if err != nil {
		return fmt.Errorf("auth: cannot delete token %d: %w", tokenID, err)
	}
	if err := affectedOne(res, "token", tokenID); err != nil {
		return err
	}
	s.mu.Lock()
	s.dropTokenLocked(tokenID)
	s.mu.Unlock()
	s.log.Info("auth: token deleted", "tokenid", tokenID)
	return nil
}

// TokenBySecret returns the ID of the token whose secret is secret, or 0
// when no token has it, whatever its status and expiry (token.get's
// "token" parameter).
func (s *Store) TokenBySecret(ctx context.Context, secret string) (uint64, error) {
	if err := s.begin(); err != nil {
		return 0, err
	}
	defer s.end()
	var id int64
	err := s.db.QueryRowContext(ctx, "SELECT id FROM tokens WHERE token_hash = ?", hashSecret(secret).String()).Scan(&id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("auth: cannot find a token by its secret: %w", err)
	}
	return uint64(id), nil
}

// Tokens lists the tokens of a user, or of all users if userID is 0,
// ordered by ID. LastAccess includes uses not yet written to the
// database.
func (s *Store) Tokens(ctx context.Context, userID uint64) ([]Token, error) {
	if err := s.begin(); err != nil {
		return nil, err
	}
	defer s.end()
	rows, err := s.db.QueryContext(ctx, `SELECT id, name, user_id, description, expires_at, status, created_at, last_access
		FROM tokens WHERE ? = 0 OR user_id = ? ORDER BY id`, int64(userID), int64(userID))
	if err != nil {
		return nil, fmt.Errorf("auth: cannot list tokens: %w", err)
	}
	defer rows.Close()
	var out []Token
	for rows.Next() {
		var t Token
		if err := rows.Scan(&t.ID, &t.Name, &t.UserID, &t.Description, &t.ExpiresAt, &t.Status, &t.CreatedAt, &t.LastAccess); err != nil {
			return nil, fmt.Errorf("auth: cannot list tokens: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("auth: cannot list tokens: %w", err)
	}
	s.mu.RLock()
	for i := range out {
		if h, ok := s.tokenByID[out[i].ID]; ok {
			if e := s.tokens[h]; e != nil {
				out[i].LastAccess = max(out[i].LastAccess, e.last.Load()/1000)
			}
		}
	}
	s.mu.RUnlock()
	return out, nil
}

func (s *Store) authToken(ctx context.Context, h secretHash) (User, error) {
	now := s.opts.Now()
	s.mu.RLock()
	e := s.tokens[h]
	s.mu.RUnlock()
	if e == nil {
		var err error
		if e, err = s.loadToken(ctx, h, now); err != nil {
			return User{}, err
		}
	}
	if tokenExpired(e.expiresAt, now.Unix()) {
		s.mu.Lock()
		if s.tokens[h] == e {
			delete(s.tokens, h)
			delete(s.tokenByID, e.id)
		}
		s.mu.Unlock()
		return User{}, ErrNotAuthorized
	}
	ms := now.UnixMilli()
	e.touch(ms)
	if !s.readOnly && e.claimWrite(ms, s.opts.AccessWriteInterval) {
		_, err := s.exec(context.WithoutCancel(ctx),
			"UPDATE tokens SET last_access = max(last_access, ?) WHERE id = ?", ms/1000, int64(e.id))
		if err != nil {
			s.log.Warn("auth: cannot save token last access; will retry", "tokenid", e.id, "err", err)
		}
	}
	return e.user, nil
}

// loadToken fills the cache from the database on a miss.
func (s *Store) loadToken(ctx context.Context, h secretHash, now time.Time) (*tokenEntry, error) {
	s.fillMu.Lock()
	defer s.fillMu.Unlock()
	s.mu.RLock()
	e := s.tokens[h]
	s.mu.RUnlock()
	if e != nil {
		return e, nil
	}
	var (
		u                           User
		id                          uint64
		status                      int
		expiresAt, lastAccessSecond int64
	)
	err := s.db.QueryRowContext(ctx, `SELECT t.id, t.status, t.expires_at, t.last_access, `+userCols+`
		FROM tokens t JOIN users u ON u.id = t.user_id `+userJoin+` WHERE t.token_hash = ? AND `+userEnabled, h.String()).
		Scan(append([]any{&id, &status, &expiresAt, &lastAccessSecond}, scanUser(&u)...)...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotAuthorized
	}
	if err != nil {
		return nil, fmt.Errorf("auth: cannot read token: %w", err)
	}
	if status != TokenEnabled || tokenExpired(expiresAt, now.Unix()) {
		return nil, ErrNotAuthorized
	}
	e = &tokenEntry{id: id, user: u, expiresAt: expiresAt}
	e.init(lastAccessSecond * 1000)
	s.mu.Lock()
	s.tokens[h] = e
	s.tokenByID[id] = h
	s.mu.Unlock()
	return e, nil
}

// dropTokenLocked removes a token from the cache. s.mu must be held for
// writing.
func (s *Store) dropTokenLocked(tokenID uint64) {
	if h, ok := s.tokenByID[tokenID]; ok {
		delete(s.tokens, h)
		delete(s.tokenByID, tokenID)
	}
}

// dropUserTokensLocked removes a user's tokens from the cache. s.mu must
// be held for writing.
func (s *Store) dropUserTokensLocked(userID uint64) {
	for h, e := range s.tokens {
		if e.user.ID == userID {
			delete(s.tokens, h)
			delete(s.tokenByID, e.id)
		}
	}
}

// affectedOne turns "no row changed" into ErrNotFound.
func affectedOne(res sql.Result, what string, id uint64) error {
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("auth: cannot change %s %d: %w", what, id, err)
	}
	if n == 0 {
		return fmt.Errorf("auth: %s %d: %w", what, id, ErrNotFound)
	}
	return nil
}
