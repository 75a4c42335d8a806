package auth

import (
	"context"
	"fmt"
)

// userEnabled is the SQL condition that user u (aliased u) is in no
// disabled user group; sessions and tokens of other users do not
// authenticate.
const userEnabled = `NOT EXISTS (SELECT 1 FROM users_groups ug JOIN usrgrp g ON g.id = ug.usrgrp_id
		WHERE ug.user_id = u.id AND g.users_status = 1)`

func (s *Store) userDisabled(ctx context.Context, userID uint64) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM users_groups ug JOIN usrgrp g ON g.id = ug.usrgrp_id
		WHERE ug.user_id = ? AND g.users_status = 1`, int64(userID)).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("auth: cannot read the user groups of user %d: %w", userID, err)
	}
	return n > 0, nil
}

// Rights is what one user may do with the hosts of each host group: the
// user groups' permissions combined as Zabbix combines them. The zero
// value grants nothing. A Rights is immutable and safe to share.
type Rights struct {
	all    bool
	groups map[uint64]Permission
}

// AllRights grants read-write on everything: a super admin's rights,
// which no deny can take away.
func AllRights() Rights { return Rights{all: true} }

// NewRights returns the rights of a user whose user groups give, per
// host group, these permissions (already combined: see Store.Rights).
func NewRights(groups map[uint64]Permission) Rights { return Rights{groups: groups} }

// All reports whether r grants everything (a super admin).
func (r Rights) All() bool { return r.all }

// Group returns the permission on one host group, PermNone if no user
// group of the user mentions it.
func (r Rights) Group(id uint64) Permission {
	if r.all {
		return PermReadWrite
	}
	if p, ok := r.groups[id]; ok {
		return p
	}
	return PermNone
}

// Host returns the permission on a host in the given host groups, by
// Zabbix's rule: groups no user group mentions do not count; a deny on
// any of the others denies the host; otherwise the highest permission
// wins. So a host in a readable group and an unmentioned one is
// readable, and a host in a read-write group and a denied one is not.
func (r Rights) Host(groupIDs []uint64) Permission {
	if r.all {
		return PermReadWrite
	}
	best := PermNone
	for _, g := range groupIDs {
		p, ok := r.groups[g]
		if !ok {
			continue
		}
		if p == PermDeny {
			return PermDeny
		}
		best = max(best, p)
	}
	return best
}

// Rights returns u's rights. A super admin has AllRights; anybody else
// the permissions of their user groups, combined per host group: a deny
// in any of them wins, otherwise the highest. A user in no user group
// has no rights at all.
//
// The result is cached per user until a user group or membership
// changes (each API request asks), so a cache hit takes one lock and no
// database access.
func (s *Store) Rights(ctx context.Context, u User) (Rights, error) {
	if u.Role == RoleSuperAdmin {
		return AllRights(), nil
	}
	if err := s.begin(); err != nil {
		return Rights{}, err
	}
	defer s.end()
	s.rightsMu.Lock()
	r, ok := s.rights[u.ID]
	gen := s.rightsGen
	s.rightsMu.Unlock()
	if ok {
		return r, nil
	}
	r, err := s.loadRights(ctx, u.ID)
	if err != nil {
		return Rights{}, err
	}
	s.cacheRights(u.ID, r, gen)
	return r, nil
}

// loadRights reads a user's rights from the database.
func (s *Store) loadRights(ctx context.Context, userID uint64) (Rights, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT r.hostgroup_id, min(r.permission), max(r.permission)
		FROM rights r JOIN users_groups ug ON ug.usrgrp_id = r.usrgrp_id
		WHERE ug.user_id = ? GROUP BY r.hostgroup_id`, int64(userID))
	if err != nil {
		return Rights{}, fmt.Errorf("auth: cannot read the rights of user %d: %w", userID, err)
	}
	defer rows.Close()
	groups := map[uint64]Permission{}
	for rows.Next() {
		var g uint64
		var lo, hi Permission
		if err := rows.Scan(&g, &lo, &hi); err != nil {
			return Rights{}, fmt.Errorf("auth: cannot read the rights of user %d: %w", userID, err)
		}
		if lo == PermDeny {
			groups[g] = PermDeny
		} else {
			groups[g] = hi
		}
	}
	if err := rows.Err(); err != nil {
		return Rights{}, fmt.Errorf("auth: cannot read the rights of user %d: %w", userID, err)
	}
	return NewRights(groups), nil
}

// cacheRights stores rights read when the change counter was gen. A
// change committed since then may have made them stale: they are then
// not stored (the caller still uses them, as if it had come first).
func (s *Store) cacheRights(userID uint64, r Rights, gen uint64) {
	s.rightsMu.Lock()
	if s.rightsGen == gen {
		s.rights[userID] = r
	}
	s.rightsMu.Unlock()
}

// groupsChanged is called, with fillMu held, after a commit that changed
// user groups or memberships: it empties the rights cache and drops the
// cached sessions and tokens of the users concerned (members of created
// groups, and users), so that a disabled group takes effect at once.
func (s *Store) groupsChanged(created []UserGroup, users []uint64) {
	s.rightsMu.Lock()
	s.rightsGen++
	clear(s.rights)
	s.rightsMu.Unlock()
	s.mu.Lock()
	for _, g := range created {
		for _, u := range g.UserIDs {
			s.dropUserSessionsLocked(u)
			s.dropUserTokensLocked(u)
		}
	}
	for _, u := range users {
		s.dropUserSessionsLocked(u)
		s.dropUserTokensLocked(u)
	}
	s.mu.Unlock()
}
