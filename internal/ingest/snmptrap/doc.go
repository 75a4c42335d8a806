// Package snmptrap receives SNMP traps on UDP (snmp.trap_listen; Zabbix
// setups use 162) and stores them in SNMP trap items (type 17) of the
// hosts they come from, as Zabbix's snmptrapd + receiver script + server
// chain does, in one process.
//
// Why here and not under poll/snmp: traps are pushed by devices, like
// sender and active-agent data; nothing schedules them. The package
// takes the trapper's way into the pipeline (pipeline.Prepare, then a
// durable Submit) and none of the scheduler's, so it sits with ingest.
//
// Decoding: SNMPv1 Trap-PDUs and SNMPv2c SNMPv2-Trap and InformRequest
// PDUs, any community, decoded with github.com/gosnmp/gosnmp. SNMPv3
// SNMPv2-Trap PDUs are accepted from the USM users of Options.Users
// (snmp.trap_users), as snmptrapd's "createUser -e ENGINEID": the user
// name, the sender's engine ID, the security level and the passphrases
// must all match; any other SNMPv3 message (an unknown user, a wrong
// passphrase or engine ID, an SNMPv3 inform, which would need this
// receiver's own engine) is dropped and counted (reason "v3"). Informs are
// stored like traps and acknowledged with a Response, as snmptrapd
// does (peregrine_snmptrap_informs_acknowledged_total). Datagrams that are not SNMP messages,
// or SNMP messages that are not traps, are dropped and counted; nothing
// in a datagram can make the receiver allocate more than its 64 KiB
// read buffer and one trap text of at most 65535 bytes.
//
// Matching, as Zabbix: the sender's IP address is looked up among the
// SNMP interfaces of monitored hosts (ip with useip 1, or a literal
// address in dns with useip 0); every matching interface's host gets
// the trap. Within a host, every enabled snmptrap[<regexp>] item whose
// regexp matches the trap text (or that has no regexp) gets it; when
// none does, the snmptrap.fallback item gets it; items bound to another
// of the host's interfaces are left out. Regexps are Go's RE2 (Zabbix's
// PCRE minus backreferences and lookaround); one that does not compile
// makes its item not supported. A trap from an address no interface
// has, or that no item of its host takes, is dropped and counted
// (reasons "unmatched", "no_item") and logged at most once a minute.
//
// The value is the trap text in the form Zabbix's
// zabbix_trap_receiver.pl gives it: the receive time
// (2006-01-02T15:04:05-0700), a "PDU INFO:" section (notificationtype,
// version 0 for v1 and 1 for v2c, receivedfrom, errorstatus, messageid,
// community, errorindex, requestid, and the v1 header's enterprise,
// agentaddress, generictrap, specifictrap, uptime), then "VARBINDS:"
// with one line per variable, "<OID> type=<BER type> value=<net-snmp
// rendering>" (OIDs numeric: no MIBs are loaded). It is stamped with the receive
// time and prepared as every value is (pipeline.Prepare): converted to
// the item's value type (text and log items take it whole), or, for an
// item with preprocessing steps or dependent items, passed as text to
// the item's pipeline shard, which runs the steps, feeds the dependents
// and sets the item's state (a Raw value is copied, since it waits in
// the queue while the read buffer is reused).
//
// Concurrency: Run reads the socket on one goroutine, which decodes,
// matches and queues values; a second goroutine stores them in batches,
// so a slow store costs queued values (at most Options.MaxQueue, beyond
// which traps are dropped and counted, "queue_full"), never the reading
// of datagrams. Metrics: peregrine_snmptrap_received_total,
// peregrine_snmptrap_values_total, peregrine_snmptrap_dropped_total by
// reason.
package snmptrap
