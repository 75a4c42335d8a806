package auth

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEnsureDefaultsFresh: a new database gets what a fresh Zabbix 6.0
// has, with its IDs (recorded from 6.0.14: usergroup.get and user.get
// with selectUsrgrps on the peer).
func TestEnsureDefaultsFresh(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	if _, err := e.s.EnsureAdmin(ctx, filepath.Join(t.TempDir(), "admin-password")); err != nil {
		t.Fatal(err)
	}
	d, err := e.s.EnsureDefaults(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.UserGroups) != 5 || !d.Guest {
		t.Errorf("added %+v", d)
	}
	gs, err := e.s.UserGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []UserGroup{
		{ID: 7, Name: "Zabbix administrators", UserIDs: []uint64{1}},
		{ID: 8, Name: "Guests", GUIAccess: 1, UserIDs: []uint64{2}},
		{ID: 9, Name: "Disabled", UsersStatus: 1, UserIDs: []uint64{2}},
		{ID: 11, Name: "Enabled debug mode", DebugMode: 1},
		{ID: 12, Name: "No access to the frontend", GUIAccess: 3},
	}
	if d := cmp.Diff(want, gs); d != "" {
		t.Fatalf("user groups (-want +got):\n%s", d)
	}
	as, err := e.s.Accounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantAcc := []Account{
		{User: User{ID: 1, Username: "Admin", Name: "Zabbix", Surname: "Administrator", Role: RoleSuperAdmin, RoleID: 3},
			Profile: Profile{Autologin: 1, Autologout: "0", Lang: "default", Refresh: "30s", Theme: "default", RowsPerPage: 50, Timezone: "default"}},
		{User: User{ID: 2, Username: "guest", Role: RoleUser, RoleID: 4}, Profile: NewProfile()},
	}
	if d := cmp.Diff(wantAcc, as); d != "" {
		t.Fatalf("users (-want +got):\n%s", d)
	}
	// New groups come after the defaults, as in Zabbix (13).
	ids, err := e.s.CreateUserGroups(ctx, []UserGroup{{Name: "ops"}})
	if err != nil || ids[0] != 13 {
		t.Fatalf("next user group: %v, %v", ids, err)
	}
	// Once only: a default the user deleted stays deleted.
	if err := e.s.DeleteUserGroups(ctx, []uint64{11}); err != nil {
		t.Fatal(err)
	}
	e.reopen(t)
	if d, err := e.s.EnsureDefaults(ctx); err != nil || len(d.UserGroups) != 0 || d.Guest {
		t.Fatalf("second EnsureDefaults: %+v, %v", d, err)
	}
	gs, _ = e.s.UserGroups(ctx)
	if len(gs) != 5 {
		t.Errorf("%d user groups after the second start, want 5 (4 defaults, ops)", len(gs))
	}
	// The guest has no password: nothing logs it in.
	for _, pw := range []string{"", "guest", "zabbix"} {
		if _, _, err := e.s.Login(ctx, "guest", pw); !errors.Is(err, ErrBadCredentials) {
			t.Errorf("guest with %q: %v", pw, err)
		}
	}
}

// TestEnsureDefaultsExisting: a database with users and groups of its
// own gets what it lacks by name, with the next IDs where the default
// ones are taken, and nothing of its own changes.
func TestEnsureDefaultsExisting(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	if _, err := e.s.EnsureAdmin(ctx, filepath.Join(t.TempDir(), "admin-password")); err != nil {
		t.Fatal(err)
	}
	mustCreateUser(t, e.s, "guest", "Gu3st-secret", RoleAdmin)
	var made []uint64
	for range 7 {
		ids, err := e.s.CreateUserGroups(ctx, []UserGroup{{Name: "g" + string(rune('a'+len(made)))}})
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, ids[0])
	}
	if _, err := e.s.CreateUserGroups(ctx, []UserGroup{{Name: "Guests", GUIAccess: 2}}); err != nil {
		t.Fatal(err)
	}
	d, err := e.s.EnsureDefaults(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Zabbix administrators", "Disabled", "Enabled debug mode", "No access to the frontend"}; !cmp.Equal(d.UserGroups, want) || d.Guest {
		t.Errorf("added %+v, want groups %q and no guest", d, want)
	}
	gs, _ := e.s.UserGroups(ctx)
	byName := map[string]UserGroup{}
	for _, g := range gs {
		byName[g.Name] = g
	}
	if g := byName["Zabbix administrators"]; g.ID != 9 || !cmp.Equal(g.UserIDs, []uint64{1}) {
		t.Errorf("Zabbix administrators: %+v (7 is taken by ga: the next ID, with Admin)", g)
	}
	if g := byName["Guests"]; g.GUIAccess != 2 || len(g.UserIDs) != 0 {
		t.Errorf("the user's own Guests changed: %+v", g)
	}
	if g := byName["Enabled debug mode"]; g.ID != 11 {
		t.Errorf("Enabled debug mode: %+v (11 is free)", g)
	}
}

func TestConfigAndPolicies(t *testing.T) {
	e := openEnv(t, func(o *Options) { o.FailDelay = 0 })
	ctx := context.Background()
	m, err := e.s.Config(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m["login_attempts"] != "5" || m["hk_history"] != "90d" || m["passwd_min_length"] != "8" || len(m) != 59+21+30 {
		t.Fatalf("defaults: %d members, %v %v %v", len(m), m["login_attempts"], m["hk_history"], m["passwd_min_length"])
	}
	if err := e.s.UpdateConfig(ctx, map[string]string{"nosuch": "1"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("an unknown member: %v", err)
	}
	if err := e.s.UpdateConfig(ctx, map[string]string{"login_attempts": "2", "passwd_check_rules": "15", "passwd_min_length": "10"}); err != nil {
		t.Fatal(err)
	}
	e.reopen(t)
	if m, _ := e.s.Config(ctx); m["login_attempts"] != "2" || m["passwd_check_rules"] != "15" {
		t.Fatalf("after reopen: %v %v", m["login_attempts"], m["passwd_check_rules"])
	}
	// The password policy, with Zabbix's words.
	for pw, want := range map[string]string{
		"Ab1-xyz":        "must be at least 10 characters long",
		"abcdefgh1-xyz":  "must contain at least one lowercase and one uppercase Latin letter",
		"Abcdefgh-xyz":   "must contain at least one digit",
		"Abcdefgh1xyz":   "must contain at least one special character",
		"Alice-Secret-1": "must not contain user's name, surname or username",
		"Zx-9876-qwerty": "",
	} {
		_, err := e.s.CreateUser(ctx, "alice", pw, RoleUser)
		var pe *PasswordError
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", pw, err)
		case want != "" && (!errors.As(err, &pe) || pe.Reason != want || !errors.Is(err, ErrInvalid)):
			t.Errorf("%q: %v, want %q", pw, err, want)
		}
	}
	// Two failures block the account now.
	for range 2 {
		if _, _, err := e.s.Login(ctx, "alice", "wrong-password"); !errors.Is(err, ErrBadCredentials) {
			t.Fatal(err)
		}
	}
	if _, _, err := e.s.Login(ctx, "alice", "Zx-9876-qwerty"); !errors.Is(err, ErrBlocked) {
		t.Errorf("after 2 failures with login_attempts 2: %v", err)
	}
}

func TestParseSeconds(t *testing.T) {
	for in, want := range map[string]int64{"30s": 30, "30": 30, "2m": 120, "1h": 3600, "1d": 86400, "1w": 604800} {
		if d, err := ParseSeconds(in); err != nil || int64(d.Seconds()) != want {
			t.Errorf("%q: %v, %v", in, d, err)
		}
	}
	for _, in := range []string{"", "s", "-1", "+1", "1x", "1.5h"} {
		if _, err := ParseSeconds(in); err == nil {
			t.Errorf("%q parsed", in)
		}
	}
}
