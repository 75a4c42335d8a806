package catalog

import (
	"fmt"
	"slices"
	"strconv"
)

// inventoryFields are Zabbix 6.0's host inventory fields, numbered from
// 1 as an item's inventory_link numbers them (0: none); exports name
// them in capitals. The numbers the official templates use were checked
// against 6.0.14 (TYPE 1, NAME 3, OS 5, SERIALNO_A 8, MACADDRESS_A 12,
// SOFTWARE_FULL 17, SOFTWARE_APP_A..E 18-22, CONTACT 23, LOCATION 24,
// NOTES 27, MODEL 29, VENDOR 31).
//
// An item's link does not fill its host's inventory (host_inventory.go)
// yet: it is stored, so that it is shown and exported as it was
// imported, and has no effect.
var inventoryFields = []string{
	"TYPE", "TYPE_FULL", "NAME", "ALIAS", "OS", "OS_FULL", "OS_SHORT", "SERIALNO_A", "SERIALNO_B", "TAG",
	"ASSET_TAG", "MACADDRESS_A", "MACADDRESS_B", "HARDWARE", "HARDWARE_FULL", "SOFTWARE", "SOFTWARE_FULL",
	"SOFTWARE_APP_A", "SOFTWARE_APP_B", "SOFTWARE_APP_C", "SOFTWARE_APP_D", "SOFTWARE_APP_E", "CONTACT",
	"LOCATION", "LOCATION_LAT", "LOCATION_LON", "NOTES", "CHASSIS", "MODEL", "HW_ARCH", "VENDOR",
	"CONTRACT_NUMBER", "INSTALLER_NAME", "DEPLOYMENT_STATUS", "URL_A", "URL_B", "URL_C", "HOST_NETWORKS",
	"HOST_NETMASK", "HOST_ROUTER", "OOB_IP", "OOB_NETMASK", "OOB_ROUTER", "DATE_HW_PURCHASE",
	"DATE_HW_INSTALL", "DATE_HW_EXPIRY", "DATE_HW_DECOMM", "SITE_ADDRESS_A", "SITE_ADDRESS_B",
	"SITE_ADDRESS_C", "SITE_CITY", "SITE_STATE", "SITE_COUNTRY", "SITE_ZIP", "SITE_RACK", "SITE_NOTES",
	"POC_1_NAME", "POC_1_EMAIL", "POC_1_PHONE_A", "POC_1_PHONE_B", "POC_1_CELL", "POC_1_SCREEN",
	"POC_1_NOTES", "POC_2_NAME", "POC_2_EMAIL", "POC_2_PHONE_A", "POC_2_PHONE_B", "POC_2_CELL",
	"POC_2_SCREEN", "POC_2_NOTES",
}

// MaxInventoryLink is the highest inventory field number.
var MaxInventoryLink = len(inventoryFields)

// parseInventoryLink reads an inventory_link: an export's name, a number
// 0..70, or "" (none).
func parseInventoryLink(s string) (uint8, error) {
	if s == "" {
		return 0, nil
	}
	if i := slices.Index(inventoryFields, s); i >= 0 {
		return uint8(i + 1), nil
	}
	if n, err := strconv.Atoi(s); err == nil && n >= 0 && n <= len(inventoryFields) {
		return uint8(n), nil
	}
	return 0, fmt.Errorf("unknown inventory field %q: use a Zabbix name (NAME, OS, ...) or a number 0..%d", s, len(inventoryFields))
}
