package api

import (
	"bytes"
	"context"
	"slices"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// hostgroup.massadd, hostgroup.massremove and hostgroup.massupdate as
// Zabbix 6.0 does them (recorded from 6.0.14): checked by its API input
// validator (decodeRuled: unknown members refused, the objects, then no
// ID twice), then "At least one host or template must be specified.",
// then the groups, hosts and templates must exist and the caller must
// be able to change them. Each call is one catalog Edit; templates are
// in host groups as hosts are (6.0 has no template groups).

// zids is a list of IDs as 6.0's validator reads one (API_IDS with
// API_NORMALIZE): one ID stands for a list of one; with in:"notempty"
// the list may not be empty; no ID twice.
type zids []uint64

func (l *zids) decodeParam(raw []byte, c *fieldCtx) error {
	if err := l.check(raw, slices.Contains(c.rule.in, "notempty")); err != nil {
		return err
	}
	return nil
}

func (l *zids) check(raw []byte, notEmpty bool) error {
	raw = bytes.TrimSpace(raw)
	var elems [][]byte
	switch jsonKindOf(raw) {
	case 'a', 'o':
		elems = listValues(raw)
	case 'i', 's':
		elems = [][]byte{raw}
	default:
		return &valueError{msg: "an array is expected"}
	}
	if len(elems) == 0 && notEmpty {
		return &valueError{msg: "cannot be empty"}
	}
	out := make(zids, 0, len(elems))
	for i, e := range elems {
		v, reason := oneIDParam(e)
		if reason != "" {
			return &valueError{sub: strconv.Itoa(i + 1), msg: reason}
		}
		if slices.Contains(out, v) {
			return &valueError{sub: strconv.Itoa(i + 1), msg: "value (" + id(v) + ") already exists"}
		}
		out = append(out, v)
	}
	*l = out
	return nil
}

// read reads raw, a member at path, as a list that may not be empty.
func (l *zids) read(raw []byte, path string) error {
	if err := l.check(raw, true); err != nil {
		if ve, ok := err.(*valueError); ok {
			p := path
			if ve.sub != "" {
				p += "/" + ve.sub
			}
			return invalid(p, ve.msg)
		}
		return err
	}
	return nil
}

// refList is a list of objects that each name one ID, as the validator
// reads one with API_NORMALIZE: one object stands for a list of one.
type refList[T any] struct{ zobjs[T] }

func (l *refList[T]) decodeParam(raw []byte, c *fieldCtx) error {
	raw = bytes.TrimSpace(raw)
	if ms, ok := objectMembers(raw); ok && len(ms) > 0 && !isListObject(ms) {
		raw = append(append([]byte{'['}, raw...), ']')
	}
	return l.zobjs.decodeParam(raw, c)
}

// isListObject reports an object whose members are named 0, 1, ...: a
// list as PHP sees it.
func isListObject(ms []member) bool {
	for i, m := range ms {
		if m.name != strconv.Itoa(i) {
			return false
		}
	}
	return true
}

type massHostRef struct {
	HostID opt[uint64] `json:"hostid"`
}

func (*massHostRef) required() []string { return []string{"hostid"} }

type massTemplateRef struct {
	TemplateID opt[uint64] `json:"templateid"`
}

func (*massTemplateRef) required() []string { return []string{"templateid"} }

// hostgroupMassParams are hostgroup.massadd's and massupdate's.
type hostgroupMassParams struct {
	Groups    opt[refList[massGroupRef]]    `json:"groups" in:"notempty"`
	Hosts     opt[refList[massHostRef]]     `json:"hosts"`
	Templates opt[refList[massTemplateRef]] `json:"templates"`

	update bool // massupdate: hosts and templates are required, and may be empty
}

func (p *hostgroupMassParams) required() []string {
	if p.update {
		return []string{"groups", "hosts", "templates"}
	}
	return []string{"groups"}
}

// adjustRule: massadd refuses an empty list of hosts or templates.
func (p *hostgroupMassParams) adjustRule(r *fieldRule, _ func(string) bool) {
	if !p.update && (r.name == "hosts" || r.name == "templates") {
		r.in = []string{"notempty"}
	}
}

// ids are the request's IDs, after the validator's second pass (no ID
// twice in a list).
func (p *hostgroupMassParams) ids() (groups, hosts, tmpls []uint64, err error) {
	for _, g := range p.Groups.Value.zobjs {
		groups = append(groups, g.GroupID.Value)
	}
	for _, h := range p.Hosts.Value.zobjs {
		hosts = append(hosts, h.HostID.Value)
	}
	for _, t := range p.Templates.Value.zobjs {
		tmpls = append(tmpls, t.TemplateID.Value)
	}
	for _, l := range []struct {
		name, key string
		ids       []uint64
	}{{"/groups", "groupid", groups}, {"/hosts", "hostid", hosts}, {"/templates", "templateid", tmpls}} {
		if err := uniq(l.name, len(l.ids), []string{l.key}, func(i int) []string { return []string{id(l.ids[i])} }); err != nil {
			return nil, nil, nil, err
		}
	}
	return groups, hosts, tmpls, nil
}

// massTargets checks that the hosts and templates exist and that the
// caller may change the hosts.
func massTargets(snap *catalog.Snapshot, a access, hosts, tmpls []uint64) error {
	for _, h := range hosts {
		if hh := snap.HostByID(h); hh == nil || !a.canWrite(hh) {
			return errNoPermissions
		}
	}
	for _, t := range tmpls {
		if tt := snap.Template(t); tt == nil || !a.canWrite(tt) {
			return errNoPermissions
		}
	}
	return nil
}

func (w *configWriter) hostgroupMassAdd(ctx context.Context, c *call) (any, error) {
	var p hostgroupMassParams
	if err := decodeRuledParams(c.params, &p); err != nil {
		return nil, err
	}
	groups, hosts, tmpls, err := p.ids()
	if err != nil {
		return nil, err
	}
	if !p.Hosts.Set && !p.Templates.Set {
		return nil, errNoHostOrTemplate
	}
	a, err := w.s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	err = w.edit(ctx, c, "groupid", nil, func(e *catalog.Edit) error {
		snap := w.cat.Snapshot()
		if err := massGroupsWritable(snap, a, groups); err != nil {
			return err
		}
		if err := massTargets(snap, a, hosts, tmpls); err != nil {
			return err
		}
		var ups []catalog.HostUpdate
		for _, h := range append(slices.Clone(hosts), tmpls...) {
			gs := slices.Clone(snap.HostOrTemplate(h).GroupIDs)
			for _, g := range groups {
				if !slices.Contains(gs, g) {
					gs = append(gs, g)
				}
			}
			if len(gs) != len(snap.HostOrTemplate(h).GroupIDs) {
				ups = append(ups, catalog.HostUpdate{ID: h, GroupIDs: gs})
			}
		}
		if len(ups) == 0 {
			return nil
		}
		return e.UpdateHosts(ups)
	})
	if err != nil {
		return nil, err
	}
	return idResult("groupids", groups), nil
}

// hostgroupMassRemoveParams are hostgroup.massremove's.
type hostgroupMassRemoveParams struct {
	GroupIDs    opt[zids] `json:"groupids" in:"notempty"`
	HostIDs     opt[zids] `json:"hostids" in:"notempty"`
	TemplateIDs opt[zids] `json:"templateids" in:"notempty"`
}

func (*hostgroupMassRemoveParams) required() []string { return []string{"groupids"} }

func (w *configWriter) hostgroupMassRemove(ctx context.Context, c *call) (any, error) {
	var p hostgroupMassRemoveParams
	if err := decodeRuledParams(c.params, &p); err != nil {
		return nil, err
	}
	if !p.HostIDs.Set && !p.TemplateIDs.Set {
		return nil, errNoHostOrTemplate
	}
	groups, hosts := []uint64(p.GroupIDs.Value), []uint64(p.HostIDs.Value)
	a, err := w.s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	err = w.edit(ctx, c, "groupid", nil, func(e *catalog.Edit) error {
		snap := w.cat.Snapshot()
		if err := massGroupsWritable(snap, a, groups); err != nil {
			return err
		}
		if err := massTargets(snap, a, hosts, p.TemplateIDs.Value); err != nil {
			return err
		}
		targets := append(slices.Clone(hosts), p.TemplateIDs.Value...)
		if len(targets) == 0 {
			return nil
		}
		return removeGroups(e, snap, a, groups, targets)
	})
	if err != nil {
		return nil, err
	}
	return idResult("groupids", groups), nil
}

func (w *configWriter) hostgroupMassUpdate(ctx context.Context, c *call) (any, error) {
	p := hostgroupMassParams{update: true}
	if err := decodeRuledParams(c.params, &p); err != nil {
		return nil, err
	}
	groups, hosts, tmpls, err := p.ids()
	if err != nil {
		return nil, err
	}
	a, err := w.s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	err = w.edit(ctx, c, "groupid", nil, func(e *catalog.Edit) error {
		snap := w.cat.Snapshot()
		if err := massGroupsWritable(snap, a, groups); err != nil {
			return err
		}
		if err := massTargets(snap, a, hosts, tmpls); err != nil {
			return err
		}
		// The groups get exactly the hosts named: the others leave them,
		// which the caller must be able to change too.
		var ups []catalog.HostUpdate
		for _, h := range append(snap.Hosts(), snap.Templates()...) {
			named := slices.Contains(hosts, h.ID) || slices.Contains(tmpls, h.ID)
			gs := slices.DeleteFunc(slices.Clone(h.GroupIDs), func(g uint64) bool { return !named && slices.Contains(groups, g) })
			for _, g := range groups {
				if named && !slices.Contains(gs, g) {
					gs = append(gs, g)
				}
			}
			if !slices.Equal(gs, h.GroupIDs) {
				if !a.canWrite(h) {
					return errNoPermissions
				}
				if len(gs) == 0 {
					return errHostWithoutGroup(h)
				}
				ups = append(ups, catalog.HostUpdate{ID: h.ID, GroupIDs: gs})
			}
		}
		if len(ups) == 0 {
			return nil
		}
		return e.UpdateHosts(ups)
	})
	if err != nil {
		return nil, err
	}
	return idResult("groupids", groups), nil
}
