package api

import (
	"context"
	"net/mail"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/alert"
)

// mediatype.test (a Peregrine addition) sends one test message through
// a media type now, as the "Test" of Zabbix 6.0's media type list does.
// 6.0 has no API method for it: its frontend (Super admin only) asks
// the server with an "alert.send" trapper request (recorded from
// 6.0.14's frontend: CZabbixServer::testMediaType); Peregrine has no
// separate frontend, so the UI calls this. As 6.0 checks it: Super
// admin only, a disabled media type is refused ("Cannot test disabled
// media type."), email, SMS and script take sendto, subject and
// message (email and SMS need a message, email a valid address), a
// webhook takes its "parameters" ({name, value}) only. Nothing is
// stored: no alert, no escalation, no audit record. The answer is
// {"response": "success", "value": <a webhook script's return value,
// else "">} or an application error with what the far end answered.

// AlertTester is an optional part of Alerting: a test send through a
// media type (alert.Engine.TestSend).
type AlertTester interface {
	TestMediaType(ctx context.Context, mediatypeID uint64, sendto, subject, message string, params []alert.Param) (string, error)
}

// mediatypeTestParams are mediatype.test's parameters.
type mediatypeTestParams struct {
	MediaTypeID opt[uint64]                    `json:"mediatypeid"`
	SendTo      opt[string]                    `json:"sendto"`
	Subject     opt[string]                    `json:"subject"`
	Message     opt[string]                    `json:"message"`
	Parameters  opt[[]mediatypeTestParamParam] `json:"parameters" as:"objects"`
}

// mediatypeTestParamParam is one of a webhook's test "parameters".
type mediatypeTestParamParam struct {
	Name  opt[string] `json:"name"`
	Value opt[string] `json:"value"`
}

func (s *Server) registerMediaTypeTest() {
	if _, ok := s.opts.Alerting.(AlertTester); ok {
		s.methods["mediatype.test"] = &method{role: RoleSuperAdmin, call: s.mediatypeTest}
	}
}

func (s *Server) mediatypeTest(ctx context.Context, c *call) (any, error) {
	var p mediatypeTestParams
	if err := decodeValidated(c.params, &p); err != nil {
		return nil, err
	}
	if !p.MediaTypeID.Given() {
		return nil, errParams(`Invalid parameter "/": the parameter "mediatypeid" is missing.`)
	}
	mt := s.opts.Alerting.AlertConfig().MediaTypes[p.MediaTypeID.Value]
	if mt == nil {
		return nil, errNoPermissions
	}
	var params []alert.Param
	switch mt.Type {
	case 4: // webhook: its parameters only
		for _, m := range []struct {
			given bool
			name  string
		}{{p.SendTo.Set, "sendto"}, {p.Subject.Set, "subject"}, {p.Message.Set, "message"}} {
			if m.given {
				return nil, errParams(`Invalid parameter "/": unexpected parameter "%s".`, m.name)
			}
		}
		for i, q := range p.Parameters.Value {
			if strings.TrimSpace(q.Name.Value) == "" {
				return nil, errParams(`Invalid parameter "/parameters/%d/name": cannot be empty.`, i+1)
			}
			params = append(params, alert.Param{Name: q.Name.Value, Value: q.Value.Value})
		}
	default:
		if p.Parameters.Set {
			return nil, errParams(`Invalid parameter "/": unexpected parameter "parameters".`)
		}
		if mt.Type != 1 && strings.TrimSpace(p.Message.Value) == "" {
			return nil, errParams(`Invalid parameter "/message": cannot be empty.`)
		}
		if mt.Type == 0 {
			if _, err := mail.ParseAddress(p.SendTo.Value); err != nil {
				return nil, errParams(`Invalid parameter "/sendto": an email address is expected.`)
			}
		}
	}
	val, err := s.opts.Alerting.(AlertTester).TestMediaType(ctx, mt.ID, p.SendTo.Value, p.Subject.Value, p.Message.Value, params)
	if err != nil {
		return nil, errApp("Media type test failed: %v", err)
	}
	return map[string]any{"response": "success", "value": val}, nil
}
