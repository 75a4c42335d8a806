package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
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

// userData is the user object user.login (with userData) and
// user.checkAuthentication return, as Zabbix 6.0 does: the user's fields
// (their language and time zone resolved from the defaults), the type
// and the user groups' access as numbers, the client's address and the
// session.
func (s *Server) userData(ctx context.Context, u User, session, remote string) object {
	o := object{"userid": id(u.ID), "username": u.Username, "name": u.Name, "surname": u.Surname,
		"roleid": id(u.RoleID), "type": rawJSON(istr(int(u.Role))), "userip": clientHost(remote)}
	if session != "" {
		o["sessionid"] = session
	}
	acc := s.opts.Accounts
	if acc == nil {
		return o
	}
	as, err := acc.Accounts(ctx)
	if err != nil {
		return o
	}
	i := slices.IndexFunc(as, func(a auth.Account) bool { return a.ID == u.ID })
	if i < 0 {
		return o
	}
	maps.Copy(o, accountObject(&as[i]))
	cfg, err := acc.Config(ctx)
	if err == nil {
		if o["lang"] == "default" {
			o["lang"] = cfg["default_lang"]
		}
		if o["timezone"] == "default" {
			o["timezone"] = cfg["default_timezone"]
		}
	}
	if gs, err := acc.UserGroups(ctx); err == nil {
		a := accessOf(gs, u.ID)
		o["gui_access"], o["debug_mode"] = rawJSON(a["gui_access"].(string)), rawJSON(a["debug_mode"].(string))
	}
	return o
}

// clientHost is the address of remote ("host:port") without the port.
func clientHost(remote string) string {
	if h, _, err := net.SplitHostPort(remote); err == nil {
		return h
	}
	return remote
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
	session, u, err := s.opts.Auth.Login(auth.WithClientIP(ctx, clientHost(c.remote)), p.Username.Value, p.Password.Value)
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
		return s.userData(ctx, u, session, c.remote), nil
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
		return nil, errParams("Session ID or token is expected.") // 6.0's text (recorded)
	}
	u, err := s.opts.Auth.Authenticate(ctx, secret)
	if errors.Is(err, ErrSessionExpired) {
		return nil, errParams("Session terminated, re-login, please.")
	}
	if err != nil {
		return nil, errParams("Session terminated, re-login, please.")
	}
	return s.userData(ctx, u, p.SessionID.Value, c.remote), nil
}

// userParams are the objects of user.create and user.update.
type userParams struct {
	UserID      opt[uint64] `json:"userid" zbx:"null"`
	Username    opt[string] `json:"username" as:"json"`
	Alias       opt[string] `json:"alias" as:"json"` // the pre-5.4 name of username
	Passwd      opt[string] `json:"passwd" as:"json"`
	CurrentPass opt[string] `json:"current_passwd" as:"json"`
	RoleID      opt[uint64] `json:"roleid" zbx:"null"`
	Usrgrps     opt[refs]   `json:"usrgrps" key:"usrgrpid"`
	// Medias are the user's media (alert recipients' addresses), kept
	// in the catalog's notification configuration; user_medias is the
	// pre-5.2 name.
	Medias     opt[json.RawMessage] `json:"medias" as:"json"`
	UserMedias opt[json.RawMessage] `json:"user_medias" as:"json"`
	// The profile: stored and returned (auth.Profile).
	Name        opt[string] `json:"name" as:"json"`
	Surname     opt[string] `json:"surname" as:"json"`
	URL         opt[string] `json:"url" as:"json"`
	Autologin   opt[int64]  `json:"autologin"`
	Autologout  opt[string] `json:"autologout" as:"timeunit"`
	Lang        opt[string] `json:"lang" as:"json"`
	Refresh     opt[string] `json:"refresh" as:"timeunit"`
	Theme       opt[string] `json:"theme" as:"json"`
	RowsPerPage opt[int64]  `json:"rows_per_page"`
	Timezone    opt[string] `json:"timezone" as:"json"`
}

// userThemes are the themes a user may have (Zabbix 6.0's).
var userThemes = []string{"default", "blue-theme", "dark-theme", "hc-light", "hc-dark"}

// checkProfile validates the profile members of user object i with
// Zabbix 6.0's rules and texts, in its order.
func (p *userParams) checkProfile(i int) error {
	secs := func(v string) (int64, bool) {
		d, err := auth.ParseSeconds(v)
		return int64(d.Seconds()), err == nil
	}
	if p.Autologin.Given() && p.Autologin.Value != 0 && p.Autologin.Value != 1 {
		return oneOf(i, "autologin", "0, 1")
	}
	if p.Autologout.Given() {
		n, ok := secs(p.Autologout.Value)
		switch {
		case p.Autologout.Value == "":
			return empty(i, "autologout")
		case !ok:
			return errParams(`Invalid parameter "/%d/autologout": a time unit is expected.`, i+1)
		case n != 0 && (n < 90 || n > 86400):
			return oneOf(i, "autologout", "0, 90-86400")
		}
	}
	if p.Lang.Given() && p.Lang.Value == "" {
		return empty(i, "lang")
	}
	if p.Refresh.Given() {
		n, ok := secs(p.Refresh.Value)
		switch {
		case p.Refresh.Value == "":
			return empty(i, "refresh")
		case !ok:
			return errParams(`Invalid parameter "/%d/refresh": a time unit is expected.`, i+1)
		case n > 3600:
			return oneOf(i, "refresh", "0-3600")
		}
	}
	if p.Theme.Given() && !slices.Contains(userThemes, p.Theme.Value) {
		return oneOf(i, "theme", quotedList(userThemes))
	}
	if p.RowsPerPage.Given() && (p.RowsPerPage.Value < 1 || p.RowsPerPage.Value > 999999) {
		return oneOf(i, "rows_per_page", "1-999999")
	}
	return nil
}

// profile is the profile of a new user with p's members.
func (p *userParams) profile() auth.Profile {
	pr := auth.NewProfile()
	set := func(dst *string, f opt[string]) {
		if f.Given() {
			*dst = f.Value
		}
	}
	set(&pr.URL, p.URL)
	set(&pr.Autologout, p.Autologout)
	set(&pr.Lang, p.Lang)
	set(&pr.Refresh, p.Refresh)
	set(&pr.Theme, p.Theme)
	set(&pr.Timezone, p.Timezone)
	if p.Autologin.Given() {
		pr.Autologin = int(p.Autologin.Value)
	}
	if p.RowsPerPage.Given() {
		pr.RowsPerPage = int(p.RowsPerPage.Value)
	}
	return pr
}

// accountUpdate is the change of user id that p's members ask for.
func (p *userParams) accountUpdate(id uint64) auth.AccountUpdate {
	up := auth.AccountUpdate{ID: id}
	str := func(f opt[string]) *string {
		if f.Given() {
			return &f.Value
		}
		return nil
	}
	num := func(f opt[int64]) *int {
		if f.Given() {
			return new(int(f.Value))
		}
		return nil
	}
	up.Username = str(p.Username)
	up.Name, up.Surname, up.URL = str(p.Name), str(p.Surname), str(p.URL)
	up.Autologout, up.Lang, up.Refresh, up.Theme, up.Timezone = str(p.Autologout), str(p.Lang), str(p.Refresh), str(p.Theme), str(p.Timezone)
	up.Autologin, up.RowsPerPage = num(p.Autologin), num(p.RowsPerPage)
	if p.RoleID.Given() {
		up.RoleID = &p.RoleID.Value
	}
	return up
}

// checkPassword applies the password policy to user object i's new
// password (Zabbix's texts).
func (s *Server) checkPassword(ctx context.Context, acc *auth.Store, c *call, i int, pw, username, name, surname string) error {
	err := acc.CheckPassword(ctx, pw, username, name, surname)
	var pe *auth.PasswordError
	if errors.As(err, &pe) {
		return errParams(`Incorrect value for field "/%d/passwd": %s.`, i+1, pe.Reason)
	}
	if err != nil {
		return s.accountErr(err, fmt.Sprintf("/%d/passwd", i+1), c)
	}
	return nil
}

// checkRoles makes sure the roles that user.create or user.update name
// exist, with Zabbix's text.
func (s *Server) checkRoles(ctx context.Context, acc *auth.Store, c *call, ps []userParams) error {
	for _, p := range ps {
		if !p.RoleID.Given() {
			continue
		}
		if _, err := acc.Role(ctx, p.RoleID.Value); errors.Is(err, auth.ErrNotFound) {
			return errParams(`User role with ID "%d" is not available.`, p.RoleID.Value)
		} else if err != nil {
			return s.accountErr(err, "/", c)
		}
	}
	return nil
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
	// In Zabbix 6.0's order: the members, the passwords, then names,
	// roles and user groups against what exists.
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
		case p.Username.Value == "":
			return nil, empty(i, "username")
		case p.Passwd.Given() && p.Passwd.Value == "":
			return nil, empty(i, "passwd")
		}
		if err := p.checkProfile(i); err != nil {
			return nil, err
		}
		switch {
		case !p.RoleID.Given():
			return nil, missing(i, "roleid")
		case !p.Usrgrps.Set:
			return nil, missing(i, "usrgrps")
		case len(p.Usrgrps.Value) == 0:
			return nil, empty(i, "usrgrps")
		}
		for j := range ps[:i] {
			if ps[j].Username.Value == p.Username.Value {
				return nil, errParams(`Invalid parameter "/%d": value (username)=(%s) already exists.`, i+1, p.Username.Value)
			}
		}
	}
	for i, p := range ps {
		if p.Passwd.Given() {
			if err := s.checkPassword(ctx, acc, c, i, p.Passwd.Value, p.Username.Value, p.Name.Value, p.Surname.Value); err != nil {
				return nil, err
			}
		}
	}
	existing, err := acc.Users(ctx)
	if err != nil {
		return nil, s.accountErr(err, "/", c)
	}
	for _, p := range ps {
		if slices.ContainsFunc(existing, func(u auth.User) bool { return u.Username == p.Username.Value }) {
			return nil, errParams(`User with username "%s" already exists.`, p.Username.Value)
		}
	}
	if err := s.checkRoles(ctx, acc, c, ps); err != nil {
		return nil, err
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
		u, err := acc.CreateAccount(ctx, auth.NewAccount{Username: p.Username.Value, Password: p.Passwd.Value, Name: p.Name.Value,
			Surname: p.Surname.Value, RoleID: p.RoleID.Value, Profile: p.profile()})
		if err != nil {
			return nil, s.accountErr(err, fmt.Sprintf("/%d", i+1), c)
		}
		if err := acc.SetUserGroups(ctx, u.ID, p.Usrgrps.Value); err != nil {
			return nil, s.accountErr(err, fmt.Sprintf("/%d/usrgrps", i+1), c)
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
		if p.Alias.Given() && !p.Username.Given() {
			p.Username = p.Alias // the pre-5.4 name, still taken by 6.0
		}
		if p.Username.Given() && p.Username.Value == "" {
			return nil, empty(i, "username")
		}
		if err := tooLong(i, "username", p.Username.Value, 100); err != nil {
			// Checked before anything is written (groups, then the
			// account): a refused rename changes nothing.
			return nil, err
		}
		if p.Passwd.Given() && p.Passwd.Value == "" {
			return nil, empty(i, "passwd")
		}
		if err := p.checkProfile(i); err != nil {
			return nil, err
		}
		self := p.UserID.Value == c.user.ID
		if c.user.Role < RoleSuperAdmin {
			// Anybody else may change their own password and profile
			// only.
			if !self || p.RoleID.Given() && p.RoleID.Value != c.user.RoleID || p.Usrgrps.Set || p.Medias.Set || p.UserMedias.Set ||
				p.Username.Given() && p.Username.Value != c.user.Username {
				return nil, errNoPermissions
			}
		}
		if self && p.RoleID.Given() && p.RoleID.Value != c.user.RoleID {
			return nil, errParams(`Invalid parameter "/%d/roleid": a user cannot change their own role.`, i+1)
		}
		if p.Usrgrps.Set && len(p.Usrgrps.Value) == 0 {
			return nil, empty(i, "usrgrps")
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
	medias, err := s.userMedias(ps)
	if err != nil {
		return nil, err
	}
	accounts, err := acc.Accounts(ctx)
	if err != nil {
		return nil, s.accountErr(err, "/", c)
	}
	for _, p := range ps {
		// A new name is checked before anything is written (recorded
		// from 6.0.14: an unchanged name is taken).
		if p.Username.Given() && slices.ContainsFunc(accounts, func(a auth.Account) bool { return a.Username == p.Username.Value && a.ID != p.UserID.Value }) {
			return nil, errParams(`User with username "%s" already exists.`, p.Username.Value)
		}
	}
	for i, p := range ps {
		j := slices.IndexFunc(accounts, func(a auth.Account) bool { return a.ID == p.UserID.Value })
		if j < 0 {
			return nil, errNoPermissions
		}
		if p.Passwd.Given() {
			a := accounts[j]
			name, surname := a.Name, a.Surname
			if p.Name.Given() {
				name = p.Name.Value
			}
			if p.Surname.Given() {
				surname = p.Surname.Value
			}
			if err := s.checkPassword(ctx, acc, c, i, p.Passwd.Value, a.Username, name, surname); err != nil {
				return nil, err
			}
		}
	}
	if err := s.checkRoles(ctx, acc, c, ps); err != nil {
		return nil, err
	}
	if err := s.checkUsrgrps(ctx, acc, c, ps); err != nil {
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
		if err := acc.UpdateAccount(ctx, p.accountUpdate(id)); err != nil {
			if errors.Is(err, auth.ErrInvalid) {
				return nil, errParams(`Invalid parameter "/%d/roleid": the last super admin keeps a super admin role.`, i+1)
			}
			return nil, s.accountErr(err, fmt.Sprintf("/%d", i+1), c)
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
			return nil, errParams("User is not allowed to delete himself.")
		}
	}
	for _, uid := range list {
		// 6.0 refuses to delete a dashboard's owner.
		name, err := acc.OwnedDashboard(ctx, uid)
		if err != nil {
			return nil, s.accountErr(err, "/", c)
		}
		if name != "" {
			users, err := acc.Users(ctx)
			if err != nil {
				return nil, s.accountErr(err, "/", c)
			}
			username := ""
			if k := slices.IndexFunc(users, func(u auth.User) bool { return u.ID == uid }); k >= 0 {
				username = users[k].Username
			}
			return nil, errParams(`User "%s" is dashboard "%s" owner.`, username, name)
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

// userUnblock is user.unblock: the failed-login counts of the users
// named (an array of IDs) start over, so blocked accounts can log in at
// once (auth.Store.UnblockUsers; all or nothing).
func (s *Server) userUnblock(ctx context.Context, c *call) (any, error) {
	acc, err := s.accounts()
	if err != nil {
		return nil, err
	}
	list, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	if err := acc.UnblockUsers(ctx, list); err != nil {
		return nil, s.accountErr(err, "/", c)
	}
	s.opts.Logger.Info("api: users unblocked", "by", c.user.Username, "userids", list)
	return idResult("userids", list), nil
}

// userGetParams are user.get's parameters.
type userGetParams struct {
	getParams
	UserIDs       opt[ids] `json:"userids"`
	UsrgrpIDs     opt[ids] `json:"usrgrpids"`
	SelectUsrgrps opt[sel] `json:"selectUsrgrps"`
	SelectMedias  opt[sel] `json:"selectMedias"`
	// selectMediatypes: the media types of the user's media.
	SelectMediatypes opt[sel] `json:"selectMediatypes"`
	SelectRole       opt[sel] `json:"selectRole"`
	// getAccess adds the user groups' gui_access, debug_mode and
	// users_status (the highest of the user's groups).
	GetAccess opt[bool] `json:"getAccess" as:"isset"`
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
	users, err := acc.Accounts(ctx)
	if err != nil {
		return nil, s.accountErr(err, "/", c)
	}
	gs, err := acc.UserGroups(ctx)
	if err != nil {
		return nil, s.accountErr(err, "/", c)
	}
	groupsOf := userGroupsOf(gs)
	inGroup := map[uint64]bool{}
	// Who a user other than a super admin sees, as Zabbix: themselves and
	// the members of their user groups; with editable, only themselves.
	visible := map[uint64]bool{c.user.ID: true}
	super := c.user.Role == RoleSuperAdmin
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
	var roles map[uint64]*auth.UserRole
	if p.SelectRole.Value.list() {
		rs, err := acc.Roles(ctx)
		if err != nil {
			return nil, s.accountErr(err, "/", c)
		}
		roles = map[uint64]*auth.UserRole{}
		for i := range rs {
			roles[rs[i].ID] = &rs[i]
		}
	}
	wantUser := idSet(p.UserIDs.Value)
	var objs []object
	for i := range users {
		u := &users[i]
		if !super && !visible[u.ID] || wantUser != nil && !wantUser[u.ID] ||
			p.UsrgrpIDs.Given() && !inGroup[u.ID] {
			continue
		}
		o := accountObject(u)
		if p.GetAccess.Value {
			maps.Copy(o, accessOf(gs, u.ID))
		}
		if sl := p.SelectUsrgrps.Value; sl.list() {
			o["usrgrps"] = nonNil(p.limitSelect(sl.shape(groupsOf[u.ID], "usrgrpid")))
		}
		// Media only to a super admin or the user themselves: they hold
		// addresses.
		if p.SelectMedias.Value.list() && (super || u.ID == c.user.ID) {
			o["medias"] = s.mediaObjects(u.ID)
		}
		if p.SelectMediatypes.Value.list() && (super || u.ID == c.user.ID) {
			o["mediatypes"] = s.userMediaTypes(u.ID)
		}
		if sl := p.SelectRole.Value; sl.list() {
			if r := roles[u.RoleID]; r != nil {
				o["role"] = sl.shape([]object{roleObject(r)}, "")[0]
			} else {
				o["role"] = []object{}
			}
		}
		objs = append(objs, o)
	}
	return p.apply(objs, "userid", "userid", "username")
}

// accountObject is a user as user.get returns it.
func accountObject(a *auth.Account) object {
	return object{
		"userid": id(a.ID), "username": a.Username, "name": a.Name, "surname": a.Surname, "url": a.URL,
		"autologin": istr(a.Autologin), "autologout": a.Autologout, "lang": a.Lang, "refresh": a.Refresh,
		"theme": a.Theme, "attempt_failed": istr(a.AttemptFailed), "attempt_ip": a.AttemptIP,
		"attempt_clock": strconv.FormatInt(a.AttemptClock, 10), "rows_per_page": istr(a.RowsPerPage),
		"timezone": a.Timezone, "roleid": id(a.RoleID),
	}
}

// accessOf is what a user's groups give them (user.get's getAccess,
// usergroup.get's users): the highest gui_access, debug_mode and
// users_status of the groups the user is in.
func accessOf(gs []auth.UserGroup, userID uint64) object {
	gui, debug, status := 0, 0, 0
	for _, g := range gs {
		if slices.Contains(g.UserIDs, userID) {
			gui, debug, status = max(gui, g.GUIAccess), max(debug, g.DebugMode), max(status, g.UsersStatus)
		}
	}
	return object{"gui_access": istr(gui), "debug_mode": istr(debug), "users_status": istr(status)}
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
