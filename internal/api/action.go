package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/alert"
	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// action.get, .create, .update and .delete: trigger actions with their
// filter and operations.

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

// actionGetParams are action.get's parameters.
type actionGetParams struct {
	getParams
	ActionIDs                opt[ids] `json:"actionids"`
	MediaTypeIDs             opt[ids] `json:"mediatypeids"`
	SelectFilter             opt[any] `json:"selectFilter"`
	SelectOperations         opt[any] `json:"selectOperations"`
	SelectRecoveryOperations opt[any] `json:"selectRecoveryOperations"`
	SelectUpdateOperations   opt[any] `json:"selectUpdateOperations"`
}

func (s *Server) actionGet(ctx context.Context, c *call) (any, error) {
	var p actionGetParams
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	cfg := s.opts.Alerting.AlertConfig()
	want, wantMT := idSet(p.ActionIDs.Value), idSet(p.MediaTypeIDs.Value)
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
		if p.SelectFilter.Given() {
			conds := []object{}
			for _, cd := range a.Filter.Conditions {
				conds = append(conds, object{"conditiontype": istr(cd.ConditionType), "operator": istr(cd.Operator), "value": cd.Value,
					"value2": cd.Value2, "formulaid": cd.FormulaID})
			}
			o["filter"] = object{"evaltype": istr(a.Filter.EvalType), "formula": a.Filter.Formula, "eval_formula": evalFormula(&a.Filter), "conditions": conds}
		}
		if p.SelectOperations.Given() {
			o["operations"] = operationObjects(a, a.Operations, 0)
		}
		if p.SelectRecoveryOperations.Given() {
			o["recovery_operations"] = operationObjects(a, a.RecoveryOperations, 1)
		}
		if p.SelectUpdateOperations.Given() {
			o["update_operations"] = operationObjects(a, a.UpdateOperations, 2)
		}
		objs = append(objs, o)
	}
	return p.apply(objs, "actionid", "actionid", "name", "status")
}
