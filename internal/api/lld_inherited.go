package api

import "slices"

// Edits of what a template or discovery made, as Zabbix 6.0.14 refuses
// or takes them (recorded from the peer: internal/conformance case
// inherited_edits):
//
//   - an inherited item or item prototype: the members only its
//     template sets are ignored (itemParams.dropTemplated);
//   - an inherited trigger or trigger prototype: those members are
//     refused, `Cannot update "description" for templated trigger
//     prototype "x".` (templatedTriggerField);
//   - an inherited host prototype: all but status and discover refused,
//     `Invalid parameter "/1": cannot update readonly parameter "host"
//     of inherited object.`; an inherited graph prototype's update is
//     ignored;
//   - a discovered host takes only its status and description, a
//     discovered item and trigger only their status: any other member,
//     changed or not, is refused with `Cannot update "name" for a
//     discovered item "x".` (-32500), naming the object by the request's
//     name if it has one, else the stored one;
//   - deleting a copy is refused, each kind with its own text; deleting
//     what discovery made is allowed.

// memberOutside is the first member of objs[i] (the request's ith
// object, its members in the request's order) not in allowed, or "".
func memberOutside(objs []jobj, i int, allowed ...string) string {
	if i >= len(objs) {
		return ""
	}
	for _, f := range objs[i] {
		if !slices.Contains(allowed, f.k) {
			return f.k
		}
	}
	return ""
}

// discoveredRefusal refuses a member of objs[i], a discovered object of
// kind ("host", "item", "trigger"), outside allowed; name is the member
// naming it, stored its stored name.
func discoveredRefusal(objs []jobj, i int, kind, name, stored string, allowed ...string) error {
	f := memberOutside(objs, i, allowed...)
	if f == "" {
		return nil
	}
	if v, ok := objs[i].get(name); ok {
		stored = phpString(v)
	}
	return errApp(`Cannot update "%s" for a discovered %s "%s".`, f, kind, stored)
}

// templatedProtoField is the first member p sets that an inherited
// trigger prototype takes from its template only, in the order of
// inherited triggers' (catalog's templatedTriggerField), or "".
func (p *triggerProtoParams) templatedProtoField() string {
	switch {
	case p.Description.Set:
		return "description"
	case p.Expression.Set:
		return "expression"
	case p.RecoveryMode.Set:
		return "recovery_mode"
	case p.RecoveryExpression.Set:
		return "recovery_expression"
	case p.CorrelationMode.Set:
		return "correlation_mode"
	case p.CorrelationTag.Set:
		return "correlation_tag"
	case p.ManualClose.Set:
		return "manual_close"
	}
	return ""
}
