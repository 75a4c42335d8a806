package api

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/auth"
)

func (s *Server) registerAccounts() {
	s.methods["user.get"] = &method{role: RoleUser, call: s.userGet}
	s.methods["user.create"] = &method{role: RoleSuperAdmin, call: s.userCreate}
	// Any user may call user.update, to change their own password; the
	// method checks what else they may change.
	s.methods["user.update"] = &method{role: RoleUser, call: s.userUpdate}
	s.methods["user.delete"] = &method{role: RoleSuperAdmin, call: s.userDelete}
	// Every user manages their own tokens; a super admin anybody's
	// (Zabbix's default roles allow "Manage API tokens" to all types).
	s.methods["token.get"] = &method{role: RoleUser, call: s.tokenGet}
	s.methods["token.create"] = &method{role: RoleUser, call: s.tokenCreate}
	s.methods["token.generate"] = &method{role: RoleUser, call: s.tokenGenerate}
	s.methods["token.delete"] = &method{role: RoleUser, call: s.tokenDelete}
}

func (s *Server) accounts() (*auth.Store, error) {
	if s.opts.Accounts == nil {
		return nil, errApp("User and token management is not available on this server.")
	}
	return s.opts.Accounts, nil
}

// accountErr maps an auth store error to the API's error, naming path (the
// parameter the request got wrong) when it was the request's fault.
func (s *Server) accountErr(err error, path string, c *call) error {
	msg := strings.TrimPrefix(err.Error(), "auth: ")
	switch {
	case errors.Is(err, auth.ErrNotFound):
		return errNoPermissions
	case errors.Is(err, auth.ErrExists), errors.Is(err, auth.ErrInvalid):
		return errParams(`Invalid parameter "%s": %s.`, path, msg)
	}
	s.opts.Logger.Error("api: account operation failed", "user", c.user.Username, "remote", c.remote, "err", err)
	return errApp("%s", msg)
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

// ---- users ----

type userParams struct {
	UserID      *flexInt  `json:"userid"`
	Username    *string   `json:"username"`
	Alias       *string   `json:"alias"` // the pre-5.4 name of username
	Passwd      *string   `json:"passwd"`
	CurrentPass *string   `json:"current_passwd"`
	RoleID      flexRole  `json:"roleid"`
	Usrgrps     notStored `json:"usrgrps"`
	Medias      notStored `json:"medias"`
	UserMedias  notStored `json:"user_medias"`
	Name        notStored `json:"name"`
	Surname     notStored `json:"surname"`
	Lang        notStored `json:"lang"`
	Theme       notStored `json:"theme"`
	Autologin   notStored `json:"autologin"`
	Autologout  notStored `json:"autologout"`
	Refresh     notStored `json:"refresh"`
	RowsPerPage notStored `json:"rows_per_page"`
	URL         notStored `json:"url"`
	Timezone    notStored `json:"timezone"`
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
	// Not one transaction: each user is hashed and inserted on its own
	// (the hash is deliberately slow). A failure part-way leaves the
	// earlier users created; the error says which one failed.
	var out []uint64
	for i, p := range ps {
		u, err := acc.CreateUser(ctx, *p.Username, *p.Passwd, p.RoleID.v)
		if err != nil {
			return nil, s.accountErr(err, fmt.Sprintf("/%d", i+1), c)
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
	if err := decodeObjects(c.params, &ps); err != nil {
		return nil, err
	}
	for i := range ps {
		p := &ps[i]
		if p.UserID == nil || !p.UserID.set || p.UserID.v <= 0 {
			return nil, errParams(`Invalid parameter "/%d": the parameter "userid" is missing.`, i+1)
		}
		if p.Username != nil || p.Alias != nil {
			return nil, errParams(`Invalid parameter "/%d/username": renaming users is not supported.`, i+1)
		}
		self := uint64(p.UserID.v) == c.user.ID
		if c.user.Role < RoleSuperAdmin {
			// Anybody else may change only their own password.
			if !self || p.RoleID.set {
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
	var out []uint64
	for i, p := range ps {
		id := uint64(p.UserID.v)
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
		s.opts.Logger.Info("api: user updated", "by", c.user.Username, "userid", id, "password", p.Passwd != nil, "role", p.RoleID.set)
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
		s.opts.Logger.Info("api: user deleted", "by", c.user.Username, "userid", id)
	}
	return idResult("userids", list), nil
}

func (s *Server) userGet(ctx context.Context, c *call) (any, error) {
	acc, err := s.accounts()
	if err != nil {
		return nil, err
	}
	var p struct {
		getParams
		UserIDs ids `json:"userids"`
	}
	if err := decodeParams(c.params, &p); err != nil {
		return nil, err
	}
	users, err := acc.Users(ctx)
	if err != nil {
		return nil, s.accountErr(err, "/", c)
	}
	want := idSet(p.UserIDs)
	var objs []object
	for _, u := range users {
		// Only a super admin sees other users.
		if c.user.Role < RoleSuperAdmin && u.ID != c.user.ID || want != nil && !want[u.ID] {
			continue
		}
		objs = append(objs, object{
			"userid": strconv.FormatUint(u.ID, 10), "username": u.Username, "name": u.Name, "surname": u.Surname,
			"roleid": strconv.Itoa(int(u.Role)), "type": strconv.Itoa(int(u.Role)),
		})
	}
	return p.apply(objs, "userid", "userid", "username")
}

// ---- tokens ----

type tokenParams struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
	UserID      flexInt `json:"userid"`
	ExpiresAt   flexInt `json:"expires_at"`
	Status      flexInt `json:"status"`
}

func (s *Server) tokenCreate(ctx context.Context, c *call) (any, error) {
	acc, err := s.accounts()
	if err != nil {
		return nil, err
	}
	var ps []tokenParams
	if err := decodeObjects(c.params, &ps); err != nil {
		return nil, err
	}
	for i := range ps {
		p := &ps[i]
		if p.Name == nil {
			return nil, errParams(`Invalid parameter "/%d": the parameter "name" is missing.`, i+1)
		}
		if !p.UserID.set {
			p.UserID = flexInt{set: true, v: int64(c.user.ID)}
		}
		if p.UserID.v <= 0 || (uint64(p.UserID.v) != c.user.ID && c.user.Role < RoleSuperAdmin) {
			return nil, errNoPermissions
		}
		if p.Status.set && p.Status.v != 0 && p.Status.v != 1 {
			return nil, errParams(`Invalid parameter "/%d/status": value must be one of 0, 1.`, i+1)
		}
		if p.ExpiresAt.v < 0 {
			return nil, errParams(`Invalid parameter "/%d/expires_at": value must be 0 (never) or a Unix time.`, i+1)
		}
	}
	var out []uint64
	for i, p := range ps {
		desc := ""
		if p.Description != nil {
			desc = *p.Description
		}
		t, err := acc.CreateToken(ctx, uint64(p.UserID.v), *p.Name, desc, p.ExpiresAt.v)
		if err != nil {
			return nil, s.accountErr(err, fmt.Sprintf("/%d", i+1), c)
		}
		id := t.ID
		if p.Status.v == auth.TokenDisabled {
			// Zabbix creates a token disabled in one step; the store
			// creates tokens enabled, and a token without a secret
			// cannot be used before this second step anyway.
			if err := acc.SetTokenStatus(ctx, id, auth.TokenDisabled); err != nil {
				return nil, s.accountErr(err, fmt.Sprintf("/%d/status", i+1), c)
			}
		}
		s.opts.Logger.Info("api: token created", "by", c.user.Username, "tokenid", id, "userid", p.UserID.v)
		out = append(out, id)
	}
	return idResult("tokenids", out), nil
}

// ownedTokens checks that the caller may act on every token in list and
// returns the tokens they may see.
func (s *Server) ownedTokens(ctx context.Context, acc *auth.Store, c *call, list []uint64) error {
	var uid uint64
	if c.user.Role < RoleSuperAdmin {
		uid = c.user.ID
	}
	toks, err := acc.Tokens(ctx, uid)
	if err != nil {
		return s.accountErr(err, "/", c)
	}
	have := make(map[uint64]bool, len(toks))
	for _, t := range toks {
		have[t.ID] = true
	}
	for _, id := range list {
		if !have[id] {
			return errNoPermissions
		}
	}
	return nil
}

func (s *Server) tokenGenerate(ctx context.Context, c *call) (any, error) {
	acc, err := s.accounts()
	if err != nil {
		return nil, err
	}
	list, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	if err := s.ownedTokens(ctx, acc, c, list); err != nil {
		return nil, err
	}
	out := make([]map[string]string, 0, len(list))
	for i, id := range list {
		secret, err := acc.GenerateToken(ctx, id)
		if err != nil {
			return nil, s.accountErr(err, fmt.Sprintf("/%d", i+1), c)
		}
		// The secret is returned once and never logged.
		s.opts.Logger.Info("api: token generated", "by", c.user.Username, "tokenid", id)
		out = append(out, map[string]string{"tokenid": strconv.FormatUint(id, 10), "token": secret})
	}
	return out, nil
}

func (s *Server) tokenDelete(ctx context.Context, c *call) (any, error) {
	acc, err := s.accounts()
	if err != nil {
		return nil, err
	}
	list, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	if err := s.ownedTokens(ctx, acc, c, list); err != nil {
		return nil, err
	}
	for i, id := range list {
		if err := acc.DeleteToken(ctx, id); err != nil {
			return nil, s.accountErr(err, fmt.Sprintf("/%d", i+1), c)
		}
		s.opts.Logger.Info("api: token deleted", "by", c.user.Username, "tokenid", id)
	}
	return idResult("tokenids", list), nil
}

func (s *Server) tokenGet(ctx context.Context, c *call) (any, error) {
	acc, err := s.accounts()
	if err != nil {
		return nil, err
	}
	var p struct {
		getParams
		TokenIDs ids     `json:"tokenids"`
		UserIDs  ids     `json:"userids"`
		ValidAt  flexInt `json:"valid_at"`
	}
	if err := decodeParams(c.params, &p); err != nil {
		return nil, err
	}
	var uid uint64
	if c.user.Role < RoleSuperAdmin {
		uid = c.user.ID
	}
	toks, err := acc.Tokens(ctx, uid)
	if err != nil {
		return nil, s.accountErr(err, "/", c)
	}
	wantTok, wantUser := idSet(p.TokenIDs), idSet(p.UserIDs)
	var objs []object
	for _, t := range toks {
		if wantTok != nil && !wantTok[t.ID] || wantUser != nil && !wantUser[t.UserID] {
			continue
		}
		if p.ValidAt.set && (t.Status != auth.TokenEnabled || t.ExpiresAt != 0 && t.ExpiresAt <= p.ValidAt.v) {
			continue
		}
		status := strconv.Itoa(t.Status)
		objs = append(objs, object{
			"tokenid": strconv.FormatUint(t.ID, 10), "name": t.Name, "description": t.Description,
			"userid": strconv.FormatUint(t.UserID, 10), "lastaccess": strconv.FormatInt(t.LastAccess, 10),
			"status": status, "expires_at": strconv.FormatInt(t.ExpiresAt, 10), "created_at": strconv.FormatInt(t.CreatedAt, 10),
		})
	}
	return p.apply(objs, "tokenid", "tokenid", "name", "lastaccess", "status", "expires_at", "created_at")
}

func idSet(v ids) map[uint64]bool {
	if len(v) == 0 {
		return nil
	}
	m := make(map[uint64]bool, len(v))
	for _, id := range v {
		m[id] = true
	}
	return m
}
