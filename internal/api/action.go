package api

import (
	"context"
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

// actionParams are the objects of action.create and .update
// (params_alert.go's dialect).
type actionParams struct {
	ActionID           opt[uint64]            `json:"actionid"`
	Name               opt[string]            `json:"name"`
	EventSource        opt[int64]             `json:"eventsource"`
	Status             opt[int64]             `json:"status"`
	Period             opt[string]            `json:"esc_period"`
	PauseSuppressed    opt[int64]             `json:"pause_suppressed" zbx:"null"`
	PauseSymptoms      opt[int64]             `json:"pause_symptoms"`
	NotifyIfCanceled   opt[int64]             `json:"notify_if_canceled" zbx:"null"`
	Filter             opt[filterParams]      `json:"filter" as:"object" zbx:"null"`
	Operations         opt[[]operationParams] `json:"operations" as:"objects"`
	RecoveryOperations opt[[]operationParams] `json:"recovery_operations" as:"objects"`
	UpdateOperations   opt[[]operationParams] `json:"update_operations" as:"objects"`
}

// filterParams is an action's "filter".
type filterParams struct {
	EvalType    opt[int64]             `json:"evaltype"`
	Formula     opt[string]            `json:"formula"`
	EvalFormula opt[string]            `json:"eval_formula"`
	Conditions  opt[[]conditionParams] `json:"conditions" as:"objects"`
}

// conditionParams is one of a filter's "conditions".
type conditionParams struct {
	ConditionID   opt[uint64] `json:"conditionid"`
	ActionID      opt[uint64] `json:"actionid"`
	ConditionType opt[int64]  `json:"conditiontype"`
	Operator      opt[int64]  `json:"operator"`
	Value         opt[string] `json:"value"`
	Value2        opt[string] `json:"value2"`
	FormulaID     opt[string] `json:"formulaid"`
}

// operationParams is one of an action's operations, recovery or update
// operations.
type operationParams struct {
	OperationID   opt[uint64]              `json:"operationid"`
	ActionID      opt[uint64]              `json:"actionid"`
	OperationType opt[int64]               `json:"operationtype"`
	StepFrom      opt[int64]               `json:"esc_step_from"`
	StepTo        opt[int64]               `json:"esc_step_to"`
	Period        opt[string]              `json:"esc_period"`
	EvalType      opt[int64]               `json:"evaltype"`
	OpConditions  opt[[]opConditionParams] `json:"opconditions" as:"objects"`
	OpMessage     opt[opMessageParams]     `json:"opmessage" as:"object" zbx:"null"`
	OpMessageGrp  opt[[]idRefParams]       `json:"opmessage_grp" as:"objects"`
	OpMessageUsr  opt[[]userRefParams]     `json:"opmessage_usr" as:"objects"`
	OpCommand     opt[opCommandParams]     `json:"opcommand" as:"object" zbx:"null"`
	OpCommandHst  opt[[]hostRefParams]     `json:"opcommand_hst" as:"objects"`
	OpCommandGrp  opt[[]groupRefParams]    `json:"opcommand_grp" as:"objects"`
	// Auto-registration operations (action_sources.go).
	OpGroup     opt[[]groupRefParams]    `json:"opgroup" as:"objects"`
	OpTemplate  opt[[]templateRefParams] `json:"optemplate" as:"objects"`
	OpInventory opt[opInventoryParams]   `json:"opinventory" as:"object" zbx:"null"`
}

// opConditionParams is one of an escalation step's "opconditions".
type opConditionParams struct {
	OpConditionID opt[uint64] `json:"opconditionid"`
	OperationID   opt[uint64] `json:"operationid"`
	ConditionType opt[int64]  `json:"conditiontype"`
	Operator      opt[int64]  `json:"operator"`
	Value         opt[string] `json:"value"`
}

// opMessageParams is an operation's "opmessage".
type opMessageParams struct {
	DefaultMsg  opt[int64]  `json:"default_msg"`
	Subject     opt[string] `json:"subject"`
	Message     opt[string] `json:"message"`
	MediaTypeID opt[uint64] `json:"mediatypeid"`
}

// opCommandParams is an operation's "opcommand".
type opCommandParams struct {
	ScriptID opt[uint64] `json:"scriptid"`
}

// The references of an operation: user groups and users to message,
// hosts and host groups to run a command on.
type (
	idRefParams struct {
		ID opt[uint64] `json:"usrgrpid"`
	}
	userRefParams struct {
		ID opt[uint64] `json:"userid"`
	}
	hostRefParams struct {
		ID opt[uint64] `json:"hostid"`
	}
	groupRefParams struct {
		ID opt[uint64] `json:"groupid"`
	}
)

// actionStored is a stored action as the API takes it, the base of an
// update (alertOver): every member, as the former decoder's input
// struct encoded them.
func actionStored(a *catalog.Action) object {
	conds := []object(nil)
	for _, c := range a.Filter.Conditions {
		conds = append(conds, object{"conditionid": 0, "actionid": 0, "conditiontype": c.ConditionType, "operator": c.Operator,
			"value": c.Value, "value2": c.Value2, "formulaid": c.FormulaID})
	}
	conv := func(ops []catalog.Operation) []object {
		out := []object{}
		for _, op := range ops {
			o := object{"operationid": 0, "actionid": 0, "operationtype": op.OperationType, "esc_step_from": op.StepFrom,
				"esc_step_to": op.StepTo, "esc_period": op.Period, "evaltype": op.EvalType, "opconditions": nil, "opmessage": nil,
				"opmessage_grp": nil, "opmessage_usr": nil, "opcommand": nil, "opcommand_hst": nil, "opcommand_grp": nil}
			refs := func(key string, ids []uint64) any {
				if len(ids) == 0 {
					return nil
				}
				l := make([]object, len(ids))
				for i, id := range ids {
					l[i] = object{key: id}
				}
				return l
			}
			if len(op.Conditions) > 0 {
				l := []object{}
				for _, c := range op.Conditions {
					l = append(l, object{"opconditionid": 0, "operationid": 0, "conditiontype": c.ConditionType, "operator": c.Operator, "value": c.Value})
				}
				o["opconditions"] = l
			}
			if op.OperationType == catalog.OpSendMessage || op.OperationType == catalog.OpNotifyAllRecovery || op.OperationType == catalog.OpNotifyAllUpdate {
				m := object{"default_msg": op.DefaultMsg, "mediatypeid": op.MediaTypeID}
				if op.DefaultMsg == 0 {
					m["subject"], m["message"] = op.Subject, op.Message
				}
				o["opmessage"] = m
			}
			if op.OperationType == catalog.OpRemoteCommand {
				o["opcommand"] = object{"scriptid": op.ScriptID}
				o["opcommand_hst"], o["opcommand_grp"] = refs("hostid", op.CommandHosts), refs("groupid", op.CommandGroups)
			}
			o["opmessage_grp"], o["opmessage_usr"] = refs("usrgrpid", op.GroupIDs), refs("userid", op.UserIDs)
			o["opgroup"], o["optemplate"], o["opinventory"] = refs("groupid", op.OpGroups), refs("templateid", op.OpTemplates), nil
			if op.OperationType == catalog.OpSetHostInventoryMod {
				o["opinventory"] = object{"inventory_mode": op.InventoryMode}
			}
			out = append(out, o)
		}
		return out
	}
	return object{"actionid": a.ID, "name": a.Name, "eventsource": a.EventSource, "status": a.Status, "esc_period": a.Period,
		"pause_suppressed": a.PauseSuppressed, "pause_symptoms": 0, "notify_if_canceled": a.NotifyIfCanceled,
		"filter":     object{"evaltype": a.Filter.EvalType, "formula": a.Filter.Formula, "eval_formula": "", "conditions": conds},
		"operations": conv(a.Operations), "recovery_operations": conv(a.RecoveryOperations), "update_operations": conv(a.UpdateOperations)}
}

// buildAction validates in and makes the stored action; users and
// groups are checked by the caller.
func (s *Server) buildAction(cfg *catalog.AlertConfig, in *actionParams, i int) (*catalog.Action, error) {
	p := fmt.Sprintf("/%d", i+1)
	a := &catalog.Action{ID: in.ActionID.Value, Name: in.Name.Value, EventSource: int(in.EventSource.Value), Status: int(in.Status.Value),
		Period: in.Period.Value, PauseSuppressed: 1, NotifyIfCanceled: 1}
	if in.PauseSuppressed.Given() {
		a.PauseSuppressed = int(in.PauseSuppressed.Value)
	}
	if in.NotifyIfCanceled.Given() {
		a.NotifyIfCanceled = int(in.NotifyIfCanceled.Value)
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
	case a.EventSource < 0 || a.EventSource > 4:
		return nil, errParams(`Invalid parameter "%s/eventsource": value must be one of 0, 1, 2, 3, 4.`, p)
	case a.EventSource == 4:
		return nil, errParams(`Invalid parameter "%s/eventsource": service (4) actions are not supported; Peregrine makes no service events.`, p)
	case a.Status != 0 && a.Status != 1:
		return nil, oneOf(i, "status", "0, 1")
	case a.PauseSuppressed != 0 && a.PauseSuppressed != 1:
		return nil, oneOf(i, "pause_suppressed", "0, 1")
	case a.EventSource != 1 && a.EventSource != 2 && !timeUnit(strings.TrimSpace(a.Period)):
		// (6.0.14: " 1" is a number out of range, "abc" no time unit.)
		return nil, errParams(`Invalid parameter "%s/esc_period": a time unit is expected.`, p)
	case a.EventSource != 1 && a.EventSource != 2 && !stepOK(a.Period, false):
		// Discovery and auto-registration actions take no esc_period;
		// the one stored (6.0's own discovery action has "0") is kept.
		return nil, errParams(`Invalid parameter "%s/esc_period": value must be one of %d-%d.`, p, int(minStep.Seconds()), 7*24*3600)
	}
	if err := tooLong(i, "name", a.Name, 255); err != nil {
		return nil, err
	}
	for _, o := range cfg.Actions {
		if o.Name == a.Name && o.ID != a.ID {
			return nil, errParams(`Action "%s" already exists.`, a.Name)
		}
	}
	if in.Filter.Given() {
		f := &in.Filter.Value
		a.Filter.EvalType, a.Filter.Formula = int(f.EvalType.Value), f.Formula.Value
		if a.Filter.EvalType < 0 || a.Filter.EvalType > 3 {
			return nil, errParams(`Invalid parameter "%s/filter/evaltype": value must be one of 0, 1, 2, 3.`, p)
		}
		var fids []string
		for j, c := range f.Conditions.Value {
			cond := catalog.Condition{ConditionType: int(c.ConditionType.Value), Operator: int(c.Operator.Value), Value: c.Value.Value,
				Value2: c.Value2.Value, FormulaID: c.FormulaID.Value}
			if cond.FormulaID == "" {
				cond.FormulaID = string(rune('A' + j%26))
			}
			if a.EventSource != catalog.SourceTrigger {
				if err := s.sourceCondition(a.EventSource, &cond, p, j); err != nil {
					return nil, err
				}
				fids = append(fids, cond.FormulaID)
				a.Filter.Conditions = append(a.Filter.Conditions, cond)
				continue
			}
			if !slices.Contains(triggerConditionTypes, cond.ConditionType) {
				return nil, errParams(`Invalid parameter "%s/filter/conditions/%d/conditiontype": value must be one of 0, 1, 2, 3, 4, 6, 13, 16, 25, 26.`, p, j+1)
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
		if a.EventSource != catalog.SourceTrigger && a.Filter.EvalType != 3 {
			sourceFormulaIDs(a.Filter.Conditions)
		}
		if a.Filter.EvalType == 3 {
			if err := alert.CheckFormula(a.Filter.Formula, fids); err != nil {
				return nil, errParams(`Invalid parameter "%s/filter/formula": %v.`, p, err)
			}
		}
	}
	conv := func(kind string, ops []operationParams, allowed ...int) ([]catalog.Operation, error) {
		var out []catalog.Operation
		for j, o := range ops {
			op := catalog.Operation{OperationType: int(o.OperationType.Value), StepFrom: int(o.StepFrom.Value), StepTo: int(o.StepTo.Value),
				Period: o.Period.Value}
			if !o.StepTo.Given() {
				op.StepTo = 1 // 6.0's default: the first step only (recorded)
			}
			path := fmt.Sprintf("%s/%s/%d", p, kind, j+1)
			if !slices.Contains(allowed, op.OperationType) {
				return nil, errParams(`Invalid parameter "%s/operationtype": value must be %s.`, path, oneOfInts(allowed))
			}
			if hostOpSource(a.EventSource) {
				op.StepFrom, op.StepTo, op.Period = 1, 1, "0"
				if err := s.sourceOperation(&o, &op, path); err != nil {
					return nil, err
				}
			}
			if kind == "operations" && !hostOpSource(a.EventSource) {
				if o.StepFrom.Given() != o.StepTo.Given() {
					return nil, errParams(`Parameters "esc_step_from" and "esc_step_to" must be set together.`)
				}
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
				if o.EvalType.Value < 0 || o.EvalType.Value > 2 {
					return nil, errParams(`Invalid parameter "%s/evaltype": value must be one of 0, 1, 2.`, path)
				}
				op.EvalType = int(o.EvalType.Value)
				for k, c := range o.OpConditions.Value {
					oc := catalog.OpCondition{ConditionType: int(c.ConditionType.Value), Operator: int(c.Operator.Value), Value: c.Value.Value}
					if err := alert.CheckOpCondition(&oc); err != nil {
						return nil, errParams(`Invalid parameter "%s/opconditions/%d": %s`, path, k+1, err.Error())
					}
					op.Conditions = append(op.Conditions, oc)
				}
			} else if len(o.OpConditions.Value) > 0 {
				// Zabbix has conditions on escalation steps only.
				return nil, errParams(`Invalid parameter "%s": unexpected parameter "opconditions".`, path)
			}
			notifyAll := op.OperationType == catalog.OpNotifyAllRecovery || op.OperationType == catalog.OpNotifyAllUpdate
			if op.OperationType == catalog.OpSendMessage || notifyAll {
				if !o.OpMessage.Given() {
					return nil, errParams(`Invalid parameter "%s": the parameter "opmessage" is missing.`, path)
				}
				m := &o.OpMessage.Value
				op.DefaultMsg, op.Subject, op.Message, op.MediaTypeID = int(m.DefaultMsg.Value), m.Subject.Value, m.Message.Value, m.MediaTypeID.Value
				if !m.DefaultMsg.Given() {
					op.DefaultMsg = 1 // 6.0's default: the media type's message template
				}
				// A message of its own only replaces the default one
				// (recorded from 6.0.14: with default_msg 1, "subject"
				// or "message" is refused even empty).
				if op.DefaultMsg != 0 {
					if m.Subject.Given() {
						return nil, errParams(`Invalid parameter "%s/opmessage": unexpected parameter "subject".`, path)
					}
					if m.Message.Given() {
						return nil, errParams(`Invalid parameter "%s/opmessage": unexpected parameter "message".`, path)
					}
				}
				if op.MediaTypeID != 0 && cfg.MediaTypes[op.MediaTypeID] == nil {
					return nil, errParams(`Invalid parameter "%s/opmessage/mediatypeid": No permissions to referred object or it does not exist!`, path)
				}
			}
			if op.OperationType == catalog.OpSendMessage {
				for _, g := range o.OpMessageGrp.Value {
					op.GroupIDs = append(op.GroupIDs, g.ID.Value)
				}
				for _, u := range o.OpMessageUsr.Value {
					op.UserIDs = append(op.UserIDs, u.ID.Value)
				}
				if len(op.GroupIDs)+len(op.UserIDs) == 0 {
					return nil, errParams(`No recipients specified for action operation message.`)
				}
			}
			if op.OperationType == catalog.OpRemoteCommand {
				if !o.OpCommand.Given() {
					return nil, errParams(`Invalid parameter "%s": the parameter "opcommand" is missing.`, path)
				}
				sc := cfg.Scripts[o.OpCommand.Value.ScriptID.Value]
				if sc == nil {
					return nil, errParams(`Invalid parameter "%s/opcommand/scriptid": No permissions to referred object or it does not exist!`, path)
				}
				if sc.Scope != catalog.ScopeAction {
					return nil, errParams(`Invalid parameter "%s/opcommand/scriptid": script "%s" is not for action operations (scope 1).`, path, sc.Name)
				}
				op.ScriptID = sc.ID
				snap := s.opts.Catalog.Snapshot()
				for k, h := range o.OpCommandHst.Value {
					if h.ID.Value != 0 && snap.HostByID(h.ID.Value) == nil {
						return nil, errParams(`Invalid parameter "%s/opcommand_hst/%d/hostid": No permissions to referred object or it does not exist!`, path, k+1)
					}
					op.CommandHosts = append(op.CommandHosts, h.ID.Value)
				}
				for k, g := range o.OpCommandGrp.Value {
					if snap.GroupByID(g.ID.Value) == nil {
						return nil, errParams(`Invalid parameter "%s/opcommand_grp/%d/groupid": No permissions to referred object or it does not exist!`, path, k+1)
					}
					op.CommandGroups = append(op.CommandGroups, g.ID.Value)
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
	opTypes := []int{catalog.OpSendMessage, catalog.OpRemoteCommand}
	switch a.EventSource {
	case catalog.SourceAutoreg, catalog.SourceDiscovery:
		opTypes = []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	case catalog.SourceInternal:
		opTypes = []int{catalog.OpSendMessage}
	}
	if a.Operations, err = conv("operations", in.Operations.Value, opTypes...); err != nil {
		return nil, err
	}
	if a.EventSource == catalog.SourceInternal {
		if a.RecoveryOperations, err = conv("recovery_operations", in.RecoveryOperations.Value, catalog.OpSendMessage, catalog.OpNotifyAllRecovery); err != nil {
			return nil, err
		}
		if len(a.Operations)+len(a.RecoveryOperations) == 0 {
			return nil, errParams(`No operations defined for action "%s".`, a.Name)
		}
		return a, nil
	}
	if hostOpSource(a.EventSource) {
		if len(a.Operations) == 0 {
			return nil, errParams(`No operations defined for action "%s".`, a.Name)
		}
		return a, nil
	}
	if a.RecoveryOperations, err = conv("recovery_operations", in.RecoveryOperations.Value, catalog.OpSendMessage, catalog.OpRemoteCommand, catalog.OpNotifyAllRecovery); err != nil {
		return nil, err
	}
	if a.UpdateOperations, err = conv("update_operations", in.UpdateOperations.Value, catalog.OpSendMessage, catalog.OpRemoteCommand, catalog.OpNotifyAllUpdate); err != nil {
		return nil, err
	}
	if len(a.Operations)+len(a.RecoveryOperations)+len(a.UpdateOperations) == 0 {
		return nil, errParams(`No operations defined for action "%s".`, a.Name)
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
	objs, err := alertObjects(c.params)
	if err != nil {
		return nil, err
	}
	var built []*catalog.Action
	var out []uint64
	cfg := s.opts.Alerting.AlertConfig()
	for i, o := range objs {
		if o.has("actionid") {
			return nil, errParams(`Invalid parameter "/%d": unexpected parameter "actionid".`, i+1)
		}
		for _, need := range []string{"name", "eventsource"} {
			if !o.has(need) {
				return nil, missing(i, need)
			}
		}
		var in actionParams
		if err := decodeAlert(o, fmt.Sprintf("/%d", i+1), &in); err != nil {
			return nil, err
		}
		if err := checkSourceRaw(o, in.EventSource.Value, i); err != nil {
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
	objs, err := alertObjects(c.params)
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
			if err := checkSourceRaw(o, int64(old.EventSource), i); err != nil {
				return err
			}
			var in actionParams
			if err := decodeAlert(alertOver(actionStored(old), o), fmt.Sprintf("/%d", i+1), &in); err != nil {
				return err
			}
			in.ActionID = given(id)
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

// triggerConditionTypes are the condition types 6.0 accepts in an
// action on trigger events (recorded from 6.0.14), some of which
// Peregrine refuses later with its own reason.
var triggerConditionTypes = []int{0, 1, 2, 3, 4, 6, 13, 16, 25, 26}

func operationObjects(a *catalog.Action, ops []catalog.Operation, recovery int) []object {
	out := []object{}
	for i, op := range ops {
		opid := u64(a.ID*1000 + uint64(recovery*300+i+1))
		conds := []object{}
		for k, c := range op.Conditions {
			conds = append(conds, object{"opconditionid": opid + istr(k+1), "operationid": opid, "conditiontype": istr(c.ConditionType),
				"operator": istr(c.Operator), "value": c.Value})
		}
		o := object{"operationid": opid, "operationtype": istr(op.OperationType), "evaltype": istr(op.EvalType)}
		if recovery != 2 {
			// 6.0 answers update operations without these two (recorded).
			o["actionid"], o["opconditions"] = u64(a.ID), conds
		}
		if recovery == 0 {
			o["esc_step_from"], o["esc_step_to"], o["esc_period"] = istr(op.StepFrom), istr(op.StepTo), op.Period
		}
		if op.OperationType == catalog.OpNotifyAllRecovery || op.OperationType == catalog.OpNotifyAllUpdate {
			// "Notify all involved" has its message too (recorded).
			o["opmessage"] = object{"default_msg": istr(op.DefaultMsg), "subject": op.Subject, "message": op.Message, "mediatypeid": u64(op.MediaTypeID)}
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
		sourceOperationObject(o, &op)
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
	// Within a type the IDs ascending, and the types by their first ID
	// (recorded: "(A or B) and C" whatever order the conditions are in).
	for _, t := range order {
		slices.Sort(byType[t])
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(byType[a][0], byType[b][0]) })
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
	SelectFilter             opt[sel] `json:"selectFilter"`
	SelectOperations         opt[sel] `json:"selectOperations"`
	SelectRecoveryOperations opt[sel] `json:"selectRecoveryOperations"`
	SelectUpdateOperations   opt[sel] `json:"selectUpdateOperations"`
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
			"esc_period": a.Period, "pause_suppressed": istr(a.PauseSuppressed), "notify_if_canceled": istr(a.NotifyIfCanceled)}
		if p.SelectFilter.Value.Count {
			o["filter"] = []object{} // as 6.0 answers "count" (recorded)
		} else if p.SelectFilter.Value.list() {
			conds := []object{}
			for _, cd := range a.Filter.Conditions {
				conds = append(conds, object{"conditiontype": istr(cd.ConditionType), "operator": istr(cd.Operator), "value": cd.Value,
					"value2": cd.Value2, "formulaid": cd.FormulaID})
			}
			o["filter"] = object{"evaltype": istr(a.Filter.EvalType), "formula": a.Filter.Formula, "eval_formula": evalFormula(&a.Filter), "conditions": conds}
		}
		if p.SelectOperations.Value.list() {
			o["operations"] = operationObjects(a, a.Operations, 0)
		}
		if p.SelectRecoveryOperations.Value.list() {
			o["recovery_operations"] = operationObjects(a, a.RecoveryOperations, 1)
		}
		if p.SelectUpdateOperations.Value.list() {
			o["update_operations"] = operationObjects(a, a.UpdateOperations, 2)
		}
		objs = append(objs, o)
	}
	return p.apply(objs, "actionid", "actionid", "name", "status")
}
