// Package icmp is the ICMP ping checker of the simple checks (item type
// 3): icmpping, icmppingloss and icmppingsec[<target>,<packets>,
// <interval>,<size>,<timeout>,<mode>] with Zabbix 6.0's defaults and
// bounds (3 packets 1000 ms apart, 56 data bytes, 500 ms timeout; 1..10000
// packets, interval ≥ 20 ms, size 24..65507, timeout ≥ 50 ms; a bad
// parameter makes the item not supported, naming it) and values:
// icmpping 1 if any packet came back, else 0; icmppingloss the percentage
// lost; icmppingsec the min, avg (default) or max reply time in seconds
// over the answered packets, 0 when none was, at least 0.0001 when one
// was. An empty target is the interface's address; a DNS name is resolved
// (Options.ResolveTimeout), and a name that does not resolve reads as a
// host that does not answer, as with Zabbix's fping. A host that does not
// answer is a value (0, 100, 0), not a network error: ICMP checks never
// change an interface's availability, as in Zabbix.
//
// It owns no process and runs no fping: one ICMP socket per address
// family, opened on first use and shared by every check. Raw sockets
// (root or CAP_NET_RAW) get a kernel filter passing echo replies only;
// where raw is refused, datagram ICMP sockets are used when
// net.ipv4.ping_group_range admits the server's group (Options.Socket
// forces one or the other). If neither opens, that family's checks are
// not supported with a message saying what to grant.
//
// One sender goroutine keeps a min-heap of events, each check's next
// packet and each packet's expiry: packets of one check leave one interval
// apart, all checks' packets together within Options.Rate per second (a
// token bucket, 10 ms of burst). Each echo request carries our identifier
// (raw sockets; the kernel sets its own on datagram sockets), a sequence
// number and a payload starting with a random per-checker cookie; a
// receiver goroutine per socket matches replies by source address and
// sequence to the pending request. A reply's time is the kernel's
// receive timestamp (SO_TIMESTAMPNS), and a request is declared lost 250
// ms after its timeout: on a busy machine a reply that arrived in time
// but was read late still counts, one that arrived late never does
// (peregrine_poll_icmp_late_replies_total). Replies with another
// identifier (raw sockets see every process's), without our cookie, or
// matching nothing pending (later still, duplicate, forged) are counted
// by reason in
// peregrine_poll_icmp_dropped_replies_total and dropped, logged at most
// once a minute. A packet the kernel refuses to send (a blackhole route)
// is lost, as fping counts it, and counted in
// peregrine_poll_icmp_send_errors_total.
//
// Concurrency: Check returns at once; no goroutine per check or packet
// (only a DNS target costs one, for its lookup). The heap, the pending
// table and the checks' tallies are guarded by one mutex, never held
// across a syscall. When the context of a Check call ends (the scheduler
// stopping), its checks are reported abandoned at once, not at their next
// packet, which may be an interval away; Close stops the goroutines and
// reports the checks still running as abandoned. Linux only (socket
// options).
package icmp
