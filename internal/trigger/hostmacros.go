package trigger

import (
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/expr"
	"github.com/peregrine-mon/peregrine/internal/expr/exprsource"
)

// setUserMacros sets the user macro scopes of an evaluation of t, the
// way Zabbix 6.0 resolves them:
//
//   - A trigger on one host sees that host's scope: the host, its
//     templates by depth, global.
//   - A trigger over several hosts expands the parameters of each item
//     function in the scope of that function's item's host (so
//     last(/a/k,{$N})>0 or last(/b/k,{$N})>0 uses a's {$N} and then b's),
//     and the rest of the expression, its constants, in the scope of all
//     its hosts at once: their own macros, then their templates by depth,
//     then global (catalog.Snapshot.UserMacrosOfHosts).
//
// Resolving everything in the first host's scope, as Peregrine did
// before, gave a threshold that another of the hosts overrides the first
// host's value.
//
// With EvaluatorOptions.Macros (tests, embedders) the constants of a
// trigger over several hosts are resolved by each host's resolver in
// ascending host ID order, the first that defines the macro winning: an
// opaque resolver has no levels to interleave.
func (ev *Evaluator) setUserMacros(opt *expr.Options, snap *catalog.Snapshot, t *catalog.Trigger, src *exprsource.StoreSource) {
	switch {
	case len(t.HostIDs) == 0:
		return
	case len(t.HostIDs) == 1 && ev.opts.Macros != nil:
		opt.Macros = ev.opts.Macros(t.HostIDs[0])
		return
	case len(t.HostIDs) == 1:
		opt.Macros = snap.UserMacros(t.HostIDs[0])
		return
	case ev.opts.Macros != nil:
		hosts := make(firstDefined, len(t.HostIDs))
		for i, id := range t.HostIDs {
			hosts[i] = ev.opts.Macros(id)
		}
		opt.Macros = hosts
	default:
		opt.Macros = snap.UserMacrosOfHosts(t.HostIDs)
	}
	opt.FuncMacros = func(ref expr.ItemRef) expr.Macros {
		it, err := src.Item(ref)
		if err != nil || it.Host == nil {
			return nil // the function is unknown anyway; keep the trigger's scope
		}
		if ev.opts.Macros != nil {
			return ev.opts.Macros(it.Host.ID)
		}
		return snap.UserMacros(it.Host.ID)
	}
}

// firstDefined resolves a macro with the first resolver that defines it.
type firstDefined []expr.Macros

// UserMacro implements expr.Macros.
func (f firstDefined) UserMacro(name, context string) (string, bool) {
	for _, m := range f {
		if m == nil {
			continue
		}
		if v, ok := m.UserMacro(name, context); ok {
			return v, true
		}
	}
	return "", false
}
