package api

import (
	"context"
	"encoding/json"
	"strconv"
)

// HistoryImporter is the part of the Ingest that stores values copied from
// another server (`peregrine migrate`): for items of any type, with their
// own timestamps, without preprocessing. The trapper implements it;
// without it history.import is refused.
type HistoryImporter interface {
	Import(ctx context.Context, values []PushValue) ([]PushResult, error)
}

func (s *Server) registerImport() {
	// Only a super admin: the values bypass the trapper's rules (item
	// type, host status), which a migration needs and nobody else does.
	s.methods["history.import"] = &method{role: RoleSuperAdmin, call: s.historyImport}
}

// histImportParams is one value of a history.import request.
type histImportParams struct {
	ItemID opt[int64]           `json:"itemid" zbx:"null"`
	Value  opt[json.RawMessage] `json:"value" as:"json"`
	Clock  opt[int64]           `json:"clock" zbx:"null"`
	NS     opt[int64]           `json:"ns" zbx:"null"`
}

// historyImport is Peregrine's history.import: an array of {itemid,
// value, clock, ns?}, stored for items of any type with their clocks,
// without preprocessing; the result lists an itemid or an error per
// value, as history.push's does.
func (s *Server) historyImport(ctx context.Context, c *call) (any, error) {
	im, ok := s.opts.Ingest.(HistoryImporter)
	if !ok {
		return nil, errApp("history.import is not available on this server.")
	}
	var ps []histImportParams
	if err := decodeObjects(c.params, &ps); err != nil {
		return nil, err
	}
	if len(ps) > maxPushValues {
		return nil, errParams(`Invalid parameter "/": at most %d values per request.`, maxPushValues)
	}
	values := make([]PushValue, len(ps))
	for i := range ps {
		p, v := &ps[i], &values[i]
		if !p.ItemID.Given() || p.ItemID.Value <= 0 {
			return nil, errParams(`Invalid parameter "/%d/itemid": a positive id is expected.`, i+1)
		}
		if !p.Clock.Given() || p.Clock.Value < 0 {
			return nil, errParams(`Invalid parameter "/%d/clock": a clock of 0 or greater is expected.`, i+1)
		}
		v.ItemID, v.Clock, v.NS = uint64(p.ItemID.Value), p.Clock.Value, 0
		if p.NS.Given() {
			if p.NS.Value < 0 || p.NS.Value > 999999999 {
				return nil, errParams(`Invalid parameter "/%d/ns": value must be 0..999999999.`, i+1)
			}
			v.NS = p.NS.Value
		}
		switch {
		case len(p.Value.Value) == 0:
			return nil, errParams(`Invalid parameter "/%d": the parameter "value" is missing.`, i+1)
		case p.Value.Value[0] == '"':
			var str string
			if err := json.Unmarshal(p.Value.Value, &str); err != nil {
				return nil, errParams(`Invalid parameter "/%d/value": a character string is expected.`, i+1)
			}
			v.Value = []byte(str)
		case p.Value.Value[0] == '-' || (p.Value.Value[0] >= '0' && p.Value.Value[0] <= '9'):
			v.Value = p.Value.Value
		default:
			return nil, errParams(`Invalid parameter "/%d/value": a character string or number is expected.`, i+1)
		}
	}
	res, err := im.Import(ctx, values)
	if err != nil {
		s.opts.Logger.Error("api: history.import could not store values", "user", c.user.Username, "remote", c.remote, "values", len(values), "err", err)
		return nil, errApp("Cannot store values: %v", err)
	}
	data := make([]map[string]string, len(res))
	for i, r := range res {
		if r.Err != "" {
			data[i] = map[string]string{"error": r.Err}
		} else {
			data[i] = map[string]string{"itemid": strconv.FormatUint(r.ItemID, 10)}
		}
	}
	return map[string]any{"response": "success", "data": data}, nil
}
