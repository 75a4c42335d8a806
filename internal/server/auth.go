package server

import (
	"context"
	"errors"
	"fmt"

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
	case errors.Is(err, auth.ErrNotFound):
		return fmt.Errorf("%w: %w", api.ErrNotFound, err)
	case errors.Is(err, auth.ErrExists):
		return fmt.Errorf("%w: %w", api.ErrExists, err)
	case errors.Is(err, auth.ErrInvalid):
		return fmt.Errorf("%w: %w", api.ErrInvalid, err)
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

// The account management methods (api.Accounts).

func (a authAdapter) Users(ctx context.Context) ([]api.Account, error) {
	us, err := a.s.Users(ctx)
	if err != nil {
		return nil, mapAuthErr(err)
	}
	out := make([]api.Account, len(us))
	for i, u := range us {
		out[i] = api.Account{ID: u.ID, Username: u.Username, Name: u.Name, Surname: u.Surname, Role: int(u.Role)}
	}
	return out, nil
}

func (a authAdapter) CreateUser(ctx context.Context, username, password string, role int) (uint64, error) {
	u, err := a.s.CreateUser(ctx, username, password, auth.Role(role))
	return u.ID, mapAuthErr(err)
}

func (a authAdapter) SetPassword(ctx context.Context, userID uint64, password string) error {
	return mapAuthErr(a.s.UpdatePassword(ctx, userID, password))
}

func (a authAdapter) SetRole(ctx context.Context, userID uint64, role int) error {
	return mapAuthErr(a.s.SetRole(ctx, userID, auth.Role(role)))
}

func (a authAdapter) DeleteUser(ctx context.Context, userID uint64) error {
	return mapAuthErr(a.s.DeleteUser(ctx, userID))
}

func (a authAdapter) Tokens(ctx context.Context, userID uint64) ([]api.TokenInfo, error) {
	ts, err := a.s.Tokens(ctx, userID)
	if err != nil {
		return nil, mapAuthErr(err)
	}
	out := make([]api.TokenInfo, len(ts))
	for i, t := range ts {
		out[i] = api.TokenInfo{ID: t.ID, UserID: t.UserID, Name: t.Name, Description: t.Description,
			ExpiresAt: t.ExpiresAt, CreatedAt: t.CreatedAt, LastAccess: t.LastAccess, Enabled: t.Status == auth.TokenEnabled}
	}
	return out, nil
}

func (a authAdapter) CreateToken(ctx context.Context, userID uint64, name, description string, expiresAt int64, enabled bool) (uint64, error) {
	t, err := a.s.CreateToken(ctx, userID, name, description, expiresAt)
	if err != nil {
		return 0, mapAuthErr(err)
	}
	if !enabled {
		if err := a.s.SetTokenStatus(ctx, t.ID, auth.TokenDisabled); err != nil {
			return 0, mapAuthErr(err)
		}
	}
	return t.ID, nil
}

func (a authAdapter) GenerateToken(ctx context.Context, tokenID uint64) (string, error) {
	secret, err := a.s.GenerateToken(ctx, tokenID)
	return secret, mapAuthErr(err)
}

func (a authAdapter) DeleteToken(ctx context.Context, tokenID uint64) error {
	return mapAuthErr(a.s.DeleteToken(ctx, tokenID))
}
