package api

import (
	"context"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// changeGraphProtos sets rule id's graph prototypes to what fn makes of
// a copy of them.
func changeGraphProtos(e *catalog.Edit, id uint64, fn func(gps []catalog.GraphPrototype) []catalog.GraphPrototype) error {
	cur, ok := e.GraphPrototypes(id)
	if !ok {
		return errNoPermissions
	}
	return e.UpdateGraphPrototypes(id, fn(append([]catalog.GraphPrototype(nil), cur...)))
}

func (w *configWriter) graphprototypeCreate(ctx context.Context, c *call) (any, error) {
	if emptyParams(c.params) {
		return idResult("graphids", nil), nil
	}
	var ps []graphProtoParams
	if err := decodeLegacyObjects(c.params, &ps); err != nil {
		return nil, err
	}
	snap := w.cat.Snapshot()
	type add struct {
		rule *catalog.Item
		gp   catalog.GraphPrototype
	}
	adds := make([]add, len(ps))
	var hosts []uint64
	for i := range ps {
		p := &ps[i]
		rule, err := checkGraphProtoParams(snap, i, p, p.Name.Value, true)
		if err != nil {
			return nil, err
		}
		g := catalog.Graph{GraphFields: catalog.DefaultGraphFields}
		p.apply(&g, true)
		gp := toProto(snap, &g, int(p.Discover.Value))
		if graphNameOnHost(snap, rule.HostID, gp.Name, 0) {
			return nil, errParams(`Graph with name "%s" already exists in graphs or graph prototypes.`, gp.Name)
		}
		for j := range adds[:i] {
			if adds[j].rule.HostID == rule.HostID && adds[j].gp.Name == gp.Name {
				return nil, errParams(`More than one graph prototype with name "%s" within host.`, gp.Name)
			}
		}
		adds[i] = add{rule, gp}
		hosts = append(hosts, rule.HostID)
	}
	ids := make([]uint64, len(adds))
	err := w.edit(ctx, c, "graphid", hostsWritable(hosts), func(e *catalog.Edit) error {
		for i, a := range adds {
			if err := changeGraphProtos(e, a.rule.ID, func(gps []catalog.GraphPrototype) []catalog.GraphPrototype { return append(gps, a.gp) }); err != nil {
				return err
			}
			after, _ := e.GraphPrototypes(a.rule.ID)
			ids[i] = after[len(after)-1].ID
		}
		return nil
	})
	if err != nil {
		return nil, graphError(err)
	}
	return idResult("graphids", ids), nil
}

func (w *configWriter) graphprototypeUpdate(ctx context.Context, c *call) (any, error) {
	if emptyParams(c.params) {
		return idResult("graphids", nil), nil
	}
	var ps []graphProtoParams
	if err := decodeLegacyObjects(c.params, &ps); err != nil {
		return nil, err
	}
	a, err := w.s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := w.cat.Snapshot()
	type upd struct {
		ruleID uint64
		gp     catalog.GraphPrototype
	}
	upds := make([]upd, len(ps))
	ids := make([]uint64, len(ps))
	var hosts []uint64
	for i := range ps {
		p := &ps[i]
		cur, rule := snap.GraphPrototype(p.GraphID.Value)
		if !p.GraphID.Given() || cur == nil || !a.canWrite(rule.Host) {
			return nil, errParams("No permissions to referred object or it does not exist!")
		}
		if cur.TemplateID != 0 {
			// 6.0.14 answers an update of a copy with its ID and changes
			// none of the fields its template sets (recorded); it keeps a
			// discover given, which Peregrine takes only from the
			// template: refused rather than dropped.
			if p.Discover.Given() && int(p.Discover.Value) != cur.Discover {
				return nil, errParams(`Cannot update "discover" of templated graph prototype "%s": Peregrine takes it from the template.`, cur.Name)
			}
			ids[i] = cur.ID
			upds[i] = upd{ruleID: 0}
			continue
		}
		newRule, err := checkGraphProtoParams(snap, i, p, cur.Name, false)
		if err != nil {
			return nil, err
		}
		if newRule != nil && newRule.ID != rule.ID {
			return nil, errParams(`Graph prototype "%s" contains item prototypes from multiple discovery rules.`, cur.Name)
		}
		g := protoAsGraph(snap, rule, cur)
		p.apply(&g, false)
		d := cur.Discover
		if p.Discover.Given() {
			d = int(p.Discover.Value)
		}
		gp := toProto(snap, &g, d)
		if graphNameOnHost(snap, rule.HostID, gp.Name, gp.ID) {
			return nil, errParams(`Graph with name "%s" already exists in graphs or graph prototypes.`, gp.Name)
		}
		upds[i], ids[i] = upd{rule.ID, gp}, gp.ID
		hosts = append(hosts, rule.HostID)
	}
	err = w.edit(ctx, c, "graphid", hostsWritable(hosts), func(e *catalog.Edit) error {
		for _, u := range upds {
			if u.ruleID == 0 {
				continue // a copy: nothing changes
			}
			err := changeGraphProtos(e, u.ruleID, func(gps []catalog.GraphPrototype) []catalog.GraphPrototype {
				for j := range gps {
					if gps[j].ID == u.gp.ID {
						gps[j] = u.gp
					}
				}
				return gps
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, graphError(err)
	}
	return idResult("graphids", ids), nil
}

func (w *configWriter) graphprototypeDelete(ctx context.Context, c *call) (any, error) {
	ids, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	a, err := w.s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := w.cat.Snapshot()
	gone := map[uint64]map[uint64]bool{} // rule → prototypes
	for _, gid := range ids {
		gp, rule := snap.GraphPrototype(gid)
		if gp == nil || !a.canWrite(rule.Host) {
			return nil, errNoPermissions
		}
		if gp.TemplateID != 0 {
			return nil, errParams("Cannot delete templated graph prototype.")
		}
		if gone[rule.ID] == nil {
			gone[rule.ID] = map[uint64]bool{}
		}
		gone[rule.ID][gid] = true
	}
	err = w.edit(ctx, c, "graphid", nil, func(e *catalog.Edit) error {
		for rid, del := range gone {
			err := changeGraphProtos(e, rid, func(gps []catalog.GraphPrototype) []catalog.GraphPrototype {
				out := gps[:0]
				for _, gp := range gps {
					if !del[gp.ID] {
						out = append(out, gp)
					}
				}
				return out
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, graphError(err)
	}
	return idResult("graphids", ids), nil
}

func (w *configWriter) registerGraphPrototypes() {
	w.s.methods["graphprototype.create"] = &method{role: RoleAdmin, call: w.graphprototypeCreate}
	w.s.methods["graphprototype.update"] = &method{role: RoleAdmin, call: w.graphprototypeUpdate}
	w.s.methods["graphprototype.delete"] = &method{role: RoleAdmin, call: w.graphprototypeDelete}
}
