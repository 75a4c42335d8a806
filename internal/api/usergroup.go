package api

import (
	"context"
	"slices"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/auth"
)

// User groups, as Zabbix 6.0's usergroup.* methods: a name, members,
// users_status (1 disables the members), gui_access and debug_mode
// (stored), and rights on host groups, which decide what their members
// see and may change (perm.go). Creating, changing and deleting them
// needs a super admin; usergroup.get shows anybody else only the groups
// they are in.

func (s *Server) registerUserGroups() {
	s.methods["usergroup.get"] = &method{role: RoleUser, call: s.usergroupGet}
	s.methods["usergroup.create"] = &method{role: RoleSuperAdmin, call: s.usergroupCreate}
	s.methods["usergroup.update"] = &method{role: RoleSuperAdmin, call: s.usergroupUpdate}
	s.methods["usergroup.delete"] = &method{role: RoleSuperAdmin, call: s.usergroupDelete}
}

// rightList is a user group's "rights" (Zabbix 6.0) or "hostgroup_rights"
// (6.2 and later): [{"id": hostgroupid, "permission": 0 | 2 | 3}].
type rightList struct {
	set    bool
	rights []auth.Right
}

func (l *rightList) decode(b []byte, name string) error {
	elems, err := objectElems(b, name)
	if err != nil {
		return err
	}
	l.set, l.rights = true, make([]auth.Right, 0, len(elems))
	for j, el := range elems {
		path := name + "/" + strconv.Itoa(j+1)
		var v struct {
			ID         *flexID  `json:"id"`
			Permission *flexInt `json:"permission"`
		}
		if err := decodeElem(el, path, &v); err != nil {
			return err
		}
		switch {
		case v.ID == nil || !v.ID.set:
			return &paramError{path: path, msg: `the parameter "id" is missing`}
		case v.Permission == nil || !v.Permission.set:
			return &paramError{path: path, msg: `the parameter "permission" is missing`}
		case !auth.Permission(v.Permission.v).Valid():
			return &paramError{path: path + "/permission", msg: "value must be one of 0, 2, 3"}
		}
		if slices.ContainsFunc(l.rights, func(r auth.Right) bool { return r.HostGroupID == v.ID.v }) {
			return &paramError{path: path, msg: "value (id)=(" + strconv.FormatUint(v.ID.v, 10) + ") already exists"}
		}
		l.rights = append(l.rights, auth.Right{HostGroupID: v.ID.v, Permission: auth.Permission(v.Permission.v)})
	}
	return nil
}

type rights60 struct{ rightList }

func (l *rights60) UnmarshalJSON(b []byte) error { return l.decode(b, "rights") }

type rights62 struct{ rightList }

func (l *rights62) UnmarshalJSON(b []byte) error { return l.decode(b, "hostgroup_rights") }

type usergroupParams struct {
	UsrgrpID    flexID  `json:"usrgrpid"`
	Name        jstring `json:"name"`
	GUIAccess   flexInt `json:"gui_access"`
	UsersStatus flexInt `json:"users_status"`
	DebugMode   flexInt `json:"debug_mode"`
	// Rights (6.0) and HostGroupRights (6.2) are two names of one list.
	Rights          rights60 `json:"rights"`
	HostGroupRights rights62 `json:"hostgroup_rights"`
	// Members: "userids" (6.0) or "users" (6.2).
	UserIDs ids      `json:"userids"`
	Users   userRefs `json:"users"`
	// No templates and no tag-based permissions: these must be empty,
	// since ignoring them would grant or withhold what was asked.
	TemplateGroupRights jlist `json:"templategroup_rights"`
	TagFilters          jlist `json:"tag_filters"`
}

// check validates p, element i of a batch, and returns its rights and
// members (nil: not given).
func (p *usergroupParams) check(i int) (rights *[]auth.Right, users *[]uint64, err error) {
	switch {
	case p.Name.set && p.Name.v == "":
		return nil, nil, empty(i, "name")
	case p.GUIAccess.set && (p.GUIAccess.v < 0 || p.GUIAccess.v > 3):
		return nil, nil, oneOf(i, "gui_access", "0, 1, 2, 3")
	case p.UsersStatus.set && p.UsersStatus.v != 0 && p.UsersStatus.v != 1:
		return nil, nil, oneOf(i, "users_status", "0, 1")
	case p.DebugMode.set && p.DebugMode.v != 0 && p.DebugMode.v != 1:
		return nil, nil, oneOf(i, "debug_mode", "0, 1")
	case p.Rights.set && p.HostGroupRights.set:
		return nil, nil, errParams(`Invalid parameter "/%d": unexpected parameter "hostgroup_rights".`, i+1)
	case p.UserIDs != nil && p.Users.set:
		return nil, nil, errParams(`Invalid parameter "/%d": unexpected parameter "users".`, i+1)
	case p.TemplateGroupRights.n > 0:
		return nil, nil, unsupported(i, "templategroup_rights", "templates")
	case p.TagFilters.n > 0:
		return nil, nil, unsupported(i, "tag_filters", "tag-based permissions")
	}
	if p.Rights.set {
		rights = &p.Rights.rights
	} else if p.HostGroupRights.set {
		rights = &p.HostGroupRights.rights
	}
	if p.UserIDs != nil {
		u := []uint64(p.UserIDs)
		for j, id := range u {
			if slices.Contains(u[:j], id) {
				return nil, nil, errParams(`Invalid parameter "/%d/userids/%d": value (%d) already exists.`, i+1, j+1, id)
			}
		}
		users = &u
	} else if p.Users.set {
		users = &p.Users.ids
	}
	return rights, users, nil
}

// checkRefs makes sure the host groups and users a request names exist,
// with Zabbix's texts.
func (s *Server) checkRefs(ctx context.Context, acc *auth.Store, c *call, rights *[]auth.Right, users *[]uint64) error {
	if rights != nil {
		snap := s.opts.Catalog.Snapshot()
		for _, r := range *rights {
			if snap.GroupByID(r.HostGroupID) == nil {
				return errParams(`Host group with ID "%d" is not available.`, r.HostGroupID)
			}
		}
	}
	if users != nil && len(*users) > 0 {
		all, err := acc.Users(ctx)
		if err != nil {
			return s.accountErr(err, "/", c)
		}
		for _, id := range *users {
			if !slices.ContainsFunc(all, func(u auth.User) bool { return u.ID == id }) {
				return errParams(`User with ID "%d" is not available.`, id)
			}
		}
	}
	return nil
}

func (s *Server) usergroupCreate(ctx context.Context, c *call) (any, error) {
	acc, err := s.accounts()
	if err != nil {
		return nil, err
	}
	var ps []usergroupParams
	if err := legacyDecodeObjects(c.params, &ps); err != nil {
		return nil, err
	}
	gs := make([]auth.UserGroup, len(ps))
	for i := range ps {
		p := &ps[i]
		switch {
		case p.UsrgrpID.set:
			return nil, errParams(`Invalid parameter "/%d": unexpected parameter "usrgrpid".`, i+1)
		case !p.Name.set:
			return nil, missing(i, "name")
		}
		rights, users, err := p.check(i)
		if err != nil {
			return nil, err
		}
		if err := s.checkRefs(ctx, acc, c, rights, users); err != nil {
			return nil, err
		}
		if p.UsersStatus.v == 1 && users != nil && slices.Contains(*users, c.user.ID) {
			return nil, errSelfDisable
		}
		g := auth.UserGroup{Name: p.Name.v, GUIAccess: int(p.GUIAccess.v), UsersStatus: int(p.UsersStatus.v), DebugMode: int(p.DebugMode.v)}
		if rights != nil {
			g.Rights = *rights
		}
		if users != nil {
			g.UserIDs = *users
		}
		gs[i] = g
	}
	out, err := acc.CreateUserGroups(ctx, gs)
	if err != nil {
		return nil, s.accountErr(err, "/1", c)
	}
	s.opts.Logger.Info("api: user groups created", "by", c.user.Username, "usrgrpids", out)
	return idResult("usrgrpids", out), nil
}

func (s *Server) usergroupUpdate(ctx context.Context, c *call) (any, error) {
	acc, err := s.accounts()
	if err != nil {
		return nil, err
	}
	var ps []usergroupParams
	if err := legacyDecodeObjects(c.params, &ps); err != nil {
		return nil, err
	}
	current, err := acc.UserGroups(ctx)
	if err != nil {
		return nil, s.accountErr(err, "/", c)
	}
	us := make([]auth.UserGroupUpdate, len(ps))
	ids := make([]uint64, len(ps))
	for i := range ps {
		p := &ps[i]
		if !p.UsrgrpID.set {
			return nil, missing(i, "usrgrpid")
		}
		if slices.Contains(ids[:i], p.UsrgrpID.v) {
			return nil, errParams(`Invalid parameter "/%d": value (usrgrpid)=(%d) already exists.`, i+1, p.UsrgrpID.v)
		}
		rights, users, err := p.check(i)
		if err != nil {
			return nil, err
		}
		if err := s.checkRefs(ctx, acc, c, rights, users); err != nil {
			return nil, err
		}
		if selfDisabled(current, p, users, c.user.ID) {
			return nil, errSelfDisable
		}
		u := auth.UserGroupUpdate{ID: p.UsrgrpID.v, Rights: rights, UserIDs: users}
		if p.Name.set {
			u.Name = &p.Name.v
		}
		intp := func(f flexInt) *int {
			if f.set {
				return new(int(f.v))
			}
			return nil
		}
		u.GUIAccess, u.UsersStatus, u.DebugMode = intp(p.GUIAccess), intp(p.UsersStatus), intp(p.DebugMode)
		us[i], ids[i] = u, p.UsrgrpID.v
	}
	if err := acc.UpdateUserGroups(ctx, us); err != nil {
		return nil, s.accountErr(err, "/1", c)
	}
	s.opts.Logger.Info("api: user groups updated", "by", c.user.Username, "usrgrpids", ids)
	return idResult("usrgrpids", ids), nil
}

func (s *Server) usergroupDelete(ctx context.Context, c *call) (any, error) {
	acc, err := s.accounts()
	if err != nil {
		return nil, err
	}
	list, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	if err := acc.DeleteUserGroups(ctx, list); err != nil {
		return nil, s.accountErr(err, "/1", c)
	}
	s.opts.Logger.Info("api: user groups deleted", "by", c.user.Username, "usrgrpids", list)
	return idResult("usrgrpids", list), nil
}

// errSelfDisable keeps a caller from locking themselves out (Zabbix's
// text).
var errSelfDisable = errApp("User cannot add himself to a disabled group or grant himself a higher access level.")

// selfDisabled reports whether update p would leave the caller (self) in
// a disabled group: the group's status after the update is 1 and its
// members after the update include self.
func selfDisabled(current []auth.UserGroup, p *usergroupParams, users *[]uint64, self uint64) bool {
	i := slices.IndexFunc(current, func(g auth.UserGroup) bool { return g.ID == p.UsrgrpID.v })
	if i < 0 {
		return false // unknown: the store refuses it
	}
	status, members := int64(current[i].UsersStatus), current[i].UserIDs
	if p.UsersStatus.set {
		status = p.UsersStatus.v
	}
	if users != nil {
		members = *users
	}
	return status == 1 && slices.Contains(members, self)
}

func usergroupObject(g *auth.UserGroup) object {
	return object{
		"usrgrpid": id(g.ID), "name": g.Name, "gui_access": strconv.Itoa(g.GUIAccess),
		"users_status": strconv.Itoa(g.UsersStatus), "debug_mode": strconv.Itoa(g.DebugMode),
	}
}

func accountObject(u *auth.User) object {
	return object{
		"userid": id(u.ID), "username": u.Username, "name": u.Name, "surname": u.Surname,
		"roleid": strconv.Itoa(int(u.Role)), "type": strconv.Itoa(int(u.Role)),
	}
}

func (s *Server) usergroupGet(ctx context.Context, c *call) (any, error) {
	var p struct {
		getParams
		UsrgrpIDs     ids      `json:"usrgrpids"`
		UserIDs       ids      `json:"userids"`
		Status        *flexInt `json:"status"`
		WithGUIAccess *flexInt `json:"with_gui_access"`
		SelectUsers   any      `json:"selectUsers"`
		SelectRights  any      `json:"selectRights"`
		// 6.2's name of selectRights, and the lists Peregrine never has.
		SelectHostGroupRights     any `json:"selectHostGroupRights"`
		SelectTemplateGroupRights any `json:"selectTemplateGroupRights"`
		SelectTagFilters          any `json:"selectTagFilters"`
	}
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	acc, err := s.accounts()
	if err != nil {
		return nil, err
	}
	gs, err := acc.UserGroups(ctx)
	if err != nil {
		return nil, s.accountErr(err, "/", c)
	}
	var users []auth.User
	if p.SelectUsers != nil {
		if users, err = acc.Users(ctx); err != nil {
			return nil, s.accountErr(err, "/", c)
		}
	}
	snap := s.opts.Catalog.Snapshot()
	wantGroup, wantUser := idSet(p.UsrgrpIDs), idSet(p.UserIDs)
	var objs []object
	for i := range gs {
		g := &gs[i]
		// Anybody but a super admin sees only their own groups, and
		// none as editable (as Zabbix).
		if c.user.Role < RoleSuperAdmin && (p.Editable.Value || !slices.Contains(g.UserIDs, c.user.ID)) {
			continue
		}
		if wantGroup != nil && !wantGroup[g.ID] ||
			wantUser != nil && !slices.ContainsFunc(g.UserIDs, func(u uint64) bool { return wantUser[u] }) ||
			p.Status != nil && p.Status.set && int64(g.UsersStatus) != p.Status.v ||
			p.WithGUIAccess != nil && p.WithGUIAccess.set && int64(g.GUIAccess) != p.WithGUIAccess.v {
			continue
		}
		o := usergroupObject(g)
		if p.SelectRights != nil || p.SelectHostGroupRights != nil {
			rs := []object{}
			for _, r := range g.Rights {
				// Rights on deleted host groups are kept by the auth
				// store (another database) but mean nothing.
				if snap.GroupByID(r.HostGroupID) != nil {
					rs = append(rs, object{"id": id(r.HostGroupID), "permission": strconv.Itoa(int(r.Permission))})
				}
			}
			rs = p.limitSelect(rs)
			if p.SelectRights != nil {
				o["rights"] = rs
			}
			if p.SelectHostGroupRights != nil {
				o["hostgroup_rights"] = rs
			}
		}
		if p.SelectTemplateGroupRights != nil {
			o["templategroup_rights"] = []object{}
		}
		if p.SelectTagFilters != nil {
			o["tag_filters"] = []object{}
		}
		if p.SelectUsers != nil {
			us := []object{}
			for j := range users {
				if slices.Contains(g.UserIDs, users[j].ID) {
					us = append(us, accountObject(&users[j]))
				}
			}
			o["users"] = p.limitSelect(us)
		}
		objs = append(objs, o)
	}
	return p.apply(objs, "usrgrpid", "usrgrpid", "name")
}

// userGroupsOf returns the user groups each user is in, for user.get's
// selectUsrgrps.
func userGroupsOf(gs []auth.UserGroup) map[uint64][]object {
	m := map[uint64][]object{}
	for i := range gs {
		for _, u := range gs[i].UserIDs {
			m[u] = append(m[u], usergroupObject(&gs[i]))
		}
	}
	return m
}

// checkUserGroups makes sure every user group of a user's "usrgrps"
// exists, with Zabbix's text.
func checkUserGroups(gs []auth.UserGroup, want []uint64) error {
	for _, id := range want {
		if !slices.ContainsFunc(gs, func(g auth.UserGroup) bool { return g.ID == id }) {
			return errParams(`User group with ID "%d" is not available.`, id)
		}
	}
	return nil
}
