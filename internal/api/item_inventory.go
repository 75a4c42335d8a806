package api

import (
	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// An item's inventory_link: the host inventory field its values fill
// (0: none). item.create and item.update check it as Zabbix 6.0 does
// (recorded from 6.0.14): a number from 0 to 70, and no two items of a
// host filling the same field.

// inventoryLabels are the inventory fields' names as 6.0's refusals
// name them (its item form's labels), by inventory_link - 1.
var inventoryLabels = [...]string{"Type", "Type (Full details)", "Name", "Alias", "OS", "OS (Full details)", "OS (Short)",
	"Serial number A", "Serial number B", "Tag", "Asset tag", "MAC address A", "MAC address B", "Hardware", "Hardware (Full details)",
	"Software", "Software (Full details)", "Software application A", "Software application B", "Software application C",
	"Software application D", "Software application E", "Contact", "Location", "Location latitude", "Location longitude", "Notes",
	"Chassis", "Model", "HW architecture", "Vendor", "Contract number", "Installer name", "Deployment status", "URL A", "URL B",
	"URL C", "Host networks", "Host subnet mask", "Host router", "OOB IP address", "OOB subnet mask", "OOB router",
	"Date HW purchased", "Date HW installed", "Date HW maintenance expires", "Date HW decommissioned", "Site address A",
	"Site address B", "Site address C", "Site city", "Site state / province", "Site country", "Site ZIP / postal",
	"Site rack location", "Site notes", "Primary POC name", "Primary POC email", "Primary POC phone A", "Primary POC phone B",
	"Primary POC cell", "Primary POC screen name", "Primary POC notes", "Secondary POC name", "Secondary POC email",
	"Secondary POC phone A", "Secondary POC phone B", "Secondary POC cell", "Secondary POC screen name", "Secondary POC notes"}

// inventoryUse is what the objects of one call claim: host and field to
// the item's name and id (0: a new item).
type inventoryUse map[[2]uint64]struct {
	name string
	id   uint64
}

// checkInventory checks object p's inventory_link for an item named
// name on host h (id: the item's; a new one's is ^i, i its place in
// the call) against the host's other
// items (the snapshot's, but those the call changes) and the call's
// earlier objects (use).
func (p *itemParams) checkInventory(snap *catalog.Snapshot, h *catalog.Host, id uint64, name string, use inventoryUse, changed map[uint64]bool) error {
	if !p.InventoryLink.Given() {
		return nil
	}
	l := p.InventoryLink.Value
	if l < 0 || l > int64(len(inventoryLabels)) {
		return errParams(`Item "%s" cannot populate a missing host inventory field number "%d". Choices are: from 0 (do not populate) to %d.`, name, l, len(inventoryLabels))
	}
	if l == 0 || h == nil {
		return nil
	}
	k := [2]uint64{h.ID, uint64(l)}
	if u, ok := use[k]; ok && u.id != id {
		// The call's earlier object is named first, an item of the host
		// second (recorded from 6.0.14).
		return errParams(`Two items ("%s" and "%s") cannot populate one host inventory field "%s", this would lead to a conflict.`, u.name, name, inventoryLabels[l-1])
	}
	for _, it := range h.Items() {
		if it.ID == id || changed[it.ID] || int64(it.InventoryLink) != l {
			continue
		}
		return errParams(`Two items ("%s" and "%s") cannot populate one host inventory field "%s", this would lead to a conflict.`, name, it.Name, inventoryLabels[l-1])
	}
	use[k] = struct {
		name string
		id   uint64
	}{name, id}
	return nil
}
