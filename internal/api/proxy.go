package api

import (
	"bytes"
	"context"
	"encoding/json"
)

// registerProxy registers proxy.get. Peregrine has no proxies yet, so it
// answers as a Zabbix 6.0 without any does: an empty list, or "0" with
// countOutput. It reads its parameters as 6.0's proxy.get does, which
// has no input validator: every member is accepted, whatever its value,
// except a sort field other than hostid, host or status (refused unless
// countOutput). Grafana's data source lists proxies with
// {"output": ["proxyid", "host"]}.
func (s *Server) registerProxy() {
	s.methods["proxy.get"] = &method{role: RoleUser, call: s.proxyGet}
}

func (s *Server) proxyGet(_ context.Context, c *call) (any, error) {
	var p map[string]json.RawMessage
	if raw := bytes.TrimSpace(c.params); len(raw) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, errParams(`Invalid parameter "/": an array or object is expected.`)
		}
	}
	if phpTruthy(p["countOutput"]) {
		return "0", nil
	}
	var fields []string
	if raw := p["sortfield"]; len(raw) > 0 {
		var one string
		if json.Unmarshal(raw, &one) == nil {
			fields = []string{one}
		} else {
			json.Unmarshal(raw, &fields) // anything else sorts by nothing
		}
	}
	for _, f := range fields {
		switch f {
		case "", "hostid", "host", "status":
		default:
			return nil, errApp(`Sorting by field "%s" not allowed.`, f)
		}
	}
	return []object{}, nil
}

// phpTruthy reports whether a JSON value is true to PHP's if: false, 0,
// "0", "", null and an empty array or object are false, anything else
// (the string "false" included) true. Zabbix's legacy get methods test
// their flags so.
func phpTruthy(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return false
	}
	switch string(raw) {
	case "false", "null", `""`, `"0"`:
		return false
	}
	switch raw[0] {
	case '[', '{':
		return len(bytes.Join(bytes.Fields(raw[1:len(raw)-1]), nil)) > 0
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		var f float64
		return json.Unmarshal(raw, &f) != nil || f != 0
	}
	return true
}
