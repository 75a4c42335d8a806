package api

import (
	"errors"
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
	s.methods["user.unblock"] = &method{role: RoleSuperAdmin, call: s.userUnblock}
	// Every user manages their own tokens; a super admin anybody's
	// (Zabbix's default roles allow "Manage API tokens" to all types).
	s.methods["token.get"] = &method{role: RoleUser, call: s.tokenGet}
	s.methods["token.create"] = &method{role: RoleUser, call: s.tokenCreate}
	s.methods["token.generate"] = &method{role: RoleUser, call: s.tokenGenerate}
	s.methods["token.delete"] = &method{role: RoleUser, call: s.tokenDelete}
	s.methods["token.update"] = &method{role: RoleUser, call: s.tokenUpdate}
	s.registerUserGroups()
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
	var long *auth.TooLongError
	switch {
	case errors.As(err, &long) && strings.HasPrefix(path, "/"):
		// 6.0.14: 'Invalid parameter "/1/name": value is too long.'
		member := "name"
		if long.What == "user name" {
			member = "username"
		}
		return errParams(`Invalid parameter "%s/%s": value is too long.`, path, member)
	case errors.Is(err, auth.ErrNotFound):
		return errNoPermissions
	case errors.Is(err, auth.ErrExists), errors.Is(err, auth.ErrInvalid):
		return errParams(`Invalid parameter "%s": %s.`, path, msg)
	}
	s.opts.Logger.Error("api: account operation failed", "user", c.user.Username, "remote", c.remote, "err", err)
	return errApp("%s", msg)
}

func idSet(v ids) map[uint64]bool {
	if v == nil {
		return nil // not given: no condition (a given empty list matches nothing)
	}
	m := make(map[uint64]bool, len(v))
	for _, id := range v {
		m[id] = true
	}
	return m
}
