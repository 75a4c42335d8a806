package auth

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/sqlitedb"
	"github.com/peregrine-mon/peregrine/internal/testutil/hatest"
)

// TestPostgresReadOnly: the auth store opened read-only in PostgreSQL
// (an HA standby) writes nothing at open or close, accepts a session
// made by the writer (the active node), reads its users, and refuses a
// change with sqlitedb.ErrReadOnly.
func TestPostgresReadOnly(t *testing.T) {
	c := hatest.Start(t, "auth-readonly")
	ctx := context.Background()
	pg := sqlitedb.PG{Pool: c.Node.Pool(), Fence: c.Lease.FenceSQL, Schema: "auth_ro"}
	w, err := Open(ctx, Options{Postgres: &pg})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.CreateUser(ctx, "reader", "s3cret-password-1", RoleUser); err != nil {
		t.Fatal(err)
	}
	sess, _, err := w.Login(ctx, "reader", "s3cret-password-1")
	if err != nil {
		t.Fatal(err)
	}
	ro := pg
	ro.Fence, ro.ReadOnly = nil, true
	r, err := Open(ctx, Options{Postgres: &ro})
	if err != nil {
		t.Fatal(err)
	}
	u, err := r.Authenticate(ctx, sess)
	if err != nil || u.Username != "reader" {
		t.Fatalf("the writer's session on the read-only store: %+v, %v", u, err)
	}
	users, err := r.Users(ctx)
	if err != nil || len(users) != 1 {
		t.Fatalf("users: %+v, %v", users, err)
	}
	if _, err := r.CreateUser(ctx, "standby-made", "s3cret-password-2", RoleUser); !errors.Is(err, sqlitedb.ErrReadOnly) {
		t.Fatalf("a change on the read-only store: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("close of the read-only store: %v", err)
	}
	if users, _ := w.Users(ctx); len(users) != 1 {
		t.Fatalf("users after the standby's attempt: %+v", users)
	}
}

// TestPostgresReadOnlyReload: a standby's store follows the active
// node's changes after Reload (a logout, a deleted user), refuses
// logins with sqlitedb.ErrReadOnly, and keeps a session it serves live
// by the last access it saw, without writing it.
func TestPostgresReadOnlyReload(t *testing.T) {
	c := hatest.Start(t, "auth-reload")
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	pg := sqlitedb.PG{Pool: c.Node.Pool(), Fence: c.Lease.FenceSQL, Schema: "auth_reload"}
	w, err := Open(ctx, Options{Postgres: &pg, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	uid, err := w.CreateUser(ctx, "reader", "s3cret-password-1", RoleUser)
	if err != nil {
		t.Fatal(err)
	}
	s1, _, err := w.Login(ctx, "reader", "s3cret-password-1")
	if err != nil {
		t.Fatal(err)
	}
	s2, _, err := w.Login(ctx, "reader", "s3cret-password-1")
	if err != nil {
		t.Fatal(err)
	}
	ro := pg
	ro.Fence, ro.ReadOnly = nil, true
	r, err := Open(ctx, Options{Postgres: &ro, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, _, err := r.Login(ctx, "reader", "s3cret-password-1"); !errors.Is(err, sqlitedb.ErrReadOnly) {
		t.Fatalf("a login on the read-only store: %v, want ErrReadOnly", err)
	}
	for _, s := range []string{s1, s2} {
		if _, err := r.Authenticate(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Logout(ctx, s1); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Authenticate(ctx, s1); err != nil {
		t.Fatalf("before Reload the cached session still opens: %v", err)
	}
	r.Reload()
	if _, err := r.Authenticate(ctx, s1); !errors.Is(err, ErrNotAuthorized) {
		t.Fatalf("a session logged out on the active node, after Reload: %v", err)
	}

	// s2 is used on the standby only: 10 and 20 minutes after its last
	// use on the active node (SessionIdle 15 min), with Reloads between.
	now = now.Add(10 * time.Minute)
	if _, err := r.Authenticate(ctx, s2); err != nil {
		t.Fatal(err)
	}
	r.Reload()
	now = now.Add(10 * time.Minute)
	if _, err := r.Authenticate(ctx, s2); err != nil {
		t.Fatalf("a session used on the standby 10 min ago: %v", err)
	}
	other, err := Open(ctx, Options{Postgres: &ro, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Authenticate(ctx, s2); !errors.Is(err, ErrSessionExpired) {
		t.Fatalf("the same session on another standby (idle there 20 min): %v, want ErrSessionExpired", err)
	}
	if err := w.DeleteUser(ctx, uid.ID); err != nil {
		t.Fatal(err)
	}
	r.Reload()
	if _, err := r.Authenticate(ctx, s2); err == nil {
		t.Fatal("a deleted user's session still opens after Reload")
	}
}

// TestPostgresStandbyLogout: a logout on a read-only store (an HA
// standby) deletes the session's row without the lease (logout.go); the
// writer, which had the session cached, drops it at its next DropEnded
// and then refuses it, while its other sessions stay; a second logout
// of the same session is refused as Zabbix refuses an ended one.
func TestPostgresStandbyLogout(t *testing.T) {
	c := hatest.Start(t, "auth-logout")
	ctx := context.Background()
	pg := sqlitedb.PG{Pool: c.Node.Pool(), Fence: c.Lease.FenceSQL, Schema: "auth_logout"}
	w, err := Open(ctx, Options{Postgres: &pg})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.CreateUser(ctx, "leaver", "s3cret-password-1", RoleUser); err != nil {
		t.Fatal(err)
	}
	s1, _, err := w.Login(ctx, "leaver", "s3cret-password-1")
	if err != nil {
		t.Fatal(err)
	}
	s2, _, err := w.Login(ctx, "leaver", "s3cret-password-1")
	if err != nil {
		t.Fatal(err)
	}
	ro := pg
	ro.Fence, ro.ReadOnly = nil, true
	r, err := Open(ctx, Options{Postgres: &ro})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Authenticate(ctx, s1); err != nil {
		t.Fatal(err)
	}
	if err := r.Logout(ctx, s1); err != nil {
		t.Fatalf("a logout on the standby: %v", err)
	}
	if _, err := r.Authenticate(ctx, s1); !errors.Is(err, ErrNotAuthorized) {
		t.Fatalf("the standby after its logout: %v", err)
	}
	if err := r.Logout(ctx, s1); !errors.Is(err, ErrNotAuthorized) {
		t.Fatalf("a second logout: %v, want ErrNotAuthorized", err)
	}
	var rows int
	if err := c.Node.Pool().QueryRow(ctx, `SELECT count(*) FROM auth_logout.sessions`).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("session rows after the logout: %d, %v; want 1", rows, err)
	}
	if _, err := w.Authenticate(ctx, s1); err != nil {
		t.Fatalf("the writer's cache before DropEnded: %v", err)
	}
	if n, err := w.DropEnded(ctx); err != nil || n != 1 {
		t.Fatalf("DropEnded: %d, %v; want 1", n, err)
	}
	if _, err := w.Authenticate(ctx, s1); !errors.Is(err, ErrNotAuthorized) {
		t.Fatalf("the writer after DropEnded: %v, want ErrNotAuthorized", err)
	}
	if _, err := w.Authenticate(ctx, s2); err != nil {
		t.Fatalf("the other session on the writer: %v", err)
	}
	if _, _, err := r.Login(ctx, "leaver", "s3cret-password-1"); !errors.Is(err, sqlitedb.ErrReadOnly) {
		t.Fatalf("a login on the standby: %v, want ErrReadOnly", err)
	}
}
