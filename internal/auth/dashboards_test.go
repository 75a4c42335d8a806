package auth

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// TestDashboards: the defaults of a fresh 6.0 (dashboards 1 and 2,
// recorded from 6.0.14), create, update keeping page and widget IDs,
// shares dropped with their user, delete, and the owner check.
func TestDashboards(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	if _, err := e.s.EnsureAdmin(ctx, filepath.Join(t.TempDir(), "admin-password")); err != nil {
		t.Fatal(err)
	}
	d, err := e.s.EnsureDefaults(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Dashboards) != 2 {
		t.Fatalf("added dashboards %v", d.Dashboards)
	}
	ds, err := e.s.Dashboards(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || ds[0].ID != 1 || ds[0].Name != "Global view" || ds[0].Private != 0 || ds[0].Pages[0].ID != 1 ||
		len(ds[0].Pages[0].Widgets) != 7 || ds[0].Pages[0].Widgets[0].ID != 1 || ds[1].ID != 2 || ds[1].UserID != 1 {
		t.Fatalf("defaults: %+v", ds)
	}
	u := mustCreateUser(t, e.s, "viewer", "Secret-pass-123", RoleUser)
	ids, err := e.s.CreateDashboards(ctx, []Dashboard{{Name: "mine", UserID: 1, Private: 1, DisplayPeriod: 30,
		Pages: []DashboardPage{{Widgets: []Widget{{Type: "clock", Width: 4, Height: 2}}}},
		Users: []DashboardShare{{ID: u.ID, Permission: PermRead}}, UserGroups: []DashboardShare{{ID: 7, Permission: PermReadWrite}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.CreateDashboards(ctx, []Dashboard{{Name: "mine", UserID: 1}}); !errors.Is(err, ErrExists) {
		t.Errorf("duplicate name: %v", err)
	}
	if _, err := e.s.CreateDashboards(ctx, []Dashboard{{Name: "other", UserID: 1, Users: []DashboardShare{{ID: 999, Permission: PermRead}}}}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown user: %v", err)
	}
	ds, _ = e.s.Dashboards(ctx)
	got := ds[2]
	if got.ID != ids[0] || got.Pages[0].ID <= 2 || got.Pages[0].Widgets[0].ID <= 13 || len(got.Users) != 1 || len(got.UserGroups) != 1 {
		t.Fatalf("created: %+v", got)
	}
	pageID, widgetID := got.Pages[0].ID, got.Pages[0].Widgets[0].ID
	got.Pages = append(got.Pages, DashboardPage{Name: "two"})
	got.Pages[0].Widgets[0].X = 5
	if err := e.s.UpdateDashboards(ctx, []Dashboard{got}); err != nil {
		t.Fatal(err)
	}
	ds, _ = e.s.Dashboards(ctx)
	if p := ds[2].Pages; len(p) != 2 || p[0].ID != pageID || p[0].Widgets[0].ID != widgetID || p[0].Widgets[0].X != 5 || p[1].ID <= pageID {
		t.Fatalf("updated: %+v", ds[2].Pages)
	}
	if name, err := e.s.OwnedDashboard(ctx, 1); err != nil || name != "Global view" {
		t.Errorf("owned: %q %v", name, err)
	}
	if err := e.s.DeleteUser(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	ds, _ = e.s.Dashboards(ctx)
	if len(ds[2].Users) != 0 {
		t.Errorf("share of a deleted user kept: %+v", ds[2].Users)
	}
	if err := e.s.DeleteDashboards(ctx, []uint64{ids[0], 999}); !errors.Is(err, ErrNotFound) {
		t.Errorf("delete of a missing one: %v", err)
	}
	if err := e.s.DeleteDashboards(ctx, ids); err != nil {
		t.Fatal(err)
	}
	e.reopen(t)
	ds, _ = e.s.Dashboards(ctx)
	if len(ds) != 2 {
		t.Errorf("after delete and reopen: %d dashboards", len(ds))
	}
}
