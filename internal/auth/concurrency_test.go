package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestConcurrentUse runs Login, Authenticate, Logout, token use and
// password changes in parallel; run it with -race. Every goroutine
// checks the invariants it can: its own session works until it logs
// out and never after.
func TestConcurrentUse(t *testing.T) {
	e := openEnv(t, func(o *Options) { o.MaxConcurrentHashes = 2 })
	ctx := context.Background()
	const workers, rounds = 8, 20
	users := make([]User, workers)
	for i := range users {
		users[i] = mustCreateUser(t, e.s, fmt.Sprintf("user%d", i), "s3cret-password", RoleUser)
	}
	shared := mustLogin(t, e.s, "user0", "s3cret-password")
	tok, err := e.s.CreateToken(ctx, users[0].ID, "t", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	secret, err := e.s.GenerateToken(ctx, tok.ID)
	if err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	errc := make(chan error, 4*workers)
	for w := range workers {
		name := users[w].Username
		// Login, use, logout.
		wg.Go(func() {
			for range rounds {
				sid, u, err := e.s.Login(ctx, name, "s3cret-password")
				if err != nil {
					errc <- fmt.Errorf("Login(%s): %w", name, err)
					return
				}
				for range 5 {
					if got, err := e.s.Authenticate(ctx, sid); err != nil || got.ID != u.ID {
						errc <- fmt.Errorf("Authenticate(own session of %s) = %+v, %w", name, got, err)
						return
					}
				}
				if err := e.s.Logout(ctx, sid); err != nil {
					errc <- fmt.Errorf("Logout(%s): %w", name, err)
					return
				}
				if _, err := e.s.Authenticate(ctx, sid); !errors.Is(err, ErrNotAuthorized) {
					errc <- fmt.Errorf("Authenticate after Logout of %s: %v", name, err)
					return
				}
			}
		})
		// Hot path: a shared session and a token.
		wg.Go(func() {
			for range rounds * 20 {
				if _, err := e.s.Authenticate(ctx, shared); err != nil {
					errc <- fmt.Errorf("Authenticate(shared session): %w", err)
					return
				}
				if _, err := e.s.Authenticate(ctx, secret); err != nil {
					errc <- fmt.Errorf("Authenticate(token): %w", err)
					return
				}
				// 100ms a call: 320s in all, beyond AccessWriteInterval but
				// short of SessionIdle.
				e.clock.Advance(100 * time.Millisecond)
			}
		})
		// Failed logins and unknown secrets, which miss the cache.
		wg.Go(func() {
			for range rounds {
				e.s.Login(ctx, "nobody", "wrong-password")
				e.s.Authenticate(ctx, strings.Repeat("a", 32))
				e.s.Tokens(ctx, 0)
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	// State is consistent afterwards: only the shared session is left.
	var n int
	if err := e.s.db.QueryRow("SELECT count(*) FROM sessions").Scan(&n); err != nil || n != 1 {
		t.Fatalf("sessions left: %d, %v; want 1", n, err)
	}
	e.s.mu.RLock()
	cached := len(e.s.sessions)
	e.s.mu.RUnlock()
	if cached != 1 {
		t.Fatalf("cached sessions: %d, want 1", cached)
	}
}

// TestConcurrentLogoutAndCacheFill races a cache miss (after a restart)
// with Logout: whichever wins, the session must be dead after Logout
// returned.
func TestConcurrentLogoutAndCacheFill(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	mustCreateUser(t, e.s, "alice", "s3cret-password", RoleUser)
	for range 20 {
		sid := mustLogin(t, e.s, "alice", "s3cret-password")
		e.s.mu.Lock()
		clear(e.s.sessions) // as after a restart
		e.s.mu.Unlock()
		var wg sync.WaitGroup
		wg.Go(func() { e.s.Authenticate(ctx, sid) })
		wg.Go(func() {
			if err := e.s.Logout(ctx, sid); err != nil {
				t.Errorf("Logout: %v", err)
			}
		})
		wg.Wait()
		if _, err := e.s.Authenticate(ctx, sid); !errors.Is(err, ErrNotAuthorized) {
			t.Fatalf("session alive after Logout: %v", err)
		}
	}
}

// TestConcurrentFailuresBlock sends a burst of parallel wrong passwords:
// the block must hold afterwards, however the attempts interleaved.
func TestConcurrentFailuresBlock(t *testing.T) {
	e := openEnv(t, func(o *Options) { o.MaxFailures = 3 })
	ctx := context.Background()
	mustCreateUser(t, e.s, "alice", "s3cret-password", RoleUser)
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() { e.s.Login(ctx, "alice", "wrong-password") })
	}
	wg.Wait()
	if _, _, err := e.s.Login(ctx, "alice", "s3cret-password"); !errors.Is(err, ErrBlocked) {
		t.Fatalf("login after a burst of failures: %v, want ErrBlocked", err)
	}
}

// TestCloseWaitsForCalls closes the store while calls run; none may see
// a closed database, only ErrClosed.
func TestCloseWaitsForCalls(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	mustCreateUser(t, e.s, "alice", "s3cret-password", RoleUser)
	sid := mustLogin(t, e.s, "alice", "s3cret-password")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				_, err := e.s.Authenticate(ctx, sid)
				if errors.Is(err, ErrClosed) {
					return
				}
				if err != nil {
					t.Errorf("Authenticate during Close: %v", err)
					return
				}
				if _, _, err := e.s.Login(ctx, "alice", "s3cret-password"); err != nil && !errors.Is(err, ErrClosed) {
					t.Errorf("Login during Close: %v", err)
					return
				}
			}
		})
	}
	time.Sleep(10 * time.Millisecond)
	if err := e.s.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
}

// TestNoSecretsLogged runs every operation with a debug logger and
// checks that no password, session id or token secret reached the log.
func TestNoSecretsLogged(t *testing.T) {
	e := openEnv(t, func(o *Options) { o.MaxFailures = 2 })
	ctx := context.Background()
	u := mustCreateUser(t, e.s, "alice", "s3cret-password", RoleAdmin)
	sid := mustLogin(t, e.s, "alice", "s3cret-password")
	e.s.Login(ctx, "alice", "wrong-password-1")
	e.s.Login(ctx, "alice", "wrong-password-2")
	e.s.Login(ctx, "alice", "s3cret-password")
	e.s.Login(ctx, "nobody", "wrong-password-3")
	tok, _ := e.s.CreateToken(ctx, u.ID, "t", "", 0)
	secret, _ := e.s.GenerateToken(ctx, tok.ID)
	e.s.Authenticate(ctx, secret)
	e.s.Authenticate(ctx, sid)
	e.s.UpdatePassword(ctx, u.ID, "new-password-4")
	e.reopen(t)
	logs := e.logs.String()
	if logs == "" {
		t.Fatal("nothing logged; the test checks nothing")
	}
	for _, s := range []string{"s3cret-password", "wrong-password", "new-password-4", sid, secret, hashSecret(sid).String(), hashSecret(secret).String(), "$argon2id"} {
		if strings.Contains(logs, s) {
			t.Errorf("log contains %q:\n%s", s, logs)
		}
	}
}
