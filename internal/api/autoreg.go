package api

import (
	"context"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxpsk"
)

// autoregistration.get and .update: which connections registering
// agents may use and the autoregistration pre-shared key, as 6.0.14
// answers and checks them (recorded; the conformance case autoreg).
// The identity and the key are never returned: get's only member is
// tls_accept.

// AutoregStore keeps the autoregistration settings (*catalog.Catalog).
type AutoregStore interface {
	AutoregSettings() catalog.AutoregSettings
	SetAutoregSettings(ctx context.Context, a catalog.AutoregSettings) error
}

func (s *Server) registerAutoreg() {
	s.methods["autoregistration.get"] = &method{role: RoleSuperAdmin, call: s.autoregGet}
	s.methods["autoregistration.update"] = &method{role: RoleSuperAdmin, call: s.autoregUpdate}
}

func (s *Server) autoregSettings() catalog.AutoregSettings {
	if s.opts.Autoreg == nil {
		return catalog.DefaultAutoregSettings
	}
	return s.opts.Autoreg.AutoregSettings()
}

func (s *Server) autoregGet(ctx context.Context, c *call) (any, error) {
	var p map[string]json.RawMessage
	if !emptyParams(c.params) {
		if err := json.Unmarshal(c.params, &p); err != nil {
			return nil, errParams(`Invalid parameter "/": an array or object is expected.`)
		}
	}
	for k, v := range p {
		if k != "output" {
			return nil, errParams(`Invalid parameter "/": unexpected parameter "%s".`, k)
		}
		var list []string
		if json.Unmarshal(v, &list) == nil {
			for i, f := range list {
				if f != "tls_accept" {
					return nil, errParams(`Invalid parameter "/output/%d": value must be "tls_accept".`, i+1)
				}
			}
		}
	}
	return object{"tls_accept": istr(int(s.autoregSettings().TLSAccept))}, nil
}

func (s *Server) autoregUpdate(ctx context.Context, c *call) (any, error) {
	if s.opts.Autoreg == nil {
		return nil, errApp("autoregistration settings are not available on this server")
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal(c.params, &p); err != nil {
		return nil, errParams(`Invalid parameter "/": an array or object is expected.`)
	}
	cur := s.autoregSettings()
	next := cur
	str := func(k string) (string, bool, error) {
		v, ok := p[k]
		if !ok {
			return "", false, nil
		}
		var out string
		if err := json.Unmarshal(v, &out); err != nil {
			return "", true, errParams(`Invalid parameter "/%s": a character string is expected.`, k)
		}
		return out, true, nil
	}
	for k := range p {
		if k != "tls_accept" && k != "tls_psk_identity" && k != "tls_psk" {
			return nil, errParams(`Invalid parameter "/": unexpected parameter "%s".`, k)
		}
	}
	if v, ok := p["tls_accept"]; ok {
		var n int64
		var sv string
		if json.Unmarshal(v, &n) != nil {
			if json.Unmarshal(v, &sv) != nil {
				return nil, errParams(`Invalid parameter "/tls_accept": an integer is expected.`)
			}
			var err error
			if n, err = strconv.ParseInt(sv, 10, 64); err != nil {
				return nil, errParams(`Invalid parameter "/tls_accept": an integer is expected.`)
			}
		}
		if n < 1 || n > 3 {
			return nil, errParams(`Invalid parameter "/tls_accept": value must be one of 1-3.`)
		}
		next.TLSAccept = uint8(n)
	}
	id, idGiven, err := str("tls_psk_identity")
	if err != nil {
		return nil, err
	}
	key, keyGiven, err := str("tls_psk")
	if err != nil {
		return nil, err
	}
	if next.TLSAccept&2 == 0 {
		// Recorded: without PSK, an identity or key given is refused.
		if idGiven && id != "" {
			return nil, errParams(`Invalid parameter "/tls_psk_identity": should be empty.`)
		}
		if keyGiven && key != "" {
			return nil, errParams(`Invalid parameter "/tls_psk": should be empty.`)
		}
		next.PSKIdentity, next.PSK = "", ""
	} else {
		needBoth := cur.TLSAccept&2 == 0 || cur.PSKIdentity == ""
		switch {
		case needBoth && !idGiven:
			return nil, errParams(`Invalid parameter "/": the parameter "tls_psk_identity" is missing.`)
		case needBoth && !keyGiven:
			return nil, errParams(`Invalid parameter "/": the parameter "tls_psk" is missing.`)
		}
		if idGiven {
			if id == "" {
				return nil, errParams(`Invalid parameter "/tls_psk_identity": cannot be empty.`)
			}
			if utf8.RuneCountInString(id) > 128 {
				return nil, errParams(`Invalid parameter "/tls_psk_identity": value is too long.`)
			}
			next.PSKIdentity = id
		}
		if keyGiven {
			switch {
			case len(key) < 32:
				return nil, errParams(`Invalid parameter "/tls_psk": minimum length is 32 characters.`)
			case len(key) > 512:
				return nil, errParams(`Invalid parameter "/tls_psk": value is too long.`)
			}
			if _, err := zbxpsk.ParseKey(key); err != nil {
				return nil, errParams(`Invalid parameter "/tls_psk": an even number of hexadecimal characters is expected.`)
			}
			next.PSK = zbxpsk.Secret(key)
		}
	}
	if err := s.opts.Autoreg.SetAutoregSettings(ctx, next); err != nil {
		return nil, errApp("cannot store the autoregistration settings: %v", err)
	}
	s.opts.Logger.Info("api: autoregistration settings updated", "by", c.user.Username, "tls_accept", next.TLSAccept)
	return true, nil
}
