package catalog

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/zbx/zbxpsk"
)

// NewHost describes a host for Edit.CreateHosts.
type NewHost struct {
	Host     string   // technical name, required
	Name     string   // visible name; default Host
	Disabled bool     // Zabbix status 1; hosts are created enabled by default
	GroupIDs []uint64 // existing groups, at least one
	Tags     []Tag    // optional; no (tag, value) pair twice
	// Interfaces are the host's interfaces (ID and HostID unset): per
	// type present, exactly one Main. An empty Port takes the type's
	// default.
	Interfaces []Interface
	// TLS is the host's encryption settings; the zero value means
	// DefaultHostTLS.
	TLS HostTLS
	// Description is the host's description, up to 65535 characters.
	Description string
	// IPMI is the host's IPMI settings; the zero value means
	// DefaultHostIPMI.
	IPMI HostIPMI
	// Inventory is the host's inventory; nil: disabled.
	Inventory *HostInventory
	// Template makes a template (Zabbix's host of status 3): it has no
	// interfaces, no encryption settings and may have no group (the API
	// asks for one, as Zabbix does; templates imported before version
	// 25 had none). UUID is its uuid; "" makes one up.
	Template bool
	UUID     string
}

// HostUpdate changes the fields of host ID that are set; nil fields keep
// their value.
type HostUpdate struct {
	ID   uint64
	Host *string
	// Name is the visible name; "" means the technical name. If Host
	// changes, Name is nil and the visible name equalled the old
	// technical name, the visible name follows the new one.
	Name    *string
	Enabled *bool
	// GroupIDs, if not nil, is the complete new membership: at least one
	// existing group.
	GroupIDs []uint64
	// Tags, if not nil, replaces the host's tags (an empty slice removes
	// them all).
	Tags *[]Tag
	// Interfaces, if not nil, replaces the host's interfaces, as Zabbix's
	// host.update does: an element with the ID of one of the host's
	// interfaces updates it (keeping the ID), one with ID 0 is created,
	// and interfaces not listed are deleted, which is refused while an
	// item uses them (InterfaceInUse).
	Interfaces *[]Interface
	// TLS, if not nil, changes the host's encryption settings: the
	// fields it sets, applied to the host's current settings within the
	// edit (so concurrent updates of different fields do not undo each
	// other).
	TLS *HostTLSPatch
	// Description, if not nil, is the new description.
	Description *string
	// IPMI, if not nil, is the host's new IPMI settings (all of them).
	IPMI *HostIPMI
	// Inventory, if not nil, is the host's new inventory (mode and all
	// fields; mode -1 disables it and drops the fields).
	Inventory *HostInventory
}

// HostTLSPatch changes the fields of a host's encryption settings that
// are set. Settings that no longer use a pre-shared key drop the host's
// identity and key, as Zabbix 6.0's host.update does.
type HostTLSPatch struct {
	Connect, Accept *uint8
	Issuer, Subject *string
	PSKIdentity     *string
	PSK             *zbxpsk.Secret
}

// SetTLS is the patch that sets all of t.
func SetTLS(t HostTLS) *HostTLSPatch {
	return &HostTLSPatch{Connect: &t.Connect, Accept: &t.Accept, Issuer: &t.Issuer, Subject: &t.Subject, PSKIdentity: &t.PSKIdentity, PSK: &t.PSK}
}

// Apply returns cur with p's fields.
func (p *HostTLSPatch) Apply(cur HostTLS) HostTLS { return p.apply(cur) }

// apply returns cur with p's fields.
func (p *HostTLSPatch) apply(cur HostTLS) HostTLS {
	if p.Connect != nil {
		cur.Connect = *p.Connect
	}
	if p.Accept != nil {
		cur.Accept = *p.Accept
	}
	if p.Issuer != nil {
		cur.Issuer = *p.Issuer
	}
	if p.Subject != nil {
		cur.Subject = *p.Subject
	}
	if p.PSKIdentity != nil {
		cur.PSKIdentity = *p.PSKIdentity
	}
	if p.PSK != nil {
		cur.PSK = *p.PSK
	}
	if !cur.UsesPSK() {
		cur.PSKIdentity, cur.PSK = "", ""
	}
	return cur
}

// eachHost calls fn with every current host and template until fn
// returns false.
func (e *Edit) eachHost(fn func(h *Host) bool) {
	for _, part := range []*Snapshot{e.old, e.old.part()} {
		for i := range part.hosts {
			if h := e.host(part.hosts[i].ID); h != nil && !fn(h) {
				return
			}
		}
	}
	for _, id := range e.newHosts {
		if h := e.host(id); h != nil && !fn(h) {
			return
		}
	}
}

// editableHost returns the overlay copy of host id, making it from the
// old snapshot if needed. e.hosts must be initialised.
func (e *Edit) editableHost(id uint64) *Host {
	if h, ok := e.hosts[id]; ok {
		return h
	}
	o := e.oldHost(id)
	h := &Host{ID: o.ID, Host: o.Host, Name: o.Name, Enabled: o.Enabled, GroupIDs: o.GroupIDs, Tags: o.Tags, Interfaces: o.Interfaces, Description: o.Description,
		IsTemplate: o.IsTemplate, ProxyID: o.ProxyID, Extra: o.Extra}
	e.hosts[id] = h
	return h
}

// checkGroups validates a host's group list, reporting to el under p.
func (e *Edit) checkGroups(p string, groups []uint64, el *errList) {
	if len(groups) == 0 {
		el.addf(p, "cannot be empty: a host needs at least one host group")
		return
	}
	seen := make(map[uint64]bool, len(groups))
	for j, g := range groups {
		f := p + "[" + strconv.Itoa(j) + "]"
		switch {
		case seen[g]:
			el.addf(f, "group %d is listed twice", g)
		case e.group(g) == nil:
			el.add(f, notFound("host group", g))
		}
		seen[g] = true
	}
}

// checkTags validates a host's tags, reporting to el under p.
func checkTags(p string, tags []Tag, el *errList) {
	seen := make(map[Tag]bool, len(tags))
	for j, t := range tags {
		f := p + "[" + strconv.Itoa(j) + "]"
		switch {
		case t.Tag == "":
			el.addf(f+".tag", "cannot be empty")
		case seen[t]:
			el.addf(f, "tag %q with value %q is listed twice", t.Tag, t.Value)
		default:
			if err := checkText(t.Tag, maxTagLen); err != nil {
				el.add(f+".tag", err)
			}
			if err := checkText(t.Value, maxTagLen); err != nil {
				el.add(f+".value", err)
			}
		}
		seen[t] = true
	}
}

// cloneTags copies tags with their strings, nil for none.
func cloneTags(tags []Tag) []Tag {
	if len(tags) == 0 {
		return nil
	}
	out := make([]Tag, len(tags))
	for i, t := range tags {
		out[i] = Tag{Tag: strings.Clone(t.Tag), Value: strings.Clone(t.Value)}
	}
	return out
}

// writeTags inserts a host's tags.
func (e *Edit) writeTags(h *Host) error {
	for _, t := range h.Tags {
		if _, err := e.exec("INSERT INTO host_tags (host_id, tag, value) VALUES (?, ?, ?)", h.ID, t.Tag, t.Value); err != nil {
			return e.fail(fmt.Errorf("cannot tag host %q: %w", h.Host, err))
		}
	}
	return nil
}

// CreateHosts creates hosts and returns their IDs in the same order.
func (e *Edit) CreateHosts(hosts []NewHost) ([]uint64, error) {
	if e.err != nil {
		return nil, e.err
	}
	var el errList
	names := make(map[string]bool, len(hosts))
	visible := make(map[string]bool, len(hosts))
	ifaces := make([][]Interface, len(hosts))
	tlss := make([]HostTLS, len(hosts)) // the caller's slice is not written
	for i := range hosts {
		nh := &hosts[i]
		p := "hosts[" + strconv.Itoa(i) + "]"
		if err := checkHostName(nh.Host); err != nil {
			el.add(p+".host", err)
		} else if names[nh.Host] {
			el.add(p+".host", &ConflictError{Kind: HostExists, Host: nh.Host, Template: nh.Template})
		} else if other := e.hostByName(nh.Host); other != 0 {
			el.add(p+".host", &ConflictError{Kind: HostExists, Host: nh.Host, Template: e.host(other).IsTemplate})
		}
		names[nh.Host] = true
		vis := cmp.Or(nh.Name, nh.Host)
		if err := checkText(vis, maxHostNameLen); err != nil {
			el.add(p+".name", err)
		} else if visible[vis] {
			el.add(p+".name", &ConflictError{Kind: VisibleNameExists, Host: nh.Host, Name: vis, Template: nh.Template})
		} else if other := e.hostByVisible(vis); other != 0 {
			el.add(p+".name", &ConflictError{Kind: VisibleNameExists, Host: nh.Host, Name: vis, Template: e.host(other).IsTemplate})
		}
		visible[vis] = true
		if !nh.Template || len(nh.GroupIDs) > 0 {
			e.checkGroups(p+".groups", nh.GroupIDs, &el)
		}
		if nh.Template && (len(nh.Interfaces) > 0 || nh.TLS != (HostTLS{})) {
			el.addf(p, "a template has no interfaces and no encryption settings")
		}
		checkTags(p+".tags", nh.Tags, &el)
		if err := checkText(nh.Description, maxHostDescLen); err != nil {
			el.add(p+".description", err)
		}
		for j := range nh.Interfaces {
			if nh.Interfaces[j].ID != 0 {
				el.addf(p+".interfaces["+strconv.Itoa(j)+"].interfaceid", "a new host has no interfaces to keep: leave the ID out")
			}
		}
		ifaces[i] = e.checkIfaces(p+".interfaces", nh.Host, 0, nh.Interfaces, &el)
		tlss[i] = nh.TLS
		if tlss[i] == (HostTLS{}) {
			tlss[i] = DefaultHostTLS
		}
		if err := tlss[i].CheckSupported(); err != nil {
			el.add(p+".tls", err)
		}
		if err := nh.IPMI.Check(); err != nil {
			el.add(p+".ipmi", err)
		}
		if nh.Inventory != nil {
			if err := nh.Inventory.Check(); err != nil {
				el.add(p+".inventory", err)
			}
		}
	}
	if err := el.err(); err != nil {
		return nil, err
	}
	initMap(&e.hosts)
	initMap(&e.hostName)
	ids := make([]uint64, len(hosts))
	for i := range hosts {
		nh := &hosts[i]
		h := &Host{Host: strings.Clone(nh.Host), Enabled: !nh.Disabled, GroupIDs: slices.Clone(nh.GroupIDs), Tags: cloneTags(nh.Tags), Description: strings.Clone(nh.Description),
			Extra: &HostExtra{TLS: cloneTLS(tlss[i]), IPMI: cloneIPMI(nh.IPMI), Inventory: cloneInventory(nh.Inventory)}}
		if h.Ext().IPMI == (HostIPMI{}) {
			h.MutExt().IPMI = DefaultHostIPMI
		}
		h.Name = h.Host
		if nh.Name != "" && nh.Name != nh.Host {
			h.Name = strings.Clone(nh.Name)
		}
		if nh.Template {
			h.IsTemplate, h.Enabled, h.MutExt().UUID = true, true, cmp.Or(strings.Clone(nh.UUID), NewUUID())
		}
		slices.Sort(h.GroupIDs)
		id, err := e.exec("INSERT INTO hosts (host, name, status, tls_connect, tls_accept, tls_issuer, tls_subject, tls_psk_identity, tls_psk, description, uuid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			h.Host, h.Name, hostStatus(h), h.Ext().TLS.Connect, h.Ext().TLS.Accept, h.Ext().TLS.Issuer, h.Ext().TLS.Subject, h.Ext().TLS.PSKIdentity, string(h.Ext().TLS.PSK), h.Description, h.Ext().UUID)
		if err != nil {
			return nil, e.fail(fmt.Errorf("cannot create host %q: %w", h.Host, err))
		}
		h.ID = id
		for _, g := range h.GroupIDs {
			if _, err := e.exec("INSERT INTO hosts_groups (host_id, group_id) VALUES (?, ?)", id, g); err != nil {
				return nil, e.fail(fmt.Errorf("cannot add host %q to group %d: %w", h.Host, g, err))
			}
		}
		if err := e.writeTags(h); err != nil {
			return nil, err
		}
		if err := writeHostIPMI(e.editExec, id, h.Ext().IPMI, false); err != nil {
			return nil, e.fail(fmt.Errorf("cannot store the IPMI settings of host %q: %w", h.Host, err))
		}
		if err := writeHostInventory(e.editExec, id, h.Ext().Inventory, false); err != nil {
			return nil, e.fail(fmt.Errorf("cannot store the inventory of host %q: %w", h.Host, err))
		}
		if h.IsTemplate {
			e.res.TemplatesCreated++
		}
		var err2 error
		if h.Interfaces, err2 = e.writeIfaces(h, nil, ifaces[i]); err2 != nil {
			return nil, err2
		}
		e.hosts[id] = h
		e.hostName[h.Host] = id
		e.setVisible("", h.Name, id)
		e.newHosts = append(e.newHosts, id)
		ids[i] = id
	}
	e.res.HostsCreated += len(hosts)
	return ids, nil
}

// hostStatus is the status column of h: Zabbix's 0 monitored, 1 not
// monitored, 3 template.
func hostStatus(h *Host) int64 {
	if h.IsTemplate {
		return statusTemplate
	}
	return status(h.Enabled)
}

// UpdateHosts changes hosts.
func (e *Edit) UpdateHosts(hosts []HostUpdate) error {
	if e.err != nil {
		return e.err
	}
	var el errList
	ids := make([]uint64, len(hosts))
	// The new state of each host, validated as a whole.
	next := make([]Host, len(hosts))
	names := make(map[string]bool, len(hosts))
	visible := make(map[string]bool, len(hosts))
	for i := range hosts {
		u := &hosts[i]
		ids[i] = u.ID
		p := "hosts[" + strconv.Itoa(i) + "]"
		cur := e.host(u.ID)
		if cur == nil {
			el.add(p+".id", notFound("host", u.ID))
			continue
		}
		n := Host{ID: cur.ID, Host: cur.Host, Name: cur.Name, Enabled: cur.Enabled, GroupIDs: cur.GroupIDs, Tags: cur.Tags, Description: cur.Description,
			IsTemplate: cur.IsTemplate, ProxyID: cur.ProxyID, Extra: cur.Extra}
		if u.Inventory != nil {
			n.MutExt().Inventory = u.Inventory
			if err := u.Inventory.Check(); err != nil {
				el.add(p+".inventory", err)
			}
		}
		if u.IPMI != nil {
			n.MutExt().IPMI = *u.IPMI
			if err := n.Ext().IPMI.Check(); err != nil {
				el.add(p+".ipmi", err)
			}
		}
		if u.TLS != nil {
			n.MutExt().TLS = u.TLS.apply(cur.Ext().TLS)
			if err := n.Ext().TLS.CheckSupported(); err != nil {
				el.add(p+".tls", err)
			}
		}
		if u.Host != nil && *u.Host != cur.Host {
			n.Host = *u.Host
			if err := checkHostName(n.Host); err != nil {
				el.add(p+".host", err)
			} else if other := e.hostByName(n.Host); names[n.Host] || other != 0 && other != u.ID {
				el.add(p+".host", &ConflictError{Kind: HostExists, Host: n.Host, Template: other != 0 && e.host(other).IsTemplate})
			}
			if u.Name == nil && cur.Name == cur.Host {
				n.Name = n.Host
			}
		}
		names[n.Host] = true
		if u.Name != nil {
			n.Name = cmp.Or(*u.Name, n.Host)
		}
		if n.Name != cur.Name {
			if err := checkText(n.Name, maxHostNameLen); err != nil {
				el.add(p+".name", err)
			} else if other := e.hostByVisible(n.Name); visible[n.Name] || other != 0 && other != u.ID {
				el.add(p+".name", &ConflictError{Kind: VisibleNameExists, Host: n.Host, Name: n.Name, Template: other != 0 && e.host(other).IsTemplate})
			}
		}
		visible[n.Name] = true
		if u.Enabled != nil {
			n.Enabled = *u.Enabled
		}
		if u.Description != nil {
			n.Description = *u.Description
			if err := checkText(n.Description, maxHostDescLen); err != nil {
				el.add(p+".description", err)
			}
		}
		if u.GroupIDs != nil && (!cur.IsTemplate || len(u.GroupIDs) > 0) {
			e.checkGroups(p+".groups", u.GroupIDs, &el)
			n.GroupIDs = slices.Sorted(slices.Values(u.GroupIDs))
		}
		if u.Tags != nil {
			checkTags(p+".tags", *u.Tags, &el)
			n.Tags = *u.Tags
		}
		n.Interfaces = cur.Interfaces
		if u.Interfaces != nil {
			n.Interfaces = e.checkIfaces(p+".interfaces", n.Host, n.ID, *u.Interfaces, &el)
		}
		next[i] = n
	}
	dupIDs("hosts", ids, &el)
	if err := el.err(); err != nil {
		return err
	}
	initMap(&e.hosts)
	initMap(&e.hostName)
	for i := range next {
		n := &next[i]
		cur := e.host(n.ID)
		rowChanged := n.Host != cur.Host || n.Name != cur.Name || n.Enabled != cur.Enabled || n.Ext().TLS != cur.Ext().TLS || n.Description != cur.Description
		groupsChanged := !slices.Equal(n.GroupIDs, cur.GroupIDs)
		tagsChanged := !slices.Equal(n.Tags, cur.Tags)
		ifacesChanged := !sameIfaces(n.Interfaces, cur.Interfaces)
		ipmiChanged := n.Ext().IPMI != cur.Ext().IPMI
		invChanged := !sameInventory(n.Ext().Inventory, cur.Ext().Inventory)
		if !rowChanged && !groupsChanged && !tagsChanged && !ifacesChanged && !ipmiChanged && !invChanged {
			continue
		}
		if invChanged {
			n.MutExt().Inventory = cloneInventory(n.Ext().Inventory)
			if err := writeHostInventory(e.editExec, n.ID, n.Ext().Inventory, true); err != nil {
				return e.fail(fmt.Errorf("cannot update the inventory of host %q: %w", cur.Host, err))
			}
		} else {
			// The same inventory in other words (a disabled one given as
			// Mode -1 where the host has none): the host keeps its own.
			n.MutExt().Inventory = cur.Ext().Inventory
		}
		if ipmiChanged {
			n.MutExt().IPMI = cloneIPMI(n.Ext().IPMI)
			if err := writeHostIPMI(e.editExec, n.ID, n.Ext().IPMI, true); err != nil {
				return e.fail(fmt.Errorf("cannot update the IPMI settings of host %q: %w", cur.Host, err))
			}
		}
		if !tagsChanged {
			n.Tags = cur.Tags // not the caller's slice
		}
		if rowChanged {
			if n.Host != cur.Host {
				n.Host = strings.Clone(n.Host)
			}
			if n.Name == n.Host {
				n.Name = n.Host
			} else if n.Name != cur.Name {
				n.Name = strings.Clone(n.Name)
			}
			if n.Ext().TLS != cur.Ext().TLS {
				n.MutExt().TLS = cloneTLS(n.Ext().TLS)
			}
			if n.Description != cur.Description {
				n.Description = strings.Clone(n.Description)
			}
			if _, err := e.exec("UPDATE hosts SET host = ?, name = ?, status = ?, tls_connect = ?, tls_accept = ?, tls_issuer = ?, tls_subject = ?, tls_psk_identity = ?, tls_psk = ?, description = ? WHERE id = ?",
				n.Host, n.Name, hostStatus(n), n.Ext().TLS.Connect, n.Ext().TLS.Accept, n.Ext().TLS.Issuer, n.Ext().TLS.Subject, n.Ext().TLS.PSKIdentity, string(n.Ext().TLS.PSK), n.Description, n.ID); err != nil {
				return e.fail(fmt.Errorf("cannot update host %q: %w", cur.Host, err))
			}
		}
		if groupsChanged {
			if _, err := e.exec("DELETE FROM hosts_groups WHERE host_id = ?", n.ID); err != nil {
				return e.fail(fmt.Errorf("cannot update the groups of host %q: %w", cur.Host, err))
			}
			for _, g := range n.GroupIDs {
				if _, err := e.exec("INSERT INTO hosts_groups (host_id, group_id) VALUES (?, ?)", n.ID, g); err != nil {
					return e.fail(fmt.Errorf("cannot add host %q to group %d: %w", cur.Host, g, err))
				}
			}
		}
		if tagsChanged {
			n.Tags = cloneTags(n.Tags)
			if _, err := e.exec("DELETE FROM host_tags WHERE host_id = ?", n.ID); err != nil {
				return e.fail(fmt.Errorf("cannot update the tags of host %q: %w", cur.Host, err))
			}
			if err := e.writeTags(n); err != nil {
				return err
			}
		}
		if ifacesChanged {
			var err error
			if n.Interfaces, err = e.writeIfaces(n, cur.Interfaces, n.Interfaces); err != nil {
				return err
			}
		} else {
			n.Interfaces = cur.Interfaces
		}
		if n.Host != cur.Host {
			e.hostName[cur.Host] = 0
			e.hostName[n.Host] = n.ID
		}
		if n.Name != cur.Name {
			e.setVisible(cur.Name, n.Name, n.ID)
		}
		from := cur.Host
		h := e.editableHost(n.ID)
		h.Host, h.Name, h.Enabled, h.GroupIDs, h.Tags, h.Interfaces, h.Description = n.Host, n.Name, n.Enabled, n.GroupIDs, n.Tags, n.Interfaces, n.Description
		x, nx := h.MutExt(), n.Ext()
		x.TLS, x.IPMI, x.Inventory = nx.TLS, nx.IPMI, nx.Inventory
		if n.Host != from {
			if err := e.retextHostTriggers(n.ID, from, n.Host); err != nil {
				return err
			}
		}
		e.res.HostsUpdated++
	}
	return nil
}

// DeleteHosts deletes hosts with all their items.
func (e *Edit) DeleteHosts(ids []uint64) error {
	if e.err != nil {
		return e.err
	}
	var el errList
	for i, id := range ids {
		if e.host(id) == nil {
			el.add("hosts["+strconv.Itoa(i)+"]", notFound("host", id))
		}
	}
	dupIDs("hosts", ids, &el)
	if err := el.err(); err != nil {
		return err
	}
	// The hosts their rules discovered go with them.
	for _, id := range ids {
		var rules []uint64
		for _, it := range e.hostItems(id) {
			if it.Ext().LLD != nil {
				rules = append(rules, it.ID)
			}
		}
		if hs := e.hostsDiscoveredBy(rules); len(hs) > 0 {
			if err := e.DeleteHosts(slices.DeleteFunc(hs, func(h uint64) bool { return slices.Contains(ids, h) || e.host(h) == nil })); err != nil {
				return err
			}
		}
	}
	for _, id := range ids {
		if h := e.host(id); h.IsTemplate {
			if err := e.deleteTemplate(h); err != nil {
				return err
			}
		}
	}
	initMap(&e.hosts)
	initMap(&e.hostName)
	e.itemsGone = true
	for _, id := range ids {
		h := e.host(id)
		for _, q := range []string{
			"DELETE FROM item_http WHERE item_id IN (SELECT id FROM items WHERE host_id = ?)",
			"DELETE FROM item_login WHERE item_id IN (SELECT id FROM items WHERE host_id = ?)",
			"DELETE FROM item_jmx WHERE item_id IN (SELECT id FROM items WHERE host_id = ?)",
			"DELETE FROM item_odbc WHERE item_id IN (SELECT id FROM items WHERE host_id = ?)",
			"DELETE FROM item_parameters WHERE item_id IN (SELECT id FROM items WHERE host_id = ?)",
			"DELETE FROM item_tags WHERE item_id IN (SELECT id FROM items WHERE host_id = ?)",
			"DELETE FROM item_ipmi WHERE item_id IN (SELECT id FROM items WHERE host_id = ?)",
			"DELETE FROM item_lld WHERE item_id IN (SELECT id FROM items WHERE host_id = ?)",
			"DELETE FROM item_discovery WHERE item_id IN (SELECT id FROM items WHERE host_id = ?)",
			"DELETE FROM host_ipmi WHERE host_id = ?",
			"DELETE FROM host_inventory WHERE host_id = ?",
			"DELETE FROM host_proxy WHERE host_id = ?",
			"DELETE FROM host_discovery WHERE host_id = ?",
			"DELETE FROM items WHERE host_id = ?",
			"DELETE FROM valuemaps WHERE host_id = ?",
			"DELETE FROM hosts_groups WHERE host_id = ?",
			"DELETE FROM host_tags WHERE host_id = ?",
			"DELETE FROM interfaces WHERE host_id = ?",
			"DELETE FROM usermacros WHERE owner_id = ?",
			"DELETE FROM template_links WHERE owner_id = ?1 OR template_id = ?1",
			"DELETE FROM hosts WHERE id = ?",
		} {
			if _, err := e.exec(q, id); err != nil {
				return e.fail(fmt.Errorf("cannot delete host %q: %w", h.Host, err))
			}
		}
		e.hostName[h.Host] = 0
		e.setVisible(h.Name, "", id)
		e.hosts[id] = nil
		e.dropOwner(id)
		// Its items vanish with it: item and itemByKey check the host,
		// and build leaves them out. Key overlay entries are left: the
		// host ID is never reused.
	}
	e.res.HostsDeleted += len(ids)
	return nil
}

// cloneIPMI copies p's strings: the caller's must not be retained.
func cloneIPMI(p HostIPMI) HostIPMI {
	p.Username, p.Password = strings.Clone(p.Username), strings.Clone(p.Password)
	return p
}

// cloneTLS copies t's strings: the caller's must not be retained.
func cloneTLS(t HostTLS) HostTLS {
	t.Issuer, t.Subject = strings.Clone(t.Issuer), strings.Clone(t.Subject)
	t.PSKIdentity, t.PSK = strings.Clone(t.PSKIdentity), zbxpsk.Secret(strings.Clone(string(t.PSK)))
	return t
}
