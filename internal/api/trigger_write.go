package api

import (
	"context"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// triggerParams are the members of a Zabbix 6.0 trigger object that
// trigger.create and trigger.update take.
type triggerParams struct {
	TriggerID          flexID     `json:"triggerid"`
	Description        jstring    `json:"description"`
	Expression         jstring    `json:"expression"`
	RecoveryMode       flexInt    `json:"recovery_mode"`
	RecoveryExpression jstring    `json:"recovery_expression"`
	Priority           flexInt    `json:"priority"`
	Status             flexInt    `json:"status"`
	Type               flexInt    `json:"type"`
	ManualClose        flexInt    `json:"manual_close"`
	Opdata             jstring    `json:"opdata"`
	Comments           jstring    `json:"comments"`
	URL                jstring    `json:"url"`
	CorrelationMode    flexInt    `json:"correlation_mode"`
	CorrelationTag     jstring    `json:"correlation_tag"`
	Tags               tagList    `json:"tags"`
	Dependencies       triggerRef `json:"dependencies"`
	// MaxCheckAttempts is Peregrine's soft/hard extension (1..100).
	MaxCheckAttempts flexInt `json:"max_check_attempts"`
	// EventName names the trigger's events instead of its description.
	EventName jstring `json:"event_name"`
	// Accepted and not stored: the UUID of templated triggers.
	UUID notStored `json:"uuid"`
}

// triggerRef is "dependencies": [{"triggerid": "1"}].
type triggerRef struct{ refList }

func (l *triggerRef) UnmarshalJSON(b []byte) error { return l.decode(b, "dependencies", "triggerid") }

// check validates the enumerations as the Zabbix API does.
func (p *triggerParams) check(i int) error {
	in := func(f flexInt, hi int64) bool { return !f.set || f.v >= 0 && f.v <= hi }
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
	case p.MaxCheckAttempts.set && (p.MaxCheckAttempts.v < 1 || p.MaxCheckAttempts.v > 100):
		return errParams(`Invalid parameter "/%d/max_check_attempts": value must be one of 1-100.`, i+1)
	case p.Description.set && p.Description.v == "":
		return empty(i, "description")
	case p.Expression.set && p.Expression.v == "":
		return empty(i, "expression")
	}
	return nil
}

func (w *configWriter) triggerCreate(ctx context.Context, c *call) (any, error) {
	var ps []triggerParams
	if err := legacyDecodeObjects(c.params, &ps); err != nil {
		return nil, err
	}
	fs := make([]catalog.TriggerFields, len(ps))
	for i := range ps {
		p := &ps[i]
		switch {
		case p.TriggerID.set:
			return nil, errParams(`Invalid parameter "/%d": unexpected parameter "triggerid".`, i+1)
		case !p.Description.set:
			return nil, missing(i, "description")
		case !p.Expression.set:
			return nil, missing(i, "expression")
		}
		if err := p.check(i); err != nil {
			return nil, err
		}
		fs[i] = catalog.TriggerFields{
			Description: p.Description.v, Expression: p.Expression.v,
			RecoveryMode: catalog.RecoveryMode(p.RecoveryMode.v), RecoveryExpression: p.RecoveryExpression.v,
			Priority: uint8(p.Priority.v), Enabled: p.Status.v == 0, Multiple: p.Type.v == 1, ManualClose: p.ManualClose.v == 1,
			Opdata: p.Opdata.v, Comments: p.Comments.v, URL: p.URL.v, EventName: p.EventName.v,
			CorrelationMode: uint8(p.CorrelationMode.v), CorrelationTag: p.CorrelationTag.v,
			Tags: p.Tags.tags, Dependencies: p.Dependencies.ids, MaxCheckAttempts: uint8(max(p.MaxCheckAttempts.v, 1)),
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
	if err := legacyDecodeObjects(c.params, &ps); err != nil {
		return nil, err
	}
	ups := make([]catalog.TriggerUpdate, len(ps))
	ids := make([]uint64, len(ps))
	for i := range ps {
		p := &ps[i]
		if !p.TriggerID.set {
			return nil, missing(i, "triggerid")
		}
		if err := p.check(i); err != nil {
			return nil, err
		}
		u := catalog.TriggerUpdate{ID: p.TriggerID.v}
		str := func(s jstring) *string {
			if s.set {
				return &s.v
			}
			return nil
		}
		u.Description, u.Expression, u.RecoveryExpression = str(p.Description), str(p.Expression), str(p.RecoveryExpression)
		u.Opdata, u.Comments, u.URL, u.CorrelationTag = str(p.Opdata), str(p.Comments), str(p.URL), str(p.CorrelationTag)
		u.EventName = str(p.EventName)
		if p.RecoveryMode.set {
			u.RecoveryMode = new(catalog.RecoveryMode(p.RecoveryMode.v))
		}
		if p.Priority.set {
			u.Priority = new(uint8(p.Priority.v))
		}
		if p.MaxCheckAttempts.set {
			u.MaxCheckAttempts = new(uint8(p.MaxCheckAttempts.v))
		}
		if p.CorrelationMode.set {
			u.CorrelationMode = new(uint8(p.CorrelationMode.v))
		}
		if p.Status.set {
			u.Enabled = new(p.Status.v == 0)
		}
		if p.Type.set {
			u.Multiple = new(p.Type.v == 1)
		}
		if p.ManualClose.set {
			u.ManualClose = new(p.ManualClose.v == 1)
		}
		if p.Tags.set {
			u.Tags = &p.Tags.tags
		}
		if p.Dependencies.set {
			u.Dependencies = &p.Dependencies.ids
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
					if h := snap.HostByID(hid); h == nil || !a.canWrite(h) {
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
	return editError(err, "triggerid")
}
