package auth

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/peregrine-mon/peregrine/internal/sqlitedb"
)

func TestUserGroupsCRUD(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	a := mustCreateUser(t, e.s, "alice", "Al1ce-secret", RoleUser)
	b := mustCreateUser(t, e.s, "bob", "B0b-secret-x", RoleAdmin)
	ids, err := e.s.CreateUserGroups(ctx, []UserGroup{
		{Name: "Readers", Rights: []Right{{HostGroupID: 7, Permission: PermRead}}, UserIDs: []uint64{a.ID}},
		{Name: "Writers", GUIAccess: 2, DebugMode: 1, Rights: []Right{{HostGroupID: 7, Permission: PermReadWrite}, {HostGroupID: 9, Permission: PermDeny}}, UserIDs: []uint64{a.ID, b.ID}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []UserGroup{
		{ID: ids[0], Name: "Readers", Rights: []Right{{7, PermRead}}, UserIDs: []uint64{a.ID}},
		{ID: ids[1], Name: "Writers", GUIAccess: 2, DebugMode: 1, Rights: []Right{{7, PermReadWrite}, {9, PermDeny}}, UserIDs: []uint64{a.ID, b.ID}},
	}
	got, err := e.s.UserGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("after create (-want +got):\n%s", d)
	}

	name, status := "Viewers", 1
	if err := e.s.UpdateUserGroups(ctx, []UserGroupUpdate{{ID: ids[0], Name: &name, UsersStatus: &status, Rights: &[]Right{}, UserIDs: &[]uint64{b.ID}}}); err != nil {
		t.Fatal(err)
	}
	want[0] = UserGroup{ID: ids[0], Name: "Viewers", UsersStatus: 1, UserIDs: []uint64{b.ID}}
	got, _ = e.s.UserGroups(ctx)
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("after update (-want +got):\n%s", d)
	}
	// It survives a restart (and a reopen of a version 2 database).
	e.reopen(t)
	got, _ = e.s.UserGroups(ctx)
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("after reopen (-want +got):\n%s", d)
	}
	if err := e.s.SetUserGroups(ctx, a.ID, []uint64{ids[0], ids[1]}); err != nil {
		t.Fatal(err)
	}
	got, _ = e.s.UserGroups(ctx)
	if !cmp.Equal(got[0].UserIDs, []uint64{a.ID, b.ID}) || !cmp.Equal(got[1].UserIDs, []uint64{a.ID, b.ID}) {
		t.Fatalf("SetUserGroups: %+v", got)
	}
	// Deleting a user removes its memberships; deleting a group removes it.
	if err := e.s.DeleteUser(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.s.DeleteUserGroups(ctx, []uint64{ids[0]}); err != nil {
		t.Fatal(err)
	}
	got, _ = e.s.UserGroups(ctx)
	if len(got) != 1 || got[0].ID != ids[1] || !cmp.Equal(got[0].UserIDs, []uint64{b.ID}) {
		t.Fatalf("after deletes: %+v", got)
	}
}

func TestUserGroupsErrors(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	a := mustCreateUser(t, e.s, "alice", "Al1ce-secret", RoleUser)
	ids, err := e.s.CreateUserGroups(ctx, []UserGroup{{Name: "G"}})
	if err != nil {
		t.Fatal(err)
	}
	f := func(name string, err error, want error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Errorf("%s: error %v, want %v", name, err, want)
		}
	}
	_, err = e.s.CreateUserGroups(ctx, []UserGroup{{Name: "G"}})
	f("duplicate name", err, ErrExists)
	_, err = e.s.CreateUserGroups(ctx, []UserGroup{{Name: "H"}, {Name: "H"}})
	f("duplicate name in one batch", err, ErrExists)
	_, err = e.s.CreateUserGroups(ctx, []UserGroup{{Name: ""}})
	f("empty name", err, ErrInvalid)
	_, err = e.s.CreateUserGroups(ctx, []UserGroup{{Name: strings.Repeat("x", 65)}})
	f("long name", err, ErrInvalid)
	_, err = e.s.CreateUserGroups(ctx, []UserGroup{{Name: "P", Rights: []Right{{1, 1}}}})
	f("permission 1", err, ErrInvalid)
	_, err = e.s.CreateUserGroups(ctx, []UserGroup{{Name: "P", Rights: []Right{{1, PermRead}, {1, PermDeny}}}})
	f("host group twice", err, ErrInvalid)
	_, err = e.s.CreateUserGroups(ctx, []UserGroup{{Name: "P", UsersStatus: 2}})
	f("users_status 2", err, ErrInvalid)
	_, err = e.s.CreateUserGroups(ctx, []UserGroup{{Name: "P", GUIAccess: 4}})
	f("gui_access 4", err, ErrInvalid)
	// A bad member fails the whole batch: "Q" is not created either.
	_, err = e.s.CreateUserGroups(ctx, []UserGroup{{Name: "Q"}, {Name: "P", UserIDs: []uint64{a.ID + 100}}})
	f("unknown member", err, ErrNotFound)
	gs, _ := e.s.UserGroups(ctx)
	if len(gs) != 1 {
		t.Errorf("a failed batch left groups behind: %+v", gs)
	}
	name := "G2"
	f("update unknown group", e.s.UpdateUserGroups(ctx, []UserGroupUpdate{{ID: ids[0], Name: &name}, {ID: ids[0] + 100}}), ErrNotFound)
	if gs, _ := e.s.UserGroups(ctx); gs[0].Name != "G" {
		t.Errorf("a failed update renamed the group: %+v", gs)
	}
	f("delete unknown group", e.s.DeleteUserGroups(ctx, []uint64{ids[0] + 100}), ErrNotFound)
	f("set groups of unknown user", e.s.SetUserGroups(ctx, a.ID+100, ids), ErrNotFound)
	f("set unknown group", e.s.SetUserGroups(ctx, a.ID, []uint64{ids[0] + 100}), ErrNotFound)
}

// TestRightsCombine checks Zabbix's rules: per host group, a deny in any
// of the user's groups wins, otherwise the highest permission; per host,
// unmentioned host groups do not count, a deny on any denies.
func TestRightsCombine(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	u := mustCreateUser(t, e.s, "alice", "Al1ce-secret", RoleUser)
	lonely := mustCreateUser(t, e.s, "lonely", "L0nely-secret", RoleAdmin)
	root := mustCreateUser(t, e.s, "root", "R00t-secret", RoleSuperAdmin)
	_, err := e.s.CreateUserGroups(ctx, []UserGroup{
		{Name: "A", UserIDs: []uint64{u.ID, root.ID}, Rights: []Right{{1, PermRead}, {2, PermRead}, {3, PermReadWrite}, {5, PermDeny}}},
		{Name: "B", UserIDs: []uint64{u.ID}, Rights: []Right{{1, PermReadWrite}, {2, PermDeny}, {4, PermRead}}},
		{Name: "C", Rights: []Right{{6, PermReadWrite}}}, // nobody's
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.s.Rights(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	for g, want := range map[uint64]Permission{1: PermReadWrite, 2: PermDeny, 3: PermReadWrite, 4: PermRead, 5: PermDeny, 6: PermNone, 7: PermNone} {
		if got := r.Group(g); got != want {
			t.Errorf("group %d: %d, want %d", g, got, want)
		}
	}
	for _, c := range []struct {
		groups []uint64
		want   Permission
	}{
		{nil, PermNone},
		{[]uint64{4}, PermRead},
		{[]uint64{4, 7}, PermRead},       // unmentioned groups do not count
		{[]uint64{4, 3}, PermReadWrite},  // the highest wins
		{[]uint64{3, 2}, PermDeny},       // a deny anywhere wins
		{[]uint64{7, 6}, PermNone},       // only unmentioned groups
		{[]uint64{1, 4, 5, 3}, PermDeny}, // order does not matter
	} {
		if got := r.Host(c.groups); got != c.want {
			t.Errorf("host in %v: %d, want %d", c.groups, got, c.want)
		}
	}
	// A user in no group has no rights; a super admin all, whatever the
	// groups say.
	if r, _ := e.s.Rights(ctx, lonely); r.All() || r.Host([]uint64{1}) != PermNone {
		t.Errorf("user without groups: %+v", r)
	}
	if r, _ := e.s.Rights(ctx, root); !r.All() || r.Host([]uint64{5}) != PermReadWrite {
		t.Errorf("super admin: %+v", r)
	}
	var zero Rights
	if zero.Host([]uint64{1}) != PermNone || zero.Group(1) != PermNone {
		t.Error("the zero Rights grants something")
	}
}

// TestRightsCacheFollowsChanges checks that cached rights are dropped by
// every change that can alter them.
func TestRightsCacheFollowsChanges(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	u := mustCreateUser(t, e.s, "alice", "Al1ce-secret", RoleUser)
	perm := func() Permission {
		t.Helper()
		r, err := e.s.Rights(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		return r.Group(1)
	}
	if perm() != PermNone {
		t.Fatal("rights before any group")
	}
	ids, err := e.s.CreateUserGroups(ctx, []UserGroup{{Name: "A", UserIDs: []uint64{u.ID}, Rights: []Right{{1, PermRead}}}})
	if err != nil {
		t.Fatal(err)
	}
	if perm() != PermRead {
		t.Fatal("create not seen")
	}
	if err := e.s.UpdateUserGroups(ctx, []UserGroupUpdate{{ID: ids[0], Rights: &[]Right{{1, PermReadWrite}}}}); err != nil {
		t.Fatal(err)
	}
	if perm() != PermReadWrite {
		t.Fatal("rights update not seen")
	}
	if err := e.s.SetUserGroups(ctx, u.ID, nil); err != nil {
		t.Fatal(err)
	}
	if perm() != PermNone {
		t.Fatal("membership change not seen")
	}
	if err := e.s.SetUserGroups(ctx, u.ID, ids); err != nil {
		t.Fatal(err)
	}
	if perm() != PermReadWrite {
		t.Fatal("membership change not seen")
	}
	if err := e.s.DeleteUserGroups(ctx, ids); err != nil {
		t.Fatal(err)
	}
	if perm() != PermNone {
		t.Fatal("delete not seen")
	}
}

// TestDisabledUserGroup checks users_status 1: its members cannot log
// in, and their live sessions and tokens stop working at once.
func TestDisabledUserGroup(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	u := mustCreateUser(t, e.s, "alice", "Al1ce-secret", RoleUser)
	other := mustCreateUser(t, e.s, "bob", "B0b-secret-x", RoleUser)
	sid := mustLogin(t, e.s, "alice", "Al1ce-secret")
	tok, err := e.s.CreateToken(ctx, u.ID, "t", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	secret, err := e.s.GenerateToken(ctx, tok.ID)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := e.s.CreateUserGroups(ctx, []UserGroup{{Name: "A", UserIDs: []uint64{u.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Authenticate(ctx, sid); err != nil {
		t.Fatalf("enabled group: %v", err)
	}
	off, on := 1, 0
	if err := e.s.UpdateUserGroups(ctx, []UserGroupUpdate{{ID: ids[0], UsersStatus: &off}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Authenticate(ctx, sid); !errors.Is(err, ErrNotAuthorized) {
		t.Errorf("session of a disabled user: %v", err)
	}
	if _, err := e.s.Authenticate(ctx, secret); !errors.Is(err, ErrNotAuthorized) {
		t.Errorf("token of a disabled user: %v", err)
	}
	if _, _, err := e.s.Login(ctx, "alice", "Al1ce-secret"); !errors.Is(err, ErrDisabled) {
		t.Errorf("login of a disabled user: %v", err)
	}
	if _, _, err := e.s.Login(ctx, "alice", "wrong-password"); !errors.Is(err, ErrBadCredentials) {
		t.Errorf("wrong password of a disabled user: %v (must not tell that the account exists)", err)
	}
	mustLogin(t, e.s, "bob", "B0b-secret-x") // others are not affected
	_ = other
	if err := e.s.UpdateUserGroups(ctx, []UserGroupUpdate{{ID: ids[0], UsersStatus: &on}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Authenticate(ctx, sid); err != nil {
		t.Errorf("session after re-enabling: %v", err)
	}
	mustLogin(t, e.s, "alice", "Al1ce-secret")
}

// TestMigrateVersion1 opens a database written by a binary that had no
// user groups (schema version 1).
func TestMigrateVersion1(t *testing.T) {
	e := openEnv(t, nil)
	e.s.Close()
	e.s = nil
	path := e.path + ".v1"
	v1 := dbSchema
	v1.Version = 1
	v1.Create = strings.TrimSuffix(schema, userGroupSchema+roleSchemaSQL+dashboardSchema)
	v1.Migrations = nil
	db, err := sqlitedb.Open(context.Background(), path, v1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO users (username, role, passwd) VALUES ('old', 1, 'x'), ('root', 3, 'y')"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("SELECT 1 FROM usrgrp"); err == nil {
		t.Fatal("the version 1 schema has user groups")
	}
	db.Close()
	opts := e.opts
	opts.Path = path
	s, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatalf("Open of a version 1 database: %v", err)
	}
	defer s.Close()
	users, err := s.Users(context.Background())
	// The user types 1..3 the role column held are the default roles
	// 1..3 of those types.
	want := []User{{ID: users[0].ID, Username: "old", Role: RoleUser, RoleID: 1}, {ID: users[1].ID, Username: "root", Role: RoleSuperAdmin, RoleID: 3}}
	if err != nil || !cmp.Equal(users, want) {
		t.Fatalf("users after migration: %+v, %v; want %+v", users, err, want)
	}
	ids, err := s.CreateUserGroups(context.Background(), []UserGroup{{Name: "new", UserIDs: []uint64{users[0].ID}}})
	if err != nil || len(ids) != 1 {
		t.Fatalf("user groups after migration: %v", err)
	}
}

// TestRightsCacheConcurrentChanges reads rights in four goroutines while
// the test changes them: after each change, the cache must give the new
// state, never one a reader fetched before the change and stored after
// it. (Whether a reader hits that window is up to the scheduler; run it
// with -race and -count.)
func TestRightsCacheConcurrentChanges(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	u := mustCreateUser(t, e.s, "alice", "Al1ce-secret", RoleUser)
	ids, err := e.s.CreateUserGroups(ctx, []UserGroup{{Name: "A", UserIDs: []uint64{u.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	const changes = 50
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				if _, err := e.s.Rights(ctx, u); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for i := range changes {
		p := PermRead
		if i%2 == 1 {
			p = PermReadWrite
		}
		if err := e.s.UpdateUserGroups(ctx, []UserGroupUpdate{{ID: ids[0], Rights: &[]Right{{1, p}}}}); err != nil {
			t.Fatal(err)
		}
		// Readers racing with the change may have stored what they
		// read before it; a few reads later the cache must be right.
		for range 20 {
			r, err := e.s.Rights(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Group(1); got != p {
				t.Fatalf("change %d: rights %d after setting %d", i, got, p)
			}
		}
	}
	close(done)
	wg.Wait()
}

// TestRightsStaleFillNotCached replays, step by step, a cache fill that
// read the database before a change and tries to store after it.
func TestRightsStaleFillNotCached(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	u := mustCreateUser(t, e.s, "alice", "Al1ce-secret", RoleUser)
	ids, err := e.s.CreateUserGroups(ctx, []UserGroup{{Name: "A", UserIDs: []uint64{u.ID}, Rights: []Right{{1, PermRead}}}})
	if err != nil {
		t.Fatal(err)
	}
	e.s.rightsMu.Lock()
	gen := e.s.rightsGen
	e.s.rightsMu.Unlock()
	stale, err := e.s.loadRights(ctx, u.ID)
	if err != nil || stale.Group(1) != PermRead {
		t.Fatalf("loadRights: %+v, %v", stale, err)
	}
	if err := e.s.UpdateUserGroups(ctx, []UserGroupUpdate{{ID: ids[0], Rights: &[]Right{{1, PermDeny}}}}); err != nil {
		t.Fatal(err)
	}
	e.s.cacheRights(u.ID, stale, gen)
	r, err := e.s.Rights(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Group(1); got != PermDeny {
		t.Fatalf("rights after the change: %d, want deny (the stale fill was cached)", got)
	}
}
