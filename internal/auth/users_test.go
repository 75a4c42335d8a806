package auth

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRoleString(t *testing.T) {
	for r, want := range map[Role]string{
		RoleUser: "Zabbix User", RoleAdmin: "Zabbix Admin", RoleSuperAdmin: "Zabbix Super Admin", 0: "Role(0)", 7: "Role(7)",
	} {
		if got := r.String(); got != want {
			t.Errorf("Role(%d).String() = %q, want %q", int(r), got, want)
		}
	}
}

func TestCreateUserValidation(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	f := func(name, pw string, role Role, want error) {
		t.Helper()
		_, err := e.s.CreateUser(ctx, name, pw, role)
		if !errors.Is(err, want) || (want == nil) != (err == nil) {
			t.Errorf("CreateUser(%.20q, %d chars, %d): %v, want %v", name, len(pw), role, err, want)
		}
		if err != nil && pw != "" && strings.Contains(err.Error(), pw) {
			t.Errorf("CreateUser(%.20q): the error quotes the password: %v", name, err)
		}
	}
	f("a", "12345678", RoleUser, nil)
	f(strings.Repeat("é", 100), "12345678", RoleUser, nil)
	f("", "12345678", RoleUser, ErrInvalid)
	f(strings.Repeat("x", 101), "12345678", RoleUser, ErrInvalid)
	f(" padded", "12345678", RoleUser, ErrInvalid)
	f("tab\there", "12345678", RoleUser, ErrInvalid)
	f("bad\xffutf8", "12345678", RoleUser, ErrInvalid)
	f("b", "1234567", RoleUser, ErrInvalid)
	f("b", "ééééééé", RoleUser, ErrInvalid) // 7 characters, 14 bytes
	f("b", strings.Repeat("p", 2000), RoleUser, ErrInvalid)
	f("b", "12345678", 0, ErrInvalid)
	f("b", "12345678", 4, ErrInvalid)
	f("a", "0ther-pw-xyz", RoleAdmin, ErrExists)
	f("A", "12345678", RoleUser, nil) // names are case-sensitive
}

func TestUsersList(t *testing.T) {
	e := openEnv(t, nil)
	a := mustCreateUser(t, e.s, "alice", "s3cret-password", RoleSuperAdmin)
	b := mustCreateUser(t, e.s, "bob", "B0bs-secret", RoleUser)
	got, err := e.s.Users(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []User{{ID: a.ID, Username: "alice", Role: RoleSuperAdmin, RoleID: 3}, {ID: b.ID, Username: "bob", Role: RoleUser, RoleID: 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Users (-want +got):\n%s", diff)
	}
}

func TestUpdatePasswordEndsSessions(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	u := mustCreateUser(t, e.s, "alice", "s3cret-password", RoleUser)
	other := mustCreateUser(t, e.s, "bob", "B0bs-secret", RoleUser)
	sid := mustLogin(t, e.s, "alice", "s3cret-password")
	bobs := mustLogin(t, e.s, "bob", "B0bs-secret")
	if err := e.s.UpdatePassword(ctx, u.ID, "short"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("UpdatePassword(short): %v", err)
	}
	if err := e.s.UpdatePassword(ctx, 999, "long-enough"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("UpdatePassword(unknown user): %v", err)
	}
	if err := e.s.UpdatePassword(ctx, u.ID, "new-password"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Authenticate(ctx, sid); !errors.Is(err, ErrNotAuthorized) {
		t.Fatalf("old session after password change: %v", err)
	}
	if got, err := e.s.Authenticate(ctx, bobs); err != nil || got.ID != other.ID {
		t.Fatalf("another user's session: %+v, %v", got, err)
	}
	if _, _, err := e.s.Login(ctx, "alice", "s3cret-password"); !errors.Is(err, ErrBadCredentials) {
		t.Fatalf("old password: %v", err)
	}
	mustLogin(t, e.s, "alice", "new-password")
}

func TestDeleteUser(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	admin := mustCreateUser(t, e.s, "root", "s3cret-password", RoleSuperAdmin)
	u := mustCreateUser(t, e.s, "alice", "s3cret-password", RoleUser)
	sid := mustLogin(t, e.s, "alice", "s3cret-password")
	tok, err := e.s.CreateToken(ctx, u.ID, "grafana", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	secret, err := e.s.GenerateToken(ctx, tok.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if err := e.s.DeleteUser(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{sid, secret} {
		if _, err := e.s.Authenticate(ctx, s); !errors.Is(err, ErrNotAuthorized) {
			t.Errorf("credential of a deleted user: %v, want ErrNotAuthorized", err)
		}
	}
	if toks, err := e.s.Tokens(ctx, 0); err != nil || len(toks) != 0 {
		t.Errorf("tokens after DeleteUser: %+v, %v", toks, err)
	}
	if err := e.s.DeleteUser(ctx, u.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("second DeleteUser: %v, want ErrNotFound", err)
	}
	if err := e.s.DeleteUser(ctx, admin.ID); !errors.Is(err, ErrInvalid) {
		t.Errorf("DeleteUser(last super admin): %v, want ErrInvalid", err)
	}
	// A new user never gets a deleted user's ID.
	if v := mustCreateUser(t, e.s, "alice", "s3cret-password", RoleUser); v.ID == u.ID {
		t.Errorf("ID %d reused", v.ID)
	}
}

func TestEnsureAdmin(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	pwFile := filepath.Join(t.TempDir(), "initial-admin-password")

	created, err := e.s.EnsureAdmin(ctx, pwFile)
	if err != nil || !created {
		t.Fatalf("EnsureAdmin = %v, %v; want true, nil", created, err)
	}
	fi, err := os.Stat(pwFile)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("password file mode %v, want 0600", fi.Mode().Perm())
	}
	content, err := os.ReadFile(pwFile)
	if err != nil {
		t.Fatal(err)
	}
	pw := strings.TrimSuffix(string(content), "\n")
	if len(pw) != 20 || strings.Trim(pw, passwordAlphabet) != "" {
		t.Fatalf("password %q is not 20 alphanumeric characters", pw)
	}
	_, u, err := e.s.Login(ctx, "Admin", pw)
	if err != nil {
		t.Fatalf("Login with the password from the file: %v", err)
	}
	if u.Username != "Admin" || u.Role != RoleSuperAdmin {
		t.Fatalf("admin user = %+v", u)
	}
	if strings.Contains(e.logs.String(), pw) {
		t.Fatal("the admin password was logged")
	}

	// Second call: users exist, nothing happens, the file is untouched
	// (even if it is gone, or if the path is another one).
	for _, path := range []string{pwFile, filepath.Join(t.TempDir(), "other")} {
		created, err = e.s.EnsureAdmin(ctx, path)
		if err != nil || created {
			t.Fatalf("second EnsureAdmin(%s) = %v, %v; want false, nil", path, created, err)
		}
	}
	if again, _ := os.ReadFile(pwFile); string(again) != string(content) {
		t.Fatal("the password file changed")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(pwFile), "other")); !os.IsNotExist(err) {
		t.Fatalf("second EnsureAdmin wrote a file: %v", err)
	}
	if users, _ := e.s.Users(ctx); len(users) != 1 {
		t.Fatalf("users after two EnsureAdmin: %+v", users)
	}
}

func TestEnsureAdminRefusesExistingFile(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	pwFile := filepath.Join(t.TempDir(), "initial-admin-password")
	if err := os.WriteFile(pwFile, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	created, err := e.s.EnsureAdmin(ctx, pwFile)
	if created || !errors.Is(err, ErrExists) {
		t.Fatalf("EnsureAdmin over an existing file = %v, %v; want false, ErrExists", created, err)
	}
	if b, _ := os.ReadFile(pwFile); string(b) != "keep me" {
		t.Fatalf("file overwritten: %q", b)
	}
	if users, _ := e.s.Users(ctx); len(users) != 0 {
		t.Fatalf("a user was created: %+v", users)
	}
	// With the file moved away, the next start succeeds.
	os.Remove(pwFile)
	if created, err := e.s.EnsureAdmin(ctx, pwFile); err != nil || !created {
		t.Fatalf("EnsureAdmin after removing the file = %v, %v", created, err)
	}
}

func TestEnsureAdminUnwritablePath(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	created, err := e.s.EnsureAdmin(ctx, filepath.Join(t.TempDir(), "missing-dir", "pw"))
	if err == nil || created {
		t.Fatalf("EnsureAdmin into a missing directory = %v, %v; want an error", created, err)
	}
	if users, _ := e.s.Users(ctx); len(users) != 0 {
		t.Fatalf("a user was created without a password file: %+v", users)
	}
}

func TestRandomPassword(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		pw, err := randomPassword(20)
		if err != nil {
			t.Fatal(err)
		}
		if len(pw) != 20 || strings.Trim(pw, passwordAlphabet) != "" || seen[pw] {
			t.Fatalf("bad or repeated password %q", pw)
		}
		seen[pw] = true
	}
}

func TestSetRole(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	root := mustCreateUser(t, e.s, "root", "s3cret-password", RoleSuperAdmin)
	u := mustCreateUser(t, e.s, "alice", "s3cret-password", RoleUser)
	sid := mustLogin(t, e.s, "alice", "s3cret-password")
	if got, err := e.s.Authenticate(ctx, sid); err != nil || got.Role != RoleUser {
		t.Fatalf("before: %+v, %v", got, err)
	}
	if err := e.s.SetRole(ctx, u.ID, RoleAdmin); err != nil {
		t.Fatal(err)
	}
	// The session stays valid and carries the new role at once.
	if got, err := e.s.Authenticate(ctx, sid); err != nil || got.Role != RoleAdmin {
		t.Fatalf("after: %+v, %v", got, err)
	}
	if err := e.s.SetRole(ctx, u.ID, 9); !errors.Is(err, ErrInvalid) {
		t.Fatalf("SetRole(9): %v", err)
	}
	if err := e.s.SetRole(ctx, 999, RoleUser); !errors.Is(err, ErrNotFound) {
		t.Fatalf("SetRole(unknown): %v", err)
	}
	if err := e.s.SetRole(ctx, root.ID, RoleUser); !errors.Is(err, ErrInvalid) {
		t.Fatalf("demoting the last super admin: %v", err)
	}
	if err := e.s.SetRole(ctx, u.ID, RoleSuperAdmin); err != nil {
		t.Fatal(err)
	}
	if err := e.s.SetRole(ctx, root.ID, RoleUser); err != nil {
		t.Fatalf("demoting one of two super admins: %v", err)
	}
}
