package api

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// Pusher stores history.push values with the trapper's validation; the
// trapper implements it, and main wires it in. The API owns the value
// types so that it imports neither the trapper nor the pipeline: a
// reader never depends on the value path (internal/buildcheck's layers).
type Pusher interface {
	Push(ctx context.Context, values []PushValue) ([]PushResult, error)
}

// PushValue is one value of a history.push request, which names its item
// itself: by ItemID, or by Host and Key when ItemID is 0. It has the
// fields of PushValue, which the wiring converts it to.
type PushValue struct {
	ItemID    uint64
	Host, Key string
	Value     []byte // the value's text, as a sender would send it
	Clock     int64  // Unix seconds; -1: the receive time
	NS        int64  // -1: absent
}

// PushResult is the outcome of one PushValue: the item it was stored
// for, or why it was refused, worded for the client.
type PushResult struct {
	ItemID uint64
	Err    string
}

// maxPushValues bounds one history.push request; the body limit bounds
// it too, but a request of tiny objects could otherwise hold millions.
const maxPushValues = 100_000

func (s *Server) registerPush() {
	// Writing history is a configuration-level right: Peregrine's
	// read-only role (Zabbix "user") must not forge values.
	s.methods["history.push"] = &method{role: RoleAdmin, call: s.historyPush}
}

// pushParams is one value of a history.push request.
type pushParams struct {
	ItemID opt[int64]           `json:"itemid" zbx:"null"`
	Host   opt[string]          `json:"host" as:"json"`
	Key    opt[string]          `json:"key" as:"json"`
	Value  opt[json.RawMessage] `json:"value" as:"json"`
	Clock  opt[int64]           `json:"clock" zbx:"null"`
	NS     opt[int64]           `json:"ns" zbx:"null"`
}

// historyPush implements Zabbix 7.0's history.push: an object or array of
// {itemid | host+key, value, clock?, ns?}; the result lists, per value,
// its itemid or an error, so one bad value does not refuse the others.
func (s *Server) historyPush(ctx context.Context, c *call) (any, error) {
	if s.opts.Ingest == nil {
		return nil, errApp("history.push is not available on this server.")
	}
	var ps []pushParams
	if err := decodeObjects(c.params, &ps); err != nil {
		return nil, err
	}
	if len(ps) > maxPushValues {
		return nil, errParams(`Invalid parameter "/": at most %d values per request.`, maxPushValues)
	}
	values := make([]PushValue, len(ps))
	for i := range ps {
		p := &ps[i]
		v := &values[i]
		v.Clock, v.NS = -1, -1
		switch {
		case p.ItemID.Given() && (p.Host.Given() || p.Key.Given()):
			return nil, errParams(`Invalid parameter "/%d": either "itemid" or "host" and "key" are expected, not both.`, i+1)
		case p.ItemID.Given():
			if p.ItemID.Value <= 0 {
				return nil, errParams(`Invalid parameter "/%d/itemid": a positive id is expected.`, i+1)
			}
			v.ItemID = uint64(p.ItemID.Value)
		case p.Host.Given() && p.Key.Given():
			v.Host, v.Key = p.Host.Value, p.Key.Value
		default:
			return nil, errParams(`Invalid parameter "/%d": the parameter "itemid" (or "host" and "key") is missing.`, i+1)
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
			v.Value = p.Value.Value // a JSON number: its text is the value
		default:
			return nil, errParams(`Invalid parameter "/%d/value": a character string or number is expected.`, i+1)
		}
		if p.Clock.Given() {
			if p.Clock.Value < 0 {
				return nil, errParams(`Invalid parameter "/%d/clock": value must be 0 or greater.`, i+1)
			}
			v.Clock = p.Clock.Value
		}
		if p.NS.Given() {
			if p.NS.Value < 0 || p.NS.Value > 999999999 {
				return nil, errParams(`Invalid parameter "/%d/ns": value must be 0..999999999.`, i+1)
			}
			if v.Clock < 0 {
				return nil, errParams(`Invalid parameter "/%d/ns": "ns" needs "clock".`, i+1)
			}
			v.NS = p.NS.Value
		}
	}
	// Permissions (perm.go): a value for an item of a host the caller may
	// not change gets Zabbix's "No permissions" error in its place, the
	// same answer as for an item that does not exist; the others go on.
	denied, err := s.pushDenied(ctx, c, values)
	if err != nil {
		return nil, err
	}
	allowed := values
	if denied != nil {
		allowed = make([]PushValue, 0, len(values))
		for i := range values {
			if !denied[i] {
				allowed = append(allowed, values[i])
			}
		}
	}
	res, err := s.opts.Ingest.Push(ctx, allowed)
	if err != nil {
		s.opts.Logger.Error("api: history.push could not store values", "user", c.user.Username, "remote", c.remote, "values", len(values), "err", err)
		return nil, errApp("Cannot store values: %v", err)
	}
	data := make([]map[string]string, len(values))
	j := 0
	for i := range values {
		if denied != nil && denied[i] {
			data[i] = map[string]string{"error": errNoPermissions.Data}
			continue
		}
		r := res[j]
		j++
		if r.Err != "" {
			data[i] = map[string]string{"error": r.Err}
		} else {
			data[i] = map[string]string{"itemid": strconv.FormatUint(r.ItemID, 10)}
		}
	}
	return map[string]any{"response": "success", "data": data}, nil
}

// pushDenied marks the values whose item's host the caller may not change
// (nil: none, as for a super admin). A value naming an item that does not
// exist is left to the trapper's checks, which give it their own error.
func (s *Server) pushDenied(ctx context.Context, c *call, values []PushValue) ([]bool, error) {
	a, err := s.access(ctx, c)
	if err != nil || a.all() {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	denied := make([]bool, len(values))
	for i, v := range values {
		var h *catalog.Host
		if v.ItemID != 0 {
			if it := snap.Item(v.ItemID); it != nil {
				h = it.Host
			}
		} else {
			h = snap.Host(v.Host)
		}
		denied[i] = h != nil && !a.canWrite(h)
	}
	return denied, nil
}
