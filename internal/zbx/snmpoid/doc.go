// Package snmpoid parses the snmp_oid field of Zabbix 6.0 SNMP agent
// items (type 20) into what the SNMP checker must ask a device. It is
// pure (no I/O, no state) so that the catalog can validate with it what
// the API and the import store, and the checker can run what was
// validated.
//
// Zabbix 6.0 has three forms (walk[] and get[] came with 6.4 and are
// refused with a message saying so):
//
//   - an OID: numeric ("1.3.6.1.2.1.1.3.0", a leading dot allowed) or
//     textual ("SNMPv2-MIB::sysUpTime.0", "ifInOctets.1");
//   - a dynamic index, OID["index","<index OID>","<value>"]: walk the
//     index OID, take the index whose value equals <value>, and get
//     OID.<index> (ifInOctets["index","ifDescr","eth0"]);
//   - low-level discovery, discovery[{#MACRO},<OID>,...]: walk each OID
//     and return one LLD row per index, {#SNMPINDEX} plus each macro.
//
// Textual OIDs. Zabbix resolves names through the MIB files installed on
// the server (net-snmp). Peregrine loads no MIB files: it knows the names
// of the objects templates use most (the system group, ifTable, ifXTable,
// a few HOST-RESOURCES-MIB scalars, the trap objects; see names.go) and
// refuses any other name with a message asking for the numeric OID, at
// item.create time rather than at every check.
//
// OIDs come out in one canonical form, numeric with a leading dot
// (".1.3.6.1.2.1.1.3.0"), the form gosnmp and net-snmp's -On print.
//
// It lives under zbx, not poll/snmp, because the catalog validates with
// it: it is a foundation package (docs/layout.md) and imports only
// zbx/itemkey.
package snmpoid
