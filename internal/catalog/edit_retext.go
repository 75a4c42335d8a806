package catalog

import (
	"fmt"
	"strings"
)

// Zabbix 6.0 stores a trigger's expression with function IDs
// ("{842824}>5"), so a host or template rename and an item key change
// show at once in every trigger naming them (trigger.get with
// expandExpression, recorded from 6.0.14). Peregrine keeps expressions
// as written, so an Edit that renames a host or changes a key rewrites
// the text of the triggers that reference the host's items or the item.
// Calculated items' formulas are not rewritten: 6.0.14 leaves them too
// (recorded: a rename leaves "last(/old/key)" in the formula).

// retextHostTriggers rewrites the host name from to to in the
// expressions of the triggers that reference items of host (a host or a
// template) just renamed.
func (e *Edit) retextHostTriggers(host uint64, from, to string) error {
	names := map[string]string{from: to}
	for _, t := range e.hostTriggers(host) {
		if err := e.retextTrigger(t, rewriteRefs(t.Expression, names), rewriteRefs(t.RecoveryExpression, names)); err != nil {
			return err
		}
	}
	return e.retextPrototypes(host, func(s string) string { return rewriteRefs(s, names) })
}

// retextPrototypes rewrites with fn the expressions of the trigger
// prototypes of host's discovery rules: they name only the host's own
// items and item prototypes.
func (e *Edit) retextPrototypes(host uint64, fn func(string) string) error {
	for _, it := range e.hostItems(host) {
		if it.Ext().LLD == nil || len(it.Ext().LLD.TriggerPrototypes) == 0 {
			continue
		}
		var l *LLDRule
		for i := range it.Ext().LLD.TriggerPrototypes {
			f := &it.Ext().LLD.TriggerPrototypes[i].Fields
			expr, rexpr := fn(f.Expression), fn(f.RecoveryExpression)
			if expr == f.Expression && rexpr == f.RecoveryExpression {
				continue
			}
			if l == nil {
				l = cloneLLD(it.Ext().LLD)
			}
			l.TriggerPrototypes[i].Fields.Expression, l.TriggerPrototypes[i].Fields.RecoveryExpression = expr, rexpr
		}
		if l == nil {
			continue
		}
		n := *it
		n.MutExt().LLD = l
		if err := e.writeItem(&n, it); err != nil {
			return err
		}
	}
	return nil
}

// retextItemTriggers rewrites the references /host/from to /host/to in
// the expressions of the triggers that reference item, whose key just
// changed from from to to.
func (e *Edit) retextItemTriggers(item uint64, host, from, to string) error {
	for _, t := range e.triggersOf(item) {
		if err := e.retextTrigger(t, rewriteKey(t.Expression, host, from, to), rewriteKey(t.RecoveryExpression, host, from, to)); err != nil {
			return err
		}
	}
	it := e.item(item)
	if it == nil {
		return nil
	}
	return e.retextPrototypes(it.HostID, func(s string) string { return rewriteKey(s, host, from, to) })
}

// retextProtoKeys rewrites, in l (the new configuration of rule cur,
// on host), the trigger prototypes' references to the item prototypes
// whose keys l changes (recorded from 6.0.14: itemprototype.update of
// key_ shows in triggerprototype.get's expression).
func retextProtoKeys(cur, l *LLDRule, host string) {
	old := make(map[uint64]string, len(cur.ItemPrototypes))
	for _, p := range cur.ItemPrototypes {
		old[p.ID] = p.Item.Key
	}
	for _, p := range l.ItemPrototypes {
		from, ok := old[p.ID]
		if p.ID == 0 || !ok || from == p.Item.Key {
			continue
		}
		for i := range l.TriggerPrototypes {
			f := &l.TriggerPrototypes[i].Fields
			f.Expression = rewriteKey(f.Expression, host, from, p.Item.Key)
			f.RecoveryExpression = rewriteKey(f.RecoveryExpression, host, from, p.Item.Key)
		}
	}
}

// retextTrigger stores t with new expression texts; its items are the
// same, so only the row's text changes.
func (e *Edit) retextTrigger(t *Trigger, expr, rexpr string) error {
	if expr == t.Expression && rexpr == t.RecoveryExpression {
		return nil
	}
	if _, err := e.exec("UPDATE triggers SET expression = ?, recovery_expression = ? WHERE id = ?", expr, rexpr, t.ID); err != nil {
		return e.fail(fmt.Errorf("cannot update the expression of trigger %d: %w", t.ID, err))
	}
	n := new(Trigger)
	*n = *t
	n.Expression, n.RecoveryExpression = expr, rexpr
	e.setTrigger(n.ID, n)
	return nil
}

// rewriteKey rewrites every item reference "(/host/from" of expr (a
// function's first parameter, as rewriteRefs finds them) to
// "(/host/to". The key must end where the reference does: at a comma,
// a closing parenthesis, a filter or white space, so that key "k" is
// not taken for the start of "k[1]".
func rewriteKey(expr, host, from, to string) string {
	if expr == "" || from == to {
		return expr
	}
	want := "/" + host + "/" + from
	return replaceAtRefs(expr, func(ref string) (int, int, string, bool) {
		if !strings.HasPrefix(ref, want) {
			return 0, 0, "", false
		}
		end := len(want)
		if end < len(ref) && !strings.ContainsRune(",)? \t\r\n", rune(ref[end])) {
			return 0, 0, "", false
		}
		return end - len(from), end, to, true
	})
}
