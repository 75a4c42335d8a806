package api

import (
	"errors"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/zbx/itemkey"
)

// The checks item.create and item.update make before the catalog's, as
// Zabbix 6.0 makes them with its own code, in its order and words
// (recorded from 6.0.14): the type; the members an item cannot be
// without (`Incorrect arguments passed to function.`); the host, found
// and writable (a -32602 refusal); the update interval, the interface
// and the key. The catalog checks them all again in the edit; these
// only give 6.0's answer where it refuses the same thing.

// itemTypes60 are the item types Zabbix 6.0 takes, as its refusal lists
// them.
const itemTypes60 = "0, 2, 3, 5, 7, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21"

// unsupportedItemTypes are the item types of 6.0 Peregrine does not
// poll.
var unsupportedItemTypes = map[int64]string{
	11: "database monitor items (11)", 12: "IPMI agent items (12)", 13: "SSH agent items (13)",
	14: "TELNET agent items (14)", 16: "JMX agent items (16)",
}

// checkType checks a given "type": one of 6.0's, and one Peregrine has.
func (p *itemParams) checkType(i int) error {
	t := p.Type.Value
	if what, ok := unsupportedItemTypes[t]; ok {
		return unsupported(i, "type", what)
	}
	if t < 0 || t > 255 || !catalog.ItemType(t).Valid() {
		return oneOf(i, "type", itemTypes60)
	}
	return nil
}

// needsDelay reports whether 6.0 requires an item of type t to have a
// "delay" (every type but trapper and dependent items; recorded from
// 6.0.14) and checks the one it has.
func needsDelay(t catalog.ItemType) bool { return t != catalog.Trapper && t != catalog.Dependent }

// needsInterface reports whether 6.0 refuses an item of type t without
// an interface of its host (recorded from 6.0.14: agent, simple check,
// external check and SNMP agent items; not HTTP agent items).
func needsInterface(t catalog.ItemType) bool {
	switch t {
	case catalog.ZabbixAgent, catalog.SimpleCheck, catalog.External, catalog.SNMPAgent:
		return true
	}
	return false
}

// createChecks checks item.create's object i in 6.0's order, up to and
// including its update interval, interface and key.
func (p *itemParams) createChecks(i int, snap *catalog.Snapshot, a access) error {
	// An itemid is ignored, as 6.0 ignores it (recorded from 6.0.14).
	if !p.Type.Given() {
		return missing(i, "type")
	}
	if err := p.checkType(i); err != nil {
		return err
	}
	typ := catalog.ItemType(p.Type.Value)
	if !p.HostID.Set || !p.Name.Set || !p.Key.Set || !p.ValueType.Given() || needsDelay(typ) && !p.Delay.Set {
		return errIncorrectArguments
	}
	if err := p.common(i); err != nil {
		return err
	}
	h := snap.HostOrTemplate(p.HostID.Value)
	if h == nil || !a.all() && !a.canWrite(h) {
		return errNoPermissionsParams
	}
	return p.zabbixChecks(h, p.Name.Value, typ, true)
}

// updateChecks checks item.update's object i against cur, the item as
// it is, for what 6.0 checks with its own code.
func (p *itemParams) updateChecks(cur *catalog.Item) error {
	typ, name := cur.Type, cur.Name
	if p.Type.Given() {
		typ = catalog.ItemType(p.Type.Value)
	}
	if p.Name.Set {
		name = p.Name.Value
	}
	return p.zabbixChecks(cur.Host, name, typ, false)
}

// zabbixChecks checks the update interval, the interface (on create)
// and the key of an item named name on host h, of type typ.
func (p *itemParams) zabbixChecks(h *catalog.Host, name string, typ catalog.ItemType, create bool) error {
	if p.Delay.Set && needsDelay(typ) {
		var de *catalog.DelayError
		if err := catalog.CheckDelay(p.Delay.Value, typ); errors.As(err, &de) {
			switch de.Problem {
			case catalog.DelayTooLong:
				return errParams("Item will not be refreshed. Update interval should be between 1s and 1d. Also Scheduled/Flexible intervals can be used.")
			case catalog.DelayNever:
				return errParams("Item will not be refreshed. Specified update interval requires having at least one either flexible or scheduling interval.")
			}
			return errParams(`Incorrect value for field "delay": invalid delay.`)
		}
	}
	if create && needsInterface(typ) && !h.IsTemplate { // a template has no interfaces
		want, _, _ := catalog.ItemInterfaceType(typ)
		var f *catalog.Interface
		for j := range h.Interfaces {
			if h.Interfaces[j].ID == p.InterfaceID.Value {
				f = &h.Interfaces[j]
			}
		}
		switch {
		case p.InterfaceID.Value == 0:
			return errParams("No interface found.")
		case f == nil:
			return errParams("Item uses host interface from non-parent host.")
		case want != 0 && f.Type != want:
			return errParams("Item uses incorrect interface type.")
		}
	}
	if p.Key.Set {
		var se *itemkey.SyntaxError
		if _, err := itemkey.Parse(p.Key.Value); errors.As(err, &se) {
			return errParams(`Invalid key "%s" for item "%s" on "%s": %s.`, p.Key.Value, name, h.Host, se.Zabbix())
		}
	}
	return nil
}
