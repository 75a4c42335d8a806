package api

import (
	"context"
	"fmt"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/auth"
)

type tokenParams struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
	UserID      flexID  `json:"userid"`
	ExpiresAt   flexInt `json:"expires_at"`
	Status      flexInt `json:"status"`
}

func (s *Server) tokenCreate(ctx context.Context, c *call) (any, error) {
	acc, err := s.accounts()
	if err != nil {
		return nil, err
	}
	var ps []tokenParams
	if err := legacyDecodeObjects(c.params, &ps); err != nil {
		return nil, err
	}
	for i := range ps {
		p := &ps[i]
		if p.Name == nil {
			return nil, errParams(`Invalid parameter "/%d": the parameter "name" is missing.`, i+1)
		}
		if !p.UserID.set {
			p.UserID = flexID{set: true, v: c.user.ID}
		}
		if p.UserID.v == 0 || (p.UserID.v != c.user.ID && c.user.Role < RoleSuperAdmin) {
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
		t, err := acc.CreateToken(ctx, p.UserID.v, *p.Name, desc, p.ExpiresAt.v)
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
	var p struct {
		getParams
		TokenIDs ids     `json:"tokenids"`
		UserIDs  ids     `json:"userids"`
		ValidAt  flexInt `json:"valid_at"`
	}
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	acc, err := s.accounts()
	if err != nil {
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
