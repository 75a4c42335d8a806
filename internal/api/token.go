package api

import (
	"context"
	"fmt"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/auth"
)

// tokenParams are the objects of token.create.
type tokenParams struct {
	Name        opt[string] `json:"name" as:"json"`
	Description opt[string] `json:"description" as:"json"`
	UserID      opt[uint64] `json:"userid"`
	ExpiresAt   opt[int64]  `json:"expires_at"`
	Status      opt[int64]  `json:"status"`
}

func (s *Server) tokenCreate(ctx context.Context, c *call) (any, error) {
	acc, err := s.accounts()
	if err != nil {
		return nil, err
	}
	var ps []tokenParams
	if err := decodeValidatorObjects(c.params, &ps); err != nil {
		return nil, err
	}
	for i := range ps {
		p := &ps[i]
		if !p.Name.Given() {
			return nil, errParams(`Invalid parameter "/%d": the parameter "name" is missing.`, i+1)
		}
		if !p.UserID.Set {
			p.UserID = opt[uint64]{Set: true, Value: c.user.ID}
		}
		if p.UserID.Value == 0 || (p.UserID.Value != c.user.ID && c.user.Role < RoleSuperAdmin) {
			return nil, errNoPermissions
		}
		if p.Status.Given() && p.Status.Value != 0 && p.Status.Value != 1 {
			return nil, errParams(`Invalid parameter "/%d/status": value must be one of 0, 1.`, i+1)
		}
		if p.ExpiresAt.Value < 0 {
			return nil, errParams(`Invalid parameter "/%d/expires_at": value must be 0 (never) or a Unix time.`, i+1)
		}
	}
	want := make([]tokenName, len(ps))
	for i, p := range ps {
		want[i] = tokenName{user: p.UserID.Value, name: p.Name.Value, at: i + 1}
	}
	if err := s.tokenNamesFree(ctx, acc, c, want); err != nil {
		return nil, err
	}
	var out []uint64
	for i, p := range ps {
		desc := ""
		if p.Description.Given() {
			desc = p.Description.Value
		}
		t, err := acc.CreateToken(ctx, p.UserID.Value, p.Name.Value, desc, p.ExpiresAt.Value)
		if err != nil {
			return nil, s.accountErr(err, fmt.Sprintf("/%d", i+1), c)
		}
		id := t.ID
		if p.Status.Value == auth.TokenDisabled {
			// Zabbix creates a token disabled in one step; the store
			// creates tokens enabled, and a token without a secret
			// cannot be used before this second step anyway.
			if err := acc.SetTokenStatus(ctx, id, auth.TokenDisabled); err != nil {
				return nil, s.accountErr(err, fmt.Sprintf("/%d/status", i+1), c)
			}
		}
		s.opts.Logger.Info("api: token created", "by", c.user.Username, "tokenid", id, "userid", p.UserID.Value)
		out = append(out, id)
	}
	return idResult("tokenids", out), nil
}

// tokenName is a token's name with its owner: a user's token names are
// unique.
type tokenName struct {
	user uint64
	name string
	id   uint64 // the token being renamed; 0 on create
	at   int    // its object's position in the request, from 1
}

// tokenNamesFree checks, before anything is written, that no two of want
// share an owner and a name and that none takes a name its owner's other
// tokens have, with 6.0's texts (recorded from 6.0.14). The store checks
// again when it writes; this check only makes a refused batch write
// nothing.
func (s *Server) tokenNamesFree(ctx context.Context, acc *auth.Store, c *call, want []tokenName) error {
	seen := make(map[tokenName]bool, len(want))
	for _, w := range want {
		k := tokenName{user: w.user, name: w.name}
		if seen[k] {
			return errParams(`Invalid parameter "/%d": value (userid, name)=(%d, %s) already exists.`, w.at, w.user, w.name)
		}
		seen[k] = true
	}
	toks, err := acc.Tokens(ctx, 0)
	if err != nil {
		return s.accountErr(err, "/", c)
	}
	// The stored token named first is the one with the lowest ID, as 6.0
	// names it (recorded: a swap of two names names the older token's).
	renamed := make(map[tokenName]uint64, len(want)) // (owner, name) -> the token taking it
	for _, w := range want {
		renamed[tokenName{user: w.user, name: w.name}] = w.id
	}
	for _, t := range toks { // ascending by ID
		if id, ok := renamed[tokenName{user: t.UserID, name: t.Name}]; ok && id != t.ID {
			return errParams(`API token "%s" already exists for userid "%d".`, t.Name, t.UserID)
		}
	}
	return nil
}

// tokenRenamesFree is tokenNamesFree for the new names of token.update;
// the caller has checked that the tokens exist.
func (s *Server) tokenRenamesFree(ctx context.Context, acc *auth.Store, c *call, ps []tokenUpdateParams) error {
	toks, err := acc.Tokens(ctx, 0)
	if err != nil {
		return s.accountErr(err, "/", c)
	}
	user := make(map[uint64]uint64, len(toks))
	for _, t := range toks {
		user[t.ID] = t.UserID
	}
	var want []tokenName
	for i, p := range ps {
		if p.Name.Given() {
			want = append(want, tokenName{user: user[p.TokenID.Value], name: p.Name.Value, id: p.TokenID.Value, at: i + 1})
		}
	}
	return s.tokenNamesFree(ctx, acc, c, want)
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

// tokenUpdateParams are the objects of token.update, checked as 6.0's
// validator checks them (recorded from 6.0.14): the owner, the secret
// and the times are not members.
type tokenUpdateParams struct {
	TokenID     opt[uint64] `json:"tokenid"`
	Name        opt[string] `json:"name" as:"json"`
	Description opt[string] `json:"description" as:"json"`
	ExpiresAt   opt[int64]  `json:"expires_at"`
	Status      opt[int64]  `json:"status"`
}

func (s *Server) tokenUpdate(ctx context.Context, c *call) (any, error) {
	acc, err := s.accounts()
	if err != nil {
		return nil, err
	}
	var ps []tokenUpdateParams
	if err := decodeValidatorObjects(c.params, &ps); err != nil {
		return nil, err
	}
	list := make([]uint64, len(ps))
	seen := map[uint64]bool{}
	for i := range ps {
		p := &ps[i]
		switch {
		case !p.TokenID.Given():
			return nil, errParams(`Invalid parameter "/%d": the parameter "tokenid" is missing.`, i+1)
		case seen[p.TokenID.Value]:
			return nil, errParams(`Invalid parameter "/%d": value (tokenid)=(%d) already exists.`, i+1, p.TokenID.Value)
		case p.Name.Given() && p.Name.Value == "":
			return nil, errParams(`Invalid parameter "/%d/name": cannot be empty.`, i+1)
		case p.Status.Given() && p.Status.Value != 0 && p.Status.Value != 1:
			return nil, errParams(`Invalid parameter "/%d/status": value must be one of 0, 1.`, i+1)
		case p.ExpiresAt.Value < 0:
			return nil, errParams(`Invalid parameter "/%d/expires_at": value must be 0 (never) or a Unix time.`, i+1)
		}
		seen[p.TokenID.Value] = true
		list[i] = p.TokenID.Value
	}
	if err := s.ownedTokens(ctx, acc, c, list); err != nil {
		return nil, err
	}
	if err := s.tokenRenamesFree(ctx, acc, c, ps); err != nil {
		return nil, err
	}
	for i := range ps {
		p := &ps[i]
		var ch auth.TokenChange
		if p.Name.Given() {
			ch.Name = &p.Name.Value
		}
		if p.Description.Given() {
			ch.Description = &p.Description.Value
		}
		if p.Status.Given() {
			st := int(p.Status.Value)
			ch.Status = &st
		}
		if p.ExpiresAt.Given() {
			ch.ExpiresAt = &p.ExpiresAt.Value
		}
		if err := acc.UpdateToken(ctx, p.TokenID.Value, ch); err != nil {
			return nil, s.accountErr(err, fmt.Sprintf("/%d", i+1), c)
		}
		s.opts.Logger.Info("api: token updated", "by", c.user.Username, "tokenid", p.TokenID.Value)
	}
	return idResult("tokenids", list), nil
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

// tokenGetParams are token.get's parameters, a validated get
// (get_valid.go) in the order of 6.0's rules. valid_at keeps the tokens
// that do not expire by then (expires_at 0 or later), expired_at those
// that have expired by then, whatever their status; token keeps the
// token with that secret (recorded from 6.0.14).
type tokenGetParams struct {
	TokenIDs  opt[ids]   `json:"tokenids" zbx:"null"`
	UserIDs   opt[ids]   `json:"userids" zbx:"null"`
	Token     opt[zstr]  `json:"token" in:"0:64" zbx:"null"`
	ValidAt   opt[int64] `json:"valid_at" zbx:"null"`
	ExpiredAt opt[int64] `json:"expired_at" zbx:"null"`
	validQuery
	validPage
	PreserveKeys opt[bool] `json:"preservekeys"`
}

var tokenNames = validNames{
	output: []string{"tokenid", "name", "description", "userid", "lastaccess", "status", "expires_at", "created_at", "creator_userid"},
	filter: []string{"tokenid", "name", "userid", "lastaccess", "status", "expires_at", "created_at", "creator_userid"},
	search: []string{"name", "description"},
	sort:   []string{"tokenid", "name", "lastaccess", "status", "expires_at", "created_at"},
}

func (p *tokenGetParams) adjustRule(r *fieldRule, _ func(string) bool) { tokenNames.adjust(r) }

// tokenSchema is Zabbix 6.0's token table, which filter and search read.
var tokenSchema = schema{id: "tokenid", named: true, types: fieldTypes(`tokenid:n name:c description:t userid:n
	lastaccess:n status:n expires_at:n created_at:n creator_userid:n`)}

func (s *Server) tokenGet(ctx context.Context, c *call) (any, error) {
	var p tokenGetParams
	if err := decodeValidated(c.params, &p); err != nil {
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
	var bySecret uint64
	if p.Token.Given() {
		if bySecret, err = acc.TokenBySecret(ctx, string(p.Token.Value)); err != nil {
			return nil, s.accountErr(err, "/", c)
		}
	}
	var objs []object
	for _, t := range toks {
		switch {
		case !idsPass(p.TokenIDs, t.ID), !idsPass(p.UserIDs, t.UserID),
			p.Token.Given() && t.ID != bySecret,
			p.ValidAt.Given() && t.ExpiresAt != 0 && t.ExpiresAt <= p.ValidAt.Value,
			p.ExpiredAt.Given() && (t.ExpiresAt == 0 || t.ExpiresAt > p.ExpiredAt.Value):
			continue
		}
		objs = append(objs, object{
			"tokenid": strconv.FormatUint(t.ID, 10), "name": t.Name, "description": t.Description,
			"userid": strconv.FormatUint(t.UserID, 10), "lastaccess": strconv.FormatInt(t.LastAccess, 10),
			"status": strconv.Itoa(t.Status), "expires_at": strconv.FormatInt(t.ExpiresAt, 10), "created_at": strconv.FormatInt(t.CreatedAt, 10),
		})
	}
	g := validGet(&p.validQuery, &p.validPage, p.PreserveKeys)
	return g.applySchema(objs, &tokenSchema, tokenNames.sort...)
}
