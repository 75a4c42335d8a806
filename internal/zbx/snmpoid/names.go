package snmpoid

// object is one MIB object Peregrine knows by name.
type object struct {
	module, name, oid string
}

// known lists the MIB objects that textual OIDs may name, with their
// module (the MODULE:: prefix is optional, as with net-snmp's default
// MIB search). The numbers are the IETF MIBs' (RFC 3418, RFC 2863,
// RFC 2790); an object not here must be given numerically.
var known = []object{
	{"SNMPv2-MIB", "sysDescr", "1.3.6.1.2.1.1.1"},
	{"SNMPv2-MIB", "sysObjectID", "1.3.6.1.2.1.1.2"},
	{"SNMPv2-MIB", "sysUpTime", "1.3.6.1.2.1.1.3"},
	{"SNMPv2-MIB", "sysContact", "1.3.6.1.2.1.1.4"},
	{"SNMPv2-MIB", "sysName", "1.3.6.1.2.1.1.5"},
	{"SNMPv2-MIB", "sysLocation", "1.3.6.1.2.1.1.6"},
	{"SNMPv2-MIB", "sysServices", "1.3.6.1.2.1.1.7"},
	{"SNMPv2-MIB", "snmpTrapOID", "1.3.6.1.6.3.1.1.4.1"},
	{"DISMAN-EVENT-MIB", "sysUpTimeInstance", "1.3.6.1.2.1.1.3.0"},
	{"IF-MIB", "ifNumber", "1.3.6.1.2.1.2.1"},
	{"IF-MIB", "ifIndex", "1.3.6.1.2.1.2.2.1.1"},
	{"IF-MIB", "ifDescr", "1.3.6.1.2.1.2.2.1.2"},
	{"IF-MIB", "ifType", "1.3.6.1.2.1.2.2.1.3"},
	{"IF-MIB", "ifMtu", "1.3.6.1.2.1.2.2.1.4"},
	{"IF-MIB", "ifSpeed", "1.3.6.1.2.1.2.2.1.5"},
	{"IF-MIB", "ifPhysAddress", "1.3.6.1.2.1.2.2.1.6"},
	{"IF-MIB", "ifAdminStatus", "1.3.6.1.2.1.2.2.1.7"},
	{"IF-MIB", "ifOperStatus", "1.3.6.1.2.1.2.2.1.8"},
	{"IF-MIB", "ifLastChange", "1.3.6.1.2.1.2.2.1.9"},
	{"IF-MIB", "ifInOctets", "1.3.6.1.2.1.2.2.1.10"},
	{"IF-MIB", "ifInUcastPkts", "1.3.6.1.2.1.2.2.1.11"},
	{"IF-MIB", "ifInNUcastPkts", "1.3.6.1.2.1.2.2.1.12"},
	{"IF-MIB", "ifInDiscards", "1.3.6.1.2.1.2.2.1.13"},
	{"IF-MIB", "ifInErrors", "1.3.6.1.2.1.2.2.1.14"},
	{"IF-MIB", "ifInUnknownProtos", "1.3.6.1.2.1.2.2.1.15"},
	{"IF-MIB", "ifOutOctets", "1.3.6.1.2.1.2.2.1.16"},
	{"IF-MIB", "ifOutUcastPkts", "1.3.6.1.2.1.2.2.1.17"},
	{"IF-MIB", "ifOutNUcastPkts", "1.3.6.1.2.1.2.2.1.18"},
	{"IF-MIB", "ifOutDiscards", "1.3.6.1.2.1.2.2.1.19"},
	{"IF-MIB", "ifOutErrors", "1.3.6.1.2.1.2.2.1.20"},
	{"IF-MIB", "ifOutQLen", "1.3.6.1.2.1.2.2.1.21"},
	{"IF-MIB", "ifName", "1.3.6.1.2.1.31.1.1.1.1"},
	{"IF-MIB", "ifInMulticastPkts", "1.3.6.1.2.1.31.1.1.1.2"},
	{"IF-MIB", "ifInBroadcastPkts", "1.3.6.1.2.1.31.1.1.1.3"},
	{"IF-MIB", "ifOutMulticastPkts", "1.3.6.1.2.1.31.1.1.1.4"},
	{"IF-MIB", "ifOutBroadcastPkts", "1.3.6.1.2.1.31.1.1.1.5"},
	{"IF-MIB", "ifHCInOctets", "1.3.6.1.2.1.31.1.1.1.6"},
	{"IF-MIB", "ifHCInUcastPkts", "1.3.6.1.2.1.31.1.1.1.7"},
	{"IF-MIB", "ifHCOutOctets", "1.3.6.1.2.1.31.1.1.1.10"},
	{"IF-MIB", "ifHCOutUcastPkts", "1.3.6.1.2.1.31.1.1.1.11"},
	{"IF-MIB", "ifHighSpeed", "1.3.6.1.2.1.31.1.1.1.15"},
	{"IF-MIB", "ifAlias", "1.3.6.1.2.1.31.1.1.1.18"},
	{"HOST-RESOURCES-MIB", "hrSystemUptime", "1.3.6.1.2.1.25.1.1"},
	{"HOST-RESOURCES-MIB", "hrSystemNumUsers", "1.3.6.1.2.1.25.1.5"},
	{"HOST-RESOURCES-MIB", "hrSystemProcesses", "1.3.6.1.2.1.25.1.6"},
	{"HOST-RESOURCES-MIB", "hrMemorySize", "1.3.6.1.2.1.25.2.2"},
}

// byName indexes known by name; built once, read-only after.
var byName = func() map[string]object {
	m := make(map[string]object, len(known))
	for _, o := range known {
		m[o.name] = o
	}
	return m
}()
