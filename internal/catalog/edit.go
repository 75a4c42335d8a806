package catalog

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/sqlitedb"
)

// ErrNotFound marks an edit that refers to a group, host or item ID that
// does not exist (or was deleted earlier in the same Edit). Check with
// errors.Is; the error is a *FieldError naming the reference.
var ErrNotFound = errors.New("no such object")

// ErrMaintenanceEmpty refuses a maintenance of no host group and no
// host.
var ErrMaintenanceEmpty = errors.New("at least one host group or host must be selected")

// ConflictKind says what a ConflictError is about.
type ConflictKind uint8

// Conflicts an Edit may report.
const (
	GroupExists       ConflictKind = iota + 1 // a host group with the name exists
	HostExists                                // a host with the technical name exists
	VisibleNameExists                         // a host with the visible name exists
	ItemExists                                // the host has an item with the key
	MacroExists                               // the host, template or global scope has the macro
	MaintenanceExists                         // a maintenance with the name exists
	HostWithoutGroup                          // the host would be left without a group
	TriggerExists                             // a trigger of the host has the name and expression (Name: the name)
	// Interfaces (Zabbix 6.0 rules): Name is the Zabbix type name
	// ("agent") for the first two, the item's name for the others.
	TwoDefaultInterfaces // two main interfaces of one type
	NoDefaultInterface   // interfaces of a type but no main one
	InterfaceInUse       // a deleted interface is used by an item
	NoInterface          // an item needs an interface and has none
	ForeignInterface     // an item names an interface of no or another host
	WrongInterfaceType   // an item names an interface of the wrong type
	RegexpExists         // a global regular expression with the name exists
)

// ConflictError reports an edit that is well-formed but conflicts with
// the catalog's content. It is wrapped in a *FieldError naming the
// offending field; errors.As finds it.
type ConflictError struct {
	Kind ConflictKind
	// Host is the technical name of the host concerned (HostExists,
	// ItemExists, HostWithoutGroup).
	Host string
	// Name is the group name (GroupExists), visible name
	// (VisibleNameExists) or item key (ItemExists).
	Name string
	// Template is set when the object that is in the way is a template
	// (HostExists, VisibleNameExists: host and template names are one
	// namespace, as in Zabbix; ItemExists: the item is a copy of
	// another template's).
	Template bool
}

func (e *ConflictError) Error() string {
	switch e.Kind {
	case GroupExists:
		return fmt.Sprintf("host group %q already exists", e.Name)
	case HostExists:
		if e.Template {
			return fmt.Sprintf("a template named %q already exists", e.Host)
		}
		return fmt.Sprintf("host %q already exists", e.Host)
	case VisibleNameExists:
		if e.Template {
			return fmt.Sprintf("a template with the visible name %q already exists", e.Name)
		}
		return fmt.Sprintf("a host with the visible name %q already exists", e.Name)
	case ItemExists:
		if e.Template {
			return fmt.Sprintf("item %q already exists on %q, inherited from another template", e.Name, e.Host)
		}
		return fmt.Sprintf("an item with key %q already exists on host %q", e.Name, e.Host)
	case MacroExists:
		if e.Host == "" {
			return fmt.Sprintf("macro %q already exists", e.Name)
		}
		return fmt.Sprintf("macro %q already exists on %q", e.Name, e.Host)
	case MaintenanceExists:
		return fmt.Sprintf("maintenance %q already exists", e.Name)
	case HostWithoutGroup:
		return fmt.Sprintf("host %q would be left without a host group: add it to another group first", e.Host)
	case TriggerExists:
		return fmt.Sprintf("trigger %q already exists on %q", e.Name, e.Host)
	case TwoDefaultInterfaces:
		return fmt.Sprintf("host %q would have more than one main %s interface: mark one main", e.Host, e.Name)
	case NoDefaultInterface:
		return fmt.Sprintf("host %q would have %s interfaces but no main one: mark one main", e.Host, e.Name)
	case InterfaceInUse:
		return fmt.Sprintf("the interface is used by item %q on host %q: change or delete the item first", e.Name, e.Host)
	case NoInterface:
		return fmt.Sprintf("item %q on host %q needs an interface and the host has none of its type: add one to the host", e.Name, e.Host)
	case ForeignInterface:
		return fmt.Sprintf("item %q names an interface that is not one of host %q's", e.Name, e.Host)
	case WrongInterfaceType:
		return fmt.Sprintf("item %q on host %q names an interface of the wrong type for its item type", e.Name, e.Host)
	case RegexpExists:
		return fmt.Sprintf("regular expression %q already exists", e.Name)
	}
	return "conflict"
}

// Edit is one write transaction of single-object changes by ID: the
// counterpart of Apply for the API. It is only valid inside the function
// passed to Catalog.Edit and must not be used concurrently or retained.
//
// Each method takes a batch and either applies all of it or, if any
// element is invalid, none of it; its error is then a *FieldError (or
// several joined) whose Field names the element and field, for example
// "items[3].key", with the element's index in the batch. Later calls see
// the effects of earlier ones: an item may be created on a host created
// earlier in the same Edit. A database error makes the Edit unusable:
// every later call returns it, and so does Catalog.Edit.
type Edit struct {
	ctx   context.Context
	begin sqlitedb.Begin
	old   *Snapshot
	tx    *sql.Tx // begun on the first write
	st    map[string]*sql.Stmt
	err   error // a database error; the Edit is dead
	// changed is set once anything was written.
	changed bool
	rows    int

	// The overlay over old. A present key with a nil value means deleted.
	groups    map[uint64]*Group
	groupName map[string]uint64 // name → ID for names taken or freed (0) in this Edit
	hosts     map[uint64]*Host  // copies, unexported fields unused
	hostName  map[string]uint64 // technical name → ID, as groupName
	visible   map[string]uint64 // visible name → host ID over the whole catalog, built on first use
	items     map[uint64]*Item
	keys      map[hostKey]uint64 // (host, key) → item ID, as groupName
	created   []*Item            // items created in this Edit, in order
	newGroups []uint64           // groups created in this Edit, in order
	newHosts  []uint64           // hosts created in this Edit, in order
	strs      map[string]string  // interned low-cardinality item fields
	pool      *strPool           // the Catalog's shared strings (intern.go)
	steps     stepsInterner      // interned preprocessing chains
	ck        *checks            // the Catalog's validation hooks

	refs     RefsFunc            // the catalog's expression parser
	triggers map[uint64]*Trigger // overlay, nil value: deleted
	// trigByItem indexes the overlay by item (setTrigger): the IDs of
	// triggers written in this Edit that referenced the item when
	// written; stale entries are possible, so readers check again.
	trigByItem  map[uint64][]uint64
	newTriggers []uint64 // triggers created in this Edit, in order
	// itemsGone is set once items or hosts were deleted: their triggers
	// must go too (cascadeTriggers).
	itemsGone bool
	// mst is the macro and template overlay, nil until one changes
	// (edit_macro.go).
	mst *macroState
	// mnt is the maintenances overlay, nil until one changes.
	mnt []Maintenance

	valueMaps    map[uint64]*ValueMap // overlay, nil value: deleted
	newValueMaps []uint64             // value maps created in this Edit, in order
	// rx is the global regular expressions, nil until one changes.
	rx []GlobalRegexp
	// px is the proxies, nil until one changes (proxy.go).
	px []Proxy

	// Inheritance (inherit.go). propagating is set while a template's
	// change is made to its copies, which then accept every field.
	// copyIdx and trigCopyIdx list the copies the overlay made or
	// changed by the template item or trigger they follow; trigIdx the
	// overlay's triggers by item; rlinks the owners linking each
	// template, built from the overlay's links when first needed.
	propagating bool
	copyIdx     map[uint64][]uint64
	trigCopyIdx map[uint64][]uint64
	trigIdx     map[uint64][]uint64
	rlinks      map[uint64][]uint64
	// depHosts are the hosts the overlay has dependent items on;
	// createdOn the items created in this Edit by host (hostItems).
	depHosts map[uint64]bool
	// discHosts indexes discovered hosts by rule (lld_hosts.go), built
	// on first use: one scan of the hosts per Edit, not per result.
	discHosts map[uint64][]uint64
	createdOn map[uint64][]*Item
	// ext is the graph and dashboard overlay, nil until one changes
	// (graph.go).
	ext *extraEdit

	res EditResult
}

type hostKey struct {
	host uint64
	key  string
}

// EditResult counts what an Edit did.
type EditResult struct {
	GroupsCreated, GroupsUpdated, GroupsDeleted int
	HostsCreated, HostsUpdated, HostsDeleted    int
	ItemsCreated, ItemsUpdated, ItemsDeleted    int
	// TriggersDeleted includes the triggers deleted with their items.
	TriggersCreated, TriggersUpdated, TriggersDeleted int
	MacrosCreated, MacrosUpdated, MacrosDeleted       int
	TemplatesCreated, TemplatesUpdated                int
	// ValueMapsDeleted excludes the maps deleted with their hosts.
	ValueMapsCreated, ValueMapsUpdated, ValueMapsDeleted int
	// Graphs and template dashboards (graph.go, dashboard.go); copies
	// of templates' graphs included, those deleted with their items or
	// hosts not.
	GraphsCreated, GraphsUpdated, GraphsDeleted             int
	DashboardsCreated, DashboardsUpdated, DashboardsDeleted int
}

// Edit runs fn with an Edit and, if fn returns nil and changed anything,
// commits all its changes in one SQLite transaction and publishes them as
// one new snapshot, as Apply does: a batch of 10,000 items costs one
// commit and one snapshot rebuild. If fn returns an error nothing is
// written and Edit returns that error unchanged, so validation errors
// keep their type. Edits and Applies are serialised; readers are never
// blocked. fn must not call Apply or Edit (it would deadlock); the
// snapshot it may read with Snapshot does not show its own changes.
//
// Deleting an item or host leaves the item's history in the history
// store: item IDs are never reused, so the values cannot be attributed to
// another item, and retention drops them with their partitions.
func (c *Catalog) Edit(ctx context.Context, fn func(e *Edit) error) (EditResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.editLocked(ctx, fn)
}

// editLocked is Edit with c.mu held.
func (c *Catalog) editLocked(ctx context.Context, fn func(e *Edit) error) (EditResult, error) {
	start := time.Now()
	if c.closed {
		return EditResult{}, ErrClosed
	}
	if c.broken != nil {
		return EditResult{}, fmt.Errorf("catalog: refusing to edit until restarted: %w", c.broken)
	}
	e := &Edit{ctx: ctx, begin: c.begin, old: c.snap.Load(), ck: &c.ck, refs: c.refs, pool: &c.pool}
	defer func() {
		if e.tx != nil {
			e.tx.Rollback() // no-op after Commit
		}
	}()
	if err := fn(e); err != nil {
		return EditResult{}, err
	}
	if err := e.syncExtras(); err != nil {
		return EditResult{}, err
	}
	if e.err != nil {
		return EditResult{}, e.err
	}
	if !e.changed {
		return e.res, nil
	}
	if err := e.commit(); err != nil {
		return EditResult{}, e.fail(err)
	}
	written := time.Now()
	next, err := e.build()
	if err != nil {
		c.log.Error("BUG: cannot build the snapshot after an edit; reloading from the database", "err", err)
		if next, err = loadSnapshot(context.WithoutCancel(ctx), c.db); err != nil {
			c.broken = fmt.Errorf("changes were written but the snapshot cannot be rebuilt: %w", err)
			return EditResult{}, fmt.Errorf("catalog: %w", c.broken)
		}
	}
	c.publish(next)
	r := e.res
	c.log.Info("catalog edited", "revision", next.Version(),
		"groups_created", r.GroupsCreated, "groups_updated", r.GroupsUpdated, "groups_deleted", r.GroupsDeleted,
		"hosts_created", r.HostsCreated, "hosts_updated", r.HostsUpdated, "hosts_deleted", r.HostsDeleted,
		"items_created", r.ItemsCreated, "items_updated", r.ItemsUpdated, "items_deleted", r.ItemsDeleted,
		"triggers_created", r.TriggersCreated, "triggers_updated", r.TriggersUpdated, "triggers_deleted", r.TriggersDeleted,
		"macros_created", r.MacrosCreated, "macros_updated", r.MacrosUpdated, "macros_deleted", r.MacrosDeleted,
		"templates_created", r.TemplatesCreated, "templates_updated", r.TemplatesUpdated,
		"write_duration", written.Sub(start), "build_duration", time.Since(written))
	return r, nil
}

// fail records a database error: the transaction is no longer trusted.
func (e *Edit) fail(err error) error {
	// database/sql rolls the transaction back when ctx ends, so a
	// statement may fail before ctx is checked: report the cause.
	if cerr := e.ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		err = fmt.Errorf("%w: %v", cerr, err)
	}
	if e.err == nil {
		e.err = fmt.Errorf("catalog: edit failed, nothing was changed: %w", err)
	}
	return e.err
}

// exec runs q in the Edit's transaction, beginning it if needed, and
// returns the ID of an inserted row.
func (e *Edit) exec(q string, args ...any) (uint64, error) {
	if e.err != nil {
		return 0, e.err
	}
	// Statements run without ctx, as in Apply (see ctxCheckEvery); the
	// transaction is rolled back by database/sql if ctx ends.
	rctx := context.WithoutCancel(e.ctx)
	if e.tx == nil {
		tx, err := e.begin(e.ctx)
		if err != nil {
			return 0, e.fail(fmt.Errorf("cannot begin transaction: %w", err))
		}
		e.tx, e.st = tx, map[string]*sql.Stmt{}
	}
	if e.rows++; e.rows%ctxCheckEvery == 0 {
		if err := e.ctx.Err(); err != nil {
			return 0, e.fail(err)
		}
	}
	s := e.st[q]
	if s == nil {
		var err error
		if s, err = e.tx.PrepareContext(rctx, q); err != nil {
			return 0, e.fail(fmt.Errorf("cannot prepare %q: %w", q, err))
		}
		e.st[q] = s
	}
	r, err := s.ExecContext(rctx, args...)
	if err != nil {
		return 0, err
	}
	e.changed = true
	id, err := r.LastInsertId()
	if err != nil {
		return 0, err
	}
	return uint64(id), nil
}

// commit deletes the triggers of deleted items, bumps the revision and
// commits.
func (e *Edit) commit() error {
	if e.itemsGone {
		if err := e.cascadeTriggers(); err != nil {
			return err
		}
	}
	if _, err := e.exec("UPDATE catalog_meta SET revision = ? WHERE id = 1", e.old.version+1); err != nil {
		return fmt.Errorf("cannot bump revision: %w", err)
	}
	if err := e.ctx.Err(); err != nil {
		return err
	}
	if err := e.tx.Commit(); err != nil {
		return fmt.Errorf("cannot commit: %w", err)
	}
	return nil
}

func (e *Edit) group(id uint64) *Group {
	if g, ok := e.groups[id]; ok {
		return g
	}
	return e.old.groupsByID[id]
}

func (e *Edit) groupByName(name string) uint64 {
	if id, ok := e.groupName[name]; ok {
		return id
	}
	if g := e.old.groupByName[name]; g != nil {
		return g.ID
	}
	return 0
}

// host returns the current host or template with the ID, or nil.
func (e *Edit) host(id uint64) *Host {
	if h, ok := e.hosts[id]; ok {
		return h
	}
	return e.old.HostOrTemplate(id)
}

// hostByName returns the ID of the host or template with the technical
// name (one namespace, as in Zabbix), or 0.
func (e *Edit) hostByName(name string) uint64 {
	if id, ok := e.hostName[name]; ok {
		return id
	}
	if h := e.old.hostByName.get(name); h != nil {
		return h.ID
	}
	if h := e.old.part().hostByName.get(name); h != nil {
		return h.ID
	}
	return 0
}

// oldHost returns the host or template with the ID in the old snapshot.
func (e *Edit) oldHost(id uint64) *Host { return e.old.HostOrTemplate(id) }

// hostByVisible returns the ID of a host with the visible name, or 0.
func (e *Edit) hostByVisible(name string) uint64 {
	if e.visible == nil {
		e.visible = make(map[string]uint64, len(e.old.hosts))
		for _, part := range []*Snapshot{e.old, e.old.part()} {
			for i := range part.hosts {
				h := part.hosts[i]
				if cur := e.host(h.ID); cur != nil {
					e.visible[cur.Name] = h.ID
				}
			}
		}
		for _, id := range e.newHosts {
			if h := e.host(id); h != nil {
				e.visible[h.Name] = id
			}
		}
	}
	return e.visible[name]
}

func (e *Edit) setVisible(old, name string, id uint64) {
	if e.visible == nil {
		return // built from the overlay when first needed
	}
	if old != "" && e.visible[old] == id {
		delete(e.visible, old)
	}
	if name != "" {
		e.visible[name] = id
	}
}

// item returns the current item with the ID, or nil if there is none or
// its host was deleted.
func (e *Edit) item(id uint64) *Item {
	it, ok := e.items[id]
	if !ok {
		it = e.old.AnyItem(id)
	}
	if it == nil || e.host(it.HostID) == nil {
		return nil
	}
	return it
}

func (e *Edit) itemByKey(host uint64, key string) uint64 {
	if id, ok := e.keys[hostKey{host, key}]; ok {
		return id
	}
	if h := e.oldHost(host); h != nil && e.host(host) != nil {
		if i := h.lookupIndex(key); i >= 0 {
			return h.items[i].ID
		}
	}
	return 0
}

func (e *Edit) str(s string) string {
	if e.pool != nil {
		return e.pool.get(s)
	}
	if e.strs == nil {
		e.strs = map[string]string{}
	}
	if v, ok := e.strs[s]; ok {
		return v
	}
	s = strings.Clone(s)
	e.strs[s] = s
	return s
}

func initMap[K comparable, V any](m *map[K]V) {
	if *m == nil {
		*m = map[K]V{}
	}
}

// dupIDs reports IDs listed twice, as field errors "<kind>[i]".
func dupIDs(kind string, ids []uint64, el *errList) {
	seen := make(map[uint64]int, len(ids))
	for i, id := range ids {
		if first, dup := seen[id]; dup {
			el.addf(kind+"["+strconv.Itoa(i)+"]", "ID %d is listed twice (first at %s[%d])", id, kind, first)
			continue
		}
		seen[id] = i
	}
}

// triggersOnly reports whether the Edit changed no group, host, item or
// user macro (triggers and maintenances may have changed). Macro changes
// take the full path: each host carries its macro scope.
func (e *Edit) triggersOnly() bool {
	return e.mst == nil && len(e.groups) == 0 && len(e.hosts) == 0 && len(e.items) == 0 && len(e.created) == 0 &&
		len(e.newGroups) == 0 && len(e.newHosts) == 0 && !e.itemsGone
}

func notFound(kind string, id uint64) error {
	return fmt.Errorf("%w: %s %d", ErrNotFound, kind, id)
}

// build makes the snapshot that follows old once the Edit is committed:
// old with the overlay applied, without reading the database back.
// TestEditMatchesReload checks that it equals what Open would load.
//
// Hosts and templates are built as two parts (template.go); a part the
// Edit did not touch is shared with old, so an edit of templates
// nobody links does not rebuild a million hosts' items, and an edit of
// hosts does not rebuild the templates.
func (e *Edit) build() (*Snapshot, error) {
	old := e.old
	// An Edit that wrote no trigger and deleted no item (an item.update,
	// a rename of a host no trigger names) leaves the trigger slabs and their indexes as they
	// were: the new snapshot shares them (shareTriggers) instead of
	// rebuilding them, O(triggers), per edit.
	keepTrigs := len(e.triggers) == 0 && len(e.newTriggers) == 0 && !e.itemsGone
	var hostTrigs, tmplTrigs []Trigger
	if !keepTrigs {
		hostTrigs, tmplTrigs = e.buildTriggers()
	}
	setTrigs := func(s *Snapshot) {
		if keepTrigs {
			s.shareTriggers(old)
			s.tmpl.shareTriggers(old.part())
			return
		}
		s.setTriggers(hostTrigs)
		s.tmpl.setTriggers(tmplTrigs)
	}
	if e.triggersOnly() {
		// Groups, hosts and items are unchanged: share them (a snapshot
		// is immutable) and rebuild only the trigger slabs and their
		// indexes. A bulk trigger.create into a catalog of 100,000
		// items otherwise rebuilt every host and item per call.
		s := *old
		s.version = old.version + 1
		tp := *old.part()
		s.tmpl = &tp
		setTrigs(&s)
		e.applyOverlays(&s)
		return &s, nil
	}
	groups := make([]Group, 0, len(old.groups)+len(e.newGroups))
	for i := range old.groups {
		g := &old.groups[i]
		if o, ok := e.groups[g.ID]; ok {
			if o != nil {
				groups = append(groups, *o)
			}
			continue
		}
		groups = append(groups, *g)
	}
	for _, id := range e.newGroups {
		if g := e.groups[id]; g != nil {
			groups = append(groups, *g)
		}
	}
	hostsChanged, tmplChanged := e.partsChanged()
	// A host reaches its user macros through the snapshot that holds it
	// (Host.UserMacros): when macros or links change, every host must be
	// in the new snapshot, not shared with the old one.
	macrosChanged := e.mst != nil
	hostsChanged, tmplChanged = hostsChanged || macrosChanged, tmplChanged || macrosChanged
	var s *Snapshot
	// A host reaches its user macros through its macro cell: a new one
	// when they changed, with every host made anew (buildPart).
	mc := old.mcell
	if macrosChanged {
		mc = &macroCell{ms: e.mst.build()}
	}
	if hostsChanged || len(e.groups) > 0 || len(e.newGroups) > 0 {
		var err error
		if s, err = e.buildPart(old, groups, false, mc); err != nil {
			return nil, err
		}
	} else {
		c := *old
		s = &c
		s.setGroups(groups)
	}
	s.version = old.version + 1
	if tmplChanged {
		tp, err := e.buildPart(old.part(), nil, true, mc)
		if err != nil {
			return nil, err
		}
		s.tmpl = tp
	} else {
		tp := *old.part()
		s.tmpl = &tp
	}
	setTrigs(s)
	s.mcell = mc
	s.maints = old.maints
	s.regexps = old.regexps
	s.proxies = old.proxies
	e.applyOverlays(s)
	return s, nil
}

// partsChanged reports which parts the Edit changed hosts or items in.
func (e *Edit) partsChanged() (hosts, tmpls bool) {
	mark := func(hostID uint64) {
		h := e.host(hostID)
		if h == nil {
			h = e.oldHost(hostID)
		}
		if h != nil && h.IsTemplate {
			tmpls = true
		} else {
			hosts = true
		}
	}
	for id := range e.hosts {
		mark(id)
	}
	for id, it := range e.items {
		if it == nil {
			if o := e.old.AnyItem(id); o != nil {
				mark(o.HostID)
			}
			continue
		}
		mark(it.HostID)
		if hosts && tmpls {
			return
		}
	}
	return hosts, tmpls
}

// buildPart builds one part of the next snapshot from the same part of
// the old one (old, or old.part() for the templates) and the overlay:
// only the hosts the Edit touched are made anew (derive).
func (e *Edit) buildPart(old *Snapshot, groups []Group, tmpl bool, mc *macroCell) (*Snapshot, error) {
	pc := &partChange{hosts: e.hosts, items: e.items, mc: mc, all: e.mst != nil}
	for _, it := range e.created {
		if e.items[it.ID] != nil {
			if h := e.host(it.HostID); h != nil && h.IsTemplate == tmpl {
				pc.created = append(pc.created, it)
			}
		}
	}
	return derive(old, old.version+1, groups, pc, tmpl)
}

// applyOverlays puts the Edit's value map, macro/template and maintenance
// changes, if any, into the new snapshot s (which starts with the old
// ones).
func (e *Edit) applyOverlays(s *Snapshot) {
	s.setValueMaps(e.buildValueMaps())
	e.buildExtras(s)
	e.buildRegexps(s)
	e.buildProxies(s)
	if e.mnt != nil {
		s.maints = slices.Clone(e.mnt)
		slices.SortFunc(s.maints, func(a, b Maintenance) int { return cmp.Compare(a.ID, b.ID) })
		if len(s.maints) == 0 {
			s.maints = nil
		}
	}
}
