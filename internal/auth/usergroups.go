package auth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
)

// Permission is a user group's access to the hosts of a host group, with
// Zabbix's values.
type Permission int

// The Zabbix permission levels. PermNone is no stored value: the user
// group has no say on the host group.
const (
	PermNone      Permission = -1
	PermDeny      Permission = 0
	PermRead      Permission = 2
	PermReadWrite Permission = 3
)

// Valid reports whether p may be stored in a user group's rights.
func (p Permission) Valid() bool { return p == PermDeny || p == PermRead || p == PermReadWrite }

// Right is one user group's permission on one host group.
type Right struct {
	HostGroupID uint64
	Permission  Permission
}

// UserGroup is a Zabbix user group: its members and the permissions it
// grants them on host groups.
type UserGroup struct {
	ID   uint64
	Name string
	// GUIAccess (0 system default, 1 internal, 2 LDAP, 3 disabled) and
	// DebugMode (0, 1) are stored and returned as Zabbix does; Peregrine
	// has no frontend login that would use them yet.
	GUIAccess int
	DebugMode int
	// UsersStatus 1 disables the group's members: they cannot log in,
	// and their sessions and tokens stop working (Zabbix's "users_status").
	UsersStatus int
	Rights      []Right  // ascending by host group ID
	UserIDs     []uint64 // ascending
}

// UserGroupUpdate changes the fields of user group ID that are set; nil
// fields keep their value. Rights and UserIDs, when set, replace the
// whole list.
type UserGroupUpdate struct {
	ID                                uint64
	Name                              *string
	GUIAccess, DebugMode, UsersStatus *int
	Rights                            *[]Right
	UserIDs                           *[]uint64
}

// maxUserGroupNameLen is Zabbix's usrgrp.name length.
const maxUserGroupNameLen = 64

func checkUserGroupName(name string) error {
	return checkName("user group name", name, maxUserGroupNameLen)
}

// checkUserGroupFields validates the enumerations and lists of a group.
func checkUserGroupFields(gui, debug, status *int, rights *[]Right, users *[]uint64) error {
	switch {
	case gui != nil && (*gui < 0 || *gui > 3):
		return fmt.Errorf("auth: gui_access %d is not 0, 1, 2 or 3: %w", *gui, ErrInvalid)
	case debug != nil && *debug != 0 && *debug != 1:
		return fmt.Errorf("auth: debug_mode %d is not 0 or 1: %w", *debug, ErrInvalid)
	case status != nil && *status != 0 && *status != 1:
		return fmt.Errorf("auth: users_status %d is not 0 or 1: %w", *status, ErrInvalid)
	}
	if rights != nil {
		for i, r := range *rights {
			if !r.Permission.Valid() {
				return fmt.Errorf("auth: permission %d on host group %d is not 0 (deny), 2 (read) or 3 (read-write): %w", r.Permission, r.HostGroupID, ErrInvalid)
			}
			if slices.ContainsFunc((*rights)[:i], func(o Right) bool { return o.HostGroupID == r.HostGroupID }) {
				return fmt.Errorf("auth: host group %d is given twice: %w", r.HostGroupID, ErrInvalid)
			}
		}
	}
	if users != nil {
		for i, u := range *users {
			if slices.Contains((*users)[:i], u) {
				return fmt.Errorf("auth: user %d is given twice: %w", u, ErrInvalid)
			}
		}
	}
	return nil
}

// CreateUserGroups creates user groups in one transaction and returns
// their IDs in order. Names are unique (ErrExists); every member must
// exist (ErrNotFound). Rights name host groups by ID; the caller checks
// that they exist (they live in the catalog). The IDs of gs are ignored.
func (s *Store) CreateUserGroups(ctx context.Context, gs []UserGroup) ([]uint64, error) {
	if err := s.begin(); err != nil {
		return nil, err
	}
	defer s.end()
	for _, g := range gs {
		if err := checkUserGroupName(g.Name); err != nil {
			return nil, err
		}
		if err := checkUserGroupFields(&g.GUIAccess, &g.DebugMode, &g.UsersStatus, &g.Rights, &g.UserIDs); err != nil {
			return nil, err
		}
	}
	s.fillMu.Lock()
	defer s.fillMu.Unlock()
	tx, err := s.tx(ctx)
	if err != nil {
		return nil, fmt.Errorf("auth: cannot create user groups: %w", err)
	}
	defer tx.Rollback()
	ids := make([]uint64, len(gs))
	for i, g := range gs {
		if err := nameFree(ctx, tx, g.Name, 0); err != nil {
			return nil, err
		}
		res, err := tx.ExecContext(ctx, "INSERT INTO usrgrp (name, gui_access, users_status, debug_mode) VALUES (?, ?, ?, ?)",
			g.Name, g.GUIAccess, g.UsersStatus, g.DebugMode)
		if err != nil {
			return nil, fmt.Errorf("auth: cannot create user group %q: %w", g.Name, err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return nil, fmt.Errorf("auth: cannot create user group %q: %w", g.Name, err)
		}
		ids[i] = uint64(id)
		if err := setRights(ctx, tx, ids[i], g.Rights); err != nil {
			return nil, err
		}
		if err := setMembers(ctx, tx, ids[i], g.UserIDs); err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("auth: cannot create user groups: %w", err)
	}
	s.groupsChanged(gs, nil)
	s.log.Info("auth: user groups created", "usrgrpids", ids)
	return ids, nil
}

// UpdateUserGroups changes user groups in one transaction. An unknown ID
// gives ErrNotFound; nothing is changed then.
func (s *Store) UpdateUserGroups(ctx context.Context, us []UserGroupUpdate) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	for _, u := range us {
		if u.Name != nil {
			if err := checkUserGroupName(*u.Name); err != nil {
				return err
			}
		}
		if err := checkUserGroupFields(u.GUIAccess, u.DebugMode, u.UsersStatus, u.Rights, u.UserIDs); err != nil {
			return err
		}
	}
	s.fillMu.Lock()
	defer s.fillMu.Unlock()
	tx, err := s.tx(ctx)
	if err != nil {
		return fmt.Errorf("auth: cannot update user groups: %w", err)
	}
	defer tx.Rollback()
	// Members before and after: a status change or a membership change
	// must end the cached sessions of whoever it disables.
	var touched []uint64
	for _, u := range us {
		var one int
		err := tx.QueryRowContext(ctx, "SELECT 1 FROM usrgrp WHERE id = ?", int64(u.ID)).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("auth: user group %d: %w", u.ID, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("auth: cannot update user group %d: %w", u.ID, err)
		}
		old, err := members(ctx, tx, u.ID)
		if err != nil {
			return err
		}
		touched = append(touched, old...)
		if u.Name != nil {
			if err := nameFree(ctx, tx, *u.Name, u.ID); err != nil {
				return err
			}
		}
		for _, f := range []struct {
			col string
			v   any
		}{{"name", u.Name}, {"gui_access", u.GUIAccess}, {"debug_mode", u.DebugMode}, {"users_status", u.UsersStatus}} {
			switch v := f.v.(type) {
			case *string:
				if v == nil {
					continue
				}
			case *int:
				if v == nil {
					continue
				}
			}
			if _, err := tx.ExecContext(ctx, "UPDATE usrgrp SET "+f.col+" = ? WHERE id = ?", f.v, int64(u.ID)); err != nil {
				return fmt.Errorf("auth: cannot update user group %d: %w", u.ID, err)
			}
		}
		if u.Rights != nil {
			if _, err := tx.ExecContext(ctx, "DELETE FROM rights WHERE usrgrp_id = ?", int64(u.ID)); err != nil {
				return fmt.Errorf("auth: cannot update the rights of user group %d: %w", u.ID, err)
			}
			if err := setRights(ctx, tx, u.ID, *u.Rights); err != nil {
				return err
			}
		}
		if u.UserIDs != nil {
			if _, err := tx.ExecContext(ctx, "DELETE FROM users_groups WHERE usrgrp_id = ?", int64(u.ID)); err != nil {
				return fmt.Errorf("auth: cannot update the members of user group %d: %w", u.ID, err)
			}
			if err := setMembers(ctx, tx, u.ID, *u.UserIDs); err != nil {
				return err
			}
			touched = append(touched, *u.UserIDs...)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("auth: cannot update user groups: %w", err)
	}
	s.groupsChanged(nil, touched)
	s.log.Info("auth: user groups updated", "count", len(us))
	return nil
}

// DeleteUserGroups deletes user groups with their memberships and
// rights. An unknown ID gives ErrNotFound; nothing is deleted then.
func (s *Store) DeleteUserGroups(ctx context.Context, ids []uint64) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	s.fillMu.Lock()
	defer s.fillMu.Unlock()
	tx, err := s.tx(ctx)
	if err != nil {
		return fmt.Errorf("auth: cannot delete user groups: %w", err)
	}
	defer tx.Rollback()
	var touched []uint64
	for _, id := range ids {
		old, err := members(ctx, tx, id)
		if err != nil {
			return err
		}
		touched = append(touched, old...)
		res, err := tx.ExecContext(ctx, "DELETE FROM usrgrp WHERE id = ?", int64(id))
		if err != nil {
			return fmt.Errorf("auth: cannot delete user group %d: %w", id, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("auth: cannot delete user group %d: %w", id, err)
		} else if n == 0 {
			return fmt.Errorf("auth: user group %d: %w", id, ErrNotFound)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("auth: cannot delete user groups: %w", err)
	}
	s.groupsChanged(nil, touched)
	s.log.Info("auth: user groups deleted", "usrgrpids", ids)
	return nil
}

// SetUserGroups makes userID a member of exactly the given user groups
// (user.create and user.update "usrgrps"). Unknown users or groups give
// ErrNotFound.
func (s *Store) SetUserGroups(ctx context.Context, userID uint64, groupIDs []uint64) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	if err := checkUserGroupFields(nil, nil, nil, nil, &groupIDs); err != nil {
		return err
	}
	s.fillMu.Lock()
	defer s.fillMu.Unlock()
	tx, err := s.tx(ctx)
	if err != nil {
		return fmt.Errorf("auth: cannot set the user groups of user %d: %w", userID, err)
	}
	defer tx.Rollback()
	var one int
	err = tx.QueryRowContext(ctx, "SELECT 1 FROM users WHERE id = ?", int64(userID)).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("auth: user %d: %w", userID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("auth: cannot set the user groups of user %d: %w", userID, err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM users_groups WHERE user_id = ?", int64(userID)); err != nil {
		return fmt.Errorf("auth: cannot set the user groups of user %d: %w", userID, err)
	}
	for _, g := range groupIDs {
		if err := addMember(ctx, tx, g, userID); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("auth: cannot set the user groups of user %d: %w", userID, err)
	}
	s.groupsChanged(nil, []uint64{userID})
	return nil
}

// UserGroups returns every user group with its rights and members,
// ordered by ID.
func (s *Store) UserGroups(ctx context.Context) ([]UserGroup, error) {
	if err := s.begin(); err != nil {
		return nil, err
	}
	defer s.end()
	rows, err := s.db.QueryContext(ctx, "SELECT id, name, gui_access, users_status, debug_mode FROM usrgrp ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("auth: cannot list user groups: %w", err)
	}
	var gs []UserGroup
	byID := map[uint64]int{}
	for rows.Next() {
		var g UserGroup
		if err := rows.Scan(&g.ID, &g.Name, &g.GUIAccess, &g.UsersStatus, &g.DebugMode); err != nil {
			rows.Close()
			return nil, fmt.Errorf("auth: cannot list user groups: %w", err)
		}
		byID[g.ID] = len(gs)
		gs = append(gs, g)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("auth: cannot list user groups: %w", err)
	}
	rows, err = s.db.QueryContext(ctx, "SELECT usrgrp_id, hostgroup_id, permission FROM rights ORDER BY usrgrp_id, hostgroup_id")
	if err != nil {
		return nil, fmt.Errorf("auth: cannot list user group rights: %w", err)
	}
	for rows.Next() {
		var g uint64
		var r Right
		if err := rows.Scan(&g, &r.HostGroupID, &r.Permission); err != nil {
			rows.Close()
			return nil, fmt.Errorf("auth: cannot list user group rights: %w", err)
		}
		if i, ok := byID[g]; ok {
			gs[i].Rights = append(gs[i].Rights, r)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("auth: cannot list user group rights: %w", err)
	}
	rows, err = s.db.QueryContext(ctx, "SELECT usrgrp_id, user_id FROM users_groups ORDER BY usrgrp_id, user_id")
	if err != nil {
		return nil, fmt.Errorf("auth: cannot list user group members: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var g, u uint64
		if err := rows.Scan(&g, &u); err != nil {
			return nil, fmt.Errorf("auth: cannot list user group members: %w", err)
		}
		if i, ok := byID[g]; ok {
			gs[i].UserIDs = append(gs[i].UserIDs, u)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("auth: cannot list user group members: %w", err)
	}
	return gs, nil
}

func nameFree(ctx context.Context, tx *sql.Tx, name string, self uint64) error {
	var id uint64
	err := tx.QueryRowContext(ctx, "SELECT id FROM usrgrp WHERE name = ?", name).Scan(&id)
	switch {
	case errors.Is(err, sql.ErrNoRows) || err == nil && id == self:
		return nil
	case err != nil:
		return fmt.Errorf("auth: cannot check user group name %q: %w", name, err)
	}
	return fmt.Errorf("auth: user group %q: %w", name, ErrExists)
}

func members(ctx context.Context, tx *sql.Tx, group uint64) ([]uint64, error) {
	rows, err := tx.QueryContext(ctx, "SELECT user_id FROM users_groups WHERE usrgrp_id = ?", int64(group))
	if err != nil {
		return nil, fmt.Errorf("auth: cannot read the members of user group %d: %w", group, err)
	}
	defer rows.Close()
	var out []uint64
	for rows.Next() {
		var u uint64
		if err := rows.Scan(&u); err != nil {
			return nil, fmt.Errorf("auth: cannot read the members of user group %d: %w", group, err)
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

func setRights(ctx context.Context, tx *sql.Tx, group uint64, rights []Right) error {
	for _, r := range rights {
		if _, err := tx.ExecContext(ctx, "INSERT INTO rights (usrgrp_id, hostgroup_id, permission) VALUES (?, ?, ?)",
			int64(group), int64(r.HostGroupID), int(r.Permission)); err != nil {
			return fmt.Errorf("auth: cannot set the rights of user group %d: %w", group, err)
		}
	}
	return nil
}

func setMembers(ctx context.Context, tx *sql.Tx, group uint64, users []uint64) error {
	for _, u := range users {
		var one int
		err := tx.QueryRowContext(ctx, "SELECT 1 FROM users WHERE id = ?", int64(u)).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("auth: user %d: %w", u, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("auth: cannot add user %d to user group %d: %w", u, group, err)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO users_groups (usrgrp_id, user_id) VALUES (?, ?)", int64(group), int64(u)); err != nil {
			return fmt.Errorf("auth: cannot add user %d to user group %d: %w", u, group, err)
		}
	}
	return nil
}

func addMember(ctx context.Context, tx *sql.Tx, group, user uint64) error {
	var one int
	err := tx.QueryRowContext(ctx, "SELECT 1 FROM usrgrp WHERE id = ?", int64(group)).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("auth: user group %d: %w", group, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("auth: cannot add user %d to user group %d: %w", user, group, err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO users_groups (usrgrp_id, user_id) VALUES (?, ?)", int64(group), int64(user)); err != nil {
		return fmt.Errorf("auth: cannot add user %d to user group %d: %w", user, group, err)
	}
	return nil
}
