package api

import (
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/audit"
)

// Host prototypes' copies: when a template's host prototype is added,
// updated or deleted, Zabbix 6.0.14 writes a record for each copy on
// the hosts and templates linking it too, down the levels, after the
// records of the call's own objects (recorded from the peer):
//
//   - add: the copy's rule and its template ("templateid": the
//     parent's ID) first, then the parent's details but for its rule,
//     uuid and ID, each group link and group prototype row with the
//     parent row it copies ("templateid"), then the name, flags and the
//     copy's ID: {"hostprototype.ruleid":["add","195902"],
//     "hostprototype.templateid":["add","15987"],"hostprototype.host":
//     ["add","{#HN}"],"hostprototype.groupLinks[241]":["add"],
//     "hostprototype.groupLinks[241].groupid":["add","341"],
//     "hostprototype.groupLinks[241].templateid":["add","240"],
//     "hostprototype.groupLinks[241].group_prototypeid":["add","241"],
//     "hostprototype.name":["add","{#HN}"],"hostprototype.flags":
//     ["add","2"],"hostprototype.hostid":["add","15988"]};
//   - update: the parent's details;
//   - delete: none.
//
// As for the parent, Peregrine numbers nested rows per object where
// Zabbix has their database IDs.

// hostProtoCopy is a copy of a host prototype: its ID, its rule's, and
// the prototype it copies.
type hostProtoCopy struct{ id, rule, parent uint64 }

// hostProtoCopies are the copies of host prototypes ids, each parent's
// before its own copies, from the current snapshot.
func (a *auditCall) hostProtoCopies(ids []string) []hostProtoCopy {
	if a.op.res != auditHostProto || a.s.opts.Catalog == nil {
		return nil
	}
	children := map[uint64][]hostProtoCopy{}
	for _, r := range a.s.opts.Catalog.Snapshot().Rules() {
		for _, hp := range r.Ext().LLD.HostPrototypes {
			if hp.TemplateID != 0 {
				children[hp.TemplateID] = append(children[hp.TemplateID], hostProtoCopy{id: hp.ID, rule: r.ID, parent: hp.TemplateID})
			}
		}
	}
	var out []hostProtoCopy
	seen := map[uint64]bool{}
	queue := make([]uint64, 0, len(ids))
	for _, s := range ids {
		if id, err := strconv.ParseUint(s, 10, 64); err == nil {
			queue = append(queue, id)
		}
	}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		for _, c := range children[id] {
			if !seen[c.id] {
				seen[c.id] = true
				out = append(out, c)
				queue = append(queue, c.id)
			}
		}
	}
	return out
}

// copyRecords are the records of copies, given the records of their
// parents (recs, by resource ID).
func copyRecords(action int, copies []hostProtoCopy, recs []audit.Record) []audit.Record {
	byID := map[uint64]audit.Record{}
	for _, r := range recs {
		byID[r.ResourceID] = r
	}
	var out []audit.Record
	for _, c := range copies {
		p, ok := byID[c.parent]
		if !ok {
			continue
		}
		r := audit.Record{Action: action, ResourceType: p.ResourceType, ResourceID: c.id, ResourceName: p.ResourceName}
		switch action {
		case audit.ActionUpdate:
			r.Details = p.Details
		case audit.ActionAdd:
			r.Details = copyAddDetails(p.Details, c).json()
		}
		byID[c.id] = r
		out = append(out, r)
	}
	return out
}

// copyAddDetails turns a parent's add details into its copy c's.
func copyAddDetails(parent string, c hostProtoCopy) *details {
	d := &details{}
	d.set("hostprototype.ruleid", "add", strconv.FormatUint(c.rule, 10))
	d.set("hostprototype.templateid", "add", strconv.FormatUint(c.parent, 10))
	v, _ := parseOrdered([]byte(parent))
	o, _ := v.(jobj)
	var tail []jfield
	for _, f := range o {
		vals, _ := f.v.([]any)
		switch f.k {
		case "hostprototype.ruleid", "hostprototype.uuid", "hostprototype.hostid", "hostprototype.templateid":
			continue
		case "hostprototype.name", "hostprototype.flags":
			tail = append(tail, f)
			continue
		}
		// A group row names the parent's row it copies, before its ID.
		if row, ok := strings.CutSuffix(f.k, ".group_prototypeid"); ok {
			if len(vals) == 2 {
				d.set(row+".templateid", "add", phpString(vals[1]))
			}
		}
		d.set(f.k, vals...)
	}
	for _, f := range tail {
		vals, _ := f.v.([]any)
		d.set(f.k, vals...)
	}
	d.set("hostprototype.hostid", "add", strconv.FormatUint(c.id, 10))
	return d
}
