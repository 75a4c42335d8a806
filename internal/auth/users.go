package auth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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

// User is an account as a request sees it. It carries no credentials.
type User struct {
	ID            uint64
	Username      string
	Name, Surname string
	// Role is the user type: the type of the user's role, RoleID.
	Role   Role
	RoleID uint64
}

// Profile is the rest of an account, as Zabbix 6.0's user object has
// it: stored and returned; Peregrine's web UI does not use it yet.
type Profile struct {
	URL         string
	Autologin   int    // 0, 1
	Autologout  string // "0" (never) or 90s..1d
	Lang        string // "default" or a locale
	Refresh     string // 0..1h
	Theme       string // "default", "blue-theme", "dark-theme", ...
	RowsPerPage int    // 1..999999
	Timezone    string // "default" or a time zone name
	// The last login attempt: consecutive failures, the client address
	// and the time (Unix seconds; 0: never).
	AttemptFailed int
	AttemptIP     string
	AttemptClock  int64
}

// NewProfile is the profile Zabbix 6.0 gives a new user.
func NewProfile() Profile {
	return Profile{Autologout: "15m", Lang: "default", Refresh: "30s", Theme: "default", RowsPerPage: 50, Timezone: "default"}
}

// Account is a user with their profile (Accounts).
type Account struct {
	User
	Profile
}

// userCols are the columns of a User, for scanUser, from users u joined
// with role r.
const userCols = "u.id, u.username, u.name, u.surname, u.role_id, r.type"

// userJoin joins a user's role.
const userJoin = "JOIN role r ON r.id = u.role_id"

func scanUser(u *User) []any {
	return []any{&u.ID, &u.Username, &u.Name, &u.Surname, &u.RoleID, &u.Role}
}

// Limits on account fields.
const (
	maxUsernameLen    = 100  // characters, as Zabbix's users.username
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

// TooLongError is a name longer than its limit; it is an ErrInvalid.
// The API answers it as 6.0 does, naming the member ("/1/name": value
// is too long.).
type TooLongError struct {
	What     string // "user name", "user group name", "role name", "token name"
	Len, Max int
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("auth: %s has %d characters, more than %d: %v", e.What, e.Len, e.Max, ErrInvalid)
}

func (e *TooLongError) Unwrap() error { return ErrInvalid }

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
		return &TooLongError{What: what, Len: n, Max: max}
	case !utf8.ValidString(name):
		return fmt.Errorf("auth: %s is not valid UTF-8: %w", what, ErrInvalid)
	case strings.TrimSpace(name) != name:
		return fmt.Errorf("auth: %s %q starts or ends with white space: %w", what, name, ErrInvalid)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return fmt.Errorf("auth: %s %q contains a control character: %w", what, name, ErrInvalid)
	}
	return nil
}

// NewAccount is a user to create (CreateAccount).
type NewAccount struct {
	Username, Password string
	Name, Surname      string
	RoleID             uint64
	// Profile: the zero Profile stands for NewProfile().
	Profile Profile
}

// CreateUser creates a user with the given password and the role whose
// ID is t's number: the default roles 1, 2 and 3 are of the user types
// 1, 2 and 3. See CreateAccount.
func (s *Store) CreateUser(ctx context.Context, username, password string, t Role) (User, error) {
	if !t.Valid() {
		return User{}, fmt.Errorf("auth: role %d is not 1 (user), 2 (admin) or 3 (super admin): %w", int(t), ErrInvalid)
	}
	return s.CreateAccount(ctx, NewAccount{Username: username, Password: password, RoleID: uint64(t)})
}

// CreateAccount creates a user. It returns ErrInvalid for a bad name (1
// to 100 characters, see checkUsername) or a password the policy
// refuses (*PasswordError), ErrNotFound for an unknown role and
// ErrExists if the name is taken. A user created without a password
// (Zabbix 6.0 allows it) cannot log in until one is set.
func (s *Store) CreateAccount(ctx context.Context, a NewAccount) (User, error) {
	if err := s.begin(); err != nil {
		return User{}, err
	}
	defer s.end()
	if err := checkUsername(a.Username); err != nil {
		return User{}, err
	}
	if a.Password != "" {
		if err := s.checkPassword(ctx, a.Password, a.Username, a.Name, a.Surname); err != nil {
			return User{}, err
		}
	}
	roles, err := s.roleMap(ctx)
	if err != nil {
		return User{}, err
	}
	if roles[a.RoleID] == nil {
		return User{}, fmt.Errorf("auth: role %d: %w", a.RoleID, ErrNotFound)
	}
	if a.Profile == (Profile{}) {
		a.Profile = NewProfile()
	}
	// Hash first: it is slow and needs no lock. No password is no hash:
	// nothing opens the account (Login).
	var hash string
	if a.Password != "" {
		if hash, err = s.h.hash(ctx, a.Password); err != nil {
			return User{}, err
		}
	}
	tx, err := s.tx(ctx)
	if err != nil {
		return User{}, fmt.Errorf("auth: cannot create user %q: %w", a.Username, err)
	}
	defer tx.Rollback()
	u, err := insertUser(ctx, tx, 0, a, hash)
	if err != nil {
		return User{}, err
	}
	if err := tx.Commit(); err != nil {
		return User{}, fmt.Errorf("auth: cannot create user %q: %w", a.Username, err)
	}
	s.log.Info("auth: user created", "userid", u.ID, "username", u.Username, "roleid", u.RoleID)
	return u, nil
}

// insertUser inserts a user in tx, which must be a write transaction
// (taken with the write lock, so the name check cannot race), with ID
// id (0: the next one) and the stored hash (empty: no password login).
func insertUser(ctx context.Context, tx *sql.Tx, id uint64, a NewAccount, hash string) (User, error) {
	var one int
	err := tx.QueryRowContext(ctx, "SELECT 1 FROM users WHERE username = ?", a.Username).Scan(&one)
	if err == nil {
		return User{}, fmt.Errorf("auth: user %q: %w", a.Username, ErrExists)
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return User{}, fmt.Errorf("auth: cannot create user %q: %w", a.Username, err)
	}
	var t Role
	if err := tx.QueryRowContext(ctx, "SELECT type FROM role WHERE id = ?", int64(a.RoleID)).Scan(&t); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return User{}, fmt.Errorf("auth: role %d: %w", a.RoleID, ErrNotFound)
		}
		return User{}, fmt.Errorf("auth: cannot create user %q: %w", a.Username, err)
	}
	p := a.Profile
	var idArg any
	if id != 0 {
		idArg = int64(id)
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO users (id, username, name, surname, role_id, passwd, url, autologin, autologout,
		lang, refresh, theme, rows_per_page, timezone) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		idArg, a.Username, a.Name, a.Surname, int64(a.RoleID), hash, p.URL, p.Autologin, p.Autologout,
		p.Lang, p.Refresh, p.Theme, p.RowsPerPage, p.Timezone)
	if err != nil {
		return User{}, fmt.Errorf("auth: cannot create user %q: %w", a.Username, err)
	}
	newID, err := res.LastInsertId()
	if err != nil {
		return User{}, fmt.Errorf("auth: cannot create user %q: %w", a.Username, err)
	}
	return User{ID: uint64(newID), Username: a.Username, Name: a.Name, Surname: a.Surname, RoleID: a.RoleID, Role: t}, nil
}

// AccountUpdate changes the fields of user ID that are set; nil keeps
// the value. A password is changed with UpdatePassword.
type AccountUpdate struct {
	ID uint64
	// Username, if set, renames the user; a name another user has gives
	// ErrExists.
	Username                 *string
	Name, Surname            *string
	RoleID                   *uint64
	URL                      *string
	Autologin                *int
	Autologout, Lang         *string
	Refresh, Theme, Timezone *string
	RowsPerPage              *int
}

// UpdateAccount changes a user. An unknown user or role gives
// ErrNotFound; taking the super admin type from the last super admin
// ErrInvalid. A changed role takes effect at the user's next request
// (their cached sessions and tokens are dropped; they stay valid).
func (s *Store) UpdateAccount(ctx context.Context, up AccountUpdate) error {
	if up.Username != nil {
		if err := checkUsername(*up.Username); err != nil {
			return err
		}
	}
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	s.fillMu.Lock()
	defer s.fillMu.Unlock()
	tx, err := s.tx(ctx)
	if err != nil {
		return fmt.Errorf("auth: cannot update user %d: %w", up.ID, err)
	}
	defer tx.Rollback()
	var one int
	err = tx.QueryRowContext(ctx, "SELECT 1 FROM users WHERE id = ?", int64(up.ID)).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("auth: user %d: %w", up.ID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("auth: cannot update user %d: %w", up.ID, err)
	}
	supers, err := superAdmins(ctx, tx)
	if err != nil {
		return err
	}
	if up.Username != nil {
		err := tx.QueryRowContext(ctx, "SELECT 1 FROM users WHERE username = ? AND id != ?", *up.Username, int64(up.ID)).Scan(&one)
		if err == nil {
			return fmt.Errorf("auth: user %q: %w", *up.Username, ErrExists)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("auth: cannot update user %d: %w", up.ID, err)
		}
	}
	if up.RoleID != nil {
		err := tx.QueryRowContext(ctx, "SELECT 1 FROM role WHERE id = ?", int64(*up.RoleID)).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("auth: role %d: %w", *up.RoleID, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("auth: cannot update user %d: %w", up.ID, err)
		}
	}
	for _, f := range []struct {
		col string
		v   any
	}{{"username", up.Username}, {"name", up.Name}, {"surname", up.Surname}, {"role_id", up.RoleID}, {"url", up.URL}, {"autologin", up.Autologin},
		{"autologout", up.Autologout}, {"lang", up.Lang}, {"refresh", up.Refresh}, {"theme", up.Theme},
		{"timezone", up.Timezone}, {"rows_per_page", up.RowsPerPage}} {
		var v any
		switch p := f.v.(type) {
		case *string:
			if p != nil {
				v = *p
			}
		case *int:
			if p != nil {
				v = *p
			}
		case *uint64:
			if p != nil {
				v = int64(*p)
			}
		}
		if v == nil {
			continue
		}
		if _, err := tx.ExecContext(ctx, "UPDATE users SET "+f.col+" = ? WHERE id = ?", v, int64(up.ID)); err != nil {
			return fmt.Errorf("auth: cannot update user %d: %w", up.ID, err)
		}
	}
	if n, err := superAdmins(ctx, tx); err != nil {
		return err
	} else if supers > 0 && n == 0 {
		return fmt.Errorf("auth: user %d is the last super admin; promote another one first: %w", up.ID, ErrInvalid)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("auth: cannot update user %d: %w", up.ID, err)
	}
	s.mu.Lock()
	s.dropUserSessionsLocked(up.ID)
	s.dropUserTokensLocked(up.ID)
	s.mu.Unlock()
	return nil
}

// SetRole gives a user the role whose ID is t's number (see
// CreateUser). Demoting the last super admin is refused (ErrInvalid),
// for the reason DeleteUser refuses to delete it.
func (s *Store) SetRole(ctx context.Context, userID uint64, t Role) error {
	if !t.Valid() {
		return fmt.Errorf("auth: role %d is not 1 (user), 2 (admin) or 3 (super admin): %w", int(t), ErrInvalid)
	}
	id := uint64(t)
	return s.UpdateAccount(ctx, AccountUpdate{ID: userID, RoleID: &id})
}

// UpdatePassword sets a user's password. It also ends all of the user's
// sessions (whoever held one must log in with the new password) and
// clears the failed-login counter, which lifts a block. API tokens stay
// valid: they are separate credentials with their own lifecycle. The
// password policy applies (*PasswordError).
func (s *Store) UpdatePassword(ctx context.Context, userID uint64, password string) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	var u User
	err := s.db.QueryRowContext(ctx, "SELECT "+userCols+" FROM users u "+userJoin+" WHERE u.id = ?", int64(userID)).Scan(scanUser(&u)...)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("auth: user %d: %w", userID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("auth: cannot update the password of user %d: %w", userID, err)
	}
	if err := s.checkPassword(ctx, password, u.Username, u.Name, u.Surname); err != nil {
		return err
	}
	hash, err := s.h.hash(ctx, password)
	if err != nil {
		return err
	}
	s.fillMu.Lock()
	defer s.fillMu.Unlock()
	tx, err := s.tx(ctx)
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
	tx, err := s.tx(ctx)
	if err != nil {
		return fmt.Errorf("auth: cannot delete user %d: %w", userID, err)
	}
	defer tx.Rollback()
	supers, err := superAdmins(ctx, tx)
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, "DELETE FROM users WHERE id = ?", int64(userID))
	if err != nil {
		return fmt.Errorf("auth: cannot delete user %d: %w", userID, err)
	}
	if err := affectedOne(res, "user", userID); err != nil {
		return err
	}
	if n, err := superAdmins(ctx, tx); err != nil {
		return err
	} else if supers > 0 && n == 0 {
		return fmt.Errorf("auth: user %d is the last super admin; create another one first: %w", userID, ErrInvalid)
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
	as, err := s.Accounts(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]User, len(as))
	for i := range as {
		out[i] = as[i].User
	}
	return out, nil
}

// Accounts returns all users with their profiles, ordered by ID.
func (s *Store) Accounts(ctx context.Context) ([]Account, error) {
	if err := s.begin(); err != nil {
		return nil, err
	}
	defer s.end()
	rows, err := s.db.QueryContext(ctx, "SELECT "+userCols+`, u.url, u.autologin, u.autologout, u.lang, u.refresh, u.theme,
		u.rows_per_page, u.timezone, u.attempt_failed, u.attempt_ip, u.attempt_ms FROM users u `+userJoin+" ORDER BY u.id")
	if err != nil {
		return nil, fmt.Errorf("auth: cannot list users: %w", err)
	}
	defer rows.Close()
	var out []Account
	for rows.Next() {
		var a Account
		var ms int64
		p := &a.Profile
		dst := append(scanUser(&a.User), &p.URL, &p.Autologin, &p.Autologout, &p.Lang, &p.Refresh, &p.Theme,
			&p.RowsPerPage, &p.Timezone, &p.AttemptFailed, &p.AttemptIP, &ms)
		if err := rows.Scan(dst...); err != nil {
			return nil, fmt.Errorf("auth: cannot list users: %w", err)
		}
		p.AttemptClock = ms / 1000
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("auth: cannot list users: %w", err)
	}
	return out, nil
}
