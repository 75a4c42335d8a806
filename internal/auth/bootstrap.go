package auth

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"os"
)

// adminAccount is the first user, as a fresh Zabbix 6.0 has it (name,
// surname, role 3 "Super admin role", autologin on, no autologout)
// except for the password.
func adminAccount() NewAccount {
	p := NewProfile()
	p.Autologin, p.Autologout = 1, "0"
	return NewAccount{Username: adminUsername, Name: "Zabbix", Surname: "Administrator", RoleID: superAdminRoleID, Profile: p}
}

// superAdminRoleID is Zabbix's read-only super admin role.
const superAdminRoleID = 3

// EnsureAdmin bootstraps a fresh installation. If there is no user at
// all, it creates the super admin "Admin" (user 1 of a new database,
// role 3, as in Zabbix 6.0) with a random 20-character
// password, writes that password (followed by a newline) to a new file
// passwordPath with mode 0600, and returns created=true. The file must
// not exist: it is never overwritten, so a password cannot be lost by a
// second start. If any user exists, EnsureAdmin does nothing.
//
// The caller should log where the file is and ask the operator to read
// it, change the password and delete the file; the password itself is
// never logged.
func (s *Store) EnsureAdmin(ctx context.Context, passwordPath string) (created bool, err error) {
	if err := s.begin(); err != nil {
		return false, err
	}
	defer s.end()
	// One bootstrap at a time, so that two concurrent callers cannot both
	// see an empty table and race for the file.
	s.ensureMu.Lock()
	defer s.ensureMu.Unlock()
	var n int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM users").Scan(&n); err != nil {
		return false, fmt.Errorf("auth: cannot count users: %w", err)
	}
	if n > 0 {
		return false, nil
	}
	password, err := randomPassword(adminPasswordLen)
	if err != nil {
		return false, err
	}
	hash, err := s.h.hash(ctx, password)
	if err != nil {
		return false, err
	}
	// The file is written before the user exists: if the write fails we
	// have created nothing, and if creating the user fails we remove the
	// file, so the next start tries again from scratch.
	if err := writeSecretFile(passwordPath, password+"\n"); err != nil {
		return false, err
	}
	keep := false
	defer func() {
		if !keep {
			os.Remove(passwordPath)
		}
	}()
	tx, err := s.tx(ctx)
	if err != nil {
		return false, fmt.Errorf("auth: cannot create user %s: %w", adminUsername, err)
	}
	defer tx.Rollback()
	// Count again under the write lock: another caller may have created
	// a user since the first count.
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM users").Scan(&n); err != nil {
		return false, fmt.Errorf("auth: cannot count users: %w", err)
	}
	if n > 0 {
		return false, nil
	}
	u, err := insertUser(ctx, tx, 0, adminAccount(), hash)
	if err != nil {
		return false, err
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("auth: cannot create user %s: %w", adminUsername, err)
	}
	keep = true
	s.log.Info("auth: initial super admin created", "userid", u.ID, "username", u.Username)
	return true, nil
}

// writeSecretFile creates path exclusively with mode 0600 and writes
// content to it durably.
func writeSecretFile(path, content string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("auth: cannot write the initial admin password: %s exists already; it may hold the password of an earlier installation: move it away and restart: %w", path, ErrExists)
		}
		return fmt.Errorf("auth: cannot write the initial admin password: %w", err)
	}
	_, err = f.WriteString(content)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("auth: cannot write the initial admin password to %s: %w", path, err)
	}
	return nil
}

// randomPassword returns n characters drawn uniformly from
// passwordAlphabet (about 5.95 bits each) with crypto/rand.
func randomPassword(n int) (string, error) {
	const limit = 256 - 256%len(passwordAlphabet) // rejection bound for uniformity
	out := make([]byte, 0, n)
	var buf [64]byte
	for len(out) < n {
		if _, err := rand.Read(buf[:]); err != nil {
			return "", fmt.Errorf("auth: cannot read random bytes: %w", err)
		}
		for _, b := range buf {
			if int(b) < limit && len(out) < n {
				out = append(out, passwordAlphabet[int(b)%len(passwordAlphabet)])
			}
		}
	}
	return string(out), nil
}

// The default user groups of a fresh Zabbix 6.0, with their IDs
// (recorded from 6.0.14's usergroup.get).
var defaultUserGroups = []UserGroup{
	{ID: 7, Name: "Zabbix administrators"},
	{ID: 8, Name: "Guests", GUIAccess: 1},
	{ID: 9, Name: "Disabled", UsersStatus: 1},
	{ID: 11, Name: "Enabled debug mode", DebugMode: 1},
	{ID: 12, Name: "No access to the frontend", GUIAccess: 3},
}

// The guest user of a fresh Zabbix 6.0 (user 2, role 4, in "Guests" and
// "Disabled"). Peregrine's has no password: no password opens it, even
// once it leaves "Disabled".
const (
	guestUsername = "guest"
	guestUserID   = 2
)

// defaultsVersion is the version of the default objects EnsureDefaults
// adds; auth_meta.defaults records the last version added, so a default
// object a user deleted does not come back at the next start.
const defaultsVersion = 2

// Defaults says what EnsureDefaults added.
type Defaults struct {
	UserGroups []string // names
	Guest      bool
	Dashboards []string // names
}

// EnsureDefaults gives the database what a fresh Zabbix 6.0 has beside
// its roles (which every database has from its creation): the user
// groups 7 "Zabbix administrators", 8 "Guests", 9 "Disabled", 11
// "Enabled debug mode" and 12 "No access to the frontend", the user
// "guest" (ID 2, role 4, in Guests and Disabled), and Admin in
// "Zabbix administrators", and the dashboards 1 "Global view" and 2
// "Zabbix server health" owned by Admin. It runs once per database (auth_meta.defaults):
// afterwards a default object the user deleted or changed stays so.
//
// On a database that has users and groups of its own (one from before
// these defaults), it adds only what is missing by name: a group or
// user of that name is left as it is, and an ID already taken makes the
// default take the next free one. Admin joins "Zabbix administrators"
// only when the group is added.
//
// Call it after EnsureAdmin, so that Admin is user 1 of a new database.
func (s *Store) EnsureDefaults(ctx context.Context) (Defaults, error) {
	var d Defaults
	if err := s.begin(); err != nil {
		return d, err
	}
	defer s.end()
	s.ensureMu.Lock()
	defer s.ensureMu.Unlock()
	s.fillMu.Lock()
	defer s.fillMu.Unlock()
	tx, err := s.tx(ctx)
	if err != nil {
		return d, fmt.Errorf("auth: cannot add the default user groups: %w", err)
	}
	defer tx.Rollback()
	var done int
	if err := tx.QueryRowContext(ctx, "SELECT defaults FROM auth_meta WHERE id = 1").Scan(&done); err != nil {
		return d, fmt.Errorf("auth: cannot read auth_meta: %w", err)
	}
	if done >= defaultsVersion {
		return d, nil
	}
	if done >= 1 {
		// Version 2 added the default dashboards only.
		if d.Dashboards, err = ensureDefaultDashboards(ctx, tx); err != nil {
			return d, err
		}
		return d, s.commitDefaults(ctx, tx, d)
	}
	idFree := func(table string, id uint64) (bool, error) {
		var one int
		err := tx.QueryRowContext(ctx, "SELECT 1 FROM "+table+" WHERE id = ?", int64(id)).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return true, nil
		}
		return false, err
	}
	groupID := func(name string) (uint64, error) {
		var id uint64
		err := tx.QueryRowContext(ctx, "SELECT id FROM usrgrp WHERE name = ?", name).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, nil
		}
		return id, err
	}
	for _, g := range defaultUserGroups {
		if id, err := groupID(g.Name); err != nil {
			return d, fmt.Errorf("auth: cannot add user group %q: %w", g.Name, err)
		} else if id != 0 {
			continue
		}
		free, err := idFree("usrgrp", g.ID)
		if err != nil {
			return d, fmt.Errorf("auth: cannot add user group %q: %w", g.Name, err)
		}
		var idArg any
		if free {
			idArg = int64(g.ID)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO usrgrp (id, name, gui_access, users_status, debug_mode) VALUES (?, ?, ?, ?, ?)",
			idArg, g.Name, g.GUIAccess, g.UsersStatus, g.DebugMode); err != nil {
			return d, fmt.Errorf("auth: cannot add user group %q: %w", g.Name, err)
		}
		d.UserGroups = append(d.UserGroups, g.Name)
		if g.ID == 7 {
			// Admin joins the administrators' group it did not have.
			gid, err := groupID(g.Name)
			if err != nil {
				return d, fmt.Errorf("auth: cannot add user group %q: %w", g.Name, err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO users_groups (usrgrp_id, user_id)
				SELECT ?, id FROM users WHERE username = ?`, int64(gid), adminUsername); err != nil {
				return d, fmt.Errorf("auth: cannot add %s to user group %q: %w", adminUsername, g.Name, err)
			}
		}
	}
	var one int
	err = tx.QueryRowContext(ctx, "SELECT 1 FROM users WHERE username = ?", guestUsername).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		free, err := idFree("users", guestUserID)
		if err != nil {
			return d, fmt.Errorf("auth: cannot add user %s: %w", guestUsername, err)
		}
		var id uint64
		if free {
			id = guestUserID
		}
		u, err := insertUser(ctx, tx, id, NewAccount{Username: guestUsername, RoleID: GuestRoleID, Profile: NewProfile()}, "")
		if err != nil {
			return d, err
		}
		for _, name := range []string{"Guests", "Disabled"} {
			gid, err := groupID(name)
			if err != nil {
				return d, fmt.Errorf("auth: cannot add user %s: %w", guestUsername, err)
			}
			if gid == 0 {
				continue
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO users_groups (usrgrp_id, user_id) VALUES (?, ?)", int64(gid), int64(u.ID)); err != nil {
				return d, fmt.Errorf("auth: cannot add user %s to user group %q: %w", guestUsername, name, err)
			}
		}
		d.Guest = true
	} else if err != nil {
		return d, fmt.Errorf("auth: cannot add user %s: %w", guestUsername, err)
	}
	if d.Dashboards, err = ensureDefaultDashboards(ctx, tx); err != nil {
		return d, err
	}
	return d, s.commitDefaults(ctx, tx, d)
}

// commitDefaults records the defaults version and commits what
// EnsureDefaults added.
func (s *Store) commitDefaults(ctx context.Context, tx *sql.Tx, d Defaults) error {
	if _, err := tx.ExecContext(ctx, "UPDATE auth_meta SET defaults = ? WHERE id = 1", defaultsVersion); err != nil {
		return fmt.Errorf("auth: cannot record the defaults: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("auth: cannot add the default user groups: %w", err)
	}
	s.groupsChanged(nil, nil)
	if len(d.UserGroups) > 0 || d.Guest || len(d.Dashboards) > 0 {
		s.log.Info("auth: added Zabbix 6.0's default user groups, users and dashboards", "usergroups", d.UserGroups, "guest", d.Guest, "dashboards", d.Dashboards)
	}
	return nil
}
