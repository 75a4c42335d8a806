package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/alert"
	"github.com/peregrine-mon/peregrine/internal/catalog"
)

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

// ---- media types ----

// mediaTypeIn is a media type as mediatype.create/update take it.
type mediaTypeIn struct {
	catalog.MediaType
	// Accepted and not stored: the event menu of the frontend.
	ShowEventMenu int    `json:"show_event_menu"`
	EventMenuURL  string `json:"event_menu_url"`
	EventMenuName string `json:"event_menu_name"`
}

func (s *Server) checkMediaType(cfg *catalog.AlertConfig, m *catalog.MediaType, i int) error {
	p := fmt.Sprintf("/%d", i+1)
	if m.MaxAttempts == 0 {
		m.MaxAttempts = 3
	}
	if m.AttemptInterval == "" {
		m.AttemptInterval = "10s"
	}
	if m.Timeout == "" {
		m.Timeout = "30s"
	}
	if m.SMTPPort == 0 {
		m.SMTPPort = 25
	}
	dur := func(name, v string, lo, hi time.Duration) error {
		d, err := alert.ParsePeriod(v)
		if err != nil || d < lo || d > hi {
			return errParams(`Invalid parameter "%s/%s": value must be one of %d-%d.`, p, name, int(lo.Seconds()), int(hi.Seconds()))
		}
		return nil
	}
	switch {
	case strings.TrimSpace(m.Name) == "":
		return empty(i, "name")
	case m.Type != catalog.MediaEmail && m.Type != catalog.MediaScript && m.Type != catalog.MediaWebhook:
		if m.Type == 2 {
			return errParams(`Invalid parameter "%s/type": SMS media types are not supported by Peregrine (no GSM modem); use a webhook.`, p)
		}
		return oneOf(i, "type", "0, 1, 2, 4")
	case m.Status != 0 && m.Status != 1:
		return oneOf(i, "status", "0, 1")
	case m.MaxSessions < 0 || m.MaxSessions > 100:
		return errParams(`Invalid parameter "%s/maxsessions": value must be one of 0-100.`, p)
	case m.MaxAttempts < 1 || m.MaxAttempts > 100:
		return errParams(`Invalid parameter "%s/maxattempts": value must be one of 1-100.`, p)
	case m.SMTPSecurity < 0 || m.SMTPSecurity > 2:
		return oneOf(i, "smtp_security", "0, 1, 2")
	case m.SMTPAuth != 0 && m.SMTPAuth != 1:
		return oneOf(i, "smtp_authentication", "0, 1")
	case m.SMTPPort < 1 || m.SMTPPort > 65535:
		return errParams(`Invalid parameter "%s/smtp_port": value must be one of 0-65535.`, p)
	}
	if err := dur("attempt_interval", m.AttemptInterval, 0, time.Hour); err != nil {
		return err
	}
	if err := dur("timeout", m.Timeout, time.Second, time.Minute); err != nil {
		return err
	}
	switch m.Type {
	case catalog.MediaEmail:
		if m.SMTPServer == "" {
			return empty(i, "smtp_server")
		}
		if m.SMTPEmail == "" {
			return empty(i, "smtp_email")
		}
	case catalog.MediaScript:
		if m.ExecPath == "" {
			return empty(i, "exec_path")
		}
	case catalog.MediaWebhook:
		hasURL := false
		for _, prm := range m.Parameters {
			if prm.Name == "" {
				return errParams(`Invalid parameter "%s/parameters": parameter name cannot be empty.`, p)
			}
			hasURL = hasURL || strings.EqualFold(prm.Name, "URL")
		}
		if strings.TrimSpace(m.Script) == "" && !hasURL {
			return empty(i, "script")
		}
	}
	for j, t := range m.Templates {
		if t.EventSource != 0 || t.Recovery < 0 || t.Recovery > 2 {
			return errParams(`Invalid parameter "%s/message_templates/%d": only trigger templates (eventsource 0, recovery 0, 1, 2) are supported.`, p, j+1)
		}
	}
	for _, o := range cfg.MediaTypes {
		if o.Name == m.Name && o.ID != m.ID {
			return errParams(`Media type "%s" already exists.`, m.Name)
		}
	}
	return nil
}

func (s *Server) mediatypeCreate(ctx context.Context, c *call) (any, error) {
	objs, err := objectsOf(c.params)
	if err != nil {
		return nil, err
	}
	var out []uint64
	err = s.opts.Alerting.EditAlerts(ctx, func(cfg *catalog.AlertConfig) error {
		for i, o := range objs {
			if _, ok := o["mediatypeid"]; ok {
				return errParams(`Invalid parameter "/%d": unexpected parameter "mediatypeid".`, i+1)
			}
			for _, need := range []string{"name", "type"} {
				if _, ok := o[need]; !ok {
					return missing(i, need)
				}
			}
			if _, ok := o["maxsessions"]; !ok {
				o["maxsessions"] = json.Number("1") // Zabbix's default; 0 is "unlimited"
			}
			if v, ok := o["maxattempts"]; ok && v == json.Number("0") {
				// 0 would read as "not given" (the default 3) below.
				return errParams(`Invalid parameter "/%d/maxattempts": value must be one of 1-100.`, i+1)
			}
			var in mediaTypeIn
			if err := decodeObjectStrict(o, fmt.Sprintf("/%d", i+1), &in); err != nil {
				return err
			}
			m := in.MediaType
			if err := s.checkMediaType(cfg, &m, i); err != nil {
				return err
			}
			m.ID = cfg.NextID("mediatype")
			cfg.MediaTypes[m.ID] = &m
			out = append(out, m.ID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.opts.Logger.Info("api: media types created", "by", c.user.Username, "mediatypeids", out)
	return idResult("mediatypeids", out), nil
}

func (s *Server) mediatypeUpdate(ctx context.Context, c *call) (any, error) {
	objs, err := objectsOf(c.params)
	if err != nil {
		return nil, err
	}
	var out []uint64
	err = s.opts.Alerting.EditAlerts(ctx, func(cfg *catalog.AlertConfig) error {
		for i, o := range objs {
			id, old, err := existingOf(o, i, "mediatypeid", cfg.MediaTypes)
			if err != nil {
				return err
			}
			if v, ok := o["maxattempts"]; ok && v == json.Number("0") {
				return errParams(`Invalid parameter "/%d/maxattempts": value must be one of 1-100.`, i+1)
			}
			var in mediaTypeIn
			if err := decodeObjectStrict(merge(old, o), fmt.Sprintf("/%d", i+1), &in); err != nil {
				return err
			}
			m := in.MediaType
			m.ID = id
			if err := s.checkMediaType(cfg, &m, i); err != nil {
				return err
			}
			cfg.MediaTypes[id] = &m
			out = append(out, id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("mediatypeids", out), nil
}

func (s *Server) mediatypeDelete(ctx context.Context, c *call) (any, error) {
	list, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	err = s.opts.Alerting.EditAlerts(ctx, func(cfg *catalog.AlertConfig) error {
		for _, id := range list {
			m := cfg.MediaTypes[id]
			if m == nil {
				return errNoPermissions
			}
			for _, a := range cfg.SortedActions() {
				for _, ops := range [][]catalog.Operation{a.Operations, a.RecoveryOperations, a.UpdateOperations} {
					for _, op := range ops {
						if op.MediaTypeID == id {
							return errApp(`Media type "%s" is used by action "%s".`, m.Name, a.Name)
						}
					}
				}
			}
			delete(cfg.MediaTypes, id)
			// Users' media of the type go with it, as in Zabbix.
			for uid, ms := range cfg.Medias {
				cfg.Medias[uid] = slices.DeleteFunc(ms, func(um catalog.UserMedia) bool { return um.MediaTypeID == id })
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("mediatypeids", list), nil
}

func mediaTypeObject(m *catalog.MediaType) object {
	params := []object{}
	for i, p := range m.Parameters {
		params = append(params, object{"name": p.Name, "value": p.Value, "sortorder": istr(i)})
	}
	return object{
		"mediatypeid": u64(m.ID), "name": m.Name, "type": istr(m.Type), "status": istr(m.Status), "description": m.Description,
		"smtp_server": m.SMTPServer, "smtp_port": istr(m.SMTPPort), "smtp_helo": m.SMTPHelo, "smtp_email": m.SMTPEmail,
		"smtp_security": istr(m.SMTPSecurity), "smtp_verify_peer": istr(m.SMTPVerifyPeer), "smtp_verify_host": istr(m.SMTPVerifyHost),
		"smtp_authentication": istr(m.SMTPAuth), "username": m.Username, "content_type": istr(m.ContentType),
		"exec_path": m.ExecPath, "exec_params": m.ExecParams, "parameters": params, "script": m.Script, "timeout": m.Timeout,
		"process_tags": istr(m.ProcessTags), "maxsessions": istr(m.MaxSessions), "maxattempts": istr(m.MaxAttempts),
		"attempt_interval": m.AttemptInterval, "show_event_menu": "0", "event_menu_url": "", "event_menu_name": "",
	}
}

func (s *Server) mediatypeGet(ctx context.Context, c *call) (any, error) {
	var p struct {
		getParams
		MediaTypeIDs           ids `json:"mediatypeids"`
		SelectMessageTemplates any `json:"selectMessageTemplates"`
		SelectUsers            any `json:"selectUsers"`
	}
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	cfg := s.opts.Alerting.AlertConfig()
	want := idSet(p.MediaTypeIDs)
	var objs []object
	for _, m := range cfg.SortedMediaTypes() {
		if want != nil && !want[m.ID] {
			continue
		}
		o := mediaTypeObject(m)
		if p.SelectMessageTemplates != nil {
			ts := []object{}
			for _, t := range m.Templates {
				ts = append(ts, object{"eventsource": istr(t.EventSource), "recovery": istr(t.Recovery), "subject": t.Subject, "message": t.Message})
			}
			o["message_templates"] = ts
		}
		if p.SelectUsers != nil {
			us := []object{}
			for uid, ms := range cfg.Medias {
				for _, um := range ms {
					if um.MediaTypeID == m.ID {
						us = append(us, object{"userid": u64(uid)})
						break
					}
				}
			}
			o["users"] = us
		}
		objs = append(objs, o)
	}
	return p.apply(objs, "mediatypeid", "mediatypeid", "name", "type")
}

// ---- actions ----

type opMessageIn struct {
	DefaultMsg  int    `json:"default_msg"`
	Subject     string `json:"subject"`
	Message     string `json:"message"`
	MediaTypeID uint64 `json:"mediatypeid"`
}

type operationIn struct {
	OperationID   uint64           `json:"operationid"`
	ActionID      uint64           `json:"actionid"`
	OperationType int              `json:"operationtype"`
	StepFrom      int              `json:"esc_step_from"`
	StepTo        int              `json:"esc_step_to"`
	Period        string           `json:"esc_period"`
	EvalType      int              `json:"evaltype"`
	OpConditions  []opConditionIn  `json:"opconditions"`
	OpMessage     *opMessageIn     `json:"opmessage"`
	OpMessageGrp  []groupRefIn     `json:"opmessage_grp"`
	OpMessageUsr  []userRefIn      `json:"opmessage_usr"`
	OpCommand     *opCommandIn     `json:"opcommand"`
	OpCommandHst  []hostRefIn      `json:"opcommand_hst"`
	OpCommandGrp  []hostGroupRefIn `json:"opcommand_grp"`
}

type opCommandIn struct {
	ScriptID uint64 `json:"scriptid"`
}

type hostRefIn struct {
	ID uint64 `json:"hostid"`
}

type hostGroupRefIn struct {
	ID uint64 `json:"groupid"`
}

type opConditionIn struct {
	OpConditionID uint64 `json:"opconditionid"`
	OperationID   uint64 `json:"operationid"`
	ConditionType int    `json:"conditiontype"`
	Operator      int    `json:"operator"`
	Value         string `json:"value"`
}

type groupRefIn struct {
	ID uint64 `json:"usrgrpid"`
}

type userRefIn struct {
	ID uint64 `json:"userid"`
}

type conditionIn struct {
	ConditionID   uint64 `json:"conditionid"`
	ActionID      uint64 `json:"actionid"`
	ConditionType int    `json:"conditiontype"`
	Operator      int    `json:"operator"`
	Value         string `json:"value"`
	Value2        string `json:"value2"`
	FormulaID     string `json:"formulaid"`
}

type filterIn struct {
	EvalType    int           `json:"evaltype"`
	Formula     string        `json:"formula"`
	EvalFormula string        `json:"eval_formula"`
	Conditions  []conditionIn `json:"conditions"`
}

type actionIn struct {
	ActionID           uint64        `json:"actionid"`
	Name               string        `json:"name"`
	EventSource        int           `json:"eventsource"`
	Status             int           `json:"status"`
	Period             string        `json:"esc_period"`
	PauseSuppressed    *int          `json:"pause_suppressed"`
	PauseSymptoms      int           `json:"pause_symptoms"`
	NotifyIfCanceled   *int          `json:"notify_if_canceled"`
	Filter             *filterIn     `json:"filter"`
	Operations         []operationIn `json:"operations"`
	RecoveryOperations []operationIn `json:"recovery_operations"`
	UpdateOperations   []operationIn `json:"update_operations"`
}

// actionStored is a stored action in the API's input shape, the base of
// an update.
func actionStored(a *catalog.Action) map[string]any {
	in := actionIn{ActionID: a.ID, Name: a.Name, EventSource: a.EventSource, Status: a.Status, Period: a.Period,
		PauseSuppressed: &a.PauseSuppressed, NotifyIfCanceled: &a.NotifyIfCanceled}
	f := filterIn{EvalType: a.Filter.EvalType, Formula: a.Filter.Formula}
	for _, c := range a.Filter.Conditions {
		f.Conditions = append(f.Conditions, conditionIn{ConditionType: c.ConditionType, Operator: c.Operator, Value: c.Value, Value2: c.Value2, FormulaID: c.FormulaID})
	}
	in.Filter = &f
	conv := func(ops []catalog.Operation) []operationIn {
		out := []operationIn{}
		for _, op := range ops {
			o := operationIn{OperationType: op.OperationType, StepFrom: op.StepFrom, StepTo: op.StepTo, Period: op.Period, EvalType: op.EvalType}
			for _, c := range op.Conditions {
				o.OpConditions = append(o.OpConditions, opConditionIn{ConditionType: c.ConditionType, Operator: c.Operator, Value: c.Value})
			}
			if op.OperationType == catalog.OpSendMessage {
				o.OpMessage = &opMessageIn{DefaultMsg: op.DefaultMsg, Subject: op.Subject, Message: op.Message, MediaTypeID: op.MediaTypeID}
			}
			if op.OperationType == catalog.OpRemoteCommand {
				o.OpCommand = &opCommandIn{ScriptID: op.ScriptID}
				for _, id := range op.CommandHosts {
					o.OpCommandHst = append(o.OpCommandHst, hostRefIn{id})
				}
				for _, id := range op.CommandGroups {
					o.OpCommandGrp = append(o.OpCommandGrp, hostGroupRefIn{id})
				}
			}
			for _, id := range op.GroupIDs {
				o.OpMessageGrp = append(o.OpMessageGrp, groupRefIn{id})
			}
			for _, id := range op.UserIDs {
				o.OpMessageUsr = append(o.OpMessageUsr, userRefIn{id})
			}
			out = append(out, o)
		}
		return out
	}
	in.Operations, in.RecoveryOperations, in.UpdateOperations = conv(a.Operations), conv(a.RecoveryOperations), conv(a.UpdateOperations)
	b, _ := json.Marshal(in)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	_ = dec.Decode(&m)
	return m
}

// buildAction validates in and makes the stored action; users and
// groups are checked by the caller.
func (s *Server) buildAction(cfg *catalog.AlertConfig, in *actionIn, i int) (*catalog.Action, error) {
	p := fmt.Sprintf("/%d", i+1)
	a := &catalog.Action{ID: in.ActionID, Name: in.Name, EventSource: in.EventSource, Status: in.Status, Period: in.Period,
		PauseSuppressed: 1, NotifyIfCanceled: 1}
	if in.PauseSuppressed != nil {
		a.PauseSuppressed = *in.PauseSuppressed
	}
	if in.NotifyIfCanceled != nil {
		a.NotifyIfCanceled = *in.NotifyIfCanceled
	}
	if a.Period == "" {
		a.Period = "1h"
	}
	minStep := s.opts.Alerting.MinStepDuration()
	stepOK := func(v string, zero bool) bool {
		d, err := alert.ParsePeriod(v)
		return err == nil && (zero && d == 0 || d >= minStep && d <= 7*24*time.Hour)
	}
	switch {
	case strings.TrimSpace(a.Name) == "":
		return nil, empty(i, "name")
	case a.EventSource != 0:
		return nil, errParams(`Invalid parameter "%s/eventsource": only trigger actions (0) are supported; Peregrine makes no discovery, autoregistration or internal events.`, p)
	case a.Status != 0 && a.Status != 1:
		return nil, oneOf(i, "status", "0, 1")
	case a.PauseSuppressed != 0 && a.PauseSuppressed != 1:
		return nil, oneOf(i, "pause_suppressed", "0, 1")
	case !stepOK(a.Period, false):
		return nil, errParams(`Invalid parameter "%s/esc_period": value must be one of %d-%d.`, p, int(minStep.Seconds()), 7*24*3600)
	}
	for _, o := range cfg.Actions {
		if o.Name == a.Name && o.ID != a.ID {
			return nil, errParams(`Action "%s" already exists.`, a.Name)
		}
	}
	if f := in.Filter; f != nil {
		a.Filter.EvalType, a.Filter.Formula = f.EvalType, f.Formula
		if f.EvalType < 0 || f.EvalType > 3 {
			return nil, errParams(`Invalid parameter "%s/filter/evaltype": value must be one of 0, 1, 2, 3.`, p)
		}
		var fids []string
		for j, c := range f.Conditions {
			cond := catalog.Condition{ConditionType: c.ConditionType, Operator: c.Operator, Value: c.Value, Value2: c.Value2, FormulaID: c.FormulaID}
			if cond.FormulaID == "" {
				cond.FormulaID = string(rune('A' + j%26))
			}
			if err := alert.CheckCondition(&cond); err != nil {
				return nil, errParams(`Invalid parameter "%s/filter/conditions/%d": %s`, p, j+1, err.Error())
			}
			if cond.ConditionType == catalog.CondTrigger || cond.ConditionType == catalog.CondHost || cond.ConditionType == catalog.CondHostGroup {
				id, _ := strconv.ParseUint(cond.Value, 10, 64)
				snap := s.opts.Catalog.Snapshot()
				if cond.ConditionType == catalog.CondTrigger && snap.Trigger(id) == nil ||
					cond.ConditionType == catalog.CondHost && snap.HostByID(id) == nil ||
					cond.ConditionType == catalog.CondHostGroup && snap.GroupByID(id) == nil {
					return nil, errParams(`Incorrect filter condition value for action "%s".`, a.Name)
				}
			}
			fids = append(fids, cond.FormulaID)
			a.Filter.Conditions = append(a.Filter.Conditions, cond)
		}
		if f.EvalType == 3 {
			if err := alert.CheckFormula(f.Formula, fids); err != nil {
				return nil, errParams(`Invalid parameter "%s/filter/formula": %v.`, p, err)
			}
		}
	}
	conv := func(kind string, ops []operationIn, allowed ...int) ([]catalog.Operation, error) {
		var out []catalog.Operation
		for j, o := range ops {
			op := catalog.Operation{OperationType: o.OperationType, StepFrom: o.StepFrom, StepTo: o.StepTo, Period: o.Period}
			path := fmt.Sprintf("%s/%s/%d", p, kind, j+1)
			if !slices.Contains(allowed, o.OperationType) {
				return nil, errParams(`Invalid parameter "%s/operationtype": value must be one of %s.`, path, strings.Trim(strings.Join(strings.Fields(fmt.Sprint(allowed)), ", "), "[]"))
			}
			if kind == "operations" {
				if op.StepFrom == 0 {
					op.StepFrom = 1
				}
				if op.Period == "" {
					op.Period = "0"
				}
				if op.StepFrom < 1 || op.StepTo < 0 || op.StepTo != 0 && op.StepTo < op.StepFrom {
					return nil, errParams(`Incorrect action operation escalation step values.`)
				}
				if !stepOK(op.Period, true) {
					return nil, errParams(`Invalid parameter "%s/esc_period": value must be one of 0, %d-%d.`, path, int(minStep.Seconds()), 7*24*3600)
				}
				if o.EvalType < 0 || o.EvalType > 2 {
					return nil, errParams(`Invalid parameter "%s/evaltype": value must be one of 0, 1, 2.`, path)
				}
				op.EvalType = o.EvalType
				for k, c := range o.OpConditions {
					oc := catalog.OpCondition{ConditionType: c.ConditionType, Operator: c.Operator, Value: c.Value}
					if err := alert.CheckOpCondition(&oc); err != nil {
						return nil, errParams(`Invalid parameter "%s/opconditions/%d": %s`, path, k+1, err.Error())
					}
					op.Conditions = append(op.Conditions, oc)
				}
			} else if len(o.OpConditions) > 0 {
				// Zabbix has conditions on escalation steps only.
				return nil, errParams(`Invalid parameter "%s": unexpected parameter "opconditions".`, path)
			}
			if o.OperationType == catalog.OpSendMessage {
				if o.OpMessage == nil {
					return nil, errParams(`Invalid parameter "%s": the parameter "opmessage" is missing.`, path)
				}
				op.DefaultMsg, op.Subject, op.Message, op.MediaTypeID = o.OpMessage.DefaultMsg, o.OpMessage.Subject, o.OpMessage.Message, o.OpMessage.MediaTypeID
				if op.MediaTypeID != 0 && cfg.MediaTypes[op.MediaTypeID] == nil {
					return nil, errParams(`Invalid parameter "%s/opmessage/mediatypeid": No permissions to referred object or it does not exist!`, path)
				}
				for _, g := range o.OpMessageGrp {
					op.GroupIDs = append(op.GroupIDs, g.ID)
				}
				for _, u := range o.OpMessageUsr {
					op.UserIDs = append(op.UserIDs, u.ID)
				}
				if len(op.GroupIDs)+len(op.UserIDs) == 0 {
					return nil, errParams(`No recipients specified for action operation message.`)
				}
			}
			if o.OperationType == catalog.OpRemoteCommand {
				if o.OpCommand == nil {
					return nil, errParams(`Invalid parameter "%s": the parameter "opcommand" is missing.`, path)
				}
				sc := cfg.Scripts[o.OpCommand.ScriptID]
				if sc == nil {
					return nil, errParams(`Invalid parameter "%s/opcommand/scriptid": No permissions to referred object or it does not exist!`, path)
				}
				if sc.Scope != catalog.ScopeAction {
					return nil, errParams(`Invalid parameter "%s/opcommand/scriptid": script "%s" is not for action operations (scope 1).`, path, sc.Name)
				}
				op.ScriptID = sc.ID
				snap := s.opts.Catalog.Snapshot()
				for k, h := range o.OpCommandHst {
					if h.ID != 0 && snap.HostByID(h.ID) == nil {
						return nil, errParams(`Invalid parameter "%s/opcommand_hst/%d/hostid": No permissions to referred object or it does not exist!`, path, k+1)
					}
					op.CommandHosts = append(op.CommandHosts, h.ID)
				}
				for k, g := range o.OpCommandGrp {
					if snap.GroupByID(g.ID) == nil {
						return nil, errParams(`Invalid parameter "%s/opcommand_grp/%d/groupid": No permissions to referred object or it does not exist!`, path, k+1)
					}
					op.CommandGroups = append(op.CommandGroups, g.ID)
				}
				if len(op.CommandHosts)+len(op.CommandGroups) == 0 {
					return nil, errParams(`No targets specified for action operation global script.`)
				}
			}
			out = append(out, op)
		}
		return out, nil
	}
	var err error
	if a.Operations, err = conv("operations", in.Operations, catalog.OpSendMessage, catalog.OpRemoteCommand); err != nil {
		return nil, err
	}
	if a.RecoveryOperations, err = conv("recovery_operations", in.RecoveryOperations, catalog.OpSendMessage, catalog.OpRemoteCommand, catalog.OpNotifyAllRecovery); err != nil {
		return nil, err
	}
	if a.UpdateOperations, err = conv("update_operations", in.UpdateOperations, catalog.OpSendMessage, catalog.OpRemoteCommand, catalog.OpNotifyAllUpdate); err != nil {
		return nil, err
	}
	if len(a.Operations)+len(a.RecoveryOperations)+len(a.UpdateOperations) == 0 {
		return nil, errParams(`Action "%s" no operations defined.`, a.Name)
	}
	return a, nil
}

// checkRecipients verifies that the users and user groups of the
// actions' operations exist.
func (s *Server) checkRecipients(ctx context.Context, acts []*catalog.Action) error {
	if s.opts.Accounts == nil {
		return nil
	}
	users, err := s.opts.Accounts.Users(ctx)
	if err != nil {
		return errApp("cannot read users: %v", err)
	}
	groups, err := s.opts.Accounts.UserGroups(ctx)
	if err != nil {
		return errApp("cannot read user groups: %v", err)
	}
	uok, gok := map[uint64]bool{}, map[uint64]bool{}
	for _, u := range users {
		uok[u.ID] = true
	}
	for _, g := range groups {
		gok[g.ID] = true
	}
	for _, a := range acts {
		for _, ops := range [][]catalog.Operation{a.Operations, a.RecoveryOperations, a.UpdateOperations} {
			for _, op := range ops {
				for _, id := range op.UserIDs {
					if !uok[id] {
						return errParams(`Incorrect user ID "%d" in action "%s".`, id, a.Name)
					}
				}
				for _, id := range op.GroupIDs {
					if !gok[id] {
						return errParams(`Incorrect user group ID "%d" in action "%s".`, id, a.Name)
					}
				}
			}
		}
	}
	return nil
}

func (s *Server) actionCreate(ctx context.Context, c *call) (any, error) {
	objs, err := objectsOf(c.params)
	if err != nil {
		return nil, err
	}
	var built []*catalog.Action
	var out []uint64
	cfg := s.opts.Alerting.AlertConfig()
	for i, o := range objs {
		if _, ok := o["actionid"]; ok {
			return nil, errParams(`Invalid parameter "/%d": unexpected parameter "actionid".`, i+1)
		}
		for _, need := range []string{"name", "eventsource"} {
			if _, ok := o[need]; !ok {
				return nil, missing(i, need)
			}
		}
		var in actionIn
		if err := decodeObjectStrict(o, fmt.Sprintf("/%d", i+1), &in); err != nil {
			return nil, err
		}
		a, err := s.buildAction(cfg, &in, i)
		if err != nil {
			return nil, err
		}
		for _, b := range built {
			if b.Name == a.Name {
				return nil, errParams(`Action "%s" already exists.`, a.Name)
			}
		}
		built = append(built, a)
	}
	if err := s.checkRecipients(ctx, built); err != nil {
		return nil, err
	}
	err = s.opts.Alerting.EditAlerts(ctx, func(cfg *catalog.AlertConfig) error {
		out = out[:0]
		for _, a := range built {
			for _, o := range cfg.Actions {
				if o.Name == a.Name {
					return errParams(`Action "%s" already exists.`, a.Name)
				}
			}
			cp := *a
			cp.ID = cfg.NextID("action")
			cfg.Actions[cp.ID] = &cp
			out = append(out, cp.ID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.opts.Logger.Info("api: actions created", "by", c.user.Username, "actionids", out)
	return idResult("actionids", out), nil
}

func (s *Server) actionUpdate(ctx context.Context, c *call) (any, error) {
	objs, err := objectsOf(c.params)
	if err != nil {
		return nil, err
	}
	var out []uint64
	err = s.opts.Alerting.EditAlerts(ctx, func(cfg *catalog.AlertConfig) error {
		var built []*catalog.Action
		for i, o := range objs {
			id, old, err := existingOf(o, i, "actionid", cfg.Actions)
			if err != nil {
				return err
			}
			var in actionIn
			if err := decodeObjectStrict(merge(actionStored(old), o), fmt.Sprintf("/%d", i+1), &in); err != nil {
				return err
			}
			in.ActionID = id
			a, err := s.buildAction(cfg, &in, i)
			if err != nil {
				return err
			}
			built = append(built, a)
		}
		if err := s.checkRecipients(ctx, built); err != nil {
			return err
		}
		for _, a := range built {
			cfg.Actions[a.ID] = a
			out = append(out, a.ID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("actionids", out), nil
}

func (s *Server) actionDelete(ctx context.Context, c *call) (any, error) {
	list, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	err = s.opts.Alerting.EditAlerts(ctx, func(cfg *catalog.AlertConfig) error {
		for _, id := range list {
			if cfg.Actions[id] == nil {
				return errNoPermissions
			}
			delete(cfg.Actions, id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("actionids", list), nil
}

func operationObjects(a *catalog.Action, ops []catalog.Operation, recovery int) []object {
	out := []object{}
	for i, op := range ops {
		opid := u64(a.ID*1000 + uint64(recovery*300+i+1))
		conds := []object{}
		for k, c := range op.Conditions {
			conds = append(conds, object{"opconditionid": opid + istr(k+1), "operationid": opid, "conditiontype": istr(c.ConditionType),
				"operator": istr(c.Operator), "value": c.Value})
		}
		o := object{"operationid": opid, "actionid": u64(a.ID), "operationtype": istr(op.OperationType),
			"evaltype": istr(op.EvalType), "opconditions": conds}
		if recovery == 0 {
			o["esc_step_from"], o["esc_step_to"], o["esc_period"] = istr(op.StepFrom), istr(op.StepTo), op.Period
		}
		if op.OperationType == catalog.OpSendMessage {
			o["opmessage"] = object{"default_msg": istr(op.DefaultMsg), "subject": op.Subject, "message": op.Message, "mediatypeid": u64(op.MediaTypeID)}
			grp, usr := []object{}, []object{}
			for _, id := range op.GroupIDs {
				grp = append(grp, object{"usrgrpid": u64(id)})
			}
			for _, id := range op.UserIDs {
				usr = append(usr, object{"userid": u64(id)})
			}
			o["opmessage_grp"], o["opmessage_usr"] = grp, usr
		}
		if op.OperationType == catalog.OpRemoteCommand {
			hst, grp := []object{}, []object{}
			for _, id := range op.CommandHosts {
				hst = append(hst, object{"hostid": u64(id)})
			}
			for _, id := range op.CommandGroups {
				grp = append(grp, object{"groupid": u64(id)})
			}
			o["opcommand"] = object{"scriptid": u64(op.ScriptID)}
			o["opcommand_hst"], o["opcommand_grp"] = hst, grp
		}
		out = append(out, o)
	}
	return out
}

// evalFormula is Zabbix's eval_formula: the formula the filter applies.
func evalFormula(f *catalog.Filter) string {
	if f.EvalType == 3 {
		return f.Formula
	}
	var parts []string
	switch f.EvalType {
	case 1, 2:
		sep := map[int]string{1: " and ", 2: " or "}[f.EvalType]
		for _, c := range f.Conditions {
			parts = append(parts, c.FormulaID)
		}
		return strings.Join(parts, sep)
	}
	byType := map[int][]string{}
	var order []int
	for _, c := range f.Conditions {
		if _, ok := byType[c.ConditionType]; !ok {
			order = append(order, c.ConditionType)
		}
		byType[c.ConditionType] = append(byType[c.ConditionType], c.FormulaID)
	}
	for _, t := range order {
		ids := byType[t]
		if len(ids) > 1 {
			parts = append(parts, "("+strings.Join(ids, " or ")+")")
		} else {
			parts = append(parts, ids[0])
		}
	}
	return strings.Join(parts, " and ")
}

func (s *Server) actionGet(ctx context.Context, c *call) (any, error) {
	var p struct {
		getParams
		ActionIDs                ids `json:"actionids"`
		MediaTypeIDs             ids `json:"mediatypeids"`
		SelectFilter             any `json:"selectFilter"`
		SelectOperations         any `json:"selectOperations"`
		SelectRecoveryOperations any `json:"selectRecoveryOperations"`
		SelectUpdateOperations   any `json:"selectUpdateOperations"`
	}
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	cfg := s.opts.Alerting.AlertConfig()
	want, wantMT := idSet(p.ActionIDs), idSet(p.MediaTypeIDs)
	var objs []object
	for _, a := range cfg.SortedActions() {
		if want != nil && !want[a.ID] {
			continue
		}
		if wantMT != nil {
			uses := false
			for _, op := range slices.Concat(a.Operations, a.RecoveryOperations, a.UpdateOperations) {
				uses = uses || wantMT[op.MediaTypeID]
			}
			if !uses {
				continue
			}
		}
		o := object{"actionid": u64(a.ID), "name": a.Name, "eventsource": istr(a.EventSource), "status": istr(a.Status),
			"esc_period": a.Period, "pause_suppressed": istr(a.PauseSuppressed), "notify_if_canceled": istr(a.NotifyIfCanceled),
			"pause_symptoms": "1"}
		if p.SelectFilter != nil {
			conds := []object{}
			for _, cd := range a.Filter.Conditions {
				conds = append(conds, object{"conditiontype": istr(cd.ConditionType), "operator": istr(cd.Operator), "value": cd.Value,
					"value2": cd.Value2, "formulaid": cd.FormulaID})
			}
			o["filter"] = object{"evaltype": istr(a.Filter.EvalType), "formula": a.Filter.Formula, "eval_formula": evalFormula(&a.Filter), "conditions": conds}
		}
		if p.SelectOperations != nil {
			o["operations"] = operationObjects(a, a.Operations, 0)
		}
		if p.SelectRecoveryOperations != nil {
			o["recovery_operations"] = operationObjects(a, a.RecoveryOperations, 1)
		}
		if p.SelectUpdateOperations != nil {
			o["update_operations"] = operationObjects(a, a.UpdateOperations, 2)
		}
		objs = append(objs, o)
	}
	return p.apply(objs, "actionid", "actionid", "name", "status")
}

// ---- alerts ----

func (s *Server) alertGet(ctx context.Context, c *call) (any, error) {
	var p struct {
		getParams
		AlertIDs         ids     `json:"alertids"`
		ActionIDs        ids     `json:"actionids"`
		EventIDs         ids     `json:"eventids"`
		ObjectIDs        ids     `json:"objectids"`
		MediaTypeIDs     ids     `json:"mediatypeids"`
		UserIDs          ids     `json:"userids"`
		HostIDs          ids     `json:"hostids"`
		GroupIDs         ids     `json:"groupids"`
		EventSource      flexInt `json:"eventsource"`
		EventObject      flexInt `json:"eventobject"`
		TimeFrom         flexInt `json:"time_from"`
		TimeTill         flexInt `json:"time_till"`
		SelectHosts      any     `json:"selectHosts"`
		SelectMediatypes any     `json:"selectMediatypes"`
		SelectUsers      any     `json:"selectUsers"`
	}
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	cfg := s.opts.Alerting.AlertConfig()
	sets := []map[uint64]bool{idSet(p.AlertIDs), idSet(p.ActionIDs), idSet(p.EventIDs), idSet(p.ObjectIDs), idSet(p.MediaTypeIDs), idSet(p.UserIDs)}
	hostSet, groupSet := idSet(p.HostIDs), idSet(p.GroupIDs)
	in := func(m map[uint64]bool, id uint64) bool { return m == nil || m[id] }
	hostsOf := func(al *alert.Alert) []*catalog.Host {
		var hs []*catalog.Host
		if t := snap.Trigger(al.TriggerID); t != nil {
			for _, hid := range t.HostIDs {
				if h := snap.HostByID(hid); h != nil {
					hs = append(hs, h)
				}
			}
		}
		return hs
	}
	if (p.EventSource.set && p.EventSource.v != 0) || (p.EventObject.set && p.EventObject.v != 0) {
		return p.apply(nil, "alertid")
	}
	list := s.opts.Alerting.Alerts(func(al *alert.Alert) bool {
		if !in(sets[0], al.ID) || !in(sets[1], al.ActionID) || !(in(sets[2], al.EventID) || sets[2][al.PEventID]) ||
			!in(sets[3], al.TriggerID) || !in(sets[4], al.MediaTypeID) || !in(sets[5], al.UserID) {
			return false
		}
		if p.TimeFrom.set && al.Clock < p.TimeFrom.v || p.TimeTill.set && al.Clock > p.TimeTill.v {
			return false
		}
		return true
	})
	var objs []object
	for i := range list {
		al := &list[i]
		hs := hostsOf(al)
		// Readable only if every host of the trigger is (as problems).
		if !a.all() {
			ok := len(hs) > 0
			for _, h := range hs {
				ok = ok && a.canRead(h)
			}
			if !ok {
				continue
			}
		}
		if hostSet != nil || groupSet != nil {
			hit := false
			for _, h := range hs {
				hit = hit || hostSet[h.ID]
				for _, g := range h.GroupIDs {
					hit = hit || groupSet[g]
				}
			}
			if !hit {
				continue
			}
		}
		o := object{"alertid": u64(al.ID), "actionid": u64(al.ActionID), "eventid": u64(al.EventID), "p_eventid": u64(al.PEventID),
			"userid": u64(al.UserID), "clock": strconv.FormatInt(al.Clock, 10), "mediatypeid": u64(al.MediaTypeID), "sendto": al.SendTo,
			"subject": al.Subject, "message": al.Message, "status": istr(al.Status), "retries": istr(al.Retries), "error": al.Error,
			"esc_step": istr(al.EscStep), "alerttype": istr(al.AlertType), "acknowledgeid": u64(al.AckID), "parameters": "{}"}
		if al.AlertType == alert.AlertCommand {
			// Peregrine's additions for remote commands: the host the
			// command ran for and what it printed.
			o["hostid"], o["output"] = u64(al.HostID), al.Output
		}
		if len(al.Params) > 0 {
			pm := map[string]string{}
			for _, prm := range al.Params {
				pm[prm.Name] = prm.Value
			}
			b, _ := json.Marshal(pm)
			o["parameters"] = string(b)
		}
		if p.SelectHosts != nil {
			ho := []object{}
			for _, h := range hs {
				ho = append(ho, hostObject(h))
			}
			o["hosts"] = ho
		}
		if p.SelectMediatypes != nil {
			mo := []object{}
			if m := cfg.MediaTypes[al.MediaTypeID]; m != nil {
				mo = append(mo, mediaTypeObject(m))
			}
			o["mediatypes"] = mo
		}
		if p.SelectUsers != nil {
			o["users"] = []object{{"userid": u64(al.UserID)}}
		}
		objs = append(objs, o)
	}
	return p.apply(objs, "alertid", "alertid", "clock", "eventid", "mediatypeid", "sendto", "status")
}

// ---- users' media ----

type mediaIn struct {
	MediaID     uint64          `json:"mediaid"`
	UserID      uint64          `json:"userid"`
	MediaTypeID uint64          `json:"mediatypeid"`
	SendTo      json.RawMessage `json:"sendto"`
	Active      int             `json:"active"`
	Severity    *int            `json:"severity"`
	Period      string          `json:"period"`
}

// parseMedias decodes and checks a user's "medias" member.
func (s *Server) parseMedias(raw json.RawMessage, path string) ([]catalog.UserMedia, error) {
	if s.opts.Alerting == nil {
		return nil, errParams(`Invalid parameter "%s": user media need the alert engine.`, path)
	}
	var list []map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&list); err != nil {
		return nil, errParams(`Invalid parameter "%s": an array is expected.`, path)
	}
	cfg := s.opts.Alerting.AlertConfig()
	var out []catalog.UserMedia
	for j, m := range list {
		p := fmt.Sprintf("%s/%d", path, j+1)
		if _, err := normalize(m, p); err != nil {
			return nil, err
		}
		var in mediaIn
		if err := decodeObjectStrict(m, p, &in); err != nil {
			return nil, err
		}
		um := catalog.UserMedia{MediaTypeID: in.MediaTypeID, Active: in.Active, Severity: 63, Period: in.Period}
		if in.Severity != nil {
			um.Severity = *in.Severity
		}
		if um.Period == "" {
			um.Period = "1-7,00:00-24:00"
		}
		var one string
		var many []string
		switch {
		case json.Unmarshal(in.SendTo, &one) == nil:
			many = []string{one}
		case json.Unmarshal(in.SendTo, &many) == nil:
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
