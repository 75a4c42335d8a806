package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/auth"
	"github.com/peregrine-mon/peregrine/internal/catalog"
)

func (s *Server) registerUser() {
	s.methods["user.login"] = &method{call: s.userLogin}
	s.methods["user.logout"] = &method{role: RoleUser, call: s.userLogout}
	s.methods["user.checkAuthentication"] = &method{call: s.userCheck}
}

type userObject struct {
	UserID    string `json:"userid"`
	Username  string `json:"username"`
	Type      string `json:"type"`
	RoleID    string `json:"roleid"`
	SessionID string `json:"sessionid,omitempty"`
}

func toUserObject(u User, session string) userObject {
	return userObject{UserID: strconv.FormatUint(u.ID, 10), Username: u.Username, Type: strconv.Itoa(int(u.Role)), RoleID: strconv.Itoa(int(u.Role)), SessionID: session}
}

func (s *Server) userLogin(ctx context.Context, c *call) (any, error) {
	var p struct {
		Username *string `json:"username"`
		User     *string `json:"user"` // 5.x name, deprecated in 6.0
		Password *string `json:"password"`
		UserData bool    `json:"userData"`
	}
	if err := legacyDecodeParams(c.params, &p); err != nil {
		return nil, err
	}
	if p.Username != nil && p.User != nil {
		return nil, errParams(`Invalid parameter "/": unexpected parameter "user".`)
	}
	if p.Username == nil {
		p.Username = p.User
	}
	if p.Username == nil {
		return nil, errParams(`Invalid parameter "/": the parameter "username" is missing.`)
	}
	if p.Password == nil {
		return nil, errParams(`Invalid parameter "/": the parameter "password" is missing.`)
	}
	if s.opts.Auth == nil {
		return nil, errParams("Incorrect user name or password or account is temporarily blocked.")
	}
	session, u, err := s.opts.Auth.Login(ctx, *p.Username, *p.Password)
	if errors.Is(err, auth.ErrDisabled) {
		// A member of a disabled user group, with the right password.
		return nil, errParams("No permissions for system access.")
	}
	if err != nil {
		if !errors.Is(err, ErrBadCredentials) && !errors.Is(err, ErrBlocked) {
			s.opts.Logger.Error("api: login failed", "username", *p.Username, "remote", c.remote, "err", err)
		}
		return nil, errParams("Incorrect user name or password or account is temporarily blocked.")
	}
	if p.UserData {
		return toUserObject(u, session), nil
	}
	return session, nil
}

func (s *Server) userLogout(ctx context.Context, c *call) (any, error) {
	if err := s.opts.Auth.Logout(ctx, c.token); err != nil {
		return nil, errParams("Cannot log out.")
	}
	return true, nil
}

func (s *Server) userCheck(ctx context.Context, c *call) (any, error) {
	var p struct {
		SessionID string `json:"sessionid"`
		Token     string `json:"token"`
	}
	if err := legacyDecodeParams(c.params, &p); err != nil {
		return nil, err
	}
	secret := p.SessionID
	if secret == "" {
		secret = p.Token
	}
	if secret == "" || s.opts.Auth == nil {
		return nil, errParams(`Invalid parameter "/": the parameter "sessionid" is missing.`)
	}
	u, err := s.opts.Auth.Authenticate(ctx, secret)
	if errors.Is(err, ErrSessionExpired) {
		return nil, errParams("Session terminated, re-login, please.")
	}
	if err != nil {
		return nil, errParams("Session terminated, re-login, please.")
	}
	return toUserObject(u, p.SessionID), nil
}

// flexRole is a roleid: "1", 1, ... as clients send it.
type flexRole struct {
	set bool
	v   auth.Role
}

func (r *flexRole) UnmarshalJSON(b []byte) error {
	var f flexInt
	if err := f.UnmarshalJSON(b); err != nil {
		return err
	}
	if f.set && !auth.Role(f.v).Valid() {
		return &paramError{path: "roleid", msg: fmt.Sprintf("value %d must be one of 1 (user), 2 (admin), 3 (super admin)", f.v)}
	}
	r.set, r.v = f.set, auth.Role(f.v)
	return nil
}

type userParams struct {
	UserID      *flexID    `json:"userid"`
	Username    *string    `json:"username"`
	Alias       *string    `json:"alias"` // the pre-5.4 name of username
	Passwd      *string    `json:"passwd"`
	CurrentPass *string    `json:"current_passwd"`
	RoleID      flexRole   `json:"roleid"`
	Usrgrps     usrgrpRefs `json:"usrgrps"`
	// Medias are the user's media (alert recipients' addresses), kept
	// in the catalog's notification configuration; user_medias is the
	// pre-5.2 name.
	Medias      json.RawMessage `json:"medias"`
	UserMedias  json.RawMessage `json:"user_medias"`
	Name        notStored       `json:"name"`
	Surname     notStored       `json:"surname"`
	Lang        notStored       `json:"lang"`
	Theme       notStored       `json:"theme"`
	Autologin   notStored       `json:"autologin"`
	Autologout  notStored       `json:"autologout"`
	Refresh     notStored       `json:"refresh"`
	RowsPerPage notStored       `json:"rows_per_page"`
	URL         notStored       `json:"url"`
	Timezone    notStored       `json:"timezone"`
}

func (s *Server) userCreate(ctx context.Context, c *call) (any, error) {
	acc, err := s.accounts()
	if err != nil {
		return nil, err
	}
	var ps []userParams
	if err := legacyDecodeObjects(c.params, &ps); err != nil {
		return nil, err
	}
	for i := range ps {
		p := &ps[i]
		if p.Username == nil {
			p.Username = p.Alias
		}
		switch {
		case p.UserID != nil:
			return nil, errParams(`Invalid parameter "/%d": unexpected parameter "userid".`, i+1)
		case p.Username == nil:
			return nil, errParams(`Invalid parameter "/%d": the parameter "username" is missing.`, i+1)
		case p.Passwd == nil:
			return nil, errParams(`Invalid parameter "/%d": the parameter "passwd" is missing.`, i+1)
		case !p.RoleID.set:
			return nil, errParams(`Invalid parameter "/%d": the parameter "roleid" is missing.`, i+1)
		}
	}
	if err := s.checkUsrgrps(ctx, acc, c, ps); err != nil {
		return nil, err
	}
	medias, err := s.userMedias(ps)
	if err != nil {
		return nil, err
	}
	// Not one transaction: each user is hashed and inserted on its own
	// (the hash is deliberately slow). A failure part-way leaves the
	// earlier users created; the error says which one failed.
	var out []uint64
	for i, p := range ps {
		u, err := acc.CreateUser(ctx, *p.Username, *p.Passwd, p.RoleID.v)
		if err != nil {
			return nil, s.accountErr(err, fmt.Sprintf("/%d", i+1), c)
		}
		if p.Usrgrps.set {
			if err := acc.SetUserGroups(ctx, u.ID, p.Usrgrps.ids); err != nil {
				return nil, s.accountErr(err, fmt.Sprintf("/%d/usrgrps", i+1), c)
			}
		}
		if ms, ok := medias[i]; ok {
			if err := s.setMedias(ctx, map[uint64][]catalog.UserMedia{u.ID: ms}); err != nil {
				return nil, err
			}
		}
		s.opts.Logger.Info("api: user created", "by", c.user.Username, "userid", u.ID, "username", *p.Username)
		out = append(out, u.ID)
	}
	return idResult("userids", out), nil
}

func (s *Server) userUpdate(ctx context.Context, c *call) (any, error) {
	acc, err := s.accounts()
	if err != nil {
		return nil, err
	}
	var ps []userParams
	if err := legacyDecodeObjects(c.params, &ps); err != nil {
		return nil, err
	}
	for i := range ps {
		p := &ps[i]
		if p.UserID == nil || !p.UserID.set || p.UserID.v == 0 {
			return nil, errParams(`Invalid parameter "/%d": the parameter "userid" is missing.`, i+1)
		}
		if p.Username != nil || p.Alias != nil {
			return nil, errParams(`Invalid parameter "/%d/username": renaming users is not supported.`, i+1)
		}
		self := p.UserID.v == c.user.ID
		if c.user.Role < RoleSuperAdmin {
			// Anybody else may change only their own password.
			if !self || p.RoleID.set || p.Usrgrps.set || p.Medias != nil || p.UserMedias != nil {
				return nil, errNoPermissions
			}
		}
		if self && p.RoleID.set && p.RoleID.v != c.user.Role {
			return nil, errParams(`Invalid parameter "/%d/roleid": a user cannot change their own role.`, i+1)
		}
		if self && p.Passwd != nil {
			// As Zabbix 6.0: changing one's own password needs the
			// current one, so a stolen session cannot lock the owner out.
			if p.CurrentPass == nil {
				return nil, errParams(`Invalid parameter "/%d": the parameter "current_passwd" is missing.`, i+1)
			}
			if s.opts.Auth == nil {
				return nil, errNoPermissions
			}
			sid, _, err := s.opts.Auth.Login(ctx, c.user.Username, *p.CurrentPass)
			if err != nil {
				return nil, errParams(`Invalid parameter "/%d/current_passwd": incorrect current password.`, i+1)
			}
			_ = s.opts.Auth.Logout(ctx, sid)
		}
	}
	if err := s.checkUsrgrps(ctx, acc, c, ps); err != nil {
		return nil, err
	}
	medias, err := s.userMedias(ps)
	if err != nil {
		return nil, err
	}
	var out []uint64
	for i, p := range ps {
		id := p.UserID.v
		if ms, ok := medias[i]; ok {
			if err := s.setMedias(ctx, map[uint64][]catalog.UserMedia{id: ms}); err != nil {
				return nil, err
			}
		}
		if p.Usrgrps.set {
			if err := acc.SetUserGroups(ctx, id, p.Usrgrps.ids); err != nil {
				return nil, s.accountErr(err, fmt.Sprintf("/%d/usrgrps", i+1), c)
			}
		}
		if p.RoleID.set {
			if err := acc.SetRole(ctx, id, p.RoleID.v); err != nil {
				return nil, s.accountErr(err, fmt.Sprintf("/%d/roleid", i+1), c)
			}
		}
		if p.Passwd != nil {
			if err := acc.UpdatePassword(ctx, id, *p.Passwd); err != nil {
				return nil, s.accountErr(err, fmt.Sprintf("/%d/passwd", i+1), c)
			}
		}
		s.opts.Logger.Info("api: user updated", "by", c.user.Username, "userid", id, "password", p.Passwd != nil, "role", p.RoleID.set, "usrgrps", p.Usrgrps.set)
		out = append(out, id)
	}
	return idResult("userids", out), nil
}

func (s *Server) userDelete(ctx context.Context, c *call) (any, error) {
	acc, err := s.accounts()
	if err != nil {
		return nil, err
	}
	list, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	for _, id := range list {
		if id == c.user.ID {
			return nil, errApp("User is not allowed to delete himself.")
		}
	}
	for i, id := range list {
		if err := acc.DeleteUser(ctx, id); err != nil {
			return nil, s.accountErr(err, fmt.Sprintf("/%d", i+1), c)
		}
		if s.opts.Alerting != nil {
			// The user's media go with the user, as in Zabbix.
			err := s.opts.Alerting.EditAlerts(ctx, func(cfg *catalog.AlertConfig) error { delete(cfg.Medias, id); return nil })
			if err != nil {
				s.opts.Logger.Error("api: cannot delete the media of a deleted user", "userid", id, "err", err)
			}
		}
		s.opts.Logger.Info("api: user deleted", "by", c.user.Username, "userid", id)
	}
	return idResult("userids", list), nil
}

func (s *Server) userGet(ctx context.Context, c *call) (any, error) {
	var p struct {
		getParams
		UserIDs       ids `json:"userids"`
		UsrgrpIDs     ids `json:"usrgrpids"`
		SelectUsrgrps any `json:"selectUsrgrps"`
		SelectMedias  any `json:"selectMedias"`
		// selectMediatypes: the media types of the user's media.
		SelectMediatypes any `json:"selectMediatypes"`
	}
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	acc, err := s.accounts()
	if err != nil {
		return nil, err
	}
	users, err := acc.Users(ctx)
	if err != nil {
		return nil, s.accountErr(err, "/", c)
	}
	var groupsOf map[uint64][]object
	inGroup := map[uint64]bool{}
	// Who a user other than a super admin sees, as Zabbix: themselves and
	// the members of their user groups; with editable, only themselves.
	visible := map[uint64]bool{c.user.ID: true}
	super := c.user.Role == RoleSuperAdmin
	if p.SelectUsrgrps != nil || len(p.UsrgrpIDs) > 0 || !super && !p.Editable.Value {
		gs, err := acc.UserGroups(ctx)
		if err != nil {
			return nil, s.accountErr(err, "/", c)
		}
		groupsOf = userGroupsOf(gs)
		want := idSet(p.UsrgrpIDs)
		for _, g := range gs {
			if want[g.ID] {
				for _, u := range g.UserIDs {
					inGroup[u] = true
				}
			}
			if !super && !p.Editable.Value && slices.Contains(g.UserIDs, c.user.ID) {
				for _, u := range g.UserIDs {
					visible[u] = true
				}
			}
		}
	}
	want := idSet(p.UserIDs)
	var objs []object
	for i := range users {
		u := &users[i]
		if !super && !visible[u.ID] || want != nil && !want[u.ID] ||
			len(p.UsrgrpIDs) > 0 && !inGroup[u.ID] {
			continue
		}
		o := accountObject(u)
		if p.SelectUsrgrps != nil {
			o["usrgrps"] = nonNil(p.limitSelect(groupsOf[u.ID]))
		}
		// Media only to a super admin or the user themselves: they hold
		// addresses.
		if p.SelectMedias != nil && (super || u.ID == c.user.ID) {
			o["medias"] = s.mediaObjects(u.ID)
		}
		if p.SelectMediatypes != nil && (super || u.ID == c.user.ID) {
			o["mediatypes"] = s.userMediaTypes(u.ID)
		}
		objs = append(objs, o)
	}
	return p.apply(objs, "userid", "userid", "username")
}

// checkUsrgrps makes sure the user groups that user.create or
// user.update name exist.
func (s *Server) checkUsrgrps(ctx context.Context, acc *auth.Store, c *call, ps []userParams) error {
	var gs []auth.UserGroup
	for i, p := range ps {
		if !p.Usrgrps.set || len(p.Usrgrps.ids) == 0 {
			continue
		}
		if gs == nil {
			var err error
			if gs, err = acc.UserGroups(ctx); err != nil {
				return s.accountErr(err, fmt.Sprintf("/%d/usrgrps", i+1), c)
			}
		}
		if err := checkUserGroups(gs, p.Usrgrps.ids); err != nil {
			return err
		}
	}
	return nil
}

// userMedias parses the "medias" of each user object that has them, by
// index.
func (s *Server) userMedias(ps []userParams) (map[int][]catalog.UserMedia, error) {
	out := map[int][]catalog.UserMedia{}
	for i, p := range ps {
		raw, name := p.Medias, "medias"
		if raw == nil {
			raw, name = p.UserMedias, "user_medias"
		}
		if raw == nil {
			continue
		}
		ms, err := s.parseMedias(raw, fmt.Sprintf("/%d/%s", i+1, name))
		if err != nil {
			return nil, err
		}
		out[i] = ms
	}
	return out, nil
}
