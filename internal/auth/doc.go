// Package auth owns the identities and credentials behind Peregrine's
// Zabbix-compatible JSON-RPC API and web UI: users, their passwords,
// login sessions and API tokens, persisted in an SQLite database of their
// own (Options.Path, e.g. data/auth.db, separate from the catalog), or
// with Options.Postgres in PostgreSQL (schema peregrine_auth,
// sqlitedb.OpenPG: the same statements, every write transaction fenced
// by the HA lease; opened read-only, sqlitedb.PG.ReadOnly, as an HA
// standby, it writes nothing, not even pruning or last-access times,
// refuses Login with sqlitedb.ErrReadOnly — a session is made on the
// active node and used on any — and Reload, on the standby's poll,
// drops its caches so that it follows the active node's changes;
// reload.go says how a session used on a standby stays live there.
// Its one write is Logout, the session's row deleted without the
// lease, and the active node's DropEnded drops such sessions from its
// cache: logout.go says why that is safe).
// The api package (and later the web UI) use the *Store directly: its User,
// Role and sentinel errors are the ones they work with, so there is no
// translation layer between them.
//
// # What it owns
//
//   - Users: name, Zabbix 6.0 role (RoleID; the role's type, 1..3, is
//     User.Role), the profile fields of Zabbix's user object (stored),
//     the last login attempt (time, client address from WithClientIP),
//     and an argon2id password hash stored as a PHC string with its own
//     salt and cost parameters (hash.go). Passwords are never stored,
//     logged or put in errors. New passwords pass the password policy
//     of authentication.get (settings.go: length, character classes, not
//     the user's names; not Zabbix's dictionary of common passwords).
//   - Roles (roles.go): Zabbix 6.0's user roles 1-4 exist in every
//     database with their IDs (schema version 3 turned the user types
//     1..3 of existing users into roles 1..3); role rules stored as
//     Zabbix stores them (a default per kind of element and the
//     elements that differ) and changed as it changes them
//     (RoleRules.Apply). Which methods the rules allow is the API's.
//   - Bootstrap (bootstrap.go): EnsureAdmin gives an empty installation
//     a super admin "Admin" (user 1, role 3) whose random password is
//     written once to a 0600 file, not Zabbix's well-known one;
//     EnsureDefaults then adds, once per database, Zabbix's default user
//     groups with their IDs (7, 8, 9, 11, 12), the guest user (2, role
//     4, disabled, without a password) and Admin in group 7, or on an
//     older database what of them is missing by name.
//   - Settings (settings.go): Zabbix's config table behind
//     settings.get, housekeeping.get and authentication.get: the
//     members changed, the others read as 6.0's defaults. The store
//     uses the login policy (login_attempts, login_block) and the
//     password policy; the server reads the rest.
//   - Login policy: consecutive failed logins per user, a temporary
//     block after Options.MaxFailures of them (persisted, so a restart
//     does not lift it), a minimum answer time for failures
//     (Options.FailDelay), and identical answers and timing for an
//     unknown user and a wrong password.
//   - Sessions, as user.login creates them: 32 lowercase hex digits, valid
//     while used at least every Options.SessionIdle. They survive a
//     restart.
//   - API tokens, as token.create and token.generate manage them: 64
//     lowercase hex digits, with an optional expiry and a status.
//   - Session ids and token secrets are stored only as SHA-256 hashes.
//   - User groups (usergroups.go): members, Zabbix's users_status (1
//     disables every member: no login, and their sessions and tokens stop
//     authenticating), gui_access and debug_mode (stored), and rights:
//     read (2), read-write (3) or deny (0) on host groups, named by the
//     catalog's host group IDs.
//   - Dashboards (dashboards.go): Zabbix 6.0's global dashboards with
//     their pages, widgets and shares with users and user groups, kept
//     here rather than in the catalog because what they belong to and
//     are shared with (users, groups) lives here: deleting a user or a
//     group drops its shares in the same transaction, and user.delete's
//     owner check reads the same database. Widget fields name catalog
//     objects by ID, checked by the API. EnsureDefaults adds 6.0's
//     dashboards 1 "Global view" and 2 "Zabbix server health".
//   - Rights (rights.go): a user's effective permissions, combined as
//     Zabbix does. Per host group, a deny in any of the user's groups
//     wins, otherwise the highest permission. Per host (Rights.Host),
//     host groups no user group mentions do not count, a deny on any of
//     the others denies, otherwise the highest wins. A super admin has
//     every right; a user in no user group none.
//
// # What it does not own
//
// Applying authorisation. The package answers "who is this?"
// (Authenticate) and "what may they do with each host group?" (Rights),
// and stores each user's Role; which API methods a role may call, which
// hosts, items and values a request may touch, and the Zabbix error
// texts and codes, belong to the API layer (internal/api), which maps
// ErrBadCredentials and ErrBlocked to "Incorrect user name or password
// or account is temporarily blocked.", ErrSessionExpired to "Session
// terminated, re-login, please." and ErrNotAuthorized to "Not
// authorized.". Host groups live in the catalog: rights of a deleted host
// group stay here and simply match no host. There are no tag filters,
// LDAP, SAML or MFA. Rate limiting by client address is the HTTP layer's job; this
// package limits guessing per account.
//
// # Sessions and the cache
//
// Authenticate runs on every API request, so live sessions and tokens
// are cached in memory, keyed by the SHA-256 of the secret. A cache hit
// reads no database and writes the last-access time to it at most once
// per Options.AccessWriteInterval (default 1m) per session or token;
// Close writes what is pending. After a crash, a session's idle time can
// therefore be overstated by up to that interval (it may expire up to a
// minute early). A miss (after a restart, or for a secret that matches
// nothing) reads the database once. Expired sessions stay in the database
// for a day, answering ErrSessionExpired, and are then pruned during
// logins.
//
// Only one Store may have a database open (a lock file enforces it): the
// caches assume that nobody else deletes sessions or tokens.
//
// # Concurrency contract
//
// A Store is safe for concurrent use by any number of goroutines. Cache
// hits in Authenticate take two read locks and atomics only. Password
// hashing runs outside every lock, at most Options.MaxConcurrentHashes at
// a time, each holding HashParams.Memory. Changes that invalidate cached
// entries (Logout, UpdatePassword, DeleteUser, GenerateToken,
// SetTokenStatus, DeleteToken) take effect for all callers when they
// return; an Authenticate running concurrently with them may still succeed
// once. Close waits for running calls to finish (a failed Login may hold
// it for up to FailDelay); afterwards every method returns ErrClosed.
//
// Rights are cached per user and the whole cache is dropped by every
// change to user groups or memberships; a Rights value is immutable.
//
// Roles and settings are cached whole (atomic pointers, dropped by every
// change with a counter against stale fills); a role change drops every
// cached session and token, since they carry their user's type.
//
// Lock order: Store.ops, then Store.ensureMu, then Store.fillMu, then
// Store.mu, then Store.rightsMu (store.go).
package auth
