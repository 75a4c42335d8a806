package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/alert"
	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// The notification families share this file: the Alerting interface,
// their registration, and the decoding of their write methods' objects
// (numeric members normalised, strict decoding, an update merged over
// the stored object). Each family has its own file: mediatype.go,
// action.go, alert.go, media.go (users' media), script.go.

// Alerting is what mediatype.*, action.*, alert.get and users' media
// need: the notification configuration (catalog) and the alerts
// (package alert).
type Alerting interface {
	AlertConfig() *catalog.AlertConfig
	EditAlerts(ctx context.Context, fn func(*catalog.AlertConfig) error) error
	Alerts(keep func(*alert.Alert) bool) []alert.Alert
	// MinStepDuration is the shortest esc_period accepted.
	MinStepDuration() time.Duration
	// RunScript runs a global script's command for a host now
	// (script.execute), bounded by the command timeout.
	RunScript(ctx context.Context, sc *catalog.GlobalScript, host *catalog.Host, command string) (string, error)
}

func (s *Server) registerAlerting() {
	if s.opts.Alerting == nil {
		return
	}
	s.methods["mediatype.get"] = &method{role: RoleAdmin, call: s.mediatypeGet}
	s.methods["mediatype.create"] = &method{role: RoleSuperAdmin, call: s.mediatypeCreate}
	s.methods["mediatype.update"] = &method{role: RoleSuperAdmin, call: s.mediatypeUpdate}
	s.methods["mediatype.delete"] = &method{role: RoleSuperAdmin, call: s.mediatypeDelete}
	s.methods["action.get"] = &method{role: RoleAdmin, call: s.actionGet}
	s.methods["action.create"] = &method{role: RoleAdmin, call: s.actionCreate}
	s.methods["action.update"] = &method{role: RoleAdmin, call: s.actionUpdate}
	s.methods["action.delete"] = &method{role: RoleAdmin, call: s.actionDelete}
	s.methods["alert.get"] = &method{role: RoleUser, call: s.alertGet}
	s.registerScripts()
}

// numericKeys are the members Zabbix clients send as numbers or as
// strings of digits; they are normalised to numbers before decoding.
var numericKeys = map[string]bool{
	"mediatypeid": true, "type": true, "status": true, "smtp_port": true, "smtp_security": true, "smtp_verify_peer": true,
	"smtp_verify_host": true, "smtp_authentication": true, "content_type": true, "process_tags": true, "maxsessions": true,
	"maxattempts": true, "eventsource": true, "recovery": true, "actionid": true, "pause_suppressed": true,
	"notify_if_canceled": true, "evaltype": true, "conditiontype": true, "operator": true, "operationtype": true,
	"esc_step_from": true, "esc_step_to": true, "default_msg": true, "usrgrpid": true, "userid": true, "active": true,
	"severity": true, "mediaid": true, "show_event_menu": true, "operationid": true, "conditionid": true, "sortorder": true,
	"pause_symptoms": true, "opconditionid": true, "scriptid": true, "hostid": true, "groupid": true, "scope": true,
	"execute_on": true, "host_access": true,
}

// normalize rewrites numeric members given as strings into numbers, or
// says which one is not an integer.
func normalize(v any, path string) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			p := path + "/" + k
			if numericKeys[k] {
				switch n := val.(type) {
				case string:
					i, err := strconv.ParseInt(n, 10, 64)
					if err != nil {
						return nil, errParams(`Invalid parameter "%s": an integer is expected.`, p)
					}
					x[k] = json.Number(strconv.FormatInt(i, 10))
				case json.Number:
					if _, err := n.Int64(); err != nil {
						return nil, errParams(`Invalid parameter "%s": an integer is expected.`, p)
					}
				}
				continue
			}
			nv, err := normalize(val, p)
			if err != nil {
				return nil, err
			}
			x[k] = nv
		}
	case []any:
		for i, el := range x {
			nv, err := normalize(el, fmt.Sprintf("%s/%d", path, i+1))
			if err != nil {
				return nil, err
			}
			x[i] = nv
		}
	}
	return v, nil
}

// decodeObjectStrict decodes a normalised object into v, refusing unknown
// members with Zabbix's message.
func decodeObjectStrict(obj map[string]any, path string, v any) error {
	b, _ := json.Marshal(obj)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return errParams(`Invalid parameter "%s/%s": a %s is expected.`, path, strings.ReplaceAll(ute.Field, ".", "/"), jsonKind(ute.Type.Kind().String()))
		}
		if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return errParams(`Invalid parameter "%s": unexpected parameter %s.`, path, f)
		}
		return errParams(`Invalid parameter "%s": %v.`, path, err)
	}
	return nil
}

// existingOf returns the object of m that the i-th update object o names
// by field, with its ID: "missing" when o names none, "no permissions"
// when the one it names does not exist, as Zabbix answers both.
func existingOf[T any](o map[string]any, i int, field string, m map[uint64]*T) (uint64, *T, error) {
	n, _ := o[field].(json.Number)
	id, _ := strconv.ParseUint(string(n), 10, 64)
	old := m[id]
	if old == nil {
		if n == "" {
			return 0, nil, missing(i, field)
		}
		return 0, nil, errNoPermissions
	}
	return id, old, nil
}

// objectsOf decodes params as a list of objects (or one object), each
// normalised.
func objectsOf(params json.RawMessage) ([]map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errParams(`Invalid parameter "/": %v.`, err)
	}
	var list []any
	switch x := v.(type) {
	case []any:
		list = x
	case map[string]any:
		list = []any{x}
	default:
		return nil, errParams(`Invalid parameter "/": an array is expected.`)
	}
	out := make([]map[string]any, len(list))
	for i, el := range list {
		m, ok := el.(map[string]any)
		if !ok {
			return nil, errParams(`Invalid parameter "/%d": an array is expected.`, i+1)
		}
		if _, err := normalize(m, fmt.Sprintf("/%d", i+1)); err != nil {
			return nil, err
		}
		out[i] = m
	}
	return out, nil
}

// merge overlays the request's members on the stored object's JSON.
func merge(stored any, req map[string]any) map[string]any {
	b, _ := json.Marshal(stored)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	_ = dec.Decode(&m)
	for k, v := range req {
		m[k] = v
	}
	return m
}

func u64(id uint64) string { return strconv.FormatUint(id, 10) }
func istr(i int) string    { return strconv.Itoa(i) }
