package api

import (
	"reflect"
	"slices"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// A host's inventory as host.create and host.update take it and host.get
// returns it (Zabbix 6.0's inventory_mode and inventory), checked as
// 6.0.14 checks them (recorded): an unknown field is `Incorrect inventory
// field "foo".`, fields for a host whose inventory is disabled `Cannot
// set inventory fields for disabled inventory.` (create, or update with
// inventory_mode -1) or `Inventory disabled for host "h".` (update of a
// host whose inventory is disabled), all parameter errors; a mode other
// than -1, 0, 1 and a field over its length are application errors.
// Fields given without a mode on create make a manual inventory; update
// changes the fields given and keeps the others; mode -1 drops them all.
// A number is taken as its text.

// invFields is the inventory member: field name to text.
type invFields map[string]string

func (f *invFields) decodeParam(b []byte, _ *fieldCtx) error {
	ms, ok := objectMembers(b)
	if !ok {
		if elems, isArr := arrayElems(b); isArr && len(elems) == 0 {
			*f = invFields{} // PHP's empty array
			return nil
		}
		return kindError{kind: reflect.Map}
	}
	out := make(invFields, len(ms))
	for _, m := range ms {
		out[m.name] = phpText(m.raw)
	}
	*f = out
	return nil
}

// inventoryProblem is 6.0's error for the inventory members of host i
// named host, whose current inventory is cur (nil: disabled, or a new
// host).
func (p *hostParams) inventoryProblem(host string, update bool, cur *catalog.HostInventory) error {
	if p.InventoryMode.Set && (p.InventoryMode.Value.bad || p.InventoryMode.Value.v < -1 || p.InventoryMode.Value.v > 1) {
		return errApp(`Incorrect value for field "inventory_mode": value must be one of -1, 0, 1.`)
	}
	if !p.Inventory.Set || len(p.Inventory.Value) == 0 {
		return nil
	}
	for _, name := range sortedKeys(p.Inventory.Value) {
		if !catalog.IsInventoryField(name) {
			return errParams(`Incorrect inventory field "%s".`, name)
		}
	}
	switch {
	case p.InventoryMode.Set && p.InventoryMode.Value.v == -1:
		return errParams("Cannot set inventory fields for disabled inventory.")
	case update && !p.InventoryMode.Set && cur == nil:
		return errParams(`Inventory disabled for host "%s".`, host)
	}
	next := p.inventory(cur)
	if err := next.Check(); err != nil {
		if fe, ok := err.(*catalog.IPMIFieldError); ok {
			return errApp(`Value "%s" is too long for field "%s" - %d characters. Allowed length is %d characters.`, fe.Value, fe.Field, fe.Len, fe.Max)
		}
		return errApp("%s", err.Error())
	}
	return nil
}

// inventorySet reports whether an inventory member was given.
func (p *hostParams) inventorySet() bool { return p.InventoryMode.Set || p.Inventory.Set }

// inventory applies the inventory members given to cur (nil: disabled):
// the result is the host's whole new inventory (nil: disabled).
func (p *hostParams) inventory(cur *catalog.HostInventory) *catalog.HostInventory {
	mode := catalog.InventoryDisabled
	fields := map[string]string{}
	if cur != nil {
		mode = cur.Mode
		for k, v := range cur.Fields {
			fields[k] = v
		}
	}
	if p.Inventory.Set && len(p.Inventory.Value) > 0 && cur == nil {
		mode = catalog.InventoryManual // fields without a mode: manual
	}
	if p.InventoryMode.Set {
		mode = int8(p.InventoryMode.Value.v)
	}
	if mode == catalog.InventoryDisabled {
		return nil
	}
	for k, v := range p.Inventory.Value {
		if v == "" {
			delete(fields, k)
		} else {
			fields[k] = v
		}
	}
	return &catalog.HostInventory{Mode: mode, Fields: fields}
}

// inventoryFields writes a host's inventory in host.get's shape: every
// field selected (all by default) when the inventory is not disabled,
// else an empty list.
func inventoryFields(h *catalog.Host, s sel) any {
	if h.Ext().Inventory == nil {
		return []object{}
	}
	out := object{}
	for _, f := range catalog.InventoryFieldNames {
		if s.All || len(s.Fields) == 0 || slices.Contains(s.Fields, f) {
			out[f] = h.Ext().Inventory.Fields[f]
		}
	}
	return out
}

// inventoryMode is host.get's inventory_mode.
func inventoryMode(h *catalog.Host) string {
	if h.Ext().Inventory == nil || h.Ext().Inventory.Mode < 0 || h.Ext().Inventory.Mode > 1 {
		return "-1"
	}
	return [...]string{"0", "1"}[h.Ext().Inventory.Mode]
}
