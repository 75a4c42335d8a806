package catalog

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// ApplyResult counts what an Apply did. Unchanged counts hosts and items
// of the spec that already matched it.
type ApplyResult struct {
	GroupsCreated int
	HostsCreated  int
	HostsUpdated  int
	ItemsCreated  int
	ItemsUpdated  int
	Unchanged     int
	// NotPolled counts agent items of the spec whose host has no agent
	// interface: they are stored (import files written before interfaces
	// existed stay valid) but cannot be polled until the host gets one.
	// The edit API refuses such items, as Zabbix does.
	NotPolled int
	// TriggersCreated and TriggersUpdated count the spec's triggers
	// (written in a second transaction, after hosts and items).
	TriggersCreated, TriggersUpdated int
	// TemplatesCreated and TemplatesUpdated count templates;
	// MacrosChanged the hosts, templates and the global scope whose
	// macros or linked templates changed (a later transaction still).
	TemplatesCreated, TemplatesUpdated, MacrosChanged int
	// ValueMapsCreated and ValueMapsUpdated count the spec's value maps
	// created and changed.
	ValueMapsCreated, ValueMapsUpdated int
	// GraphsCreated ... count graphs (copies included) and templates'
	// dashboards.
	GraphsCreated, GraphsUpdated, DashboardsCreated, DashboardsUpdated int
	// MediaTypesCreated and MediaTypesUpdated count an import's media
	// types (those an update leaves as they were not).
	MediaTypesCreated, MediaTypesUpdated int
}

// Changed reports whether the Apply changed anything.
func (r ApplyResult) Changed() bool {
	return r.GroupsCreated+r.HostsCreated+r.HostsUpdated+r.ItemsCreated+r.ItemsUpdated+r.TriggersCreated+r.TriggersUpdated+
		r.TemplatesCreated+r.TemplatesUpdated+r.MacrosChanged+
		r.ValueMapsCreated+r.ValueMapsUpdated+r.GraphsCreated+r.GraphsUpdated+r.DashboardsCreated+r.DashboardsUpdated+
		r.MediaTypesCreated+r.MediaTypesUpdated > 0
}

// ctxCheckEvery is how many rows Apply writes between checks of its
// context. The statements themselves run without the context: the SQLite
// driver starts a goroutine per statement for a cancellable context, which
// would cost more than the insert itself.
const ctxCheckEvery = 1024

// Apply makes the catalog match spec: groups, hosts and items in spec are
// created or updated (fields omitted from spec take their defaults), and
// everything not in spec is left alone; Apply never deletes. It validates
// spec first and writes nothing if it is invalid.
//
// All changes are written in one SQLite transaction, which is durable when
// Apply returns nil, and then published as one new snapshot. If nothing
// changes, nothing is written, the snapshot and its version stay as they
// are, and subscribers are not signalled, so applying the same spec twice
// is cheap and the second result has zero created and updated. An
// updated item or host keeps its ID.
//
// Apply calls are serialised; readers are never blocked.
func (c *Catalog) Apply(ctx context.Context, spec Spec) (ApplyResult, error) {
	start := time.Now()
	ns, err := spec.normalize(true, &c.ck)
	if err != nil {
		return ApplyResult{}, err
	}
	trigs, err := spec.triggerSpecs()
	if err != nil {
		return ApplyResult{}, err
	}
	sm, err := spec.macroSpecs()
	if err != nil {
		return ApplyResult{}, err
	}
	vms, err := spec.valueMapSpecs()
	if err != nil {
		return ApplyResult{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ApplyResult{}, ErrClosed
	}
	if c.broken != nil {
		return ApplyResult{}, fmt.Errorf("catalog: refusing to apply until restarted: %w", c.broken)
	}
	old := c.snap.Load()
	p, err := diff(old, &ns)
	if err != nil {
		return ApplyResult{}, err
	}
	if p.res.NotPolled > 0 {
		c.log.Warn("agent items without an agent interface on their host will not be polled: add interfaces to the hosts",
			"items", p.res.NotPolled, "first", p.notPolled)
	}
	if !p.res.Changed() {
		return c.applyRest(ctx, p.res, trigs, vms, sm)
	}
	if err := c.write(ctx, old, p); err != nil {
		// database/sql rolls the transaction back when ctx ends, so a
		// statement may fail with "transaction has already been rolled
		// back" before write notices ctx: report the cause.
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
			err = fmt.Errorf("%w: %v", cerr, err)
		}
		return ApplyResult{}, fmt.Errorf("catalog: apply failed, nothing was changed: %w", err)
	}
	written := time.Now()
	next, err := p.build(old)
	if err != nil {
		// Only a bug gets here: the input is a valid snapshot plus a
		// validated spec. The database has the change, so read it back
		// rather than leave a snapshot that no longer matches it.
		c.log.Error("BUG: cannot build the snapshot after apply; reloading from the database", "err", err)
		if next, err = loadSnapshot(context.WithoutCancel(ctx), c.db); err != nil {
			c.broken = fmt.Errorf("changes were written but the snapshot cannot be rebuilt: %w", err)
			return ApplyResult{}, fmt.Errorf("catalog: %w", c.broken)
		}
	}
	c.publish(next)
	c.log.Info("catalog applied", "revision", next.Version(),
		"groups_created", p.res.GroupsCreated, "hosts_created", p.res.HostsCreated,
		"hosts_updated", p.res.HostsUpdated, "items_created", p.res.ItemsCreated,
		"items_updated", p.res.ItemsUpdated, "unchanged", p.res.Unchanged,
		"write_duration", written.Sub(start), "build_duration", time.Since(written))
	return c.applyRest(ctx, p.res, trigs, vms, sm)
}

// applyRest applies what needs the hosts in the snapshot first: the
// value maps and triggers, then macros and templates.
func (c *Catalog) applyRest(ctx context.Context, res ApplyResult, trigs []specTrigger, vms []specValueMaps, sm specMacros) (ApplyResult, error) {
	res, err := c.applyTriggersAfter(ctx, res, trigs, vms)
	if err != nil {
		return res, err
	}
	return c.applyMacrosAfter(ctx, res, sm)
}

// applyTriggersAfter applies the spec's triggers once its hosts and items
// are in the snapshot, so that expressions may reference items the same
// spec created. It is a second transaction: a crash between the two
// leaves the items without the triggers, and applying the spec again
// completes it. c.mu is held.
//
// Value maps go first, the same way (a second transaction): items name
// them by name, and the maps may be new.
func (c *Catalog) applyTriggersAfter(ctx context.Context, res ApplyResult, trigs []specTrigger, vms []specValueMaps) (ApplyResult, error) {
	var err error
	if len(vms) > 0 {
		res.ValueMapsCreated, res.ValueMapsUpdated, err = c.applyValueMaps(ctx, vms)
		if err != nil {
			return ApplyResult{}, fmt.Errorf("catalog: hosts and items were applied, value maps were not: %w", err)
		}
	}
	if len(trigs) == 0 {
		return res, nil
	}
	res.TriggersCreated, res.TriggersUpdated, err = c.applyTriggerSpecs(ctx, trigs)
	if err != nil {
		return ApplyResult{}, fmt.Errorf("catalog: hosts and items were applied, triggers were not: %w", err)
	}
	return res, nil
}

// plan is the difference between a snapshot and a spec: what Apply must
// write. IDs of new rows are filled in by write.
type plan struct {
	res       ApplyResult
	notPolled string  // "host: key" of the first NotPolled item, for the log
	newGroups []Group // ID set by write
	hosts     []hostChange
	creates   []*Item     // new items, in the normSpec; HostID set by write for new hosts
	createOn  []int32     // per create: index into hosts if the host is new, else -1
	updates   []itemPatch // changed items
	// createPH[i] is the placeholder ID that dependent items of this
	// plan carry in MasterItemID for creates[i] until write inserts it
	// (see placeholderIface), 0 if none refers to it. Creates are
	// ordered so that a master is inserted before its dependents.
	createPH []uint64
}

type hostChange struct {
	h           Host     // new state; ID 0 until write for a new host
	groups      []string // wanted group names
	isNew       bool
	rowChanged  bool // name or status differ (existing hosts)
	groupsDiffs bool // membership differs (existing hosts)
	// ifacesDiffs is set if h.Interfaces differ from oldIfaces; new
	// interfaces in h.Interfaces carry a placeholder ID (see
	// placeholderIface) until write inserts them.
	ifacesDiffs bool
	oldIfaces   []Interface
}

// placeholderIface is the first placeholder ID diff gives an interface it
// plans to create, so that items can refer to it before it has an ID;
// write replaces placeholders with the IDs SQLite assigns. SQLite IDs
// never reach 2^63.
const placeholderIface = 1 << 63

type itemPatch struct{ it Item }

// diff computes the plan without touching the database. It fails if the
// spec conflicts with the catalog: an agent item on a host without an
// agent interface, an item naming an interface the host does not have,
// an interface removed while items use it.
func diff(old *Snapshot, ns *normSpec) (*plan, error) {
	p := &plan{}
	var el errList
	nextPlaceholder := uint64(placeholderIface)
	for _, g := range ns.groups {
		if old.groupByName[g] == nil {
			p.newGroups = append(p.newGroups, Group{Name: g})
		}
	}
	p.res.GroupsCreated = len(p.newGroups)
	for i := range ns.hosts {
		nh := &ns.hosts[i]
		oh := old.hostByName.get(nh.host)
		hp := "hosts[" + strconv.Itoa(i) + "]"
		if old.TemplateByName(nh.host) != nil {
			el.add(hp+".host", &ConflictError{Kind: HostExists, Host: nh.host, Template: true})
			continue
		}
		var cur []Interface
		if oh != nil {
			cur = oh.Interfaces
		}
		ifaces, ifacesDiffs := cur, false
		if nh.ifacesSet {
			ifaces, ifacesDiffs = matchIfaces(cur, nh.ifaces, &nextPlaceholder)
		}
		var phOf map[*Item]uint64
		if nh.hasMasters {
			phOf = resolveMasters(old, oh, nh, hp, &nextPlaceholder, &el)
		}
		// The interfaces items are checked against: the host's new list.
		tmp := &Host{Host: nh.host, Interfaces: ifaces}
		for j := range nh.items {
			if itemIface(&nh.items[j], tmp, nh.itemIface[j], hp+".items["+strconv.Itoa(j)+"]", "interface", true, &el) {
				p.res.NotPolled++
				if p.notPolled == "" {
					p.notPolled = nh.host + ": " + nh.items[j].Key
				}
			}
		}
		if oh == nil {
			p.hosts = append(p.hosts, hostChange{
				h:      Host{Host: nh.host, Name: nh.name, Enabled: nh.enabled, Interfaces: ifaces, Extra: &HostExtra{TLS: newHostTLS(nh), IPMI: DefaultHostIPMI}},
				groups: nh.groups, isNew: true, ifacesDiffs: len(ifaces) > 0,
			})
			p.res.HostsCreated++
			hc := int32(len(p.hosts) - 1)
			for j := range nh.items {
				p.creates = append(p.creates, &nh.items[j])
				p.createOn = append(p.createOn, hc)
				p.createPH = append(p.createPH, phOf[&nh.items[j]])
			}
			p.res.ItemsCreated += len(nh.items)
			continue
		}
		hc := hostChange{h: *oh, groups: nh.groups, ifacesDiffs: ifacesDiffs, oldIfaces: cur}
		hc.h.Name, hc.h.Enabled, hc.h.Interfaces = nh.name, nh.enabled, ifaces
		if nh.tlsSet {
			hc.h.MutExt().TLS = nh.tls
		}
		hc.rowChanged = oh.Name != nh.name || oh.Enabled != nh.enabled || hc.h.Ext().TLS != oh.Ext().TLS
		hc.groupsDiffs = !sameGroups(old, oh.GroupIDs, nh.groups)
		if ifacesDiffs {
			checkIfacesInUse(oh, nh, ifaces, hp+".interfaces", &el)
		}
		if hc.rowChanged || hc.groupsDiffs || hc.ifacesDiffs {
			p.hosts = append(p.hosts, hc)
			p.res.HostsUpdated++
		} else {
			p.res.Unchanged++
		}
		for j := range nh.items {
			it := &nh.items[j]
			idx := oh.lookupIndex(it.Key)
			if idx < 0 {
				it.HostID = oh.ID
				p.creates = append(p.creates, it)
				p.createOn = append(p.createOn, -1)
				p.createPH = append(p.createPH, phOf[it])
				p.res.ItemsCreated++
				continue
			}
			cur := &oh.items[idx]
			if cur.TemplateID != 0 {
				// A copy takes from its host what Zabbix lets a host
				// set; the rest is its template's.
				if f := templatedSpecField(cur, it); f != "" {
					el.add(hp+".items["+strconv.Itoa(j)+"]."+f, &TemplatedError{Kind: "item", Name: cur.Key, Field: f})
					continue
				}
				it.TemplateID, it.ValueMapID = cur.TemplateID, cur.ValueMapID
			}
			if cur.sameConfig(it) {
				p.res.Unchanged++
				continue
			}
			n := *it
			n.ID, n.HostID = cur.ID, cur.HostID
			n.Key = cur.Key // identical bytes; keep the old string shared
			// Value maps are applied after the items (applyValueMapsAfter);
			// the UPDATE leaves the column alone.
			n.ValueMapID = cur.ValueMapID
			if sameSteps(n.Preprocessing, cur.Preprocessing) {
				n.Preprocessing = cur.Preprocessing // keep the chain's identity for consumers' caches
			}
			p.updates = append(p.updates, itemPatch{it: n})
			p.res.ItemsUpdated++
		}
	}
	if err := el.err(); err != nil {
		return nil, err
	}
	p.orderCreates()
	return p, nil
}

// resolveMasters sets the MasterItemID of nh's items that name a master
// by key: the ID of the host's existing item with that key, or a
// placeholder for an item this Apply creates (returned by item, for
// write to replace). It checks that every master exists on the host and
// that the host's dependency trees stay acyclic and at most
// maxDependentLevels deep, counting the host's items the spec leaves
// alone.
func resolveMasters(old *Snapshot, oh *Host, nh *normHost, hp string, next *uint64, el *errList) map[*Item]uint64 {
	inSpec := make(map[string]int, len(nh.items))
	for j := range nh.items {
		inSpec[nh.items[j].Key] = j
	}
	existing := func(key string) *Item {
		if oh == nil {
			return nil
		}
		if i := oh.lookupIndex(key); i >= 0 {
			return &oh.items[i]
		}
		return nil
	}
	// masterKey is the key of key's master after the Apply, "" for none.
	masterKey := func(key string) string {
		if j, ok := inSpec[key]; ok {
			return nh.itemMaster[j]
		}
		if it := existing(key); it != nil && it.MasterItemID != 0 {
			if m := old.Item(it.MasterItemID); m != nil {
				return m.Key
			}
		}
		return ""
	}
	depthOK := func(key string) error {
		k := key
		for depth := 0; ; depth++ {
			mk := masterKey(k)
			if mk == "" {
				return nil
			}
			if mk == key {
				return errors.New("the master item chain would be a cycle")
			}
			if depth >= maxDependentLevels {
				return fmt.Errorf("dependent items may be at most %d levels below their master", maxDependentLevels)
			}
			k = mk
		}
	}
	phOf := map[*Item]uint64{}
	for j, mk := range nh.itemMaster {
		if mk == "" {
			continue
		}
		ip := hp + ".items[" + strconv.Itoa(j) + "].master_item"
		if m := existing(mk); m != nil {
			nh.items[j].MasterItemID = m.ID
		} else if k, ok := inSpec[mk]; ok {
			m := &nh.items[k]
			ph := phOf[m]
			if ph == 0 {
				ph = *next
				*next++
				phOf[m] = ph
			}
			nh.items[j].MasterItemID = ph
		} else {
			el.addf(ip, "master item %q is not an item of host %q", mk, nh.host)
			continue
		}
		if err := depthOK(nh.items[j].Key); err != nil {
			el.add(ip, err)
		}
	}
	if oh != nil {
		for i := range oh.items {
			it := &oh.items[i]
			if _, ok := inSpec[it.Key]; ok || it.MasterItemID == 0 {
				continue
			}
			if err := depthOK(it.Key); err != nil {
				el.addf(hp+".items", "existing item %q: %v", it.Key, err)
			}
		}
	}
	return phOf
}

// orderCreates orders p.creates (with createOn and createPH) so that
// every master created by the plan comes before its dependents: by the
// number of new masters above each item, stable otherwise.
func (p *plan) orderCreates() {
	if len(p.createPH) == 0 || !slices.ContainsFunc(p.createPH, func(ph uint64) bool { return ph != 0 }) {
		return
	}
	byPH := map[uint64]*Item{}
	for i, ph := range p.createPH {
		if ph != 0 {
			byPH[ph] = p.creates[i]
		}
	}
	level := func(it *Item) int {
		n := 0
		for it != nil && it.MasterItemID >= placeholderIface && n <= maxDependentLevels {
			it, n = byPH[it.MasterItemID], n+1
		}
		return n
	}
	idx := make([]int, len(p.creates))
	lv := make([]int, len(p.creates))
	for i := range idx {
		idx[i], lv[i] = i, level(p.creates[i])
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(lv[a], lv[b]) })
	creates, on, ph := make([]*Item, len(idx)), make([]int32, len(idx)), make([]uint64, len(idx))
	for k, i := range idx {
		creates[k], on[k], ph[k] = p.creates[i], p.createOn[i], p.createPH[i]
	}
	p.creates, p.createOn, p.createPH = creates, on, ph
}

// matchIfaces pairs the wanted interfaces with the host's current ones by
// type and address, so that re-importing a host keeps its interface IDs;
// the others get placeholder IDs from *next. It returns the new list
// sorted by ID and whether it differs from cur.
func matchIfaces(cur, want []Interface, next *uint64) ([]Interface, bool) {
	out := make([]Interface, len(want))
	used := make([]bool, len(cur))
	changed := len(cur) != len(want)
	for j, w := range want {
		w.ID = 0
		for k := range cur {
			if !used[k] && cur[k].Type == w.Type && cur[k].Addr() == w.Addr() && cur[k].UseIP == w.UseIP && cur[k].IP == w.IP && cur[k].DNS == w.DNS {
				used[k], w.ID, w.HostID = true, cur[k].ID, cur[k].HostID
				if !cur[k].sameIface(&w) {
					changed = true
				} else {
					w = cur[k] // share the old strings
				}
				break
			}
		}
		if w.ID == 0 {
			w.ID, changed = *next, true
			*next++
		}
		out[j] = w
	}
	slices.SortFunc(out, func(a, b Interface) int { return cmp.Compare(a.ID, b.ID) })
	if len(out) == 0 {
		out = nil
	}
	return out, changed
}

// checkIfacesInUse reports an interface of host oh that the spec removes
// while an item of the host (from the spec, or left alone by it) uses it.
func checkIfacesInUse(oh *Host, nh *normHost, ifaces []Interface, p string, el *errList) {
	inSpec := make(map[string]*Item, len(nh.items))
	for j := range nh.items {
		inSpec[nh.items[j].Key] = &nh.items[j]
	}
	for i := range oh.items {
		it := &oh.items[i]
		if s := inSpec[it.Key]; s != nil {
			it = s
		}
		if it.InterfaceID != 0 && it.InterfaceID < placeholderIface && findIface(ifaces, it.InterfaceID) == nil {
			el.add(p, &ConflictError{Kind: InterfaceInUse, Host: oh.Host, Name: it.Name})
			return
		}
	}
}

// sameGroups reports whether the groups with IDs ids are exactly the
// groups named names.
func sameGroups(s *Snapshot, ids []uint64, names []string) bool {
	if len(ids) != len(names) {
		return false
	}
	for _, n := range names {
		g := s.groupByName[n]
		if g == nil {
			return false
		}
		if _, ok := slices.BinarySearch(ids, g.ID); !ok {
			return false
		}
	}
	return true
}

// write executes p in one transaction and fills in the IDs of new rows.
func (c *Catalog) write(ctx context.Context, old *Snapshot, p *plan) error {
	tx, err := c.begin(ctx)
	if err != nil {
		return fmt.Errorf("cannot begin transaction: %w", err)
	}
	defer tx.Rollback()
	// Statements run without ctx (see ctxCheckEvery); the transaction
	// itself is rolled back by database/sql if ctx ends.
	rctx := context.WithoutCancel(ctx)
	prep := func(q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var s *sql.Stmt
		s, err = tx.PrepareContext(rctx, q)
		return s
	}
	var (
		insGroup  = prep("INSERT INTO host_groups (name) VALUES (?)")
		insHost   = prep("INSERT INTO hosts (host, name, status, tls_connect, tls_accept, tls_issuer, tls_subject, tls_psk_identity, tls_psk) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
		updHost   = prep("UPDATE hosts SET name = ?, status = ?, tls_connect = ?, tls_accept = ?, tls_issuer = ?, tls_subject = ?, tls_psk_identity = ?, tls_psk = ? WHERE id = ?")
		delMember = prep("DELETE FROM hosts_groups WHERE host_id = ?")
		insMember = prep("INSERT INTO hosts_groups (host_id, group_id) VALUES (?, ?)")
		insItem   = prep("INSERT INTO items (host_id, key_, name, type, value_type, units, delay, history, trends, status, interface_id, timeout, timestamp_precision, master_item_id, params, preprocessing, snmp_oid, retry_delay, description, inventory_link) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
		updItem   = prep("UPDATE items SET name = ?, type = ?, value_type = ?, units = ?, delay = ?, history = ?, trends = ?, status = ?, interface_id = ?, timeout = ?, timestamp_precision = ?, master_item_id = ?, params = ?, preprocessing = ?, snmp_oid = ?, retry_delay = ?, description = ?, inventory_link = ? WHERE id = ?")
		delHTTP   = prep("DELETE FROM item_http WHERE item_id = ?")
		insHTTP   = prep("INSERT INTO item_http (item_id, config) VALUES (?, ?)")
		delLogin  = prep("DELETE FROM item_login WHERE item_id = ?")
		insLogin  = prep("INSERT INTO item_login (item_id, config) VALUES (?, ?)")
		delJMX    = prep("DELETE FROM item_jmx WHERE item_id = ?")
		insJMX    = prep("INSERT INTO item_jmx (item_id, config) VALUES (?, ?)")
		delODBC   = prep("DELETE FROM item_odbc WHERE item_id = ?")
		insODBC   = prep("INSERT INTO item_odbc (item_id, config) VALUES (?, ?)")
		delTags   = prep("DELETE FROM item_tags WHERE item_id = ?")
		insTag    = prep("INSERT INTO item_tags (item_id, tag, value) VALUES (?, ?, ?)")
	)
	txExec := func(q string, args ...any) error {
		_, err := tx.ExecContext(rctx, q, args...)
		return err
	}
	if err != nil {
		return fmt.Errorf("cannot prepare statements: %w", err)
	}
	rows := 0
	tick := func() error {
		rows++
		if rows%ctxCheckEvery == 0 {
			return ctx.Err()
		}
		return nil
	}

	groupID := make(map[string]uint64, len(p.newGroups))
	for i := range p.newGroups {
		g := &p.newGroups[i]
		id, err := insertID(rctx, insGroup, g.Name)
		if err != nil {
			return fmt.Errorf("cannot create group %q: %w", g.Name, err)
		}
		g.ID = id
		groupID[g.Name] = id
	}
	for i := range p.hosts {
		hc := &p.hosts[i]
		h := &hc.h
		if err := tick(); err != nil {
			return err
		}
		if hc.isNew {
			id, err := insertID(rctx, insHost, h.Host, h.Name, status(h.Enabled), h.Ext().TLS.Connect, h.Ext().TLS.Accept, h.Ext().TLS.Issuer, h.Ext().TLS.Subject, h.Ext().TLS.PSKIdentity, string(h.Ext().TLS.PSK))
			if err != nil {
				return fmt.Errorf("cannot create host %q: %w", h.Host, err)
			}
			h.ID = id
		} else if hc.rowChanged {
			if _, err := updHost.ExecContext(rctx, h.Name, status(h.Enabled), h.Ext().TLS.Connect, h.Ext().TLS.Accept, h.Ext().TLS.Issuer, h.Ext().TLS.Subject, h.Ext().TLS.PSKIdentity, string(h.Ext().TLS.PSK), h.ID); err != nil {
				return fmt.Errorf("cannot update host %q: %w", h.Host, err)
			}
		}
		if !hc.isNew && !hc.groupsDiffs {
			continue
		}
		if !hc.isNew {
			if _, err := delMember.ExecContext(rctx, h.ID); err != nil {
				return fmt.Errorf("cannot update groups of host %q: %w", h.Host, err)
			}
		}
		h.GroupIDs = make([]uint64, 0, len(hc.groups))
		for _, name := range hc.groups {
			gid, ok := groupID[name]
			if !ok {
				gid = old.groupByName[name].ID
			}
			if _, err := insMember.ExecContext(rctx, h.ID, gid); err != nil {
				return fmt.Errorf("cannot add host %q to group %q: %w", h.Host, name, err)
			}
			h.GroupIDs = append(h.GroupIDs, gid)
		}
		slices.Sort(h.GroupIDs)
		if len(h.GroupIDs) == 0 {
			h.GroupIDs = nil // as loadSnapshot leaves it
		}
	}
	real, err := writeIfaces(rctx, tx, p)
	if err != nil {
		return err
	}
	writeTags := func(it *Item) error {
		for _, t := range it.Tags {
			if _, err := insTag.ExecContext(rctx, it.ID, t.Tag, t.Value); err != nil {
				return fmt.Errorf("cannot store the tags of item %q on host %d: %w", it.Key, it.HostID, err)
			}
		}
		return nil
	}
	realItem := map[uint64]uint64{}
	fix := func(it *Item) {
		if it.InterfaceID >= placeholderIface {
			it.InterfaceID = real[it.InterfaceID]
		}
		if it.MasterItemID >= placeholderIface {
			it.MasterItemID = realItem[it.MasterItemID] // inserted earlier: see orderCreates
		}
	}
	for i := range p.creates {
		it := p.creates[i]
		if err := tick(); err != nil {
			return err
		}
		if hc := p.createOn[i]; hc >= 0 {
			it.HostID = p.hosts[hc].h.ID
		}
		fix(it)
		id, err := insertID(rctx, insItem, it.HostID, it.Key, it.Name, int64(it.Type), int64(it.ValueType),
			it.Units, it.Delay, it.History, it.Trends, status(it.Enabled), it.InterfaceID, it.Ext().Timeout, it.Ext().TimestampPrecision,
			it.MasterItemID, it.Ext().Params, encodeSteps(it.Preprocessing), it.Ext().SNMPOID, it.Ext().RetryDelay, it.Ext().Description, int64(it.InventoryLink))
		if err != nil {
			return fmt.Errorf("cannot create item %q on host %d: %w", it.Key, it.HostID, err)
		}
		it.ID = id
		if ph := p.createPH[i]; ph != 0 {
			realItem[ph] = id
		}
		if it.Ext().HTTP != nil {
			if _, err := insHTTP.ExecContext(rctx, id, encodeHTTP(it.Ext().HTTP)); err != nil {
				return fmt.Errorf("cannot store the HTTP settings of item %q on host %d: %w", it.Key, it.HostID, err)
			}
		}
		if it.Ext().Login != nil {
			if _, err := insLogin.ExecContext(rctx, id, encodeLogin(it.Ext().Login)); err != nil {
				return fmt.Errorf("cannot store the login of item %q on host %d: %w", it.Key, it.HostID, err)
			}
		}
		if it.Ext().JMX != nil {
			if _, err := insJMX.ExecContext(rctx, id, encodeJMX(it.Ext().JMX)); err != nil {
				return fmt.Errorf("cannot store the JMX settings of item %q on host %d: %w", it.Key, it.HostID, err)
			}
		}
		if it.Ext().ODBC != nil {
			if _, err := insODBC.ExecContext(rctx, id, encodeODBC(it.Ext().ODBC)); err != nil {
				return fmt.Errorf("cannot store the database monitor login of item %q on host %d: %w", it.Key, it.HostID, err)
			}
		}
		if err := writeTags(it); err != nil {
			return err
		}
		if err := writeItemParams(txExec, id, it.Ext().Parameters, false); err != nil {
			return fmt.Errorf("cannot store the parameters of item %q on host %d: %w", it.Key, it.HostID, err)
		}
		if err := writeItemIPMI(txExec, id, it.Ext().IPMISensor, false); err != nil {
			return fmt.Errorf("cannot store the IPMI sensor of item %q on host %d: %w", it.Key, it.HostID, err)
		}
		if err := writeItemLogTimeFmt(txExec, id, it.Ext().LogTimeFmt, false); err != nil {
			return fmt.Errorf("cannot store the logtimefmt of item %q on host %d: %w", it.Key, it.HostID, err)
		}
		if err := writeItemTraps(txExec, id, it.Ext().Traps, false); err != nil {
			return fmt.Errorf("cannot store the allowed hosts of item %q on host %d: %w", it.Key, it.HostID, err)
		}
	}
	for i := range p.updates {
		it := &p.updates[i].it
		if err := tick(); err != nil {
			return err
		}
		fix(it)
		_, err := updItem.ExecContext(rctx, it.Name, int64(it.Type), int64(it.ValueType),
			it.Units, it.Delay, it.History, it.Trends, status(it.Enabled), it.InterfaceID, it.Ext().Timeout, it.Ext().TimestampPrecision,
			it.MasterItemID, it.Ext().Params, encodeSteps(it.Preprocessing), it.Ext().SNMPOID, it.Ext().RetryDelay, it.Ext().Description, int64(it.InventoryLink), it.ID)
		if err != nil {
			return fmt.Errorf("cannot update item %d (%q): %w", it.ID, it.Key, err)
		}
		// The HTTP row is rewritten with every change of the item: an
		// update is rare, and the comparison would need the old item here.
		if _, err := delHTTP.ExecContext(rctx, it.ID); err != nil {
			return fmt.Errorf("cannot update the HTTP settings of item %d (%q): %w", it.ID, it.Key, err)
		}
		if it.Ext().HTTP != nil {
			if _, err := insHTTP.ExecContext(rctx, it.ID, encodeHTTP(it.Ext().HTTP)); err != nil {
				return fmt.Errorf("cannot store the HTTP settings of item %d (%q): %w", it.ID, it.Key, err)
			}
		}
		// The login, the JMX settings, the database monitor login and the
		// tags likewise.
		if _, err := delLogin.ExecContext(rctx, it.ID); err != nil {
			return fmt.Errorf("cannot update the login of item %d (%q): %w", it.ID, it.Key, err)
		}
		if it.Ext().Login != nil {
			if _, err := insLogin.ExecContext(rctx, it.ID, encodeLogin(it.Ext().Login)); err != nil {
				return fmt.Errorf("cannot store the login of item %d (%q): %w", it.ID, it.Key, err)
			}
		}
		if _, err := delJMX.ExecContext(rctx, it.ID); err != nil {
			return fmt.Errorf("cannot update the JMX settings of item %d (%q): %w", it.ID, it.Key, err)
		}
		if it.Ext().JMX != nil {
			if _, err := insJMX.ExecContext(rctx, it.ID, encodeJMX(it.Ext().JMX)); err != nil {
				return fmt.Errorf("cannot store the JMX settings of item %d (%q): %w", it.ID, it.Key, err)
			}
		}
		if _, err := delODBC.ExecContext(rctx, it.ID); err != nil {
			return fmt.Errorf("cannot update the database monitor login of item %d (%q): %w", it.ID, it.Key, err)
		}
		if it.Ext().ODBC != nil {
			if _, err := insODBC.ExecContext(rctx, it.ID, encodeODBC(it.Ext().ODBC)); err != nil {
				return fmt.Errorf("cannot store the database monitor login of item %d (%q): %w", it.ID, it.Key, err)
			}
		}
		if _, err := delTags.ExecContext(rctx, it.ID); err != nil {
			return fmt.Errorf("cannot update the tags of item %d (%q): %w", it.ID, it.Key, err)
		}
		if err := writeTags(it); err != nil {
			return err
		}
		// The parameters and the IPMI sensor likewise.
		if err := writeItemParams(txExec, it.ID, it.Ext().Parameters, true); err != nil {
			return fmt.Errorf("cannot update the parameters of item %d (%q): %w", it.ID, it.Key, err)
		}
		if err := writeItemIPMI(txExec, it.ID, it.Ext().IPMISensor, true); err != nil {
			return fmt.Errorf("cannot update the IPMI sensor of item %d (%q): %w", it.ID, it.Key, err)
		}
		if err := writeItemLogTimeFmt(txExec, it.ID, it.Ext().LogTimeFmt, true); err != nil {
			return fmt.Errorf("cannot update the logtimefmt of item %d (%q): %w", it.ID, it.Key, err)
		}
		if err := writeItemTraps(txExec, it.ID, it.Ext().Traps, true); err != nil {
			return fmt.Errorf("cannot update the allowed hosts of item %d (%q): %w", it.ID, it.Key, err)
		}
	}
	if _, err := tx.ExecContext(rctx, "UPDATE catalog_meta SET revision = ? WHERE id = 1", old.version+1); err != nil {
		return fmt.Errorf("cannot bump revision: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("cannot commit: %w", err)
	}
	return nil
}

// writeIfaces writes the interface changes of p's hosts (after the hosts,
// so new hosts have IDs), sets the real IDs in the hosts' new lists and
// returns the map from placeholder to real ID.
func writeIfaces(ctx context.Context, tx *sql.Tx, p *plan) (map[uint64]uint64, error) {
	real := map[uint64]uint64{}
	for i := range p.hosts {
		hc := &p.hosts[i]
		if !hc.ifacesDiffs {
			continue
		}
		h := &hc.h
		for _, c := range hc.oldIfaces {
			if findIface(h.Interfaces, c.ID) == nil {
				if _, err := tx.ExecContext(ctx, "DELETE FROM interfaces WHERE id = ?", c.ID); err != nil {
					return nil, fmt.Errorf("cannot delete an interface of host %q: %w", h.Host, err)
				}
			}
		}
		ifaces := slices.Clone(h.Interfaces)
		for j := range ifaces {
			f := &ifaces[j]
			f.HostID = h.ID
			if f.ID >= placeholderIface {
				r, err := tx.ExecContext(ctx, "INSERT INTO interfaces (host_id, type, main, useip, ip, dns, port, details) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
					h.ID, int64(f.Type), f.Main, f.UseIP, f.IP, f.DNS, f.Port, encodeDetails(f.Details))
				if err != nil {
					return nil, fmt.Errorf("cannot create an interface of host %q: %w", h.Host, err)
				}
				id, err := r.LastInsertId()
				if err != nil {
					return nil, err
				}
				real[f.ID], f.ID = uint64(id), uint64(id)
			} else if c := findIface(hc.oldIfaces, f.ID); c == nil || !c.sameIface(f) {
				_, err := tx.ExecContext(ctx, "UPDATE interfaces SET type = ?, main = ?, useip = ?, ip = ?, dns = ?, port = ?, details = ? WHERE id = ?",
					int64(f.Type), f.Main, f.UseIP, f.IP, f.DNS, f.Port, encodeDetails(f.Details), f.ID)
				if err != nil {
					return nil, fmt.Errorf("cannot update interface %d of host %q: %w", f.ID, h.Host, err)
				}
			}
		}
		slices.SortFunc(ifaces, func(a, b Interface) int { return cmp.Compare(a.ID, b.ID) })
		h.Interfaces = ifaces
	}
	return real, nil
}

func insertID(ctx context.Context, s *sql.Stmt, args ...any) (uint64, error) {
	r, err := s.ExecContext(ctx, args...)
	if err != nil {
		return 0, err
	}
	id, err := r.LastInsertId()
	if err != nil {
		return 0, err
	}
	return uint64(id), nil
}

// status returns the Zabbix status number for enabled.
func status(enabled bool) int64 {
	if enabled {
		return 0
	}
	return 1
}

// build makes the snapshot that follows old once p is written, without
// reading the database back: the old snapshot with p's changes overlaid.
// TestApplyMatchesReload checks that it equals what Open would load.
func (p *plan) build(old *Snapshot) (*Snapshot, error) {
	groups := make([]Group, 0, len(old.groups)+len(p.newGroups))
	groups = append(groups, old.groups...)
	groups = append(groups, p.newGroups...)

	pc := &partChange{hosts: make(map[uint64]*Host, len(p.hosts)), items: make(map[uint64]*Item, len(p.updates)), created: p.creates}
	for i := range p.hosts {
		pc.hosts[p.hosts[i].h.ID] = &p.hosts[i].h
	}
	for i := range p.updates {
		pc.items[p.updates[i].it.ID] = &p.updates[i].it
	}
	s, err := derive(old, old.version+1, groups, pc, false)
	if err != nil {
		return nil, err
	}
	// A copy: setTriggers takes its slice over. Apply never deletes, so
	// every reference still holds.
	s.setTriggers(slices.Clone(old.triggers))
	s.tmpl = old.tmpl   // Apply writes hosts only; templates go through an Edit
	s.mcell = old.mcell // macros are written in a later Edit (applyMacrosAfter)
	s.maints = old.maints
	s.regexps = old.regexps
	s.proxies = old.proxies
	s.setValueMaps(old.valueMaps)
	s.ext = old.ext
	return s, nil
}

// newHostTLS is a new host's encryption settings: the spec's, else
// Zabbix's default.
func newHostTLS(nh *normHost) HostTLS {
	if nh.tlsSet {
		return nh.tls
	}
	return DefaultHostTLS
}
