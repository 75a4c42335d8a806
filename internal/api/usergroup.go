package api

import (
	"context"
	"maps"
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

// hostRights is a user group's "rights" (Zabbix 6.0) or
// "hostgroup_rights" (6.2 and later): [{"id": hostgroupid, "permission":
// 0 | 2 | 3}].
type hostRights []auth.Right

func (l *hostRights) decodeParam(b []byte, _ *fieldCtx) error {
	elems, err := elemsOf(b)
	if err != nil {
		return err
	}
	*l = make(hostRights, 0, len(elems))
	for j, el := range elems {
		sub := strconv.Itoa(j + 1)
		var v struct {
			ID         opt[uint64] `json:"id" zbx:"null"`
			Permission opt[int64]  `json:"permission" zbx:"null"`
		}
		if err := decodeElement(el, sub, &v, &writeRules); err != nil {
			return err
		}
		switch {
		case !v.ID.Given():
			return &valueError{sub: sub, msg: `the parameter "id" is missing`}
		case !v.Permission.Given():
			return &valueError{sub: sub, msg: `the parameter "permission" is missing`}
		case !auth.Permission(v.Permission.Value).Valid():
			return &valueError{sub: sub + "/permission", msg: "value must be one of 0, 2, 3"}
		}
		if slices.ContainsFunc(*l, func(r auth.Right) bool { return r.HostGroupID == v.ID.Value }) {
			return &valueError{sub: sub, msg: "value (id)=(" + strconv.FormatUint(v.ID.Value, 10) + ") already exists"}
		}
		*l = append(*l, auth.Right{HostGroupID: v.ID.Value, Permission: auth.Permission(v.Permission.Value)})
	}
	return nil
}

// usergroupParams are the objects of usergroup.create and .update.
type usergroupParams struct {
	UsrgrpID    opt[uint64] `json:"usrgrpid"`
	Name        opt[string] `json:"name"`
	GUIAccess   opt[int64]  `json:"gui_access"`
	UsersStatus opt[int64]  `json:"users_status"`
	DebugMode   opt[int64]  `json:"debug_mode"`
	// Rights (6.0) and HostGroupRights (6.2) are two names of one list.
	Rights          opt[hostRights] `json:"rights"`
	HostGroupRights opt[hostRights] `json:"hostgroup_rights"`
	// Members: "userids" (6.0) or "users" (6.2).
	UserIDs opt[ids]  `json:"userids"`
	Users   opt[refs] `json:"users" key:"userid"`
	// No templates and no tag-based permissions: these must be empty,
	// since ignoring them would grant or withhold what was asked.
	TemplateGroupRights opt[listLen] `json:"templategroup_rights"`
	TagFilters          opt[listLen] `json:"tag_filters"`
}

// check validates p, element i of a batch, and returns its rights and
// members (nil: not given).
func (p *usergroupParams) check(i int) (rights *[]auth.Right, users *[]uint64, err error) {
	switch {
	case p.Name.Set && p.Name.Value == "":
		return nil, nil, empty(i, "name")
	case p.GUIAccess.Given() && (p.GUIAccess.Value < 0 || p.GUIAccess.Value > 3):
		return nil, nil, oneOf(i, "gui_access", "0, 1, 2, 3")
	case p.UsersStatus.Given() && p.UsersStatus.Value != 0 && p.UsersStatus.Value != 1:
		return nil, nil, oneOf(i, "users_status", "0, 1")
	case p.DebugMode.Given() && p.DebugMode.Value != 0 && p.DebugMode.Value != 1:
		return nil, nil, oneOf(i, "debug_mode", "0, 1")
	case p.Rights.Set && p.HostGroupRights.Set:
		return nil, nil, errParams(`Invalid parameter "/%d": unexpected parameter "hostgroup_rights".`, i+1)
	case p.UserIDs.Given() && p.Users.Set:
		return nil, nil, errParams(`Invalid parameter "/%d": unexpected parameter "users".`, i+1)
	case p.TemplateGroupRights.Value > 0:
		return nil, nil, unsupported(i, "templategroup_rights", "templates")
	case p.TagFilters.Value > 0:
		return nil, nil, unsupported(i, "tag_filters", "tag-based permissions")
	}
	if p.Rights.Set {
		rights = (*[]auth.Right)(&p.Rights.Value)
	} else if p.HostGroupRights.Set {
		rights = (*[]auth.Right)(&p.HostGroupRights.Value)
	}
	if p.UserIDs.Given() {
		u := []uint64(p.UserIDs.Value)
		for j, id := range u {
			if slices.Contains(u[:j], id) {
				return nil, nil, errParams(`Invalid parameter "/%d/userids/%d": value (%d) already exists.`, i+1, j+1, id)
			}
		}
		users = &u
	} else if p.Users.Set {
		users = (*[]uint64)(&p.Users.Value)
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
	if err := notEmptyObject(c.params); err != nil {
		return nil, err
	}
	var ps []usergroupParams
	if err := decodeObjects(c.params, &ps); err != nil {
		return nil, err
	}
	gs := make([]auth.UserGroup, len(ps))
	for i := range ps {
		p := &ps[i]
		switch {
		case p.UsrgrpID.Set:
			return nil, errParams(`Invalid parameter "/%d": unexpected parameter "usrgrpid".`, i+1)
		case !p.Name.Set:
			return nil, missing(i, "name")
		}
		rights, users, err := p.check(i)
		if err != nil {
			return nil, err
		}
		if err := s.checkRefs(ctx, acc, c, rights, users); err != nil {
			return nil, err
		}
		if p.UsersStatus.Value == 1 && users != nil && slices.Contains(*users, c.user.ID) {
			return nil, errSelfDisable
		}
		g := auth.UserGroup{Name: p.Name.Value, GUIAccess: int(p.GUIAccess.Value), UsersStatus: int(p.UsersStatus.Value), DebugMode: int(p.DebugMode.Value)}
		if rights != nil {
			g.Rights = *rights
		}
		if users != nil {
			g.UserIDs = *users
		}
		gs[i] = g
	}
	existing, err := acc.UserGroups(ctx)
	if err != nil {
		return nil, s.accountErr(err, "/", c)
	}
	for _, g := range gs {
		if slices.ContainsFunc(existing, func(e auth.UserGroup) bool { return e.Name == g.Name }) {
			return nil, errParams(`User group "%s" already exists.`, g.Name)
		}
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
	if err := notEmptyObject(c.params); err != nil {
		return nil, err
	}
	var ps []usergroupParams
	if err := decodeObjects(c.params, &ps); err != nil {
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
		if !p.UsrgrpID.Set {
			return nil, missing(i, "usrgrpid")
		}
		if slices.Contains(ids[:i], p.UsrgrpID.Value) {
			return nil, errParams(`Invalid parameter "/%d": value (usrgrpid)=(%d) already exists.`, i+1, p.UsrgrpID.Value)
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
		u := auth.UserGroupUpdate{ID: p.UsrgrpID.Value, Rights: rights, UserIDs: users}
		if p.Name.Set {
			u.Name = &p.Name.Value
			// Another group's name, in 6.0.14's words (checked before
			// anything is written).
			if slices.ContainsFunc(current, func(e auth.UserGroup) bool { return e.Name == p.Name.Value && e.ID != p.UsrgrpID.Value }) {
				return nil, errParams(`User group "%s" already exists.`, p.Name.Value)
			}
		}
		intp := func(f opt[int64]) *int {
			if f.Given() {
				return new(int(f.Value))
			}
			return nil
		}
		u.GUIAccess, u.UsersStatus, u.DebugMode = intp(p.GUIAccess), intp(p.UsersStatus), intp(p.DebugMode)
		us[i], ids[i] = u, p.UsrgrpID.Value
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
	i := slices.IndexFunc(current, func(g auth.UserGroup) bool { return g.ID == p.UsrgrpID.Value })
	if i < 0 {
		return false // unknown: the store refuses it
	}
	status, members := int64(current[i].UsersStatus), current[i].UserIDs
	if p.UsersStatus.Given() {
		status = p.UsersStatus.Value
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

// usergroupGetParams are usergroup.get's parameters.
type usergroupGetParams struct {
	getParams
	UsrgrpIDs     opt[ids]   `json:"usrgrpids"`
	UserIDs       opt[ids]   `json:"userids"`
	Status        opt[int64] `json:"status" zbx:"null"`
	WithGUIAccess opt[int64] `json:"with_gui_access" zbx:"null"`
	SelectUsers   opt[sel]   `json:"selectUsers"`
	SelectRights  opt[sel]   `json:"selectRights"`
	// 6.2's name of selectRights, and the lists Peregrine never has.
	SelectHostGroupRights     opt[sel] `json:"selectHostGroupRights"`
	SelectTemplateGroupRights opt[sel] `json:"selectTemplateGroupRights"`
	SelectTagFilters          opt[sel] `json:"selectTagFilters"`
}

func (s *Server) usergroupGet(ctx context.Context, c *call) (any, error) {
	var p usergroupGetParams
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
	var users []auth.Account
	if p.SelectUsers.Value.list() {
		if users, err = acc.Accounts(ctx); err != nil {
			return nil, s.accountErr(err, "/", c)
		}
	}
	snap := s.opts.Catalog.Snapshot()
	wantGroup, wantUser := idSet(p.UsrgrpIDs.Value), idSet(p.UserIDs.Value)
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
			p.Status.Given() && int64(g.UsersStatus) != p.Status.Value ||
			p.WithGUIAccess.Given() && int64(g.GUIAccess) != p.WithGUIAccess.Value {
			continue
		}
		o := usergroupObject(g)
		if p.SelectRights.Value.list() || p.SelectHostGroupRights.Value.list() {
			rs := []object{}
			for _, r := range g.Rights {
				// Rights on deleted host groups are kept by the auth
				// store (another database) but mean nothing.
				if snap.GroupByID(r.HostGroupID) != nil {
					rs = append(rs, object{"id": id(r.HostGroupID), "permission": strconv.Itoa(int(r.Permission))})
				}
			}
			rs = p.limitSelect(rs)
			if p.SelectRights.Value.list() {
				o["rights"] = p.SelectRights.Value.shape(rs, "")
			}
			if p.SelectHostGroupRights.Value.list() {
				o["hostgroup_rights"] = p.SelectHostGroupRights.Value.shape(rs, "")
			}
		}
		if p.SelectTemplateGroupRights.Value.list() {
			o["templategroup_rights"] = []object{}
		}
		if p.SelectTagFilters.Value.list() {
			o["tag_filters"] = []object{}
		}
		if sl := p.SelectUsers.Value; sl.list() {
			us := []object{}
			for j := range users {
				if slices.Contains(g.UserIDs, users[j].ID) {
					// With the highest access of the user's groups, as
					// Zabbix 6.0 lists a group's users.
					uo := accountObject(&users[j])
					maps.Copy(uo, accessOf(gs, users[j].ID))
					us = append(us, uo)
				}
			}
			o["users"] = p.limitSelect(sl.shape(us, "userid"))
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
