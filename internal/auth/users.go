package auth

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Role is a Zabbix user type. The API layer decides which methods each
// role may call; this package only stores it.
type Role int

// The Zabbix user types.
const (
	RoleUser       Role = 1
	RoleAdmin      Role = 2
	RoleSuperAdmin Role = 3
)

// String returns the Zabbix name of the role.
func (r Role) String() string {
	switch r {
	case RoleUser:
		return "Zabbix User"
	case RoleAdmin:
		return "Zabbix Admin"
	case RoleSuperAdmin:
		return "Zabbix Super Admin"
	}
	return "Role(" + strconv.Itoa(int(r)) + ")"
}

// Valid reports whether r is one of the three Zabbix user types.
func (r Role) Valid() bool { return r >= RoleUser && r <= RoleSuperAdmin }

// User is an account. It carries no credentials.
type User struct {
	ID            uint64
	Username      string
	Name, Surname string
	Role          Role
}

// Limits on account fields.
const (
	maxUsernameLen    = 100  // characters, as Zabbix's users.username
	minPasswordLen    = 8    // characters, as Zabbix's default password policy
	maxPasswordBytes  = 1024 // bounds the work of hashing a new password
	adminUsername     = "Admin"
	adminPasswordLen  = 20
	passwordAlphabet  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	maxTokenNameLen   = 64 // characters, as Zabbix's token.name
	maxDescriptionLen = 65535
)

// checkUsername validates a user name: 1 to 100 characters of valid
// UTF-8, no control characters, and no leading or trailing white space
// (which would make "Admin " a look-alike of "Admin"). Names are
// case-sensitive, as in Zabbix.
func checkUsername(name string) error { return checkName("user name", name, maxUsernameLen) }

// checkName applies the rules of names people log in with or pick from a
// list (user and user group names): 1 to max characters of valid UTF-8,
// no control characters, no leading or trailing white space. what names
// the field in the error.
func checkName(what, name string, max int) error {
	n := utf8.RuneCountInString(name)
	switch {
	case n == 0:
		return fmt.Errorf("auth: %s is empty: %w", what, ErrInvalid)
	case n > max:
		return fmt.Errorf("auth: %s has %d characters, more than %d: %w", what, n, max, ErrInvalid)
	case !utf8.ValidString(name):
		return fmt.Errorf("auth: %s is not valid UTF-8: %w", what, ErrInvalid)
	case strings.TrimSpace(name) != name:
		return fmt.Errorf("auth: %s %q starts or ends with white space: %w", what, name, ErrInvalid)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return fmt.Errorf("auth: %s %q contains a control character: %w", what, name, ErrInvalid)
	}
	return nil
}

// checkPassword validates a new password. The message never quotes it.
func checkPassword(pw string) error {
	if n := utf8.RuneCountInString(pw); n < minPasswordLen {
		return fmt.Errorf("auth: password has %d characters, fewer than %d: %w", n, minPasswordLen, ErrInvalid)
	}
	if len(pw) > maxPasswordBytes {
		return fmt.Errorf("auth: password has %d bytes, more than %d: %w", len(pw), maxPasswordBytes, ErrInvalid)
	}
	return nil
}

// CreateUser creates a user with the given password and role. It returns
// ErrInvalid for a bad name (1 to 100 characters, see checkUsername),
// password (at least 8 characters) or role, and ErrExists if the name is
// taken.
func (s *Store) CreateUser(ctx context.Context, username, password string, role Role) (User, error) {
	if err := s.begin(); err != nil {
		return User{}, err
	}
	defer s.end()
	if err := checkUsername(username); err != nil {
		return User{}, err
	}
	if err := checkPassword(password); err != nil {
		return User{}, err
	}
	if !role.Valid() {
		return User{}, fmt.Errorf("auth: role %d is not 1 (user), 2 (admin) or 3 (super admin): %w", int(role), ErrInvalid)
	}
	// Hash first: it is slow and needs no lock.
	hash, err := s.h.hash(ctx, password)
	if err != nil {
		return User{}, err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return User{}, fmt.Errorf("auth: cannot create user %q: %w", username, err)
	}
	defer tx.Rollback()
	u, err := insertUser(ctx, tx, username, hash, role)
	if err != nil {
		return User{}, err
	}
	if err := tx.Commit(); err != nil {
		return User{}, fmt.Errorf("auth: cannot create user %q: %w", username, err)
	}
	s.log.Info("auth: user created", "userid", u.ID, "username", u.Username, "role", u.Role.String())
	return u, nil
}

// insertUser inserts a user in tx, which must be a write transaction
// (taken with the write lock, so the name check cannot race).
func insertUser(ctx context.Context, tx *sql.Tx, username, hash string, role Role) (User, error) {
	var one int
	err := tx.QueryRowContext(ctx, "SELECT 1 FROM users WHERE username = ?", username).Scan(&one)
	if err == nil {
		return User{}, fmt.Errorf("auth: user %q: %w", username, ErrExists)
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return User{}, fmt.Errorf("auth: cannot create user %q: %w", username, err)
	}
	res, err := tx.ExecContext(ctx, "INSERT INTO users (username, role, passwd) VALUES (?, ?, ?)", username, int(role), hash)
	if err != nil {
		return User{}, fmt.Errorf("auth: cannot create user %q: %w", username, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return User{}, fmt.Errorf("auth: cannot create user %q: %w", username, err)
	}
	return User{ID: uint64(id), Username: username, Role: role}, nil
}

// UpdatePassword sets a user's password. It also ends all of the user's
// sessions (whoever held one must log in with the new password) and
// clears the failed-login counter, which lifts a block. API tokens stay
// valid: they are separate credentials with their own lifecycle.
func (s *Store) UpdatePassword(ctx context.Context, userID uint64, password string) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	if err := checkPassword(password); err != nil {
		return err
	}
	hash, err := s.h.hash(ctx, password)
	if err != nil {
		return err
	}
	s.fillMu.Lock()
	defer s.fillMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("auth: cannot update the password of user %d: %w", userID, err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, "UPDATE users SET passwd = ?, attempt_failed = 0, attempt_ms = 0 WHERE id = ?", hash, int64(userID))
	if err != nil {
		return fmt.Errorf("auth: cannot update the password of user %d: %w", userID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("auth: cannot update the password of user %d: %w", userID, err)
	} else if n == 0 {
		return fmt.Errorf("auth: user %d: %w", userID, ErrNotFound)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM sessions WHERE user_id = ?", int64(userID)); err != nil {
		return fmt.Errorf("auth: cannot end the sessions of user %d: %w", userID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("auth: cannot update the password of user %d: %w", userID, err)
	}
	s.mu.Lock()
	s.dropUserSessionsLocked(userID)
	s.mu.Unlock()
	s.log.Info("auth: password changed; sessions ended", "userid", userID)
	return nil
}

// DeleteUser deletes a user with its sessions and API tokens. Deleting
// the last super admin is refused (ErrInvalid): nobody could manage
// users afterwards, and EnsureAdmin only acts on an empty user table.
func (s *Store) DeleteUser(ctx context.Context, userID uint64) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	s.fillMu.Lock()
	defer s.fillMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("auth: cannot delete user %d: %w", userID, err)
	}
	defer tx.Rollback()
	var role int
	err = tx.QueryRowContext(ctx, "SELECT role FROM users WHERE id = ?", int64(userID)).Scan(&role)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("auth: user %d: %w", userID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("auth: cannot delete user %d: %w", userID, err)
	}
	if Role(role) == RoleSuperAdmin {
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM users WHERE role = ?", int(RoleSuperAdmin)).Scan(&n); err != nil {
			return fmt.Errorf("auth: cannot delete user %d: %w", userID, err)
		}
		if n <= 1 {
			return fmt.Errorf("auth: user %d is the last super admin; create another one first: %w", userID, ErrInvalid)
		}
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM users WHERE id = ?", int64(userID)); err != nil {
		return fmt.Errorf("auth: cannot delete user %d: %w", userID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("auth: cannot delete user %d: %w", userID, err)
	}
	s.mu.Lock()
	s.dropUserSessionsLocked(userID)
	s.dropUserTokensLocked(userID)
	s.mu.Unlock()
	s.log.Info("auth: user deleted", "userid", userID)
	return nil
}

// Users returns all users ordered by ID.
func (s *Store) Users(ctx context.Context) ([]User, error) {
	if err := s.begin(); err != nil {
		return nil, err
	}
	defer s.end()
	rows, err := s.db.QueryContext(ctx, "SELECT id, username, name, surname, role FROM users ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("auth: cannot list users: %w", err)
	}
	defer rows.Close()
	var users []User
	for rows.Next() {
		var u User
		if err := rows.Scan(&u.ID, &u.Username, &u.Name, &u.Surname, &u.Role); err != nil {
			return nil, fmt.Errorf("auth: cannot list users: %w", err)
		}
		users = append(users, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("auth: cannot list users: %w", err)
	}
	return users, nil
}

// EnsureAdmin bootstraps a fresh installation. If there is no user at
// all, it creates the super admin "Admin" with a random 20-character
// password, writes that password (followed by a newline) to a new file
// passwordPath with mode 0600, and returns created=true. The file must
// not exist: it is never overwritten, so a password cannot be lost by a
// second start. If any user exists, EnsureAdmin does nothing.
//
// The caller should log where the file is and ask the operator to read
// it, change the password and delete the file; the password itself is
// never logged.
func (s *Store) EnsureAdmin(ctx context.Context, passwordPath string) (created bool, err error) {
	if err := s.begin(); err != nil {
		return false, err
	}
	defer s.end()
	// One bootstrap at a time, so that two concurrent callers cannot both
	// see an empty table and race for the file.
	s.ensureMu.Lock()
	defer s.ensureMu.Unlock()
	var n int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM users").Scan(&n); err != nil {
		return false, fmt.Errorf("auth: cannot count users: %w", err)
	}
	if n > 0 {
		return false, nil
	}
	password, err := randomPassword(adminPasswordLen)
	if err != nil {
		return false, err
	}
	hash, err := s.h.hash(ctx, password)
	if err != nil {
		return false, err
	}
	// The file is written before the user exists: if the write fails we
	// have created nothing, and if creating the user fails we remove the
	// file, so the next start tries again from scratch.
	if err := writeSecretFile(passwordPath, password+"\n"); err != nil {
		return false, err
	}
	keep := false
	defer func() {
		if !keep {
			os.Remove(passwordPath)
		}
	}()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("auth: cannot create user %s: %w", adminUsername, err)
	}
	defer tx.Rollback()
	// Count again under the write lock: another caller may have created
	// a user since the first count.
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM users").Scan(&n); err != nil {
		return false, fmt.Errorf("auth: cannot count users: %w", err)
	}
	if n > 0 {
		return false, nil
	}
	u, err := insertUser(ctx, tx, adminUsername, hash, RoleSuperAdmin)
	if err != nil {
		return false, err
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("auth: cannot create user %s: %w", adminUsername, err)
	}
	keep = true
	s.log.Info("auth: initial super admin created", "userid", u.ID, "username", u.Username)
	return true, nil
}

// writeSecretFile creates path exclusively with mode 0600 and writes
// content to it durably.
func writeSecretFile(path, content string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("auth: cannot write the initial admin password: %s exists already; it may hold the password of an earlier installation: move it away and restart: %w", path, ErrExists)
		}
		return fmt.Errorf("auth: cannot write the initial admin password: %w", err)
	}
	_, err = f.WriteString(content)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("auth: cannot write the initial admin password to %s: %w", path, err)
	}
	return nil
}

// randomPassword returns n characters drawn uniformly from
// passwordAlphabet (about 5.95 bits each) with crypto/rand.
func randomPassword(n int) (string, error) {
	const limit = 256 - 256%len(passwordAlphabet) // rejection bound for uniformity
	out := make([]byte, 0, n)
	var buf [64]byte
	for len(out) < n {
		if _, err := rand.Read(buf[:]); err != nil {
			return "", fmt.Errorf("auth: cannot read random bytes: %w", err)
		}
		for _, b := range buf {
			if int(b) < limit && len(out) < n {
				out = append(out, passwordAlphabet[int(b)%len(passwordAlphabet)])
			}
		}
	}
	return string(out), nil
}

// SetRole changes a user's role. Demoting the last super admin is refused
// (ErrInvalid), for the reason DeleteUser refuses to delete it. The
// user's cached sessions and tokens are dropped from memory so that the
// next request reloads them with the new role; they stay valid.
func (s *Store) SetRole(ctx context.Context, userID uint64, role Role) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	if !role.Valid() {
		return fmt.Errorf("auth: role %d is not 1 (user), 2 (admin) or 3 (super admin): %w", int(role), ErrInvalid)
	}
	s.fillMu.Lock()
	defer s.fillMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("auth: cannot change the role of user %d: %w", userID, err)
	}
	defer tx.Rollback()
	var old int
	err = tx.QueryRowContext(ctx, "SELECT role FROM users WHERE id = ?", int64(userID)).Scan(&old)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("auth: user %d: %w", userID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("auth: cannot change the role of user %d: %w", userID, err)
	}
	if Role(old) == role {
		return nil
	}
	if Role(old) == RoleSuperAdmin {
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM users WHERE role = ?", int(RoleSuperAdmin)).Scan(&n); err != nil {
			return fmt.Errorf("auth: cannot change the role of user %d: %w", userID, err)
		}
		if n <= 1 {
			return fmt.Errorf("auth: user %d is the last super admin; promote another one first: %w", userID, ErrInvalid)
		}
	}
	if _, err := tx.ExecContext(ctx, "UPDATE users SET role = ? WHERE id = ?", int(role), int64(userID)); err != nil {
		return fmt.Errorf("auth: cannot change the role of user %d: %w", userID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("auth: cannot change the role of user %d: %w", userID, err)
	}
	s.mu.Lock()
	s.dropUserSessionsLocked(userID)
	s.dropUserTokensLocked(userID)
	s.mu.Unlock()
	s.log.Info("auth: role changed", "userid", userID, "role", role.String())
	return nil
}
