package auth

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDefaultRoles(t *testing.T) {
	e := openEnv(t, nil)
	rs, err := e.s.Roles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Recorded from Zabbix 6.0.14: role.get on a fresh database.
	var got [][4]any
	for _, r := range rs {
		got = append(got, [4]any{r.ID, r.Name, r.Type, r.ReadOnly})
	}
	want := [][4]any{{uint64(1), "User role", RoleUser, false}, {uint64(2), "Admin role", RoleAdmin, false},
		{uint64(3), "Super admin role", RoleSuperAdmin, true}, {uint64(4), "Guest role", RoleUser, false}}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("default roles (-want +got):\n%s", d)
	}
	if g := rs[3].Rules; g.APIAccess != 0 || g.ActionsDefault != 0 || g.UIDefault != 1 {
		t.Errorf("guest role rules: %+v", g)
	}
	if g := rs[1].Rules; g.ServicesWrite != 1 || rs[0].Rules.ServicesWrite != 0 {
		t.Errorf("services.write: admin %d, user %d", g.ServicesWrite, rs[0].Rules.ServicesWrite)
	}
	if n := len(UIElements(RoleSuperAdmin)); n != 35 {
		t.Errorf("%d UI elements for a super admin, want 35", n)
	}
	if n := len(RoleActions(RoleAdmin)); n != 11 {
		t.Errorf("%d actions for an admin, want 11", n)
	}
}

// TestRoleRulesApply replays the changes made to a role of the real
// Zabbix 6.0.14 (role.update on the peer, its role_rule rows read back):
// given statuses override, the others keep the status they had whatever
// the new default, and a new type's extra elements get the default.
func TestRoleRulesApply(t *testing.T) {
	zero, one := 0, 1
	r := NewRoleRules(RoleUser)
	r = r.Apply(RoleUser, RoleUser, &RulesChange{UI: map[string]int{"monitoring.hosts": 0}, APIMode: &one,
		API: &[]string{"host.get", "*.create"}, Actions: map[string]int{"execute_scripts": 0}, ActionsDefault: &zero})
	if d := cmp.Diff(map[string]int{"monitoring.hosts": 0}, r.UI); d != "" {
		t.Errorf("ui (-want +got):\n%s", d)
	}
	// actions.default_access went to 0: the actions that were allowed
	// stay allowed, explicitly; execute_scripts is at the default.
	wantActions := map[string]int{"edit_dashboards": 1, "edit_maps": 1, "acknowledge_problems": 1, "close_problems": 1,
		"change_severity": 1, "add_problem_comments": 1, "manage_api_tokens": 1}
	if d := cmp.Diff(wantActions, r.Actions); d != "" {
		t.Errorf("actions (-want +got):\n%s", d)
	}
	r = r.Apply(RoleUser, RoleUser, &RulesChange{UI: map[string]int{"inventory.hosts": 0}})
	r = r.Apply(RoleUser, RoleUser, &RulesChange{UIDefault: &zero})
	if r.UIStatus("inventory.hosts") != 0 || r.UIStatus("monitoring.hosts") != 0 || r.UIStatus("monitoring.maps") != 1 || len(r.UI) != 9 {
		t.Errorf("after ui.default_access 0: %+v", r.UI)
	}
	r = r.Apply(RoleUser, RoleAdmin, nil)
	if r.UIStatus("configuration.hosts") != 0 || r.ActionStatus("edit_maintenance") != 0 || r.ActionStatus("edit_maps") != 1 {
		t.Errorf("after the type went to admin: ui %+v, actions %+v", r.UI, r.Actions)
	}
	if d := cmp.Diff([]string{"host.get", "*.create"}, r.API); d != "" {
		t.Errorf("api (-want +got):\n%s", d)
	}
}

func TestRolesCRUD(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	ids, err := e.s.CreateRoles(ctx, []UserRole{{Name: "ops", Type: RoleAdmin, Rules: NewRoleRules(RoleAdmin)}})
	if err != nil || len(ids) != 1 || ids[0] != 5 {
		t.Fatalf("CreateRoles: %v, %v (a fresh database's next role is 5, as in Zabbix)", ids, err)
	}
	if _, err := e.s.CreateRoles(ctx, []UserRole{{Name: "ops", Type: RoleUser}}); !errors.Is(err, ErrExists) {
		t.Errorf("a second role ops: %v", err)
	}
	u, err := e.s.CreateAccount(ctx, NewAccount{Username: "op", Password: "Zx-9876-qwer", RoleID: ids[0]})
	if err != nil || u.Role != RoleAdmin || u.RoleID != ids[0] {
		t.Fatalf("CreateAccount with role %d: %+v, %v", ids[0], u, err)
	}
	sid := mustLogin(t, e.s, "op", "Zx-9876-qwer")
	name, typ := "operators", RoleUser
	if err := e.s.UpdateRoles(ctx, []RoleChange{{ID: ids[0], Name: &name, Type: &typ}}); err != nil {
		t.Fatal(err)
	}
	// The session now carries the role's new type.
	if got, err := e.s.Authenticate(ctx, sid); err != nil || got.Role != RoleUser {
		t.Errorf("after the type change: %+v, %v", got, err)
	}
	for _, c := range []struct {
		name string
		err  error
		call func() error
	}{
		{"update of the read-only role", ErrReadOnly, func() error { return e.s.UpdateRoles(ctx, []RoleChange{{ID: 3, Name: &name}}) }},
		{"delete of the read-only role", ErrReadOnly, func() error { return e.s.DeleteRoles(ctx, []uint64{3}) }},
		{"delete of a role in use", ErrInUse, func() error { return e.s.DeleteRoles(ctx, []uint64{ids[0]}) }},
		{"delete of an unknown role", ErrNotFound, func() error { return e.s.DeleteRoles(ctx, []uint64{99}) }},
		{"a name taken", ErrExists, func() error { n := "User role"; return e.s.UpdateRoles(ctx, []RoleChange{{ID: ids[0], Name: &n}}) }},
	} {
		if err := c.call(); !errors.Is(err, c.err) {
			t.Errorf("%s: %v, want %v", c.name, err, c.err)
		}
	}
	// The last super admin keeps the type.
	root := mustCreateUser(t, e.s, "root", "R00t-secret", RoleSuperAdmin)
	user := uint64(1)
	if err := e.s.UpdateAccount(ctx, AccountUpdate{ID: root.ID, RoleID: &user}); !errors.Is(err, ErrInvalid) {
		t.Errorf("demoting the last super admin: %v", err)
	}
	if err := e.s.DeleteUser(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.s.DeleteRoles(ctx, ids); err != nil {
		t.Fatal(err)
	}
	rs, _ := e.s.Roles(ctx)
	if len(rs) != 4 {
		t.Errorf("%d roles after the delete, want the 4 defaults", len(rs))
	}
}
