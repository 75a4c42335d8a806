// Package netdisc is Zabbix 6.0's network discovery (event source 1):
// the discoverer that sweeps each discovery rule's address range with
// its checks, keeps what it found (discovered hosts and services), makes
// the discovery events and runs the discovery actions' host operations.
//
// # What it owns
//
//   - Sweeps (Discoverer.Sweep, scheduled by Run): every address of the
//     rule's range (package zbx/iprange) times every check and port,
//     run by the asynchronous checkers the wiring hands it
//     (Options.ICMP: icmpping with 3 packets; Options.Agent: the check's
//     key on the agent's port; Options.TCP: net.tcp.service of the
//     service the check type names, so SSH, LDAP, SMTP, FTP, HTTP, POP,
//     NNTP, IMAP, TCP, HTTPS and Telnet are probed as simple checks
//     probe them) and SNMP GETs of the check's OID over gosnmp (v1, v2c,
//     v3 with the check's USM settings). At most Options.MaxInFlight
//     checks are out at once and each ends within Options.Timeout, so
//     a /16 range with one check takes about 65,536 / MaxInFlight
//     timeouts at worst, and far less when the addresses answer or
//     refuse. A check's port 0 (as the API stores a check given no
//     ports) is the service's standard port. A probe found down after
//     running out its timeout while this process was behind
//     (Options.Lag, a poll.LagMeter: the lag at least half the probe's
//     time) is run again, at most twice, and counted
//     (peregrine_netdisc_probes_retried_total): a server busy recording
//     an earlier chunk must not take live services for down, as the
//     poller does not blame interfaces for its own lateness.
//   - State: for each address that answered a check, a discovered host
//     of the rule (found by address, or by the value of the rule's
//     unique check) and a discovered service per check and port,
//     created, updated and marked up, down, discovered and lost as 6.0
//     does, stored through Catalog.SaveDiscovery (which survives
//     restarts) after every chunk of Options.ChunkSize addresses.
//   - Events, as 6.0.14 makes them (recorded): per service checked on a
//     known or answering address, "discovered" (2) when it comes up
//     from down or new, "lost" (3) when it goes down from up, and its
//     current status, up (0) or down (1), at every sweep; the host the
//     same, after its services ("discovered" right after the first
//     service that brings it up). Object 1 is a discovered host, 2 a
//     discovered service; objectid their IDs. Addresses that never
//     answered make nothing.
//   - Actions (Matches, and the host operations through package
//     autoreg's plans): conditions host IP (in a range or not), service
//     type, service port (in a port list or not), discovery status,
//     uptime/downtime (seconds since the status began, >= or <=),
//     received value (=, <>, like, not like, >=, <= as numbers when both
//     are), rule, check, proxy and object; the operations add host,
//     remove host, add to and remove from host groups, link and unlink
//     templates, enable and disable host (set inventory mode accepted,
//     without effect). A host event's service conditions hold when one
//     of its services meets them. Created hosts are named by the rule's
//     host source (DNS name when the lookup gives one, else the IP; the
//     IP; or a check's value), put in the settings' discovery group with
//     an agent interface (the agent check's port, else 10050) and an
//     SNMP interface when an SNMP check answered, monitored by the
//     rule's proxy if it has one. Messages get the event's
//     {DISCOVERY.*} macros (Macros).
//   - Proxies' results (ApplyProxy, proxy.go): Run leaves rules with a
//     proxy to the proxy (package ingest sends them in its
//     configuration); the "discovery data" rows it sends back
//     (DecodeProxyResults; recorded from 6.0.14) go through the same
//     state changes, events (with the rows' clocks) and actions. Rows
//     are refused and counted (peregrine_netdisc_proxy_rows_total) when
//     malformed, of an unknown rule or check, or of a rule that is not
//     that proxy's; a row no newer than the last one taken at its rule,
//     address, check and port (in memory; after a restart, the clock of
//     the service's or host's last retained event, or its lastup or
//     lastdown) is a resend and skipped. An error means the state or the
//     events were not stored (the state is put back when the events
//     fail): the caller refuses the data and the proxy resends it.
//
// # What it does not own
//
// Validating rules (the API), storing rules and state (package
// catalog), sending messages (package alert, from the events; its
// filter evaluation asks Matches), the checkers themselves.
//
// # Concurrency contract
//
// Run's goroutine sweeps one rule at a time; Sweep must not run twice
// for one rule at once. ApplyProxy may be called from any goroutine
// (calls are serialised; they touch only proxies' rules, which Run
// never sweeps). Matches may be called from any goroutine.
package netdisc
