package auth

import (
	"context"
	"database/sql"
	_ "embed" // the default dashboards
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Dashboard is a global dashboard (Zabbix 6.0's dashboard.*): an owner,
// sharing with users and user groups, and pages of widgets. It lives
// here, beside the users and groups it is shared with, so that deleting
// a user or a group drops its shares in the same transaction (ON DELETE
// CASCADE) and the owner check of user.delete reads the same database.
// Widget fields name catalog objects (items, hosts, graphs) by ID; the
// API checks them, as it checks rights' host groups.
type Dashboard struct {
	ID            uint64
	Name          string
	UserID        uint64 // the owner
	Private       int    // 0 public, 1 private
	DisplayPeriod int    // seconds a page is shown in a slide show
	AutoStart     int    // 1: the slide show starts by itself
	UUID          string
	Pages         []DashboardPage
	Users         []DashboardShare // ascending by ID
	UserGroups    []DashboardShare // ascending by ID
}

// DashboardPage is one page; ID 0 in a create or update is a new page.
type DashboardPage struct {
	ID            uint64   `json:"id"`
	Name          string   `json:"name"`
	DisplayPeriod int      `json:"display_period"`
	Widgets       []Widget `json:"widgets"`
}

// Widget is one widget of a page on the 24-column grid; ID 0 in a
// create or update is a new widget.
type Widget struct {
	ID       uint64        `json:"id"`
	Type     string        `json:"type"`
	Name     string        `json:"name"`
	X        int           `json:"x"`
	Y        int           `json:"y"`
	Width    int           `json:"width"`
	Height   int           `json:"height"`
	ViewMode int           `json:"view_mode"`
	Fields   []WidgetField `json:"fields"`
}

// WidgetField is one field of a widget with Zabbix 6.0's field types
// (0 integer, 1 string, 2 host group, 3 host, 4 item, 5 item prototype,
// 6 graph, 7 graph prototype, 8 map, 9 service, 10 SLA).
type WidgetField struct {
	Type  int    `json:"type"`
	Name  string `json:"name"`
	Value string `json:"value"`
}

// DashboardShare is a user's or a user group's access to a dashboard:
// PermRead or PermReadWrite.
type DashboardShare struct {
	ID         uint64
	Permission Permission
}

// dashboardSchema is what version 4 added: dashboards, pages and
// widgets as JSON in the dashboard's row (a dashboard is read and
// written whole), their shares as rows (deleting a user or group drops
// them), and the page and widget ID counters (never reused, as
// AUTOINCREMENT).
const dashboardSchema = `
CREATE TABLE dashboard (
	id             INTEGER PRIMARY KEY AUTOINCREMENT,
	name           TEXT NOT NULL UNIQUE,
	user_id        INTEGER NOT NULL,
	private        INTEGER NOT NULL DEFAULT 1,
	display_period INTEGER NOT NULL DEFAULT 30,
	auto_start     INTEGER NOT NULL DEFAULT 1,
	uuid           TEXT NOT NULL DEFAULT '',
	pages          TEXT NOT NULL
);
CREATE INDEX dashboard_owner ON dashboard (user_id);
CREATE TABLE dashboard_user (
	dashboard_id INTEGER NOT NULL REFERENCES dashboard (id) ON DELETE CASCADE,
	user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	permission   INTEGER NOT NULL CHECK (permission IN (2, 3)),
	PRIMARY KEY (dashboard_id, user_id)
) WITHOUT ROWID;
CREATE TABLE dashboard_usrgrp (
	dashboard_id INTEGER NOT NULL REFERENCES dashboard (id) ON DELETE CASCADE,
	usrgrp_id    INTEGER NOT NULL REFERENCES usrgrp (id) ON DELETE CASCADE,
	permission   INTEGER NOT NULL CHECK (permission IN (2, 3)),
	PRIMARY KEY (dashboard_id, usrgrp_id)
) WITHOUT ROWID;
CREATE TABLE dashboard_seq (
	name TEXT PRIMARY KEY,
	last INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO dashboard_seq (name, last) VALUES ('page', 0), ('widget', 0);
`

// Dashboards returns every dashboard, ascending by ID.
func (s *Store) Dashboards(ctx context.Context) ([]Dashboard, error) {
	if err := s.begin(); err != nil {
		return nil, err
	}
	defer s.end()
	var out []Dashboard
	byID := map[uint64]int{}
	rows, err := s.db.QueryContext(ctx, "SELECT id, name, user_id, private, display_period, auto_start, uuid, pages FROM dashboard ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("auth: cannot read dashboards: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var d Dashboard
		var pages string
		if err := rows.Scan(&d.ID, &d.Name, &d.UserID, &d.Private, &d.DisplayPeriod, &d.AutoStart, &d.UUID, &pages); err != nil {
			return nil, fmt.Errorf("auth: cannot read dashboards: %w", err)
		}
		if err := json.Unmarshal([]byte(pages), &d.Pages); err != nil {
			return nil, fmt.Errorf("auth: dashboard %d: %v: %w", d.ID, err, ErrCorrupt)
		}
		byID[d.ID] = len(out)
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("auth: cannot read dashboards: %w", err)
	}
	for _, t := range []struct {
		q   string
		set func(d *Dashboard, sh DashboardShare)
	}{
		{"SELECT dashboard_id, user_id, permission FROM dashboard_user ORDER BY dashboard_id, user_id",
			func(d *Dashboard, sh DashboardShare) { d.Users = append(d.Users, sh) }},
		{"SELECT dashboard_id, usrgrp_id, permission FROM dashboard_usrgrp ORDER BY dashboard_id, usrgrp_id",
			func(d *Dashboard, sh DashboardShare) { d.UserGroups = append(d.UserGroups, sh) }},
	} {
		rows, err := s.db.QueryContext(ctx, t.q)
		if err != nil {
			return nil, fmt.Errorf("auth: cannot read dashboard shares: %w", err)
		}
		for rows.Next() {
			var did uint64
			var sh DashboardShare
			if err := rows.Scan(&did, &sh.ID, &sh.Permission); err != nil {
				rows.Close()
				return nil, fmt.Errorf("auth: cannot read dashboard shares: %w", err)
			}
			if i, ok := byID[did]; ok {
				t.set(&out[i], sh)
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("auth: cannot read dashboard shares: %w", err)
		}
	}
	return out, nil
}

// CreateDashboards creates dashboards in one transaction and returns
// their IDs in order; their pages and widgets get new IDs. Names are
// unique (ErrExists); shared users and groups must exist (ErrNotFound).
func (s *Store) CreateDashboards(ctx context.Context, ds []Dashboard) ([]uint64, error) {
	if err := s.begin(); err != nil {
		return nil, err
	}
	defer s.end()
	tx, err := s.tx(ctx)
	if err != nil {
		return nil, fmt.Errorf("auth: cannot create dashboards: %w", err)
	}
	defer tx.Rollback()
	ids := make([]uint64, len(ds))
	for i := range ds {
		d := ds[i]
		d.ID = 0
		if ids[i], err = writeDashboard(ctx, tx, &d, false); err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("auth: cannot create dashboards: %w", err)
	}
	return ids, nil
}

// UpdateDashboards replaces dashboards whole, in one transaction: pages
// and widgets with an ID keep it, those with ID 0 get a new one, and
// the ones left out are gone. The shares are replaced too.
func (s *Store) UpdateDashboards(ctx context.Context, ds []Dashboard) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	tx, err := s.tx(ctx)
	if err != nil {
		return fmt.Errorf("auth: cannot update dashboards: %w", err)
	}
	defer tx.Rollback()
	for i := range ds {
		d := ds[i]
		if _, err := writeDashboard(ctx, tx, &d, true); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("auth: cannot update dashboards: %w", err)
	}
	return nil
}

// DeleteDashboards deletes dashboards and their shares, all or none
// (ErrNotFound for an ID that is not a dashboard).
func (s *Store) DeleteDashboards(ctx context.Context, ids []uint64) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	tx, err := s.tx(ctx)
	if err != nil {
		return fmt.Errorf("auth: cannot delete dashboards: %w", err)
	}
	defer tx.Rollback()
	for _, id := range ids {
		res, err := tx.ExecContext(ctx, "DELETE FROM dashboard WHERE id = ?", int64(id))
		if err != nil {
			return fmt.Errorf("auth: cannot delete dashboard %d: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("auth: dashboard %d: %w", id, ErrNotFound)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("auth: cannot delete dashboards: %w", err)
	}
	return nil
}

// OwnedDashboard returns the name of a dashboard user owns, "" when
// none: Zabbix 6.0 refuses to delete the owner of a dashboard.
func (s *Store) OwnedDashboard(ctx context.Context, user uint64) (string, error) {
	if err := s.begin(); err != nil {
		return "", err
	}
	defer s.end()
	var name string
	err := s.db.QueryRowContext(ctx, "SELECT name FROM dashboard WHERE user_id = ? ORDER BY id LIMIT 1", int64(user)).Scan(&name)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("auth: cannot read dashboards: %w", err)
	}
	return name, nil
}

// nextID takes the next page or widget ID.
func nextID(ctx context.Context, tx *sql.Tx, seq string) (uint64, error) {
	var id uint64
	err := tx.QueryRowContext(ctx, "UPDATE dashboard_seq SET last = last + 1 WHERE name = ? RETURNING last", seq).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("auth: cannot number a dashboard %s: %w", seq, err)
	}
	return id, nil
}

// bumpSeq makes seq at least id (a page or widget given its ID).
func bumpSeq(ctx context.Context, tx *sql.Tx, seq string, id uint64) error {
	_, err := tx.ExecContext(ctx, "UPDATE dashboard_seq SET last = max(last, ?) WHERE name = ?", int64(id), seq)
	return err
}

// writeDashboard inserts d (update false) or replaces the row of d.ID,
// numbering its new pages and widgets, and returns its ID.
func writeDashboard(ctx context.Context, tx *sql.Tx, d *Dashboard, update bool) (uint64, error) {
	if d.Name == "" || utf8.RuneCountInString(d.Name) > 255 || !utf8.ValidString(d.Name) {
		return 0, fmt.Errorf("auth: dashboard name %q is empty, longer than 255 characters or not UTF-8: %w", d.Name, ErrInvalid)
	}
	pages := make([]DashboardPage, len(d.Pages))
	for i, p := range d.Pages {
		p.Widgets = append([]Widget(nil), p.Widgets...)
		var err error
		if p.ID == 0 {
			p.ID, err = nextID(ctx, tx, "page")
		} else {
			err = bumpSeq(ctx, tx, "page", p.ID)
		}
		if err != nil {
			return 0, err
		}
		for j := range p.Widgets {
			w := &p.Widgets[j]
			if w.ID == 0 {
				w.ID, err = nextID(ctx, tx, "widget")
			} else {
				err = bumpSeq(ctx, tx, "widget", w.ID)
			}
			if err != nil {
				return 0, err
			}
			if w.Fields == nil {
				w.Fields = []WidgetField{}
			}
		}
		if p.Widgets == nil {
			p.Widgets = []Widget{}
		}
		pages[i] = p
	}
	js, err := json.Marshal(pages)
	if err != nil {
		return 0, fmt.Errorf("auth: dashboard %q: %w", d.Name, err)
	}
	id := d.ID
	if update {
		res, err := tx.ExecContext(ctx, `UPDATE dashboard SET name = ?, user_id = ?, private = ?, display_period = ?,
			auto_start = ?, uuid = ?, pages = ? WHERE id = ?`,
			d.Name, int64(d.UserID), d.Private, d.DisplayPeriod, d.AutoStart, d.UUID, string(js), int64(id))
		if err != nil {
			return 0, dashboardErr(d.Name, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return 0, fmt.Errorf("auth: dashboard %d: %w", id, ErrNotFound)
		}
		for _, t := range []string{"dashboard_user", "dashboard_usrgrp"} {
			if _, err := tx.ExecContext(ctx, "DELETE FROM "+t+" WHERE dashboard_id = ?", int64(id)); err != nil {
				return 0, fmt.Errorf("auth: cannot update dashboard %d: %w", id, err)
			}
		}
	} else {
		var idArg any
		if d.ID != 0 {
			idArg = int64(d.ID)
		}
		err := tx.QueryRowContext(ctx, `INSERT INTO dashboard (id, name, user_id, private, display_period, auto_start, uuid, pages)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			idArg, d.Name, int64(d.UserID), d.Private, d.DisplayPeriod, d.AutoStart, d.UUID, string(js)).Scan(&id)
		if err != nil {
			return 0, dashboardErr(d.Name, err)
		}
	}
	for _, t := range []struct {
		table, col string
		list       []DashboardShare
	}{{"dashboard_user", "user_id", d.Users}, {"dashboard_usrgrp", "usrgrp_id", d.UserGroups}} {
		for _, sh := range t.list {
			if sh.Permission != PermRead && sh.Permission != PermReadWrite {
				return 0, fmt.Errorf("auth: dashboard %q: permission %d is not 2 or 3: %w", d.Name, sh.Permission, ErrInvalid)
			}
			_, err := tx.ExecContext(ctx, "INSERT INTO "+t.table+" (dashboard_id, "+t.col+", permission) VALUES (?, ?, ?)",
				int64(id), int64(sh.ID), int(sh.Permission))
			if err != nil {
				if strings.Contains(err.Error(), "FOREIGN KEY") {
					return 0, fmt.Errorf("auth: dashboard %q: %s %d: %w", d.Name, t.col, sh.ID, ErrNotFound)
				}
				return 0, dashboardErr(d.Name, err)
			}
		}
	}
	return id, nil
}

func dashboardErr(name string, err error) error {
	if strings.Contains(err.Error(), "UNIQUE") {
		return fmt.Errorf("auth: dashboard %q: %w", name, ErrExists)
	}
	return fmt.Errorf("auth: cannot write dashboard %q: %w", name, err)
}

// defaultDashboardsJSON is dashboard.get of a fresh Zabbix 6.0's
// dashboards 1 "Global view" and 2 "Zabbix server health" (output
// extend, selectPages, selectUsers and selectUserGroups extend;
// recorded from 6.0.14). Their user shares name no users (the defaults
// have none); a group share names a default group, added before them.
//
//go:embed defaults_dashboards.json
var defaultDashboardsJSON []byte

// defaultDashboards parses defaultDashboardsJSON; owner is Admin's ID.
func defaultDashboards(owner uint64) ([]Dashboard, error) {
	type field struct{ Type, Name, Value string }
	type widget struct {
		WidgetID, Type, Name, X, Y, Width, Height string
		ViewMode                                  string `json:"view_mode"`
		Fields                                    []field
	}
	type page struct {
		DashboardPageID string `json:"dashboard_pageid"`
		Name            string
		DisplayPeriod   string `json:"display_period"`
		Widgets         []widget
	}
	var raw []struct {
		DashboardID, Name, Private string
		DisplayPeriod              string `json:"display_period"`
		AutoStart                  string `json:"auto_start"`
		Pages                      []page
		Users                      []struct{ UserID, Permission string }
		UserGroups                 []struct{ UsrgrpID, Permission string }
	}
	if err := json.Unmarshal(defaultDashboardsJSON, &raw); err != nil {
		return nil, err
	}
	n := func(s string) int { v, _ := strconv.Atoi(s); return v }
	u := func(s string) uint64 { v, _ := strconv.ParseUint(s, 10, 64); return v }
	var out []Dashboard
	for _, r := range raw {
		d := Dashboard{ID: u(r.DashboardID), Name: r.Name, UserID: owner, Private: n(r.Private),
			DisplayPeriod: n(r.DisplayPeriod), AutoStart: n(r.AutoStart)}
		for _, p := range r.Pages {
			dp := DashboardPage{ID: u(p.DashboardPageID), Name: p.Name, DisplayPeriod: n(p.DisplayPeriod)}
			for _, w := range p.Widgets {
				dw := Widget{ID: u(w.WidgetID), Type: w.Type, Name: w.Name, X: n(w.X), Y: n(w.Y),
					Width: n(w.Width), Height: n(w.Height), ViewMode: n(w.ViewMode)}
				for _, f := range w.Fields {
					dw.Fields = append(dw.Fields, WidgetField{Type: n(f.Type), Name: f.Name, Value: f.Value})
				}
				dp.Widgets = append(dp.Widgets, dw)
			}
			d.Pages = append(d.Pages, dp)
		}
		for _, sh := range r.UserGroups {
			d.UserGroups = append(d.UserGroups, DashboardShare{ID: u(sh.UsrgrpID), Permission: Permission(n(sh.Permission))})
		}
		out = append(out, d)
	}
	return out, nil
}

// ensureDefaultDashboards adds the default dashboards whose names are
// free, owned by Admin (none when there is no Admin).
func ensureDefaultDashboards(ctx context.Context, tx *sql.Tx) ([]string, error) {
	var owner uint64
	err := tx.QueryRowContext(ctx, "SELECT id FROM users WHERE username = ?", adminUsername).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("auth: cannot add the default dashboards: %w", err)
	}
	ds, err := defaultDashboards(owner)
	if err != nil {
		return nil, fmt.Errorf("auth: cannot add the default dashboards: %w", err)
	}
	var added []string
	for i := range ds {
		var one int
		err := tx.QueryRowContext(ctx, "SELECT 1 FROM dashboard WHERE name = ? OR id = ?", ds[i].Name, int64(ds[i].ID)).Scan(&one)
		if err == nil {
			continue
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("auth: cannot add the default dashboards: %w", err)
		}
		if _, err := writeDashboard(ctx, tx, &ds[i], false); err != nil {
			return nil, err
		}
		added = append(added, ds[i].Name)
	}
	return added, nil
}
