package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"unicode/utf8"
)

// Host inventory (Zabbix's host_inventory): a host's inventory mode and
// the fields an operator (or `peregrine migrate`) set, in a table of its
// own with a row only for hosts whose inventory is not disabled, so that
// the hosts table and its statements stay as they were. Mode 1
// (automatic) is stored and shown; items' inventory_link does not fill
// fields yet.

// Inventory modes, Zabbix's numbers.
const (
	InventoryDisabled  int8 = -1
	InventoryManual    int8 = 0
	InventoryAutomatic int8 = 1
)

// HostInventory is a host's inventory: its mode and its non-empty
// fields by 6.0's lowercase names (InventoryFieldNames). Host.Inventory
// is nil for a host whose inventory is disabled (the default).
type HostInventory struct {
	Mode   int8
	Fields map[string]string // nil: none
}

// sameInventory reports whether a and b are the same inventory (nil:
// disabled).
func sameInventory(a, b *HostInventory) bool {
	if a == nil || b == nil {
		return (a == nil || a.Mode == InventoryDisabled) && (b == nil || b.Mode == InventoryDisabled)
	}
	return a.Mode == b.Mode && maps.Equal(a.Fields, b.Fields)
}

// inventoryMax is each field's length limit, from the Zabbix 6.0
// database schema (recorded from 6.0.14's host_inventory columns; text
// columns 65535).
var inventoryMax = map[string]int{
	"type": 64, "type_full": 64, "name": 128, "alias": 128, "os": 128, "os_full": 255, "os_short": 128,
	"serialno_a": 64, "serialno_b": 64, "tag": 64, "asset_tag": 64, "macaddress_a": 64, "macaddress_b": 64,
	"hardware": 255, "hardware_full": 65535, "software": 255, "software_full": 65535,
	"software_app_a": 64, "software_app_b": 64, "software_app_c": 64, "software_app_d": 64, "software_app_e": 64,
	"contact": 65535, "location": 65535, "location_lat": 16, "location_lon": 16, "notes": 65535,
	"chassis": 64, "model": 64, "hw_arch": 32, "vendor": 64, "contract_number": 64, "installer_name": 64,
	"deployment_status": 64, "url_a": 255, "url_b": 255, "url_c": 255, "host_networks": 65535,
	"host_netmask": 39, "host_router": 39, "oob_ip": 39, "oob_netmask": 39, "oob_router": 39,
	"date_hw_purchase": 64, "date_hw_install": 64, "date_hw_expiry": 64, "date_hw_decomm": 64,
	"site_address_a": 128, "site_address_b": 128, "site_address_c": 128, "site_city": 128, "site_state": 64,
	"site_country": 64, "site_zip": 64, "site_rack": 128, "site_notes": 65535,
	"poc_1_name": 128, "poc_1_email": 128, "poc_1_phone_a": 64, "poc_1_phone_b": 64, "poc_1_cell": 64,
	"poc_1_screen": 64, "poc_1_notes": 65535,
	"poc_2_name": 128, "poc_2_email": 128, "poc_2_phone_a": 64, "poc_2_phone_b": 64, "poc_2_cell": 64,
	"poc_2_screen": 64, "poc_2_notes": 65535,
}

// InventoryFieldNames are the inventory fields in 6.0's order (the order
// host.get writes them in), lowercase.
var InventoryFieldNames = func() []string {
	out := make([]string, len(inventoryFields))
	for i, f := range inventoryFields {
		out[i] = strings.ToLower(f)
	}
	return out
}()

// IsInventoryField reports whether name is an inventory field.
func IsInventoryField(name string) bool { _, ok := inventoryMax[name]; return ok }

// Check validates the mode and the fields' lengths, in 6.0's words.
func (inv HostInventory) Check() error {
	if inv.Mode < InventoryDisabled || inv.Mode > InventoryAutomatic {
		//lint:ignore ST1005 Zabbix's own words, which the API returns as they are
		return fmt.Errorf(`Incorrect value for field "inventory_mode": value must be one of -1, 0, 1.`)
	}
	for _, f := range InventoryFieldNames {
		v, ok := inv.Fields[f]
		if !ok {
			continue
		}
		if !utf8.ValidString(v) {
			return fmt.Errorf("inventory field %q is not valid UTF-8", f)
		}
		if n := utf8.RuneCountInString(v); n > inventoryMax[f] {
			return &IPMIFieldError{Field: f, Value: v, Len: n, Max: inventoryMax[f]}
		}
	}
	for f := range inv.Fields {
		if !IsInventoryField(f) {
			//lint:ignore ST1005 Zabbix's own words, which the API returns as they are
			return fmt.Errorf("Incorrect inventory field %q.", f)
		}
	}
	return nil
}

// hostInventorySchema holds the inventories. No foreign key, as
// host_ipmi: the Go side deletes the row with its host. IF NOT EXISTS:
// the migration tests of older versions downgrade other tables and leave
// this one.
const hostInventorySchema = `
CREATE TABLE IF NOT EXISTS host_inventory (
	host_id INTEGER PRIMARY KEY,
	mode    INTEGER NOT NULL,
	fields  TEXT NOT NULL
);
`

// migrateHostInventory adds the host_inventory table, kept on its own so
// that schema changes made in parallel renumber cleanly.
func migrateHostInventory() string { return hostInventorySchema }

// loadHostInventory attaches the host_inventory rows to their hosts;
// hosts without a row have their inventory disabled (nil).
func loadHostInventory(ctx context.Context, tx *sql.Tx, hosts []Host) error {
	byHost := make(map[uint64]int, len(hosts))
	for i := range hosts {
		byHost[hosts[i].ID] = i
	}
	err := queryEach(ctx, tx, "SELECT host_id, mode, fields FROM host_inventory", func(r *sql.Rows) error {
		var id uint64
		var mode int64
		var fields string
		if err := r.Scan(&id, &mode, &fields); err != nil {
			return err
		}
		i, ok := byHost[id]
		if !ok {
			return fmt.Errorf("%w: inventory of unknown host %d", ErrCorrupt, id)
		}
		inv := HostInventory{Mode: int8(mode)}
		if fields != "{}" {
			if err := json.Unmarshal([]byte(fields), &inv.Fields); err != nil {
				return fmt.Errorf("%w: inventory of host %d: %v", ErrCorrupt, id, err)
			}
		}
		loadExt(&hosts[i]).Inventory = &inv
		return nil
	})
	if err != nil {
		return fmt.Errorf("cannot load host inventories: %w", err)
	}
	return nil
}

// writeHostInventory stores a host's inventory: a row unless it is
// disabled.
func writeHostInventory(exec execer, id uint64, inv *HostInventory, had bool) error {
	if had {
		if err := exec("DELETE FROM host_inventory WHERE host_id = ?", id); err != nil {
			return err
		}
	}
	if inv == nil || inv.Mode == InventoryDisabled {
		return nil
	}
	fields := []byte("{}")
	if len(inv.Fields) > 0 {
		var err error
		if fields, err = json.Marshal(inv.Fields); err != nil {
			return err
		}
	}
	return exec("INSERT INTO host_inventory (host_id, mode, fields) VALUES (?, ?, ?)", id, int64(inv.Mode), string(fields))
}

// cloneInventory copies inv, without empty fields, so that the snapshot
// shares nothing with the caller; a disabled inventory is nil.
func cloneInventory(inv *HostInventory) *HostInventory {
	if inv == nil || inv.Mode == InventoryDisabled {
		return nil
	}
	out := &HostInventory{Mode: inv.Mode, Fields: make(map[string]string, len(inv.Fields))}
	for k, v := range inv.Fields {
		if v != "" {
			out.Fields[strings.Clone(k)] = strings.Clone(v)
		}
	}
	if len(out.Fields) == 0 {
		out.Fields = nil
	}
	return out
}
