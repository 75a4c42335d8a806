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
)

// ErrNotFound marks an edit that refers to a group, host or item ID that
// does not exist (or was deleted earlier in the same Edit). Check with
// errors.Is; the error is a *FieldError naming the reference.
var ErrNotFound = errors.New("no such object")

// ConflictKind says what a ConflictError is about.
type ConflictKind uint8

// Conflicts an Edit may report.
const (
	GroupExists       ConflictKind = iota + 1 // a host group with the name exists
	HostExists                                // a host with the technical name exists
	VisibleNameExists                         // a host with the visible name exists
	ItemExists                                // the host has an item with the key
	HostWithoutGroup                          // the host would be left without a group
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
}

func (e *ConflictError) Error() string {
	switch e.Kind {
	case GroupExists:
		return fmt.Sprintf("host group %q already exists", e.Name)
	case HostExists:
		return fmt.Sprintf("host %q already exists", e.Host)
	case VisibleNameExists:
		return fmt.Sprintf("a host with the visible name %q already exists", e.Name)
	case ItemExists:
		return fmt.Sprintf("an item with key %q already exists on host %q", e.Name, e.Host)
	case HostWithoutGroup:
		return fmt.Sprintf("host %q would be left without a host group: add it to another group first", e.Host)
	}
	return "conflict"
}

// NewHost describes a host for Edit.CreateHosts.
type NewHost struct {
	Host     string   // technical name, required
	Name     string   // visible name; default Host
	Disabled bool     // Zabbix status 1; hosts are created enabled by default
	GroupIDs []uint64 // existing groups, at least one
	Tags     []Tag    // optional; no (tag, value) pair twice
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
}

// NewItem describes an item for Edit.CreateItems: an item of the import
// format, with the same syntax and defaults, on host HostID.
type NewItem struct {
	HostID uint64
	ItemSpec
}

// ItemUpdate changes the fields of item ID that are set; nil fields keep
// their value. Values have the import format's syntax (see ItemSpec); ""
// selects the default where the import format has one, except for Units.
// If ValueType becomes non-numeric and Trends is nil, Trends becomes "0".
type ItemUpdate struct {
	ID                                       uint64
	Key, Name, Type, ValueType, Units, Delay *string
	History, Trends, Status                  *string
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
	ctx context.Context
	db  *sql.DB
	old *Snapshot
	tx  *sql.Tx // begun on the first write
	st  map[string]*sql.Stmt
	err error // a database error; the Edit is dead
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
	start := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return EditResult{}, ErrClosed
	}
	if c.broken != nil {
		return EditResult{}, fmt.Errorf("catalog: refusing to edit until restarted: %w", c.broken)
	}
	e := &Edit{ctx: ctx, db: c.db, old: c.snap.Load()}
	defer func() {
		if e.tx != nil {
			e.tx.Rollback() // no-op after Commit
		}
	}()
	if err := fn(e); err != nil {
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
		tx, err := e.db.BeginTx(e.ctx, nil)
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

// commit bumps the revision and commits.
func (e *Edit) commit() error {
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

// --- views of the current state (old snapshot plus overlay) ---

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

func (e *Edit) host(id uint64) *Host {
	if h, ok := e.hosts[id]; ok {
		return h
	}
	return e.old.hostByID[id]
}

func (e *Edit) hostByName(name string) uint64 {
	if id, ok := e.hostName[name]; ok {
		return id
	}
	if h := e.old.hostByName[name]; h != nil {
		return h.ID
	}
	return 0
}

// hostByVisible returns the ID of a host with the visible name, or 0.
func (e *Edit) hostByVisible(name string) uint64 {
	if e.visible == nil {
		e.visible = make(map[string]uint64, len(e.old.hosts))
		for i := range e.old.hosts {
			h := &e.old.hosts[i]
			if cur := e.host(h.ID); cur != nil {
				e.visible[cur.Name] = h.ID
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
		it = e.old.Item(id)
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
	if h := e.old.hostByID[host]; h != nil && e.host(host) != nil {
		if i := h.lookupIndex(key); i >= 0 {
			return e.old.items[i].ID
		}
	}
	return 0
}

func (e *Edit) str(s string) string {
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

func notFound(kind string, id uint64) error {
	return fmt.Errorf("%w: %s %d", ErrNotFound, kind, id)
}

// --- groups ---

// CreateGroups creates host groups with the given names and returns
// their IDs in the same order.
func (e *Edit) CreateGroups(names []string) ([]uint64, error) {
	if e.err != nil {
		return nil, e.err
	}
	var el errList
	batch := make(map[string]bool, len(names))
	for i, n := range names {
		f := "groups[" + strconv.Itoa(i) + "].name"
		if err := checkGroupName(n); err != nil {
			el.add(f, err)
		} else if batch[n] || e.groupByName(n) != 0 {
			el.add(f, &ConflictError{Kind: GroupExists, Name: n})
		}
		batch[n] = true
	}
	if err := el.err(); err != nil {
		return nil, err
	}
	initMap(&e.groups)
	initMap(&e.groupName)
	ids := make([]uint64, len(names))
	for i, n := range names {
		n = strings.Clone(n)
		id, err := e.exec("INSERT INTO host_groups (name) VALUES (?)", n)
		if err != nil {
			return nil, e.fail(fmt.Errorf("cannot create group %q: %w", n, err))
		}
		e.groups[id] = &Group{ID: id, Name: n}
		e.groupName[n] = id
		e.newGroups = append(e.newGroups, id)
		ids[i] = id
	}
	e.res.GroupsCreated += len(names)
	return ids, nil
}

// RenameGroups gives each group ID the name Name.
func (e *Edit) RenameGroups(groups []Group) error {
	if e.err != nil {
		return e.err
	}
	var el errList
	ids := make([]uint64, len(groups))
	batch := make(map[string]bool, len(groups))
	for i, g := range groups {
		ids[i] = g.ID
		p := "groups[" + strconv.Itoa(i) + "]"
		cur := e.group(g.ID)
		if cur == nil {
			el.add(p+".id", notFound("host group", g.ID))
			continue
		}
		if err := checkGroupName(g.Name); err != nil {
			el.add(p+".name", err)
		} else if other := e.groupByName(g.Name); batch[g.Name] || other != 0 && other != g.ID {
			el.add(p+".name", &ConflictError{Kind: GroupExists, Name: g.Name})
		}
		batch[g.Name] = true
	}
	dupIDs("groups", ids, &el)
	if err := el.err(); err != nil {
		return err
	}
	initMap(&e.groups)
	initMap(&e.groupName)
	for _, g := range groups {
		cur := e.group(g.ID)
		if cur.Name == g.Name {
			continue
		}
		name := strings.Clone(g.Name)
		if _, err := e.exec("UPDATE host_groups SET name = ? WHERE id = ?", name, g.ID); err != nil {
			return e.fail(fmt.Errorf("cannot rename group %q: %w", cur.Name, err))
		}
		e.groupName[cur.Name] = 0 // the name was this group's: it is free now
		e.groupName[name] = g.ID
		e.groups[g.ID] = &Group{ID: g.ID, Name: name}
		e.res.GroupsUpdated++
	}
	return nil
}

// DeleteGroups deletes host groups and removes their hosts from them. It
// fails with a HostWithoutGroup conflict if a host would be left in no
// group, as Zabbix does.
func (e *Edit) DeleteGroups(ids []uint64) error {
	if e.err != nil {
		return e.err
	}
	var el errList
	dead := make(map[uint64]bool, len(ids))
	at := make(map[uint64]int, len(ids))
	for i, id := range ids {
		if e.group(id) == nil {
			el.add("groups["+strconv.Itoa(i)+"]", notFound("host group", id))
		}
		dead[id] = true
		if _, ok := at[id]; !ok {
			at[id] = i
		}
	}
	dupIDs("groups", ids, &el)
	if err := el.err(); err != nil {
		return err
	}
	// Hosts that lose a group, with their remaining groups.
	type loss struct {
		h    *Host
		keep []uint64
	}
	var losses []loss
	e.eachHost(func(h *Host) bool {
		if !slices.ContainsFunc(h.GroupIDs, func(g uint64) bool { return dead[g] }) {
			return true
		}
		keep := slices.DeleteFunc(slices.Clone(h.GroupIDs), func(g uint64) bool { return dead[g] })
		if len(keep) == 0 {
			// Name the first deleted group the host is in.
			first := len(ids)
			for _, g := range h.GroupIDs {
				if i, ok := at[g]; ok && i < first {
					first = i
				}
			}
			el.add("groups["+strconv.Itoa(first)+"]", &ConflictError{Kind: HostWithoutGroup, Host: h.Host})
			return el.dropped == 0
		}
		losses = append(losses, loss{h, keep})
		return true
	})
	if err := el.err(); err != nil {
		return err
	}
	initMap(&e.groups)
	initMap(&e.groupName)
	initMap(&e.hosts)
	for _, l := range losses {
		h := e.editableHost(l.h.ID)
		h.GroupIDs = l.keep
	}
	for _, id := range ids {
		g := e.group(id)
		if _, err := e.exec("DELETE FROM hosts_groups WHERE group_id = ?", id); err != nil {
			return e.fail(fmt.Errorf("cannot remove the hosts of group %q: %w", g.Name, err))
		}
		if _, err := e.exec("DELETE FROM host_groups WHERE id = ?", id); err != nil {
			return e.fail(fmt.Errorf("cannot delete group %q: %w", g.Name, err))
		}
		e.groupName[g.Name] = 0
		e.groups[id] = nil
	}
	e.res.GroupsDeleted += len(ids)
	return nil
}

// eachHost calls fn with every current host until fn returns false.
func (e *Edit) eachHost(fn func(h *Host) bool) {
	for i := range e.old.hosts {
		if h := e.host(e.old.hosts[i].ID); h != nil && !fn(h) {
			return
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
	o := e.old.hostByID[id]
	h := &Host{ID: o.ID, Host: o.Host, Name: o.Name, Enabled: o.Enabled, GroupIDs: o.GroupIDs, Tags: o.Tags}
	e.hosts[id] = h
	return h
}

// --- hosts ---

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
	for i := range hosts {
		nh := &hosts[i]
		p := "hosts[" + strconv.Itoa(i) + "]"
		if err := checkHostName(nh.Host); err != nil {
			el.add(p+".host", err)
		} else if names[nh.Host] || e.hostByName(nh.Host) != 0 {
			el.add(p+".host", &ConflictError{Kind: HostExists, Host: nh.Host})
		}
		names[nh.Host] = true
		vis := cmp.Or(nh.Name, nh.Host)
		if err := checkText(vis, maxHostNameLen); err != nil {
			el.add(p+".name", err)
		} else if visible[vis] || e.hostByVisible(vis) != 0 {
			el.add(p+".name", &ConflictError{Kind: VisibleNameExists, Host: nh.Host, Name: vis})
		}
		visible[vis] = true
		e.checkGroups(p+".groups", nh.GroupIDs, &el)
		checkTags(p+".tags", nh.Tags, &el)
	}
	if err := el.err(); err != nil {
		return nil, err
	}
	initMap(&e.hosts)
	initMap(&e.hostName)
	ids := make([]uint64, len(hosts))
	for i := range hosts {
		nh := &hosts[i]
		h := &Host{Host: strings.Clone(nh.Host), Enabled: !nh.Disabled, GroupIDs: slices.Clone(nh.GroupIDs), Tags: cloneTags(nh.Tags)}
		h.Name = h.Host
		if nh.Name != "" && nh.Name != nh.Host {
			h.Name = strings.Clone(nh.Name)
		}
		slices.Sort(h.GroupIDs)
		id, err := e.exec("INSERT INTO hosts (host, name, status) VALUES (?, ?, ?)", h.Host, h.Name, status(h.Enabled))
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
		e.hosts[id] = h
		e.hostName[h.Host] = id
		e.setVisible("", h.Name, id)
		e.newHosts = append(e.newHosts, id)
		ids[i] = id
	}
	e.res.HostsCreated += len(hosts)
	return ids, nil
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
		n := Host{ID: cur.ID, Host: cur.Host, Name: cur.Name, Enabled: cur.Enabled, GroupIDs: cur.GroupIDs, Tags: cur.Tags}
		if u.Host != nil && *u.Host != cur.Host {
			n.Host = *u.Host
			if err := checkHostName(n.Host); err != nil {
				el.add(p+".host", err)
			} else if other := e.hostByName(n.Host); names[n.Host] || other != 0 && other != u.ID {
				el.add(p+".host", &ConflictError{Kind: HostExists, Host: n.Host})
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
				el.add(p+".name", &ConflictError{Kind: VisibleNameExists, Host: n.Host, Name: n.Name})
			}
		}
		visible[n.Name] = true
		if u.Enabled != nil {
			n.Enabled = *u.Enabled
		}
		if u.GroupIDs != nil {
			e.checkGroups(p+".groups", u.GroupIDs, &el)
			n.GroupIDs = slices.Sorted(slices.Values(u.GroupIDs))
		}
		if u.Tags != nil {
			checkTags(p+".tags", *u.Tags, &el)
			n.Tags = *u.Tags
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
		rowChanged := n.Host != cur.Host || n.Name != cur.Name || n.Enabled != cur.Enabled
		groupsChanged := !slices.Equal(n.GroupIDs, cur.GroupIDs)
		tagsChanged := !slices.Equal(n.Tags, cur.Tags)
		if !rowChanged && !groupsChanged && !tagsChanged {
			continue
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
			if _, err := e.exec("UPDATE hosts SET host = ?, name = ?, status = ? WHERE id = ?", n.Host, n.Name, status(n.Enabled), n.ID); err != nil {
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
		if n.Host != cur.Host {
			e.hostName[cur.Host] = 0
			e.hostName[n.Host] = n.ID
		}
		if n.Name != cur.Name {
			e.setVisible(cur.Name, n.Name, n.ID)
		}
		h := e.editableHost(n.ID)
		h.Host, h.Name, h.Enabled, h.GroupIDs, h.Tags = n.Host, n.Name, n.Enabled, n.GroupIDs, n.Tags
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
	initMap(&e.hosts)
	initMap(&e.hostName)
	for _, id := range ids {
		h := e.host(id)
		for _, q := range []string{
			"DELETE FROM items WHERE host_id = ?",
			"DELETE FROM hosts_groups WHERE host_id = ?",
			"DELETE FROM host_tags WHERE host_id = ?",
			"DELETE FROM hosts WHERE id = ?",
		} {
			if _, err := e.exec(q, id); err != nil {
				return e.fail(fmt.Errorf("cannot delete host %q: %w", h.Host, err))
			}
		}
		e.hostName[h.Host] = 0
		e.setVisible(h.Name, "", id)
		e.hosts[id] = nil
		// Its items vanish with it: item and itemByKey check the host,
		// and build leaves them out. Key overlay entries are left: the
		// host ID is never reused.
	}
	e.res.HostsDeleted += len(ids)
	return nil
}

// --- items ---

// CreateItems creates items and returns their IDs in the same order.
func (e *Edit) CreateItems(items []NewItem) ([]uint64, error) {
	if e.err != nil {
		return nil, e.err
	}
	var el errList
	made := make([]Item, len(items))
	batch := make(map[hostKey]bool, len(items))
	for i := range items {
		ni := &items[i]
		p := "items[" + strconv.Itoa(i) + "]"
		h := e.host(ni.HostID)
		if h == nil {
			el.add(p+".hostid", notFound("host", ni.HostID))
			continue
		}
		it, ok := normItem(&ni.ItemSpec, p, &el)
		if !ok {
			continue
		}
		k := hostKey{ni.HostID, ni.Key}
		if batch[k] || e.itemByKey(ni.HostID, ni.Key) != 0 {
			el.add(p+".key", &ConflictError{Kind: ItemExists, Host: h.Host, Name: ni.Key})
			continue
		}
		batch[k] = true
		it.HostID = ni.HostID
		made[i] = it
	}
	if err := el.err(); err != nil {
		return nil, err
	}
	initMap(&e.items)
	initMap(&e.keys)
	ids := make([]uint64, len(items))
	e.created = slices.Grow(e.created, len(made))
	for i := range made {
		it := &made[i]
		it.Key = strings.Clone(it.Key)
		if it.Name == items[i].Key {
			it.Name = it.Key
		} else {
			it.Name = strings.Clone(it.Name)
		}
		it.Units, it.Delay, it.History, it.Trends = e.str(it.Units), e.str(it.Delay), e.str(it.History), e.str(it.Trends)
		id, err := e.exec("INSERT INTO items (host_id, key_, name, type, value_type, units, delay, history, trends, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			it.HostID, it.Key, it.Name, int64(it.Type), int64(it.ValueType), it.Units, it.Delay, it.History, it.Trends, status(it.Enabled))
		if err != nil {
			return nil, e.fail(fmt.Errorf("cannot create item %q on host %d: %w", it.Key, it.HostID, err))
		}
		it.ID = id
		e.items[id] = it
		e.keys[hostKey{it.HostID, it.Key}] = id
		e.created = append(e.created, it)
		ids[i] = id
	}
	e.res.ItemsCreated += len(items)
	return ids, nil
}

// specOf returns the import-format form of it, for revalidation.
func specOf(it *Item) ItemSpec {
	st := "enabled"
	if !it.Enabled {
		st = "disabled"
	}
	return ItemSpec{
		Key: it.Key, Name: it.Name, Type: strconv.Itoa(int(it.Type)), ValueType: strconv.Itoa(int(it.ValueType)),
		Units: it.Units, Delay: it.Delay, History: it.History, Trends: it.Trends, Status: st,
		TimestampPrecision: it.TimestampPrecision,
	}
}

// UpdateItems changes items. The resulting item is validated as a whole,
// as CreateItems does.
func (e *Edit) UpdateItems(items []ItemUpdate) error {
	if e.err != nil {
		return e.err
	}
	var el errList
	ids := make([]uint64, len(items))
	next := make([]Item, len(items))
	batch := make(map[hostKey]bool, len(items))
	for i := range items {
		u := &items[i]
		ids[i] = u.ID
		p := "items[" + strconv.Itoa(i) + "]"
		cur := e.item(u.ID)
		if cur == nil {
			el.add(p+".id", notFound("item", u.ID))
			continue
		}
		spec := specOf(cur)
		set := func(dst *string, v *string) {
			if v != nil {
				*dst = *v
			}
		}
		set(&spec.Key, u.Key)
		set(&spec.Name, u.Name)
		set(&spec.Type, u.Type)
		set(&spec.ValueType, u.ValueType)
		set(&spec.Units, u.Units)
		set(&spec.Delay, u.Delay)
		set(&spec.History, u.History)
		set(&spec.Trends, u.Trends)
		set(&spec.Status, u.Status)
		if u.Trends == nil && u.ValueType != nil {
			if vt, err := ParseValueType(*u.ValueType); err == nil && !vt.Numeric() {
				spec.Trends = DefaultNonNumericTrend
			}
		}
		if u.Delay == nil && u.Type != nil && spec.Delay == DefaultTrapperDelay {
			if t, err := ParseItemType(*u.Type); err == nil && t != Trapper {
				spec.Delay = "" // the polled default rather than a "0" that never polls
			}
		}
		it, ok := normItem(&spec, p, &el)
		if !ok {
			continue
		}
		k := hostKey{cur.HostID, it.Key}
		if it.Key != cur.Key {
			if other := e.itemByKey(cur.HostID, it.Key); batch[k] || other != 0 && other != u.ID {
				el.add(p+".key", &ConflictError{Kind: ItemExists, Host: e.host(cur.HostID).Host, Name: it.Key})
				continue
			}
		}
		batch[k] = true
		it.ID, it.HostID = cur.ID, cur.HostID
		next[i] = it
	}
	dupIDs("items", ids, &el)
	if err := el.err(); err != nil {
		return err
	}
	initMap(&e.items)
	initMap(&e.keys)
	for i := range next {
		n := &next[i]
		cur := e.item(n.ID)
		if cur.sameConfig(n) {
			continue
		}
		if n.Key == cur.Key {
			n.Key = cur.Key
		} else {
			n.Key = strings.Clone(n.Key)
		}
		switch n.Name {
		case n.Key:
			n.Name = n.Key
		case cur.Name:
			n.Name = cur.Name
		default:
			n.Name = strings.Clone(n.Name)
		}
		n.Units, n.Delay, n.History, n.Trends = e.str(n.Units), e.str(n.Delay), e.str(n.History), e.str(n.Trends)
		_, err := e.exec("UPDATE items SET key_ = ?, name = ?, type = ?, value_type = ?, units = ?, delay = ?, history = ?, trends = ?, status = ? WHERE id = ?",
			n.Key, n.Name, int64(n.Type), int64(n.ValueType), n.Units, n.Delay, n.History, n.Trends, status(n.Enabled), n.ID)
		if err != nil {
			return e.fail(fmt.Errorf("cannot update item %d (%q): %w", n.ID, cur.Key, err))
		}
		if n.Key != cur.Key {
			e.keys[hostKey{cur.HostID, cur.Key}] = 0
			e.keys[hostKey{n.HostID, n.Key}] = n.ID
		}
		if it, ok := e.items[n.ID]; ok {
			*it = *n // created or changed earlier in this Edit: keep the pointer in e.created
		} else {
			c := *n
			e.items[n.ID] = &c
		}
		e.res.ItemsUpdated++
	}
	return nil
}

// DeleteItems deletes items. Their history stays in the history store.
func (e *Edit) DeleteItems(ids []uint64) error {
	if e.err != nil {
		return e.err
	}
	var el errList
	for i, id := range ids {
		if e.item(id) == nil {
			el.add("items["+strconv.Itoa(i)+"]", notFound("item", id))
		}
	}
	dupIDs("items", ids, &el)
	if err := el.err(); err != nil {
		return err
	}
	initMap(&e.items)
	initMap(&e.keys)
	for _, id := range ids {
		it := e.item(id)
		if _, err := e.exec("DELETE FROM items WHERE id = ?", id); err != nil {
			return e.fail(fmt.Errorf("cannot delete item %d (%q): %w", id, it.Key, err))
		}
		e.keys[hostKey{it.HostID, it.Key}] = 0
		e.items[id] = nil
	}
	e.res.ItemsDeleted += len(ids)
	return nil
}

// build makes the snapshot that follows old once the Edit is committed:
// old with the overlay applied, without reading the database back.
// TestEditMatchesReload checks that it equals what Open would load.
func (e *Edit) build() (*Snapshot, error) {
	old := e.old
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

	hosts := make([]Host, 0, len(old.hosts)+len(e.newHosts))
	var dead map[uint64]bool
	for i := range old.hosts {
		h := &old.hosts[i]
		o, ok := e.hosts[h.ID]
		switch {
		case !ok:
			hosts = append(hosts, *h)
		case o == nil:
			if dead == nil {
				dead = map[uint64]bool{}
			}
			dead[h.ID] = true
		default:
			hosts = append(hosts, *o)
		}
	}
	for _, id := range e.newHosts {
		if h := e.hosts[id]; h != nil {
			hosts = append(hosts, *h)
		}
	}
	for i := range hosts {
		if len(hosts[i].GroupIDs) == 0 {
			hosts[i].GroupIDs = nil // as loadSnapshot leaves it
		}
		if len(hosts[i].Tags) == 0 {
			hosts[i].Tags = nil
		}
	}

	src := itemSource{base: old.items, skipHosts: dead}
	for id, it := range e.items {
		idx := old.itemIndex(id)
		if idx < 0 || dead[old.items[idx].HostID] {
			continue // created in this Edit, or gone with its host
		}
		if it == nil {
			src.skip = append(src.skip, idx)
		} else {
			src.patches = append(src.patches, itemPatch{idx: idx, it: *it})
		}
	}
	slices.Sort(src.skip)
	slices.SortFunc(src.patches, func(a, b itemPatch) int { return cmp.Compare(a.idx, b.idx) })
	for _, it := range e.created {
		if e.items[it.ID] != nil && e.host(it.HostID) != nil {
			src.created = append(src.created, it)
		}
	}
	return buildSnapshot(old.version+1, groups, hosts, src)
}
