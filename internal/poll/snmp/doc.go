// Package snmp is the SNMP agent checker (item type 20, "SNMP agent"):
// SNMPv1, v2c and v3 (USM: noAuthNoPriv, authNoPriv, authPriv with
// MD5/SHA1/SHA2 and DES/AES) through github.com/gosnmp/gosnmp, a
// maintained pure-Go SNMP library: we own the batching, the per-device
// scheduling, the rendering of values and the mapping of outcomes to
// Zabbix's, and reuse its BER codec and USM.
//
// What it asks. Each item's snmp_oid (package snmpoid, Zabbix 6.0's
// forms) is read from the catalog snapshot at check time, with the
// interface's details (version, community, bulk, SNMPv3 settings): the
// scheduler's checks name only the item and interface. Plain OIDs of
// one device are batched into GET requests of at most
// Options.MaxOIDsPerRequest OIDs (one per request when the interface's
// bulk is 0, for devices that mishandle several); a tooBig response
// halves the request until the device takes it; SNMPv1's noSuchName
// names one OID, which alone becomes not supported while the rest are
// asked again. discovery[{#MACRO},OID,...] walks each OID (GetBulk with
// Options.MaxRepetitions for v2c/v3 with bulk, GetNext otherwise) and
// answers Zabbix's LLD JSON array ({#SNMPINDEX} plus the macros); a
// dynamic index OID["index",<index OID>,<value>] walks the index column
// once per session to find the index, then gets OID.<index>, walking
// again when the cached index stops answering. Walks stop at the end of
// the subtree or MIB view, fail on an OID that does not increase, and
// are bounded by Options.MaxWalkValues; values by Options.MaxValueSize.
//
// Values are rendered as Zabbix stores them: integers, counters (64-bit
// too), gauges and TimeTicks (hundredths of a second) in decimal; an
// OCTET STRING as text when every byte is printable ASCII or white
// space, else as upper-case hex bytes separated by spaces; OIDs numeric
// with a leading dot (no MIBs are loaded); IpAddress dotted. The
// exception values noSuchObject, noSuchInstance and endOfMibView, and
// an error-status, make the item not supported with net-snmp's text,
// which Zabbix shows ("No Such Object available on this agent at this
// OID", "SNMP error: (noSuchName) ...").
//
// Outcomes. No response within the item's timeout ("Timeout while
// connecting to "ip:port"."; also what a wrong community gets, as agents
// drop such requests) and a refused port (ICMP port unreachable) are
// network errors, which count against the interface's availability in
// package poll exactly as the agent interface's do. A response that
// does not decode, or does not match its request (values for other
// OIDs, a wrong count), makes only that request's items not supported:
// the device answered. SNMPv3 authentication failures (unknown user,
// wrong passphrase: the agent's report does not authenticate) make the
// items not supported with a message naming the settings to check, as
// Zabbix does. Running out of sockets here is a local error. Every
// outcome is counted (peregrine_poll_snmp_checks_total by result,
// peregrine_poll_snmp_errors_total by reason), requests by PDU type
// (peregrine_poll_snmp_requests_total), and failures other than
// not-such values are logged at most once a minute per reason. Messages
// and logs never include the community or passphrases.
//
// Concurrency: the hybrid mode of Zabbix's asynchronous pollers. Check
// queues each check on its device (its interface) and returns; a device
// with work has one worker goroutine and one UDP session, and sends one
// request at a time, so a device is never flooded while many devices are
// polled in parallel (the scheduler's in-flight bound caps how many).
// Checks that arrive while a device's request is out wait for it and go
// out together. The session (a connected UDP socket, gosnmp's 64 KiB
// receive buffer and the SNMPv3 engine state) stays open for
// Options.IdleClose after the device's last check, then the worker
// leaves; a change of the interface's address or details opens a new
// one. When the context of the Check call that started a device's
// worker ends (the scheduler stopping), the session's socket is closed:
// a request in flight is abandoned at once, not at its timeout, and the
// device's queued checks are reported abandoned. Checker is safe for
// concurrent use.
package snmp
