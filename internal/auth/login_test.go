package auth

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestLoginAuthenticateLogout(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	u := mustCreateUser(t, e.s, "alice", "s3cret-password", RoleAdmin)

	if _, _, err := e.s.Login(ctx, "alice", "wrong-password"); !errors.Is(err, ErrBadCredentials) {
		t.Fatalf("Login(wrong password): %v, want ErrBadCredentials", err)
	}
	sid, got, err := e.s.Login(ctx, "alice", "s3cret-password")
	if err != nil {
		t.Fatalf("Login: %v", err)
	}
	if got != u {
		t.Fatalf("Login user = %+v, want %+v", got, u)
	}
	if !isLowerHex(sid, 32) {
		t.Fatalf("session id %q is not 32 lowercase hex digits", sid)
	}
	if got, err := e.s.Authenticate(ctx, sid); err != nil || got != u {
		t.Fatalf("Authenticate = %+v, %v; want %+v", got, err, u)
	}
	if err := e.s.Logout(ctx, sid); err != nil {
		t.Fatalf("Logout: %v", err)
	}
	if _, err := e.s.Authenticate(ctx, sid); !errors.Is(err, ErrNotAuthorized) {
		t.Fatalf("Authenticate after Logout: %v, want ErrNotAuthorized", err)
	}
	if err := e.s.Logout(ctx, sid); !errors.Is(err, ErrNotAuthorized) {
		t.Fatalf("second Logout: %v, want ErrNotAuthorized", err)
	}
	// Two logins give two independent sessions.
	a, b := mustLogin(t, e.s, "alice", "s3cret-password"), mustLogin(t, e.s, "alice", "s3cret-password")
	if a == b {
		t.Fatal("two logins returned the same session id")
	}
	if err := e.s.Logout(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Authenticate(ctx, b); err != nil {
		t.Fatalf("other session after Logout: %v", err)
	}
}

func TestAuthenticateMalformed(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	mustCreateUser(t, e.s, "alice", "s3cret-password", RoleUser)
	sid := mustLogin(t, e.s, "alice", "s3cret-password")
	for _, secret := range []string{
		"", "x", "alice", "s3cret-password",
		strings.Repeat("A", 32),            // session ids are lowercase
		sid + "0",                          // 33 digits
		sid[:31],                           // 31 digits
		strings.Repeat("0", 32),            // well-formed, unknown session
		strings.Repeat("0", 64),            // well-formed, unknown token
		strings.Repeat("g", 32),            // not hex
		sid[:30] + "\x00\x00",              // NUL bytes
		strings.Repeat("a", 1<<16),         // long
		"Bearer " + sid,                    // the header prefix is the API layer's business
		" " + sid[1:],                      // white space
		"0123456789abcdef0123456789abcdeé", // non-ASCII
	} {
		if _, err := e.s.Authenticate(ctx, secret); !errors.Is(err, ErrNotAuthorized) {
			t.Errorf("Authenticate(%.40q): %v, want ErrNotAuthorized", secret, err)
		}
	}
}

func TestUnknownUserSameAsWrongPassword(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	mustCreateUser(t, e.s, "alice", "s3cret-password", RoleUser)
	_, _, errWrong := e.s.Login(ctx, "alice", "wrong-password")
	_, _, errUnknown := e.s.Login(ctx, "bob", "wrong-password")
	if errWrong != ErrBadCredentials || errUnknown != ErrBadCredentials {
		// Compared with != on purpose: not just errors.Is, but the very
		// same value, so no wrapping can leak which case it was.
		t.Fatalf("wrong password: %v; unknown user: %v; want both exactly ErrBadCredentials", errWrong, errUnknown)
	}
	if errWrong.Error() != errUnknown.Error() {
		t.Fatalf("messages differ: %q vs %q", errWrong, errUnknown)
	}
}

func TestLockout(t *testing.T) {
	const maxFailures = 3
	e := openEnv(t, func(o *Options) {
		o.MaxFailures = maxFailures
		o.BlockFor = 30 * time.Second
	})
	ctx := context.Background()
	mustCreateUser(t, e.s, "alice", "s3cret-password", RoleUser)
	login := func(pw string) error {
		_, _, err := e.s.Login(ctx, "alice", pw)
		return err
	}

	// A success resets the count: MaxFailures-1 failures, a success,
	// and MaxFailures-1 failures again do not block.
	for range maxFailures - 1 {
		if err := login("wrong-password"); !errors.Is(err, ErrBadCredentials) {
			t.Fatalf("failure: %v", err)
		}
	}
	if err := login("s3cret-password"); err != nil {
		t.Fatalf("login before the limit: %v", err)
	}
	for i := range maxFailures {
		if err := login("wrong-password"); !errors.Is(err, ErrBadCredentials) {
			t.Fatalf("failure %d: %v, want ErrBadCredentials", i+1, err)
		}
	}
	// Now blocked, whatever the password, and a restart does not help.
	if err := login("s3cret-password"); !errors.Is(err, ErrBlocked) {
		t.Fatalf("right password while blocked: %v, want ErrBlocked", err)
	}
	if err := login("wrong-password"); !errors.Is(err, ErrBlocked) {
		t.Fatalf("wrong password while blocked: %v, want ErrBlocked", err)
	}
	e.reopen(t)
	e.clock.Advance(29 * time.Second)
	if err := login("s3cret-password"); !errors.Is(err, ErrBlocked) {
		t.Fatalf("right password 29s into the block, after a restart: %v, want ErrBlocked", err)
	}
	// Attempts during the block did not extend it.
	e.clock.Advance(time.Second)
	if err := login("s3cret-password"); err != nil {
		t.Fatalf("login after the block: %v", err)
	}
	// Blocks are per user.
	mustCreateUser(t, e.s, "bob", "B0bs-secret", RoleUser)
	for range maxFailures {
		login("wrong-password")
	}
	if _, _, err := e.s.Login(ctx, "bob", "B0bs-secret"); err != nil {
		t.Fatalf("another user during alice's block: %v", err)
	}
	if !strings.Contains(e.logs.String(), "account blocked") {
		t.Errorf("no log line about the block:\n%s", e.logs)
	}
}

func TestLockoutAfterExpiredBlockStartsOver(t *testing.T) {
	e := openEnv(t, func(o *Options) { o.MaxFailures = 2; o.BlockFor = 10 * time.Second })
	ctx := context.Background()
	mustCreateUser(t, e.s, "alice", "s3cret-password", RoleUser)
	for range 2 {
		e.s.Login(ctx, "alice", "wrong-password")
	}
	e.clock.Advance(10 * time.Second)
	// One more failure after the block is the first of a new series.
	if _, _, err := e.s.Login(ctx, "alice", "wrong-password"); !errors.Is(err, ErrBadCredentials) {
		t.Fatalf("failure after the block: %v", err)
	}
	if _, _, err := e.s.Login(ctx, "alice", "s3cret-password"); err != nil {
		t.Fatalf("login with one failure in the new series: %v", err)
	}
}

func TestUpdatePasswordLiftsBlock(t *testing.T) {
	e := openEnv(t, func(o *Options) { o.MaxFailures = 1 })
	ctx := context.Background()
	u := mustCreateUser(t, e.s, "alice", "s3cret-password", RoleUser)
	e.s.Login(ctx, "alice", "wrong-password")
	if _, _, err := e.s.Login(ctx, "alice", "s3cret-password"); !errors.Is(err, ErrBlocked) {
		t.Fatalf("login while blocked: %v", err)
	}
	if err := e.s.UpdatePassword(ctx, u.ID, "new-password"); err != nil {
		t.Fatal(err)
	}
	mustLogin(t, e.s, "alice", "new-password")
}

// TestUnblockUsers: user.unblock lets a blocked account log in at once;
// an unknown user changes nobody.
func TestUnblockUsers(t *testing.T) {
	e := openEnv(t, func(o *Options) { o.MaxFailures = 1 })
	ctx := context.Background()
	a := mustCreateUser(t, e.s, "alice", "s3cret-password", RoleUser)
	b := mustCreateUser(t, e.s, "bob", "s3cret-password", RoleUser)
	e.s.Login(ctx, "alice", "wrong-password")
	e.s.Login(ctx, "bob", "wrong-password")
	if err := e.s.UnblockUsers(ctx, []uint64{b.ID, 999}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unblock with an unknown user: %v", err)
	}
	if _, _, err := e.s.Login(ctx, "bob", "s3cret-password"); !errors.Is(err, ErrBlocked) {
		t.Fatalf("bob after a refused unblock: %v", err)
	}
	if err := e.s.UnblockUsers(ctx, []uint64{a.ID, b.ID}); err != nil {
		t.Fatal(err)
	}
	mustLogin(t, e.s, "alice", "s3cret-password")
	mustLogin(t, e.s, "bob", "s3cret-password")
}

// TestFailDelay checks a lower bound only: a failed login never answers
// sooner than FailDelay after it began.
func TestFailDelay(t *testing.T) {
	const delay = 50 * time.Millisecond
	e := openEnv(t, func(o *Options) { o.FailDelay = delay })
	ctx := context.Background()
	mustCreateUser(t, e.s, "alice", "s3cret-password", RoleUser)
	f := func(user, pw string, want error) {
		t.Helper()
		start := time.Now()
		_, _, err := e.s.Login(ctx, user, pw)
		took := time.Since(start)
		if !errors.Is(err, want) {
			t.Fatalf("Login(%q): %v, want %v", user, err, want)
		}
		if want != nil && took < delay {
			t.Fatalf("Login(%q) failed after %v, sooner than FailDelay %v", user, took, delay)
		}
	}
	f("alice", "wrong-password", ErrBadCredentials)
	f("nobody", "wrong-password", ErrBadCredentials)
	f("alice", "s3cret-password", nil)
}

func TestFailDelayHonoursContext(t *testing.T) {
	e := openEnv(t, func(o *Options) { o.FailDelay = time.Hour })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, _, err := e.s.Login(ctx, "nobody", "password")
	if !errors.Is(err, ErrBadCredentials) && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Login: %v", err)
	}
}

func TestSessionIdleExpiry(t *testing.T) {
	e := openEnv(t, func(o *Options) { o.SessionIdle = 15 * time.Minute })
	ctx := context.Background()
	mustCreateUser(t, e.s, "alice", "s3cret-password", RoleUser)
	sid := mustLogin(t, e.s, "alice", "s3cret-password")

	// Use keeps a session alive well beyond SessionIdle in total.
	for range 4 {
		e.clock.Advance(14 * time.Minute)
		if _, err := e.s.Authenticate(ctx, sid); err != nil {
			t.Fatalf("Authenticate after 14 idle minutes: %v", err)
		}
	}
	e.clock.Advance(15 * time.Minute)
	if _, err := e.s.Authenticate(ctx, sid); !errors.Is(err, ErrSessionExpired) {
		t.Fatalf("Authenticate after 15 idle minutes: %v, want ErrSessionExpired", err)
	}
	// Still expired (not revived) on the next try, and after a restart.
	if _, err := e.s.Authenticate(ctx, sid); !errors.Is(err, ErrSessionExpired) {
		t.Fatalf("second Authenticate: %v, want ErrSessionExpired", err)
	}
	e.reopen(t)
	if _, err := e.s.Authenticate(ctx, sid); !errors.Is(err, ErrSessionExpired) {
		t.Fatalf("Authenticate after restart: %v, want ErrSessionExpired", err)
	}
	// A day later the row is pruned (by a login) and the id is unknown.
	e.clock.Advance(25 * time.Hour)
	mustLogin(t, e.s, "alice", "s3cret-password")
	if _, err := e.s.Authenticate(ctx, sid); !errors.Is(err, ErrNotAuthorized) {
		t.Fatalf("Authenticate after pruning: %v, want ErrNotAuthorized", err)
	}
}

func TestSessionsSurviveReopen(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	u := mustCreateUser(t, e.s, "alice", "s3cret-password", RoleUser)
	sid := mustLogin(t, e.s, "alice", "s3cret-password")
	gone := mustLogin(t, e.s, "alice", "s3cret-password")
	if err := e.s.Logout(ctx, gone); err != nil {
		t.Fatal(err)
	}
	// Uses within AccessWriteInterval are not written at once; Close
	// writes them, so the idle time counts from the last use.
	e.clock.Advance(10 * time.Minute)
	if _, err := e.s.Authenticate(ctx, sid); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(30 * time.Second)
	if _, err := e.s.Authenticate(ctx, sid); err != nil {
		t.Fatal(err)
	}
	e.reopen(t)
	e.clock.Advance(14 * time.Minute)
	if got, err := e.s.Authenticate(ctx, sid); err != nil || got != u {
		t.Fatalf("Authenticate after restart: %+v, %v", got, err)
	}
	if _, err := e.s.Authenticate(ctx, gone); !errors.Is(err, ErrNotAuthorized) {
		t.Fatalf("logged-out session after restart: %v, want ErrNotAuthorized", err)
	}
}

// TestSessionAccessWrites checks the throttle: a use writes last access
// only if AccessWriteInterval has passed since the last write.
func TestSessionAccessWrites(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	mustCreateUser(t, e.s, "alice", "s3cret-password", RoleUser)
	sid := mustLogin(t, e.s, "alice", "s3cret-password")
	dbLast := func() int64 {
		t.Helper()
		var ms int64
		if err := e.s.db.QueryRow("SELECT last_access_ms FROM sessions WHERE id_hash = ?", hashSecret(sid).String()).Scan(&ms); err != nil {
			t.Fatal(err)
		}
		return ms
	}
	login := dbLast()
	e.clock.Advance(59 * time.Second)
	e.s.Authenticate(ctx, sid)
	if got := dbLast(); got != login {
		t.Fatalf("last access written after 59s: %d, want %d", got, login)
	}
	e.clock.Advance(time.Second)
	e.s.Authenticate(ctx, sid)
	if got, want := dbLast(), e.clock.Now().UnixMilli(); got != want {
		t.Fatalf("last access after 60s: %d, want %d", got, want)
	}
}

func TestSessionIDNotStored(t *testing.T) {
	e := openEnv(t, nil)
	mustCreateUser(t, e.s, "alice", "s3cret-password", RoleUser)
	sid := mustLogin(t, e.s, "alice", "s3cret-password")
	var n int
	if err := e.s.db.QueryRow("SELECT count(*) FROM sessions WHERE instr(id_hash, ?) > 0", sid).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatal("the session id is stored in plain text")
	}
}

func TestRehashOnLogin(t *testing.T) {
	e := openEnv(t, func(o *Options) { o.HashParams = HashParams{Memory: 32, Time: 1, Threads: 1} })
	mustCreateUser(t, e.s, "alice", "s3cret-password", RoleUser)
	e.opts.HashParams = testHashParams
	e.reopen(t)
	mustLogin(t, e.s, "alice", "s3cret-password")
	var stored string
	if err := e.s.db.QueryRow("SELECT passwd FROM users WHERE username = 'alice'").Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stored, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Fatalf("hash not upgraded: %s", stored)
	}
	mustLogin(t, e.s, "alice", "s3cret-password")
}

func TestCorruptHashFailsLikeWrongPassword(t *testing.T) {
	e := openEnv(t, nil)
	mustCreateUser(t, e.s, "alice", "s3cret-password", RoleUser)
	if _, err := e.s.db.Exec("UPDATE users SET passwd = 'garbage' WHERE username = 'alice'"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.s.Login(context.Background(), "alice", "s3cret-password"); err != ErrBadCredentials {
		t.Fatalf("Login with a corrupt hash: %v, want ErrBadCredentials", err)
	}
	if !strings.Contains(e.logs.String(), "unreadable") {
		t.Errorf("corrupt hash not logged:\n%s", e.logs)
	}
}
