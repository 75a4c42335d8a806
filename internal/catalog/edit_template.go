package catalog

import (
	"fmt"
	"slices"
	"strconv"
)

// maxTemplateLinks bounds the templates linked to one owner; Zabbix has
// no bound, and no installation links hundreds.
const maxTemplateLinks = 256

// UpsertTemplate creates the template with the technical name or
// updates its visible name, returning its ID. An import that names a
// template by name uses it; the API creates templates with CreateHosts.
func (e *Edit) UpsertTemplate(host, name string) (uint64, error) {
	return e.upsertTemplate(host, name, "")
}

// upsertTemplate is UpsertTemplate giving a new template uuid ("" makes
// one up).
func (e *Edit) upsertTemplate(host, name, uuid string) (uint64, error) {
	if e.err != nil {
		return 0, e.err
	}
	if name == "" {
		name = host
	}
	if id := e.hostByName(host); id != 0 {
		h := e.host(id)
		if !h.IsTemplate {
			return 0, &FieldError{Field: "template.template", Err: &ConflictError{Kind: HostExists, Host: host}}
		}
		if h.Name != name {
			if err := e.UpdateHosts([]HostUpdate{{ID: id, Name: &name}}); err != nil {
				return 0, prefixField(err, "template")
			}
			e.res.TemplatesUpdated++
		}
		return id, nil
	}
	ids, err := e.CreateHosts([]NewHost{{Host: host, Name: name, Template: true, UUID: uuid}})
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// LinkTemplates makes the templates linked to a host or template equal
// to tmpls (SetTemplates, unlinking without clearing).
func (e *Edit) LinkTemplates(owner uint64, tmpls []uint64, field string) (bool, error) {
	return e.SetTemplates(owner, tmpls, nil, field)
}

// SetTemplates makes the templates linked to a host or template equal
// to tmpls, as Zabbix 6.0 links and unlinks (inherit.go): a template
// linked now gets its items and triggers copied to the owner (and on
// to what links the owner); one no longer listed is unlinked, its
// copies kept as the owner's own, or deleted if clear lists it
// (templates_clear). A template may be linked to an owner once, even
// through others, and never to itself. It reports whether anything
// changed.
func (e *Edit) SetTemplates(owner uint64, tmpls, clear []uint64, field string) (bool, error) {
	if e.err != nil {
		return false, e.err
	}
	oh := e.host(owner)
	if oh == nil {
		return false, &FieldError{Field: field, Err: notFound("host or template", owner)}
	}
	if len(tmpls) > maxTemplateLinks {
		return false, &FieldError{Field: field, Err: fmt.Errorf("more than %d linked templates", maxTemplateLinks)}
	}
	var el errList
	for i, t := range tmpls {
		if h := e.host(t); h == nil || !h.IsTemplate {
			el.add(field+"["+strconv.Itoa(i)+"]", notFound("template", t))
		}
	}
	dupIDs(field, tmpls, &el)
	if err := el.err(); err != nil {
		return false, err
	}
	want := slices.Sorted(slices.Values(tmpls))
	cur := e.links(owner)
	removed := slices.DeleteFunc(slices.Clone(cur), func(t uint64) bool { return slices.Contains(want, t) })
	if slices.Equal(want, cur) {
		return false, nil
	}
	if err := e.checkLinkGraph(oh, want, field); err != nil {
		return false, err
	}
	if err := e.propagate(func() error {
		for _, t := range removed {
			if err := e.unlink(oh, t, slices.Contains(clear, t)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return false, err
	}
	if _, err := e.exec("DELETE FROM template_links WHERE owner_id = ?", owner); err != nil {
		return false, e.fail(fmt.Errorf("cannot unlink templates: %w", err))
	}
	for _, t := range want {
		if _, err := e.exec("INSERT INTO template_links (owner_id, template_id) VALUES (?, ?)", owner, t); err != nil {
			return false, e.fail(fmt.Errorf("cannot link template %d: %w", t, err))
		}
	}
	e.setLinks(owner, want)
	var added []uint64
	for _, t := range want {
		if !slices.Contains(cur, t) {
			added = append(added, t)
		}
	}
	if len(added) == 0 {
		return true, nil
	}
	var items []*Item
	var trigs []*Trigger
	for _, t := range added {
		items = append(items, e.hostItems(t)...)
		trigs = append(trigs, e.hostTriggers(t)...)
	}
	err := e.propagate(func() error {
		ci, ct, err := e.copyTo(items, trigs, oh, field)
		if err != nil {
			return err
		}
		return e.inheritDown(oh, ci, ct)
	})
	return true, err
}

// checkLinkGraph refuses links that would make owner reach itself
// through its templates, or reach one template along two paths (Zabbix
// 6.0 refuses both: the copies would collide).
func (e *Edit) checkLinkGraph(owner *Host, want []uint64, field string) error {
	count := map[uint64]int{}
	var path []uint64
	var walk func(t uint64) error
	walk = func(t uint64) error {
		path = append(path, t)
		defer func() { path = path[:len(path)-1] }()
		if t == owner.ID {
			// Zabbix names the cycle from the template linked now, through
			// the owner and down what links it, back to that template.
			names := []string{e.host(path[0]).Host}
			for i := len(path) - 1; i >= 0; i-- {
				names = append(names, e.host(path[i]).Host)
			}
			return &FieldError{Field: field, Err: &LinkError{Cycle: names, Template: names[0], Host: owner.Host}}
		}
		if len(path) > maxTemplateLinks {
			return &FieldError{Field: field, Err: fmt.Errorf("templates are linked more than %d levels deep", maxTemplateLinks)}
		}
		if count[t]++; count[t] > 1 {
			return &FieldError{Field: field, Err: &LinkError{Twice: true}}
		}
		for _, u := range e.links(t) {
			if err := walk(u); err != nil {
				return err
			}
		}
		return nil
	}
	for _, t := range want {
		if err := walk(t); err != nil {
			return err
		}
	}
	return nil
}

// unlink removes template tmpl's copies from owner: kept as the owner's
// own (TemplateID 0; on a template they get a uuid, as own items have)
// or, if clear is set, deleted with what was copied from them further
// down. The caller rewrites the link rows.
func (e *Edit) unlink(owner *Host, tmpl uint64, clear bool) error {
	from := map[uint64]bool{}
	for _, it := range e.hostItems(tmpl) {
		from[it.ID] = true
	}
	fromTrig := map[uint64]bool{}
	for _, t := range e.hostTriggers(tmpl) {
		fromTrig[t.ID] = true
	}
	var del []uint64
	for _, it := range e.hostItems(owner.ID) {
		if !from[it.TemplateID] {
			continue
		}
		if clear {
			del = append(del, it.ID)
			continue
		}
		n := *it
		n.TemplateID = 0
		if owner.IsTemplate {
			n.MutExt().UUID = NewUUID()
		}
		if m := e.valueMap(n.ValueMapID); m != nil && m.HostID != owner.ID {
			n.ValueMapID = 0 // the template's map is not the owner's (6.0 drops it)
		}
		if err := e.writeItem(&n, it); err != nil {
			return err
		}
		e.res.ItemsUpdated++
	}
	var delTrig []uint64
	for _, t := range e.hostTriggers(owner.ID) {
		if !fromTrig[t.TemplateID] {
			continue
		}
		if clear {
			delTrig = append(delTrig, t.ID)
			continue
		}
		n := *t
		n.TemplateID = 0
		if owner.IsTemplate {
			n.UUID = NewUUID()
		}
		if err := e.updateTrigger(&n); err != nil {
			return err
		}
		e.res.TriggersUpdated++
	}
	if len(delTrig) > 0 {
		if err := e.DeleteTriggers(delTrig); err != nil {
			return err
		}
	}
	if len(del) > 0 {
		return e.DeleteItems(del)
	}
	return nil
}

// deleteTemplate clears a template from everything linking it and drops
// its links both ways; DeleteHosts deletes its rows. Value maps of the
// template named by items elsewhere (copies kept by an unlink) are
// cleared from them.
func (e *Edit) deleteTemplate(t *Host) error {
	for _, c := range slices.Clone(e.childrenOf(t.ID)) {
		ch := e.host(c)
		if ch == nil {
			continue
		}
		links := slices.DeleteFunc(slices.Clone(e.links(c)), func(x uint64) bool { return x == t.ID })
		if _, err := e.SetTemplates(c, links, []uint64{t.ID}, "templates"); err != nil {
			return err
		}
	}
	var maps []uint64
	for _, m := range e.hostValueMaps(t.ID) {
		maps = append(maps, m.ID)
	}
	if err := e.clearValueMapRefs(maps, t.ID); err != nil {
		return err
	}
	if len(e.links(t.ID)) > 0 {
		e.setLinks(t.ID, nil)
	}
	return nil
}

// hostValueMaps returns the current value maps of a host or template.
func (e *Edit) hostValueMaps(host uint64) []*ValueMap {
	var out []*ValueMap
	for i := range e.old.valueMaps {
		if m := e.valueMap(e.old.valueMaps[i].ID); m != nil && m.HostID == host {
			out = append(out, m)
		}
	}
	for _, id := range e.newValueMaps {
		if m := e.valueMap(id); m != nil && m.HostID == host {
			out = append(out, m)
		}
	}
	return out
}

// clearValueMapRefs leaves the items naming one of the maps without a
// value map, wherever they are: a template's map is named by its
// copies, and by former copies an unlink kept, on any host. The items
// of skipHost (being deleted) are left alone.
func (e *Edit) clearValueMapRefs(maps []uint64, skipHost uint64) error {
	if len(maps) == 0 {
		return nil
	}
	gone := map[uint64]bool{}
	for _, id := range maps {
		gone[id] = true
		if _, err := e.exec("UPDATE items SET valuemap_id = 0 WHERE valuemap_id = ?", id); err != nil {
			return e.fail(fmt.Errorf("cannot clear value map %d from its items: %w", id, err))
		}
	}
	initMap(&e.items)
	clearIt := func(it *Item) {
		if it == nil || !gone[it.ValueMapID] || it.HostID == skipHost {
			return
		}
		if cur := e.item(it.ID); cur != nil && gone[cur.ValueMapID] {
			n := *cur
			n.ValueMapID = 0
			if p, ok := e.items[n.ID]; ok && p != nil {
				*p = n
			} else {
				e.items[n.ID] = &n
			}
		}
	}
	for _, part := range []*Snapshot{e.old, e.old.part()} {
		for it := range part.allItems {
			clearIt(it)
		}
	}
	for _, it := range e.created {
		clearIt(it)
	}
	return nil
}
