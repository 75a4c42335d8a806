package lld

import (
	"slices"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// ExpandHosts returns the hosts rule's host prototypes want for rows
// (those that pass the filter), host overrides applied (status,
// discover, templates, tags; inventory mode is not kept: Peregrine has
// no host inventory). A template's rule wants none: its copies on
// hosts do. Two rows giving one host name make one host, the first
// row's.
func ExpandHosts(snap *catalog.Snapshot, rule *catalog.Item, rows []Row, exp expander) []catalog.DiscoveredHost {
	l := rule.Ext().LLD
	if len(l.HostPrototypes) == 0 || rule.Host == nil || rule.Host.IsTemplate {
		return nil
	}
	m := &matcher{snap: snap}
	if exp == nil {
		exp = func(s string) string { return s }
	}
	seen := map[string]bool{}
	var out []catalog.DiscoveredHost
	for ri := range rows {
		row := &rows[ri]
		if !m.pass(&l.Filter, row, exp) {
			continue
		}
		for pi := range l.HostPrototypes {
			hp := &l.HostPrototypes[pi]
			status, discover := hp.Status, hp.Discover
			var tmplNames []string
			var tags []catalog.Tag
			for oi := range l.Overrides {
				o := &l.Overrides[oi]
				if !m.pass(&o.Filter, row, exp) {
					continue
				}
				for _, op := range o.Operations {
					if op.Object != catalog.OpObjectHost || !m.opMatches(&op, hp.Host) {
						continue
					}
					if op.Status != nil {
						status = *op.Status
					}
					if op.Discover != nil {
						discover = *op.Discover
					}
					tmplNames = append(tmplNames, op.Templates...)
					tags = append(tags, op.Tags...)
				}
				if o.Stop == 1 {
					break // "stop processing next overrides if matches"
				}
			}
			if discover == 1 {
				continue
			}
			dh := catalog.DiscoveredHost{ProtoID: hp.ID, Host: subst(hp.Host, row), Name: subst(hp.Name, row), Enabled: status == 0,
				GroupIDs: slices.Clone(hp.GroupLinks), Templates: slices.Clone(hp.Templates), TemplateNames: tmplNames,
				Custom: hp.CustomInterfaces == 1}
			if dh.Name == "" {
				dh.Name = dh.Host
			}
			if seen[dh.Host] {
				continue
			}
			seen[dh.Host] = true
			dh.GroupNames = append(dh.GroupNames, hp.GroupLinkNames...)
			dh.TemplateNames = append(dh.TemplateNames, hp.TemplateNames...)
			for _, g := range hp.GroupPrototypes {
				dh.GroupNames = append(dh.GroupNames, subst(g, row))
			}
			for _, t := range append(slices.Clone(hp.Tags), tags...) {
				dh.Tags = append(dh.Tags, catalog.Tag{Tag: subst(t.Tag, row), Value: subst(t.Value, row)})
			}
			for _, mc := range hp.Macros {
				mc.Value = subst(mc.Value, row)
				dh.Macros = append(dh.Macros, mc)
			}
			for _, f := range hp.Interfaces {
				f.IP, f.DNS, f.Port = subst(f.IP, row), subst(f.DNS, row), subst(f.Port, row)
				dh.Interfaces = append(dh.Interfaces, f)
			}
			out = append(out, dh)
		}
	}
	return out
}
