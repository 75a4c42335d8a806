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

// userLoginParams are user.login's parameters; other members are
// ignored, as they always were.
type userLoginParams struct {
	Username opt[string] `json:"username" as:"json"`
	User     opt[string] `json:"user" as:"json"` // 5.x name, deprecated in 6.0
	Password opt[string] `json:"password" as:"json"`
	UserData opt[bool]   `json:"userData"`
}

func (s *Server) userLogin(ctx context.Context, c *call) (any, error) {
	var p userLoginParams
	if err := decodeLenient(c.params, &p); err != nil {
		return nil, err
	}
	if p.Username.Given() && p.User.Given() {
		return nil, errParams(`Invalid parameter "/": unexpected parameter "user".`)
	}
	if !p.Username.Given() {
		p.Username = p.User
	}
	if !p.Username.Given() {
		return nil, errParams(`Invalid parameter "/": the parameter "username" is missing.`)
	}
	if !p.Password.Given() {
		return nil, errParams(`Invalid parameter "/": the parameter "password" is missing.`)
	}
	if s.opts.Auth == nil {
		return nil, errParams("Incorrect user name or password or account is temporarily blocked.")
	}
	session, u, err := s.opts.Auth.Login(ctx, p.Username.Value, p.Password.Value)
	// A refused login is Zabbix 6.0's permission error, -32500
	// "Application error." (recorded from 6.0.14). 6.0 answers -32602
	// for a user name it does not know; Peregrine does not tell which
	// names exist (auth answers both alike).
	if errors.Is(err, auth.ErrDisabled) {
		// A member of a disabled user group, with the right password.
		return nil, errApp("No permissions for system access.")
	}
	if err != nil {
		if !errors.Is(err, ErrBadCredentials) && !errors.Is(err, ErrBlocked) {
			s.opts.Logger.Error("api: login failed", "username", p.Username.Value, "remote", c.remote, "err", err)
		}
		return nil, errApp("Incorrect user name or password or account is temporarily blocked.")
	}
	if p.UserData.Value {
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

// userCheckParams are user.checkAuthentication's parameters; other
// members are ignored.
type userCheckParams struct {
	SessionID opt[string] `json:"sessionid" as:"json"`
	Token     opt[string] `json:"token" as:"json"`
}

func (s *Server) userCheck(ctx context.Context, c *call) (any, error) {
	var p userCheckParams
	if err := decodeLenient(c.params, &p); err != nil {
		return nil, err
	}
	secret := p.SessionID.Value
	if secret == "" {
		secret = p.Token.Value
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
	return toUserObject(u, p.SessionID.Value), nil
}

// roleParam is a roleid: "1", 1, ... as clients send it; null is not
// given.
type roleParam auth.Role

func (r *roleParam) decodeParam(b []byte, c *fieldCtx) error {
	var n int64
	if err := decodeAs(kindInt, b, &n, c); err != nil {
		return err
	}
	if isNull(b) {
		return nil
	}
	if !auth.Role(n).Valid() {
		return &valueError{msg: fmt.Sprintf("value %d must be one of 1 (user), 2 (admin), 3 (super admin)", n)}
	}
	*r = roleParam(n)
	return nil
}

// userParams are the objects of user.create and user.update.
type userParams struct {
	UserID      opt[uint64]    `json:"userid" zbx:"null"`
	Username    opt[string]    `json:"username" as:"json"`
	Alias       opt[string]    `json:"alias" as:"json"` // the pre-5.4 name of username
	Passwd      opt[string]    `json:"passwd" as:"json"`
	CurrentPass opt[string]    `json:"current_passwd" as:"json"`
	RoleID      opt[roleParam] `json:"roleid" zbx:"null"`
	Usrgrps     opt[refs]      `json:"usrgrps" key:"usrgrpid"`
	// Medias are the user's media (alert recipients' addresses), kept
	// in the catalog's notification configuration; user_medias is the
	// pre-5.2 name.
	Medias      opt[json.RawMessage] `json:"medias" as:"json"`
	UserMedias  opt[json.RawMessage] `json:"user_medias" as:"json"`
	Name        opt[ignored]         `json:"name"`
	Surname     opt[ignored]         `json:"surname"`
	Lang        opt[ignored]         `json:"lang"`
	Theme       opt[ignored]         `json:"theme"`
	Autologin   opt[ignored]         `json:"autologin"`
	Autologout  opt[ignored]         `json:"autologout"`
	Refresh     opt[ignored]         `json:"refresh"`
	RowsPerPage opt[ignored]         `json:"rows_per_page"`
	URL         opt[ignored]         `json:"url"`
	Timezone    opt[ignored]         `json:"timezone"`
}

func (s *Server) userCreate(ctx context.Context, c *call) (any, error) {
	acc, err := s.accounts()
	if err != nil {
		return nil, err
	}
	var ps []userParams
	if err := decodeObjects(c.params, &ps); err != nil {
		return nil, err
	}
	for i := range ps {
		p := &ps[i]
		if !p.Username.Given() {
			p.Username = p.Alias
		}
		switch {
		case p.UserID.Given():
			return nil, errParams(`Invalid parameter "/%d": unexpected parameter "userid".`, i+1)
		case !p.Username.Given():
			return nil, errParams(`Invalid parameter "/%d": the parameter "username" is missing.`, i+1)
		case !p.Passwd.Given():
			return nil, errParams(`Invalid parameter "/%d": the parameter "passwd" is missing.`, i+1)
		case !p.RoleID.Given():
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
		u, err := acc.CreateUser(ctx, p.Username.Value, p.Passwd.Value, auth.Role(p.RoleID.Value))
		if err != nil {
			return nil, s.accountErr(err, fmt.Sprintf("/%d", i+1), c)
		}
		if p.Usrgrps.Set {
			if err := acc.SetUserGroups(ctx, u.ID, p.Usrgrps.Value); err != nil {
				return nil, s.accountErr(err, fmt.Sprintf("/%d/usrgrps", i+1), c)
			}
		}
		if ms, ok := medias[i]; ok {
			if err := s.setMedias(ctx, map[uint64][]catalog.UserMedia{u.ID: ms}); err != nil {
				return nil, err
			}
		}
		s.opts.Logger.Info("api: user created", "by", c.user.Username, "userid", u.ID, "username", p.Username.Value)
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
	if err := decodeObjects(c.params, &ps); err != nil {
		return nil, err
	}
	for i := range ps {
		p := &ps[i]
		if !p.UserID.Given() || p.UserID.Value == 0 {
			return nil, errParams(`Invalid parameter "/%d": the parameter "userid" is missing.`, i+1)
		}
		if p.Username.Given() || p.Alias.Given() {
			return nil, errParams(`Invalid parameter "/%d/username": renaming users is not supported.`, i+1)
		}
		self := p.UserID.Value == c.user.ID
		if c.user.Role < RoleSuperAdmin {
			// Anybody else may change only their own password.
			if !self || p.RoleID.Given() || p.Usrgrps.Set || p.Medias.Set || p.UserMedias.Set {
				return nil, errNoPermissions
			}
		}
		if self && p.RoleID.Given() && auth.Role(p.RoleID.Value) != c.user.Role {
			return nil, errParams(`Invalid parameter "/%d/roleid": a user cannot change their own role.`, i+1)
		}
		if self && p.Passwd.Given() {
			// As Zabbix 6.0: changing one's own password needs the
			// current one, so a stolen session cannot lock the owner out.
			if !p.CurrentPass.Given() {
				return nil, errParams(`Invalid parameter "/%d": the parameter "current_passwd" is missing.`, i+1)
			}
			if s.opts.Auth == nil {
				return nil, errNoPermissions
			}
			sid, _, err := s.opts.Auth.Login(ctx, c.user.Username, p.CurrentPass.Value)
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
		id := p.UserID.Value
		if ms, ok := medias[i]; ok {
			if err := s.setMedias(ctx, map[uint64][]catalog.UserMedia{id: ms}); err != nil {
				return nil, err
			}
		}
		if p.Usrgrps.Set {
			if err := acc.SetUserGroups(ctx, id, p.Usrgrps.Value); err != nil {
				return nil, s.accountErr(err, fmt.Sprintf("/%d/usrgrps", i+1), c)
			}
		}
		if p.RoleID.Given() {
			if err := acc.SetRole(ctx, id, auth.Role(p.RoleID.Value)); err != nil {
				return nil, s.accountErr(err, fmt.Sprintf("/%d/roleid", i+1), c)
			}
		}
		if p.Passwd.Given() {
			if err := acc.UpdatePassword(ctx, id, p.Passwd.Value); err != nil {
				return nil, s.accountErr(err, fmt.Sprintf("/%d/passwd", i+1), c)
			}
		}
		s.opts.Logger.Info("api: user updated", "by", c.user.Username, "userid", id, "password", p.Passwd.Given(), "role", p.RoleID.Given(), "usrgrps", p.Usrgrps.Set)
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

// userGetParams are user.get's parameters.
type userGetParams struct {
	getParams
	UserIDs       opt[ids] `json:"userids"`
	UsrgrpIDs     opt[ids] `json:"usrgrpids"`
	SelectUsrgrps opt[any] `json:"selectUsrgrps"`
	SelectMedias  opt[any] `json:"selectMedias"`
	// selectMediatypes: the media types of the user's media.
	SelectMediatypes opt[any] `json:"selectMediatypes"`
}

func (s *Server) userGet(ctx context.Context, c *call) (any, error) {
	var p userGetParams
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
	if p.SelectUsrgrps.Given() || p.UsrgrpIDs.Given() || !super && !p.Editable.Value {
		gs, err := acc.UserGroups(ctx)
		if err != nil {
			return nil, s.accountErr(err, "/", c)
		}
		groupsOf = userGroupsOf(gs)
		want := idSet(p.UsrgrpIDs.Value)
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
	want := idSet(p.UserIDs.Value)
	var objs []object
	for i := range users {
		u := &users[i]
		if !super && !visible[u.ID] || want != nil && !want[u.ID] ||
			p.UsrgrpIDs.Given() && !inGroup[u.ID] {
			continue
		}
		o := accountObject(u)
		if p.SelectUsrgrps.Given() {
			o["usrgrps"] = nonNil(p.limitSelect(groupsOf[u.ID]))
		}
		// Media only to a super admin or the user themselves: they hold
		// addresses.
		if p.SelectMedias.Given() && (super || u.ID == c.user.ID) {
			o["medias"] = s.mediaObjects(u.ID)
		}
		if p.SelectMediatypes.Given() && (super || u.ID == c.user.ID) {
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
		if !p.Usrgrps.Set || len(p.Usrgrps.Value) == 0 {
			continue
		}
		if gs == nil {
			var err error
			if gs, err = acc.UserGroups(ctx); err != nil {
				return s.accountErr(err, fmt.Sprintf("/%d/usrgrps", i+1), c)
			}
		}
		if err := checkUserGroups(gs, p.Usrgrps.Value); err != nil {
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
		raw, name := p.Medias.Value, "medias"
		if !p.Medias.Set {
			raw, name = p.UserMedias.Value, "user_medias"
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
