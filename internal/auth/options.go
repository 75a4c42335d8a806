package auth

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/peregrine-mon/peregrine/internal/sqlitedb"
)

// Errors returned by the Store. They are sentinels: check with errors.Is,
// since most are wrapped with context (a user name, a token ID).
//
// The API layer maps them to the Zabbix texts (spec section 5.2):
// ErrBadCredentials and ErrBlocked both to "Incorrect user name or
// password or account is temporarily blocked.", ErrSessionExpired to
// "Session terminated, re-login, please." and ErrNotAuthorized to "Not
// authorized.".
var (
	// ErrBadCredentials: the user does not exist or the password is
	// wrong. The two cases are deliberately indistinguishable.
	ErrBadCredentials = errors.New("incorrect user name or password")
	// ErrBlocked: the account had Options.MaxFailures consecutive failed
	// logins and Options.BlockFor has not passed since the last one.
	ErrBlocked = errors.New("account is temporarily blocked")
	// ErrSessionExpired: the session exists but was idle for longer than
	// Options.SessionIdle.
	ErrSessionExpired = errors.New("session expired")
	// ErrDisabled: the user is a member of a disabled user group
	// (users_status 1) and may not log in.
	ErrDisabled = errors.New("user is disabled by a user group")
	// ErrNotAuthorized: the secret is neither a live session nor an
	// enabled, unexpired API token.
	ErrNotAuthorized = errors.New("not authorized")
	// ErrExists: a user with that name, or a token with that name for
	// that user, exists already.
	ErrExists = errors.New("already exists")
	// ErrNotFound: no user or token with that ID.
	ErrNotFound = errors.New("not found")
	// ErrInvalid: an argument failed validation; the wrapping message
	// names it.
	ErrInvalid = errors.New("invalid argument")
	// ErrReadOnly: the role may not be changed or deleted (Zabbix's
	// super admin role).
	ErrReadOnly = errors.New("read-only")
	// ErrInUse: the role is some user's and cannot be deleted.
	ErrInUse = errors.New("in use")
	// ErrClosed is returned by every method after Close.
	ErrClosed = errors.New("auth store is closed")
	// ErrLocked is returned by Open when another process (or another
	// Store in this process) has the database open.
	ErrLocked = errors.New("auth database is in use by another process")
	// ErrCorrupt marks database content that Peregrine could not have
	// written, such as a malformed password hash.
	ErrCorrupt = errors.New("auth database is corrupt")
)

// Options configures Open. Zero values take the documented defaults.
type Options struct {
	// Path is the SQLite database file, e.g. data/auth.db. Required. It
	// is separate from the catalog database, so that configuration can be
	// exported or replaced without touching credentials. It is created
	// with the schema if missing; its directory must exist. SQLite keeps
	// Path-wal and Path-shm beside it, and Open takes a lock on
	// Path.lock.
	Path string
	// Postgres, when set, keeps the store in PostgreSQL instead
	// (state.store: postgres; sqlitedb.OpenPG): schema peregrine_auth,
	// every write transaction fenced by the HA lease. Path then only
	// names the store in messages. Open it on the active node only.
	Postgres *sqlitedb.PG
	// SessionIdle is how long a session may go unused before it expires.
	// Default 15m (the Zabbix default).
	SessionIdle time.Duration
	// MaxFailures is the number of consecutive failed logins after which
	// an account is blocked. Default 5 (the Zabbix default).
	MaxFailures int
	// BlockFor is how long a blocked account stays blocked, counted from
	// the last failed attempt. Default 30s (the Zabbix default).
	BlockFor time.Duration
	// FailDelay is the least time a failed login takes to answer: the
	// answer is held until FailDelay has passed since the attempt began.
	// This slows guessing and also evens out the time the different
	// failure paths take (unknown user, wrong password, blocked), as long
	// as FailDelay exceeds the work they do. Default 1s; a negative value
	// disables the delay (tests).
	FailDelay time.Duration
	// HashParams are the argon2id parameters for new password hashes.
	// Zero fields take DefaultHashParams. Tests use tiny values such as
	// {Memory: 64, Time: 1, Threads: 1}.
	HashParams HashParams
	// MaxConcurrentHashes bounds the number of password hashes computed
	// at once; each holds HashParams.Memory KiB while it runs. Default
	// min(GOMAXPROCS, 4). Logins beyond it wait.
	MaxConcurrentHashes int
	// AccessWriteInterval is how often, at most, the last-access time of
	// one session or token is written to the database. Default 1m. See
	// the package documentation for the trade-off.
	AccessWriteInterval time.Duration
	// Now returns the current time; expiry and blocking use it. The fail
	// delay always uses the real clock. Default time.Now.
	Now func() time.Time
	// Logger receives account blocks and database problems, never a
	// password, session id or token secret. Default: discard.
	Logger *slog.Logger
}

// Default values of Options fields.
const (
	DefaultSessionIdle         = 15 * time.Minute
	DefaultMaxFailures         = 5
	DefaultBlockFor            = 30 * time.Second
	DefaultFailDelay           = time.Second
	DefaultAccessWriteInterval = time.Minute
)

// withDefaults returns o with defaults applied, or an error naming the
// field to fix.
func (o Options) withDefaults() (Options, error) {
	if o.Path == "" && o.Postgres != nil {
		o.Path = "PostgreSQL"
	}
	if o.Path == "" {
		return o, fmt.Errorf("auth: Options.Path must name the database file: %w", ErrInvalid)
	}
	for _, f := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"SessionIdle", &o.SessionIdle, DefaultSessionIdle},
		{"BlockFor", &o.BlockFor, DefaultBlockFor},
		{"AccessWriteInterval", &o.AccessWriteInterval, DefaultAccessWriteInterval},
	} {
		if *f.v < 0 {
			return o, fmt.Errorf("auth: Options.%s is %v; it must not be negative: %w", f.name, *f.v, ErrInvalid)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if o.FailDelay == 0 {
		o.FailDelay = DefaultFailDelay
	}
	if o.MaxFailures < 0 {
		return o, fmt.Errorf("auth: Options.MaxFailures is %d; it must not be negative: %w", o.MaxFailures, ErrInvalid)
	}
	if o.MaxFailures == 0 {
		o.MaxFailures = DefaultMaxFailures
	}
	if o.MaxConcurrentHashes < 0 {
		return o, fmt.Errorf("auth: Options.MaxConcurrentHashes is %d; it must not be negative: %w", o.MaxConcurrentHashes, ErrInvalid)
	}
	if o.MaxConcurrentHashes == 0 {
		o.MaxConcurrentHashes = min(runtime.GOMAXPROCS(0), 4)
	}
	o.HashParams = o.HashParams.withDefaults()
	if err := o.HashParams.validate(); err != nil {
		return o, fmt.Errorf("auth: Options.HashParams: %v: %w", err, ErrInvalid)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}
