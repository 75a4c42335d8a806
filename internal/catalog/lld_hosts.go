package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
)

// Discovered hosts (Zabbix 6.0's hosts of flags 4): a host prototype of
// a host's discovery rule, expanded per discovered row, makes a host
// with the prototype's visible name, status, groups (its group links,
// and its group prototypes' names, made as host groups when missing),
// linked templates, macros, tags and interfaces (the prototype's own
// when custom_interfaces is 1, else copies of the rule's host's). Its
// link to the rule and prototype is Host.Discovery (table
// host_discovery); a host no longer discovered is lost, deleted once the
// rule's lifetime passed, as items are. A host prototype of a template's
// rule makes nothing: its copies on linked hosts do. Peregrine keeps no
// host inventory, so a prototype's inventory_mode is stored, not
// applied.

// lldHostsSchema (its own migration) links discovered hosts to the rule
// and prototype that made them.
const lldHostsSchema = `
CREATE TABLE IF NOT EXISTS host_discovery (
	host_id   INTEGER PRIMARY KEY,
	rule_id   INTEGER NOT NULL,
	proto_id  INTEGER NOT NULL,
	ts_delete INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS host_discovery_rule ON host_discovery (rule_id);
`

// migrateLLDHosts is the migration to the version with discovered
// hosts. An older database has none.
func migrateLLDHosts() string { return lldHostsSchema }

// loadHostDiscovery attaches discovered hosts' links.
func loadHostDiscovery(ctx context.Context, tx *sql.Tx, hosts []Host) error {
	byID := make(map[uint64]int, len(hosts))
	for i := range hosts {
		byID[hosts[i].ID] = i
	}
	err := queryEach(ctx, tx, "SELECT host_id, rule_id, proto_id, ts_delete FROM host_discovery", func(r *sql.Rows) error {
		var d Discovery
		var id uint64
		if err := r.Scan(&id, &d.RuleID, &d.ProtoID, &d.TSDelete); err != nil {
			return err
		}
		i, ok := byID[id]
		if !ok {
			return fmt.Errorf("%w: discovery of unknown host %d", ErrCorrupt, id)
		}
		loadExt(&hosts[i]).Discovery = &d
		return nil
	})
	if err != nil {
		return fmt.Errorf("cannot load discovered hosts: %w", err)
	}
	return nil
}

// DiscoveredHost is one host a discovery result wants: a host prototype
// expanded for one row, overrides applied.
type DiscoveredHost struct {
	ProtoID uint64
	Host    string // technical name
	Name    string // visible name
	Enabled bool
	// GroupIDs are the prototype's group links; GroupNames its group
	// prototypes expanded (made when missing).
	GroupIDs   []uint64
	GroupNames []string
	// Templates are the templates to link, by ID (the prototype's) and
	// by name (overrides').
	Templates     []uint64
	TemplateNames []string
	Macros        []HostProtoMacro
	Tags          []Tag
	// Interfaces are the host's own (custom_interfaces 1), nil to copy
	// the rule's host's.
	Interfaces []HostProtoInterface
	Custom     bool
}

// discoveredIndex returns the Edit's index of discovered hosts by rule
// (IDs; a host deleted since is skipped by its readers).
func (e *Edit) discoveredIndex() map[uint64][]uint64 {
	if e.discHosts == nil {
		e.discHosts = map[uint64][]uint64{}
		e.eachHost(func(h *Host) bool {
			if d := h.Ext().Discovery; d != nil {
				e.discHosts[d.RuleID] = append(e.discHosts[d.RuleID], h.ID)
			}
			return true
		})
	}
	return e.discHosts
}

// discoveredHosts returns the hosts rule discovered, by technical name.
func (e *Edit) discoveredHosts(rule uint64) map[string]*Host {
	out := map[string]*Host{}
	for _, id := range e.discoveredIndex()[rule] {
		if h := e.host(id); h != nil && h.Ext().Discovery != nil && h.Ext().Discovery.RuleID == rule {
			out[h.Host] = h
		}
	}
	return out
}

// applyDiscoveredHosts makes the hosts rule discovered what r wants:
// creates the missing, updates the name, status, groups, tags, macros
// and templates of those it has, marks the others lost and deletes
// those whose time came. A host that cannot be made is skipped and
// reported.
func (e *Edit) applyDiscoveredHosts(rule *Item, parent *Host, r *DiscoveryResult) ([]string, error) {
	if parent.IsTemplate || len(r.Hosts) == 0 && !e.hasDiscoveredHosts(rule.ID) {
		return nil, nil
	}
	var msgs []string
	have := e.discoveredHosts(rule.ID)
	wanted := map[uint64]bool{}
	for i := range r.Hosts {
		dh := &r.Hosts[i]
		cur := have[dh.Host]
		if cur == nil {
			if e.hostByName(dh.Host) != 0 {
				// Recorded wording of 6.0's host.create.
				msgs = append(msgs, fmt.Sprintf("Cannot create host: host with the same name \"%s\" already exists.", dh.Host))
				continue
			}
		}
		id, msg, err := e.discoverHost(rule, parent, dh, cur)
		if err != nil {
			return nil, err
		}
		if msg != "" {
			msgs = append(msgs, msg)
			continue
		}
		wanted[id] = true
	}
	var gone []uint64
	for _, h := range have {
		if wanted[h.ID] {
			continue
		}
		d := *h.Ext().Discovery
		switch {
		case d.TSDelete == 0 && r.Lifetime > 0:
			d.TSDelete = r.Now + r.Lifetime
			if err := e.setHostDiscovery(h.ID, &d); err != nil {
				return nil, err
			}
		case d.TSDelete == 0 || d.TSDelete <= r.Now:
			gone = append(gone, h.ID)
		}
	}
	if len(gone) > 0 {
		slices.Sort(gone)
		if err := e.DeleteHosts(gone); err != nil {
			return nil, err
		}
	}
	return msgs, nil
}

func (e *Edit) hasDiscoveredHosts(rule uint64) bool { return len(e.discoveredHosts(rule)) > 0 }

// discoverHost creates or updates the host dh wants (cur: the host of
// its name the rule discovered before, if any).
func (e *Edit) discoverHost(rule *Item, parent *Host, dh *DiscoveredHost, cur *Host) (uint64, string, error) {
	groups := slices.Clone(dh.GroupIDs)
	for _, name := range dh.GroupNames {
		gid := e.groupByName(name)
		if gid == 0 {
			ids, err := e.CreateGroups([]string{name})
			if err != nil {
				return 0, fmt.Sprintf("Cannot create host group \"%s\": %v.", name, err), nil
			}
			gid = ids[0]
		}
		if !slices.Contains(groups, gid) {
			groups = append(groups, gid)
		}
	}
	groups = slices.DeleteFunc(groups, func(g uint64) bool { return e.group(g) == nil })
	if len(groups) == 0 {
		return 0, fmt.Sprintf("Cannot create host \"%s\": no host group.", dh.Host), nil
	}
	var ifaces []Interface
	if dh.Custom {
		for _, f := range dh.Interfaces {
			ifaces = append(ifaces, Interface{Type: InterfaceType(f.Type), Main: f.Main == 1, UseIP: f.UseIP == 1, IP: f.IP, DNS: f.DNS, Port: f.Port, Details: f.Details})
		}
	} else {
		for _, f := range parent.Interfaces {
			ifaces = append(ifaces, Interface{Type: f.Type, Main: f.Main, UseIP: f.UseIP, IP: f.IP, DNS: f.DNS, Port: f.Port, Details: f.Details})
		}
	}
	tmpls := slices.Clone(dh.Templates)
	for _, n := range dh.TemplateNames {
		if id := e.hostByName(n); id != 0 && e.host(id).IsTemplate && !slices.Contains(tmpls, id) {
			tmpls = append(tmpls, id)
		}
	}
	tmpls = slices.DeleteFunc(tmpls, func(t uint64) bool { h := e.host(t); return h == nil || !h.IsTemplate })
	var macros []MacroFields
	for _, m := range dh.Macros {
		macros = append(macros, MacroFields{Macro: m.Macro, Value: m.Value, Type: m.Type, Description: m.Description})
	}
	id := uint64(0)
	if cur == nil {
		ids, err := e.CreateHosts([]NewHost{{Host: dh.Host, Name: dh.Name, Disabled: !dh.Enabled, GroupIDs: groups, Tags: dh.Tags, Interfaces: ifaces}})
		if err != nil {
			if e.err != nil {
				return 0, "", err
			}
			return 0, fmt.Sprintf("Cannot create host \"%s\": %v.", dh.Host, err), nil
		}
		id = ids[0]
		if err := e.setHostDiscovery(id, &Discovery{RuleID: rule.ID, ProtoID: dh.ProtoID}); err != nil {
			return 0, "", err
		}
	} else {
		id = cur.ID
		name, en, tags := dh.Name, dh.Enabled, dh.Tags
		if tags == nil {
			tags = []Tag{}
		}
		err := e.UpdateHosts([]HostUpdate{{ID: id, Name: &name, Enabled: &en, GroupIDs: groups, Tags: &tags}})
		if err != nil {
			if e.err != nil {
				return 0, "", err
			}
			return 0, fmt.Sprintf("Cannot update host \"%s\": %v.", dh.Host, err), nil
		}
		if cur.Ext().Discovery.TSDelete != 0 {
			if err := e.setHostDiscovery(id, &Discovery{RuleID: rule.ID, ProtoID: dh.ProtoID}); err != nil {
				return 0, "", err
			}
		}
	}
	if _, err := e.SetMacros(id, macros, "macros"); err != nil {
		if e.err != nil {
			return 0, "", err
		}
		return 0, fmt.Sprintf("Cannot set the macros of host \"%s\": %v.", dh.Host, err), nil
	}
	if _, err := e.SetTemplates(id, tmpls, nil, "templates"); err != nil {
		if e.err != nil {
			return 0, "", err
		}
		return 0, fmt.Sprintf("Cannot link templates to host \"%s\": %v.", dh.Host, err), nil
	}
	return id, "", nil
}

// setHostDiscovery writes host id's link to what discovered it.
func (e *Edit) setHostDiscovery(id uint64, d *Discovery) error {
	if _, err := e.exec("INSERT OR REPLACE INTO host_discovery (host_id, rule_id, proto_id, ts_delete) VALUES (?, ?, ?, ?)", id, d.RuleID, d.ProtoID, d.TSDelete); err != nil {
		return e.fail(fmt.Errorf("cannot store discovered host %d: %w", id, err))
	}
	initMap(&e.hosts)
	initMap(&e.hostName)
	h := e.editableHost(id)
	if h.Ext().Discovery == nil && e.discHosts != nil {
		e.discHosts[d.RuleID] = append(e.discHosts[d.RuleID], id)
	}
	c := *d
	h.MutExt().Discovery = &c
	return nil
}

// hostsDiscoveredBy returns the hosts the rules among items discovered:
// they go with their rule (and with the rule's host).
func (e *Edit) hostsDiscoveredBy(items []uint64) []uint64 {
	rules := map[uint64]bool{}
	for _, id := range items {
		if it := e.item(id); it != nil && it.Ext().LLD != nil {
			rules[id] = true
		}
	}
	if len(rules) == 0 {
		return nil
	}
	var out []uint64
	for r := range rules {
		for _, h := range e.discoveredHosts(r) {
			out = append(out, h.ID)
		}
	}
	slices.Sort(out)
	return out
}
