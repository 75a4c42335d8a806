package api

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/alert"
	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// Users' media: user.create/update "medias", user.get selectMedias and
// selectMediatypes.

// mediaParams is one of a user's "medias" (params_alert.go's dialect).
type mediaParams struct {
	MediaID     opt[uint64]          `json:"mediaid"`
	UserID      opt[uint64]          `json:"userid"`
	MediaTypeID opt[uint64]          `json:"mediatypeid"`
	SendTo      opt[json.RawMessage] `json:"sendto"` // a string, or a list of them
	Active      opt[int64]           `json:"active"`
	Severity    opt[int64]           `json:"severity" zbx:"null"`
	Period      opt[string]          `json:"period"`
}

// parseMedias decodes and checks a user's "medias" member: a list of
// objects (or null, none), each through the pre-pass, decoded and
// checked in turn.
func (s *Server) parseMedias(raw json.RawMessage, path string) ([]catalog.UserMedia, error) {
	if s.opts.Alerting == nil {
		return nil, errParams(`Invalid parameter "%s": user media need the alert engine.`, path)
	}
	var elems [][]byte
	if !isNull(raw) {
		var ok bool
		elems, ok = arrayElems(raw)
		for _, el := range elems {
			if k := jsonKindOf(el); k != 'o' && k != 'n' {
				ok = false
			}
		}
		if !ok {
			return nil, errParams(`Invalid parameter "%s": an array is expected.`, path)
		}
	}
	cfg := s.opts.Alerting.AlertConfig()
	var out []catalog.UserMedia
	for j, el := range elems {
		p := fmt.Sprintf("%s/%d", path, j+1)
		var o alertObject
		if !isNull(el) {
			var err error
			if o, err = alertMembers(el, p); err != nil {
				return nil, err
			}
		}
		var in mediaParams
		if err := decodeAlert(o, p, &in); err != nil {
			return nil, err
		}
		um := catalog.UserMedia{MediaTypeID: in.MediaTypeID.Value, Active: int(in.Active.Value), Severity: 63, Period: in.Period.Value}
		if in.Severity.Given() {
			um.Severity = int(in.Severity.Value)
		}
		if um.Period == "" {
			um.Period = "1-7,00:00-24:00"
		}
		var one string
		var many []string
		switch {
		case json.Unmarshal(in.SendTo.Value, &one) == nil:
			many = []string{one}
		case json.Unmarshal(in.SendTo.Value, &many) == nil:
		default:
			return nil, errParams(`Invalid parameter "%s/sendto": a character string is expected.`, p)
		}
		for _, s := range many {
			if strings.TrimSpace(s) != "" {
				um.SendTo = append(um.SendTo, s)
			}
		}
		switch {
		case cfg.MediaTypes[um.MediaTypeID] == nil:
			return nil, errParams(`Invalid parameter "%s/mediatypeid": No permissions to referred object or it does not exist!`, p)
		case len(um.SendTo) == 0:
			return nil, errParams(`Invalid parameter "%s/sendto": cannot be empty.`, p)
		case um.Active != 0 && um.Active != 1:
			return nil, errParams(`Invalid parameter "%s/active": value must be one of 0, 1.`, p)
		case um.Severity < 0 || um.Severity > 63:
			return nil, errParams(`Invalid parameter "%s/severity": value must be one of 0-63.`, p)
		}
		if err := alert.CheckPeriod(um.Period); err != nil {
			return nil, errParams(`Invalid parameter "%s/period": %v.`, p, err)
		}
		out = append(out, um)
	}
	return out, nil
}

// setMedias replaces users' media (user.create/update "medias").
func (s *Server) setMedias(ctx context.Context, byUser map[uint64][]catalog.UserMedia) error {
	if len(byUser) == 0 {
		return nil
	}
	return s.opts.Alerting.EditAlerts(ctx, func(cfg *catalog.AlertConfig) error {
		for uid, ms := range byUser {
			for i := range ms {
				ms[i].ID = cfg.NextID("media")
			}
			cfg.Medias[uid] = ms
		}
		return nil
	})
}

// mediaObjects is user.get's selectMedias.
func (s *Server) mediaObjects(uid uint64) []object {
	out := []object{}
	if s.opts.Alerting == nil {
		return out
	}
	for _, m := range s.opts.Alerting.AlertConfig().Medias[uid] {
		var sendto any = m.SendTo
		if mt := s.opts.Alerting.AlertConfig().MediaTypes[m.MediaTypeID]; mt != nil && mt.Type != catalog.MediaEmail && len(m.SendTo) == 1 {
			sendto = m.SendTo[0]
		}
		out = append(out, object{"mediaid": u64(m.ID), "userid": u64(uid), "mediatypeid": u64(m.MediaTypeID), "sendto": sendto,
			"active": istr(m.Active), "severity": istr(m.Severity), "period": m.Period})
	}
	return out
}

// userMediaTypes is user.get's selectMediatypes.
func (s *Server) userMediaTypes(uid uint64) []object {
	out := []object{}
	if s.opts.Alerting == nil {
		return out
	}
	cfg := s.opts.Alerting.AlertConfig()
	seen := map[uint64]bool{}
	for _, m := range cfg.Medias[uid] {
		if mt := cfg.MediaTypes[m.MediaTypeID]; mt != nil && !seen[mt.ID] {
			seen[mt.ID] = true
			out = append(out, mediaTypeObject(mt))
		}
	}
	return out
}
