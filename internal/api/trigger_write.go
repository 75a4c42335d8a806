package api

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// triggerParams are the members of a Zabbix 6.0 trigger object that
// trigger.create and trigger.update take.
type triggerParams struct {
	TriggerID          opt[uint64]   `json:"triggerid"`
	Description        opt[string]   `json:"description"`
	Expression         opt[string]   `json:"expression"`
	RecoveryMode       opt[int64]    `json:"recovery_mode"`
	RecoveryExpression opt[string]   `json:"recovery_expression"`
	Priority           opt[int64]    `json:"priority"`
	Status             opt[int64]    `json:"status"`
	Type               opt[int64]    `json:"type"`
	ManualClose        opt[int64]    `json:"manual_close"`
	Opdata             opt[string]   `json:"opdata"`
	Comments           opt[string]   `json:"comments"`
	URL                opt[string]   `json:"url"`
	CorrelationMode    opt[int64]    `json:"correlation_mode"`
	CorrelationTag     opt[string]   `json:"correlation_tag"`
	Tags               opt[hostTags] `json:"tags"`
	Dependencies       opt[refs]     `json:"dependencies" key:"triggerid"`
	// MaxCheckAttempts is Peregrine's soft/hard extension (1..100).
	MaxCheckAttempts opt[int64] `json:"max_check_attempts"`
	// EventName names the trigger's events instead of its description.
	EventName opt[string] `json:"event_name"`
	// Accepted and not stored: the UUID of templated triggers.
	UUID opt[ignored] `json:"uuid"`
}

// check validates the enumerations as the Zabbix API does.
func (p *triggerParams) check(i int) error {
	in := func(f opt[int64], hi int64) bool { return !f.Given() || f.Value >= 0 && f.Value <= hi }
	switch {
	case !in(p.Priority, 5):
		return oneOf(i, "priority", "0, 1, 2, 3, 4, 5")
	case !in(p.Status, 1):
		return oneOf(i, "status", "0, 1")
	case !in(p.Type, 1):
		return oneOf(i, "type", "0, 1")
	case !in(p.ManualClose, 1):
		return oneOf(i, "manual_close", "0, 1")
	case !in(p.RecoveryMode, 2):
		return oneOf(i, "recovery_mode", "0, 1, 2")
	case !in(p.CorrelationMode, 1):
		return oneOf(i, "correlation_mode", "0, 1")
	case p.MaxCheckAttempts.Given() && (p.MaxCheckAttempts.Value < 1 || p.MaxCheckAttempts.Value > 100):
		return errParams(`Invalid parameter "/%d/max_check_attempts": value must be one of 1-100.`, i+1)
	case p.Description.Set && p.Description.Value == "":
		return empty(i, "description")
	case p.Expression.Set && p.Expression.Value == "":
		return empty(i, "expression")
	}
	return nil
}

func (w *configWriter) triggerCreate(ctx context.Context, c *call) (any, error) {
	var ps []triggerParams
	if err := decodeValidatorObjects(c.params, &ps); err != nil {
		return nil, err
	}
	fs := make([]catalog.TriggerFields, len(ps))
	for i := range ps {
		p := &ps[i]
		switch {
		case p.TriggerID.Set:
			return nil, errParams(`Invalid parameter "/%d": unexpected parameter "triggerid".`, i+1)
		case !p.Description.Set:
			return nil, missing(i, "description")
		case !p.Expression.Set:
			return nil, missing(i, "expression")
		}
		if err := p.check(i); err != nil {
			return nil, err
		}
		for _, q := range ps[:i] {
			if q.Description.Value == p.Description.Value && q.Expression.Value == p.Expression.Value {
				// Recorded from 6.0.14: the pair twice in one call.
				return nil, errParams(`Invalid parameter "/%d": value (description, expression)=(%s, %s) already exists.`, i+1, p.Description.Value, p.Expression.Value)
			}
		}
		fs[i] = catalog.TriggerFields{
			Description: p.Description.Value, Expression: p.Expression.Value,
			RecoveryMode: catalog.RecoveryMode(p.RecoveryMode.Value), RecoveryExpression: p.RecoveryExpression.Value,
			Priority: uint8(p.Priority.Value), Enabled: p.Status.Value == 0, Multiple: p.Type.Value == 1, ManualClose: p.ManualClose.Value == 1,
			Opdata: p.Opdata.Value, Comments: p.Comments.Value, URL: p.URL.Value, EventName: p.EventName.Value,
			CorrelationMode: uint8(p.CorrelationMode.Value), CorrelationTag: p.CorrelationTag.Value,
			Tags: p.Tags.Value, Dependencies: p.Dependencies.Value, MaxCheckAttempts: uint8(max(p.MaxCheckAttempts.Value, 1)),
		}
	}
	var ids []uint64
	err := w.triggerEdit(ctx, c, func(e *catalog.Edit) ([]uint64, error) {
		var err error
		ids, err = e.CreateTriggers(fs)
		return ids, err
	})
	if err != nil {
		return nil, err
	}
	return idResult("triggerids", ids), nil
}

func (w *configWriter) triggerUpdate(ctx context.Context, c *call) (any, error) {
	var ps []triggerParams
	if err := decodeValidatorObjects(c.params, &ps); err != nil {
		return nil, err
	}
	ups := make([]catalog.TriggerUpdate, len(ps))
	ids := make([]uint64, len(ps))
	objs := objectsOf(c.params)
	snap := w.cat.Snapshot()
	for i := range ps {
		p := &ps[i]
		if !p.TriggerID.Set {
			return nil, missing(i, "triggerid")
		}
		if err := p.check(i); err != nil {
			return nil, err
		}
		if t := snap.Trigger(p.TriggerID.Value); t != nil && t.Discovery != nil {
			if err := discoveredRefusal(objs, i, "trigger", "description", t.Description, "triggerid", "status"); err != nil { // lld_inherited.go
				return nil, err
			}
		}
		u := catalog.TriggerUpdate{ID: p.TriggerID.Value}
		u.Description, u.Expression, u.RecoveryExpression = p.Description.ptr(), p.Expression.ptr(), p.RecoveryExpression.ptr()
		u.Opdata, u.Comments, u.URL, u.CorrelationTag = p.Opdata.ptr(), p.Comments.ptr(), p.URL.ptr(), p.CorrelationTag.ptr()
		u.EventName = p.EventName.ptr()
		if p.RecoveryMode.Given() {
			u.RecoveryMode = new(catalog.RecoveryMode(p.RecoveryMode.Value))
		}
		if p.Priority.Given() {
			u.Priority = new(uint8(p.Priority.Value))
		}
		if p.MaxCheckAttempts.Given() {
			u.MaxCheckAttempts = new(uint8(p.MaxCheckAttempts.Value))
		}
		if p.CorrelationMode.Given() {
			u.CorrelationMode = new(uint8(p.CorrelationMode.Value))
		}
		if p.Status.Given() {
			u.Enabled = new(p.Status.Value == 0)
		}
		if p.Type.Given() {
			u.Multiple = new(p.Type.Value == 1)
		}
		if p.ManualClose.Given() {
			u.ManualClose = new(p.ManualClose.Value == 1)
		}
		if p.Tags.Set {
			u.Tags = (*[]catalog.Tag)(&p.Tags.Value)
		}
		if p.Dependencies.Set {
			u.Dependencies = (*[]uint64)(&p.Dependencies.Value)
		}
		ups[i], ids[i] = u, u.ID
	}
	err := w.triggerEdit(ctx, c, func(e *catalog.Edit) ([]uint64, error) { return ids, e.UpdateTriggers(ups) })
	if err != nil {
		return nil, err
	}
	return idResult("triggerids", ids), nil
}

func (w *configWriter) triggerDelete(ctx context.Context, c *call) (any, error) {
	ids, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	// Permission is checked on the triggers as they are before the
	// delete: every host they reference writable.
	err = w.triggerEdit(ctx, c, func(e *catalog.Edit) ([]uint64, error) { return ids, nil }, func(e *catalog.Edit) error { return e.DeleteTriggers(ids) })
	if err != nil {
		return nil, err
	}
	return idResult("triggerids", ids), nil
}

// triggerEdit runs fn in one catalog Edit and then requires read-write
// on every host the triggers it names reference, as they are after fn
// (a trigger may move to other hosts by a new expression): the check
// needs the expression resolved, so it runs inside the Edit, and a
// refusal rolls the whole change back. then, if given, runs after the
// check (a delete must be checked before the triggers go).
func (w *configWriter) triggerEdit(ctx context.Context, c *call, fn func(e *catalog.Edit) ([]uint64, error), then ...func(e *catalog.Edit) error) error {
	a, err := w.s.access(ctx, c)
	if err != nil {
		return err
	}
	_, err = w.ed.Edit(ctx, func(e *catalog.Edit) error {
		ids, err := fn(e)
		if err != nil {
			return err
		}
		if !a.all() {
			snap := w.cat.Snapshot()
			for _, tid := range ids {
				for _, hid := range e.TriggerHosts(tid) {
					if h := snap.HostOrTemplate(hid); h == nil || !a.canWrite(h) {
						return errNoPermissions
					}
				}
			}
		}
		for _, f := range then {
			if err := f(e); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		return nil
	}
	var ce *catalog.DepCycleError
	if errors.As(err, &ce) {
		return depCycleError(w.cat.Snapshot(), ce)
	}
	return editError(err, "triggerid")
}

// triggerDepParams are the objects of trigger.adddependencies (both
// members) and trigger.deletedependencies (triggerid only).
type triggerDepParams struct {
	TriggerID opt[uint64] `json:"triggerid"`
	DependsOn opt[uint64] `json:"dependsOnTriggerid"`
}

// decodeDeps reads the objects of trigger.add/deletedependencies with
// Zabbix 6.0's checks: each member required, no pair (or trigger) twice.
func decodeDeps(params []byte, add bool) ([]triggerDepParams, error) {
	var ps []triggerDepParams
	if err := decodeValidatorObjects(params, &ps); err != nil {
		return nil, err
	}
	for i, p := range ps {
		switch {
		case !p.TriggerID.Set:
			return nil, missing(i, "triggerid")
		case add && !p.DependsOn.Set:
			return nil, missing(i, "dependsOnTriggerid")
		case !add && p.DependsOn.Set:
			return nil, errParams(`Invalid parameter "/%d": unexpected parameter "dependsOnTriggerid".`, i+1)
		}
		for _, q := range ps[:i] {
			if q.TriggerID.Value != p.TriggerID.Value || add && q.DependsOn.Value != p.DependsOn.Value {
				continue
			}
			if add {
				return nil, errParams(`Invalid parameter "/%d": value (triggerid, dependsOnTriggerid)=(%d, %d) already exists.`, i+1, p.TriggerID.Value, p.DependsOn.Value)
			}
			return nil, errParams(`Invalid parameter "/%d": value (triggerid)=(%d) already exists.`, i+1, p.TriggerID.Value)
		}
	}
	return ps, nil
}

// triggerAddDependencies serves trigger.adddependencies: each pair adds
// one master to a trigger's dependencies, with Zabbix 6.0's refusals
// (an unknown or unwritable trigger, an unknown or unreadable master, a
// dependency that exists, a cycle). The answer names each trigger once.
func (w *configWriter) triggerAddDependencies(ctx context.Context, c *call) (any, error) {
	ps, err := decodeDeps(c.params, true)
	if err != nil {
		return nil, err
	}
	a, err := w.s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	var ids []uint64
	adds := map[uint64][]uint64{}
	for _, p := range ps {
		if _, ok := adds[p.TriggerID.Value]; !ok {
			ids = append(ids, p.TriggerID.Value)
		}
		adds[p.TriggerID.Value] = append(adds[p.TriggerID.Value], p.DependsOn.Value)
	}
	err = w.triggerEdit(ctx, c, func(e *catalog.Edit) ([]uint64, error) {
		snap := w.cat.Snapshot()
		for _, tid := range ids {
			if t := snap.AnyTrigger(tid); t == nil || !triggerReadable(snap, a, t, true) {
				return nil, errNoPermissions
			}
		}
		for _, p := range ps {
			if d := snap.AnyTrigger(p.DependsOn.Value); d == nil || !triggerReadable(snap, a, d, false) {
				return nil, errNoPermissions
			}
		}
		for _, p := range ps {
			t, d := snap.AnyTrigger(p.TriggerID.Value), snap.AnyTrigger(p.DependsOn.Value)
			if slices.Contains(t.Dependencies, d.ID) {
				return nil, errParams(`The dependency of trigger "%s" on trigger "%s" already exists.`, t.Description, d.Description)
			}
		}
		ups := make([]catalog.TriggerUpdate, len(ids))
		for i, tid := range ids {
			deps := append(slices.Clone(snap.AnyTrigger(tid).Dependencies), adds[tid]...)
			ups[i] = catalog.TriggerUpdate{ID: tid, Dependencies: &deps}
		}
		return ids, e.UpdateTriggers(ups)
	})
	if err != nil {
		return nil, err
	}
	return idResult("triggerids", ids), nil
}

// triggerDeleteDependencies serves trigger.deletedependencies: the
// triggers named lose all their dependencies.
func (w *configWriter) triggerDeleteDependencies(ctx context.Context, c *call) (any, error) {
	ps, err := decodeDeps(c.params, false)
	if err != nil {
		return nil, err
	}
	ids := make([]uint64, len(ps))
	ups := make([]catalog.TriggerUpdate, len(ps))
	for i, p := range ps {
		ids[i] = p.TriggerID.Value
		ups[i] = catalog.TriggerUpdate{ID: ids[i], Dependencies: &[]uint64{}}
	}
	err = w.triggerEdit(ctx, c, func(e *catalog.Edit) ([]uint64, error) {
		snap := w.cat.Snapshot()
		for _, tid := range ids {
			if snap.AnyTrigger(tid) == nil {
				return nil, errNoPermissions
			}
		}
		return ids, e.UpdateTriggers(ups)
	})
	if err != nil {
		return nil, err
	}
	return idResult("triggerids", ids), nil
}

// depCycleError words a refused cycle as Zabbix 6.0 does, naming the
// triggers by their descriptions as they were before the change.
func depCycleError(snap *catalog.Snapshot, ce *catalog.DepCycleError) *Error {
	name := func(id uint64) string {
		if t := snap.AnyTrigger(id); t != nil {
			return t.Description
		}
		return strconv.FormatUint(id, 10)
	}
	path := make([]string, len(ce.Path))
	for i, id := range ce.Path {
		path[i] = `"` + name(id) + `"`
	}
	return errParams(`Trigger "%s" cannot depend on the trigger "%s", because a circular linkage (%s) would occur.`,
		name(ce.Trigger), name(ce.DependsOn), strings.Join(path, " -> "))
}
