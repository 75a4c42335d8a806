package api

import (
	"context"
	"errors"
	"strconv"
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
	if err := decodeParams(c.params, &p); err != nil {
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
	if err := decodeParams(c.params, &p); err != nil {
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
