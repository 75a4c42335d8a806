package catalog

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// checkIfaces validates the complete new interface list of a host (hostID
// 0 for a host being created) and returns a normalised copy: default
// ports filled in, kept interfaces with their IDs. It reports interfaces
// that would be deleted or change type while an item uses them.
func (e *Edit) checkIfaces(p, host string, hostID uint64, list []Interface, el *errList) []Interface {
	if len(list) == 0 && hostID == 0 {
		return nil
	}
	var cur []Interface
	if hostID != 0 {
		cur = e.host(hostID).Interfaces
	}
	out := make([]Interface, len(list))
	seen := make(map[uint64]bool, len(list))
	for j := range list {
		f := list[j]
		f.HostID = hostID
		fp := p + "[" + strconv.Itoa(j) + "]"
		if f.ID != 0 {
			switch {
			case seen[f.ID]:
				el.addf(fp+".interfaceid", "interface %d is listed twice", f.ID)
			case findIface(cur, f.ID) == nil:
				el.add(fp+".interfaceid", notFound("interface of this host", f.ID))
			}
			seen[f.ID] = true
		}
		normIface(&f, host, fp, el)
		out[j] = f
	}
	checkMains(host, out, p, el)
	if hostID == 0 {
		return out
	}
	// An interface an item uses may neither go nor change type.
	gone := map[uint64]bool{}
	for _, c := range cur {
		if n := findIface(out, c.ID); n == nil || n.Type != c.Type {
			gone[c.ID] = true
		}
	}
	if len(gone) > 0 {
		e.eachItemOf(hostID, func(it *Item) bool {
			if gone[it.InterfaceID] {
				el.add(p, &ConflictError{Kind: InterfaceInUse, Host: host, Name: it.Name})
				return false
			}
			return true
		})
	}
	return out
}

func findIface(list []Interface, id uint64) *Interface {
	for i := range list {
		if list[i].ID == id {
			return &list[i]
		}
	}
	return nil
}

// sameIfaces reports whether two interface lists are equal, IDs of new
// interfaces (0) never matching.
func sameIfaces(a, b []Interface) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		c := findIface(b, a[i].ID)
		if a[i].ID == 0 || c == nil || !a[i].sameIface(c) {
			return false
		}
	}
	return true
}

// writeIfaces makes host h's interfaces in the database go from cur to
// next (validated by checkIfaces) and returns next with every ID set,
// sorted by ID, its strings and maps the Edit's own.
func (e *Edit) writeIfaces(h *Host, cur, next []Interface) ([]Interface, error) {
	out := make([]Interface, 0, len(next))
	for _, c := range cur {
		if findIface(next, c.ID) == nil {
			if _, err := e.exec("DELETE FROM interfaces WHERE id = ?", c.ID); err != nil {
				return nil, e.fail(err)
			}
		}
	}
	for _, f := range next {
		f.HostID = h.ID
		if c := findIface(cur, f.ID); c != nil && c.sameIface(&f) {
			out = append(out, *c)
			continue
		}
		f.IP, f.DNS, f.Port, f.Details = strings.Clone(f.IP), strings.Clone(f.DNS), e.str(f.Port), maps.Clone(f.Details)
		if f.ID != 0 {
			_, err := e.exec("UPDATE interfaces SET type = ?, main = ?, useip = ?, ip = ?, dns = ?, port = ?, details = ? WHERE id = ?",
				int64(f.Type), f.Main, f.UseIP, f.IP, f.DNS, f.Port, encodeDetails(f.Details), f.ID)
			if err != nil {
				return nil, e.fail(err)
			}
		} else {
			id, err := e.exec("INSERT INTO interfaces (host_id, type, main, useip, ip, dns, port, details) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
				h.ID, int64(f.Type), f.Main, f.UseIP, f.IP, f.DNS, f.Port, encodeDetails(f.Details))
			if err != nil {
				return nil, e.fail(err)
			}
			f.ID = id
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b Interface) int { return cmp.Compare(a.ID, b.ID) })
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// eachItemOf calls fn with every current item of a host until fn returns
// false.
func (e *Edit) eachItemOf(hostID uint64, fn func(it *Item) bool) {
	if h := e.old.hostByID.get(hostID); h != nil {
		for i := range h.items {
			if it := e.item(h.items[i].ID); it != nil && !fn(it) {
				return
			}
		}
	}
	for _, it := range e.createdOn[hostID] {
		if e.items[it.ID] != nil && !fn(it) {
			return
		}
	}
}

// itemIface resolves and checks the interface of item it on host h: an
// explicit ID must be one of the host's and of the type the item type
// needs; none gives the host's main interface of that type (of any type,
// agent first, for SSH and Telnet items), which agent, SSH and Telnet
// items must have. Items of types that use no interface get none.
// byAddr, if not "", selects the interface by address (import format).
// field names the interface field in errors ("interfaceid" for the edit
// API, "interface" for the import format). If lenient is set, an item
// that needs an interface and has none is not an error: itemIface returns
// true and leaves InterfaceID 0 (see Apply).
func itemIface(it *Item, h *Host, byAddr, p, field string, lenient bool, el *errList) (missing bool) {
	if h.IsTemplate {
		// A template has no interfaces: its items' copies take their
		// hosts' (copyIface).
		if byAddr != "" {
			el.addf(p+".interface", "template %q has no interfaces", h.Host)
		}
		it.InterfaceID = 0
		return false
	}
	want, uses, required := ItemInterfaceType(it.Type)
	if !uses {
		if byAddr != "" {
			el.addf(p+".interface", "item type %s uses no interface", it.Type)
		}
		it.InterfaceID = 0
		return false
	}
	if byAddr != "" {
		it.InterfaceID = 0
		for i := range h.Interfaces {
			if f := &h.Interfaces[i]; f.Addr() == byAddr && (want == 0 || f.Type == want) {
				it.InterfaceID = f.ID
				break
			}
		}
		if it.InterfaceID == 0 {
			el.addf(p+".interface", "host %q has no %s interface with address %q", h.Host, cmp.Or(want.String(), "such"), byAddr)
			return false
		}
	}
	if it.InterfaceID == 0 {
		if want != 0 {
			if f := h.MainInterface(want); f != nil {
				it.InterfaceID = f.ID
			}
		} else if required {
			// Any type will do (SSH, Telnet): the first main one, agent
			// first.
			for t := InterfaceAgent; t <= InterfaceJMX && it.InterfaceID == 0; t++ {
				if f := h.MainInterface(t); f != nil {
					it.InterfaceID = f.ID
				}
			}
		}
		if it.InterfaceID == 0 && required {
			if lenient {
				return true
			}
			el.add(p+"."+field, &ConflictError{Kind: NoInterface, Host: h.Host, Name: it.Name})
		}
		return false
	}
	f := findIface(h.Interfaces, it.InterfaceID)
	switch {
	case f == nil:
		el.add(p+"."+field, &ConflictError{Kind: ForeignInterface, Host: h.Host, Name: it.Name})
	case want != 0 && f.Type != want:
		el.add(p+"."+field, &ConflictError{Kind: WrongInterfaceType, Host: h.Host, Name: it.Name})
	}
	return false
}
