package auth

import (
	"context"
	"errors"
	"testing"

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
