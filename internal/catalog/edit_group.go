package catalog

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

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
			el.add("groups["+strconv.Itoa(first)+"]", &ConflictError{Kind: HostWithoutGroup, Host: h.Host, Template: h.IsTemplate})
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
