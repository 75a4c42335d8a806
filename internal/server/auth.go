package server

import (
	"context"
	"errors"

	"github.com/peregrine-mon/peregrine/internal/api"
	"github.com/peregrine-mon/peregrine/internal/api/auth"
)

// authAdapter presents the auth store to the API, mapping its errors to
// the ones the API turns into Zabbix's texts.
type authAdapter struct{ s *auth.Store }

func apiUser(u auth.User) api.User {
	return api.User{ID: u.ID, Username: u.Username, Role: int(u.Role)}
}

func mapAuthErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, auth.ErrSessionExpired):
		return api.ErrSessionExpired
	case errors.Is(err, auth.ErrBlocked):
		return api.ErrBlocked
	case errors.Is(err, auth.ErrBadCredentials), errors.Is(err, auth.ErrNotAuthorized):
		return api.ErrBadCredentials
	}
	return err
}

func (a authAdapter) Authenticate(ctx context.Context, secret string) (api.User, error) {
	u, err := a.s.Authenticate(ctx, secret)
	return apiUser(u), mapAuthErr(err)
}

func (a authAdapter) Login(ctx context.Context, username, password string) (string, api.User, error) {
	session, u, err := a.s.Login(ctx, username, password)
	return session, apiUser(u), mapAuthErr(err)
}

func (a authAdapter) Logout(ctx context.Context, session string) error {
	return mapAuthErr(a.s.Logout(ctx, session))
}
