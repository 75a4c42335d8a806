// Package ingest owns Peregrine's Zabbix trapper listener: it accepts TCP
// connections, reads ZBXD frames (package zbx), decodes "sender data"
// requests, and hands every value to the pipeline's one way in:
// pipeline.ItemByKey (the item exists and accepts it), pipeline.Prepare
// (converted to its item's value type with package preprocess's rules,
// or, for an item with preprocessing steps or dependent items, handed to
// the pipeline shard as text, where the steps run), hands the accepted
// values to the pipeline and
// answers with the reply the real Zabbix server gives once the pipeline
// has acknowledged them. Server.Push applies the same rules to the API's
// history.push values (pipeline.RawValue); the API reaches it through
// its own Pusher interface and does not import this package. A value
// that does not convert, or whose steps fail, counts as processed and
// makes its item not supported with the reason, as Zabbix 6.0 counts
// it; the trapper sets the states of the items it converted once their
// request's values are durable. The frontend request "queue.get" is
// answered by Options.Queue when the wiring sets it (an HA standby asks
// the active node's queue there, as 6.0's frontends do).
//
// Active agents (spec §4) use the same port, connections and memory
// rules: "active checks" gets the host's enabled items of type Zabbix
// agent (active), macros in keys and intervals expanded, with
// lastlogsize/mtime of log items, in the form the Zabbix 6.0 server
// gives the agent's version (activelist.go, recorded in
// testdata/active_checks_zabbix60.json): itemid and the interval as
// text for 4.4 and later; no itemid, key_orig, and the interval in
// integer seconds (0 when it has flexible or scheduling parts) for older
// agents and 6.0 zabbix_agentd, which sends no version. An item whose
// interval does not start with a time value (an undefined macro) is left
// out and made not supported, as Zabbix does. "agent data" values go
// through the same
// acceptance (type Zabbix agent (active) only) and the pipeline exactly as sender data does
// (agentdata.go); "active check heartbeat" is counted and gets no reply.
// What an agent says about itself (host_metadata, ip, port, interface,
// version), for known and unknown hosts, is kept in memory for the most
// recent MaxActiveAgents catalog hosts and MaxUnknownAgents others
// (Server.ActiveAgent), host_metadata cut to 2034 bytes and the other
// fields to 255; it is not persisted, as agents repeat it every
// RefreshActiveChecks. Every "active checks" request past the host name
// checks is also handed to Options.AutoRegister (autoreg.go: a
// Registration with 6.0's listen flag, IP or DNS name and port): for an
// unknown host its error refuses the request (tls_refused, counted in
// peregrine_trapper_autoreg_refused_total: the autoregistration
// encryption policy), for a known enabled host after its own encryption
// check passed.
//
// Retransmissions: per (host, session token) the highest row id stored
// is kept, for at most MaxAgentSessions sessions (least recently used
// dropped); rows with an id not above it are acknowledged, counted as
// failed (duplicate) and not stored. A request holds its sessions' locks
// from the check until its values are stored, and the ids advance only
// once they are, so a concurrent copy waits and a copy of a request whose
// store failed is stored in full.
//
// A store failure (a full disk, values refused by the server's storage
// check): a request none of whose values was stored is answered
// "failed" with the reason, and nothing of it is in history, now or
// after a restart, so a sender that sends it again stores each value
// once (the pipeline writes a request's values of one shard in one
// all-or-nothing write). When the store failed between two shards'
// writes, some values were stored and the others not
// (pipeline.PartialError): the reply is "success" with exact processed
// and failed counts, so that no sender resends the stored ones; item
// states and log positions follow the stored values only, and
// history.push gives each value not stored its error. With
// history.clickhouse.ack: inserted the store's write is the ClickHouse
// insert, so a ClickHouse outage is such a failure: the request is
// answered "failed", and nothing is acknowledged that ClickHouse does
// not hold (TestIntegrationClickHouseAckInserted).
//
// Log positions: the lastlogsize and mtime of accepted rows are saved in
// agent-state.db, a small owner-only SQLite file in the data directory
// (LogPositions, via internal/sqlitedb: versioned schema, one owner, WAL
// with synchronous FULL), after the request's values are durable and
// before the agent's reply. Concurrent requests share one transaction.
// With the state in PostgreSQL (OpenLogPositionsPG) they are rows of
// table log_position there instead, each transaction fenced by the HA
// lease (database/sql through pgx's driver, Lease.WriteSQL).
// So the position on disk never runs ahead of the stored lines, and a
// line the agent was told is stored is not sent again by a restarted
// agent (which asks "active checks" where to resume), nor after a server
// restart. Recovering positions from stored log values instead was
// rejected: history does not keep lastlogsize, and retention would drop
// it with the values.
//
// Encryption (spec: Zabbix 6.0 "Encryption"): a connection is TLS if
// its first byte is 0x16 (a handshake record; a plain frame starts with
// 'Z'), on the same port. Its ClientHello is read first
// (zbxtls.ReadClientHello, bounded at 16 KiB, under the frame timeout)
// and says which TLS stack serves it: a client that offers the TLS 1.3
// pre_shared_key extension or only PSK suites wants a pre-shared key
// (package zbxpsk, OpenSSL), any other one a certificate (Go's
// crypto/tls); the hello is then replayed to that stack.
//
// Certificates: with Options.TLS the handshake needs TLS 1.2 or later and
// a client certificate that chains to tls.ca_file (and is not in
// tls.crl_file); without it certificate clients are refused
// (tls_not_configured).
//
// Pre-shared keys: the key of the identity the client presents comes
// from Options.PSK (the wiring answers from the hosts' tls_psk_identity
// and tls_psk, catalog.Snapshot.PSKKey, then the autoregistration key;
// proxies' keys join there). An identity no host has is
// refused at the handshake and counted as tls_psk_unknown_identity, a
// key that differs from the identity's as tls_psk_wrong_key, both logged
// (throttled) with the remote and the identity and, for a wrong key,
// the hosts that have it; never the key. A build without OpenSSL
// refuses every PSK client as tls_psk_unsupported, saying why.
//
// After the frame is read every host it names decides: sender rows and
// agent data rows of a host whose tls_accept does not include the
// connection's type (1 unencrypted, 2 PSK, 4 certificate), whose
// tls_issuer/tls_subject differ from the certificate's (RFC 4514 form,
// zbxtls.FormatDN), or whose tls_psk_identity and key are not the ones
// the connection used, fail (counted as tls_refused) while the other
// rows go on, as Zabbix does; "active checks" for such a host gets a
// failed reply (result tls_refused) with the reason. Other handshake
// failures are counted (tls_handshake) and logged throttled. A trapper
// item's allowed hosts (trapper_hosts, traphosts.go) fail the sender
// rows from an address not in them (counted as host_not_allowed).
//
// Proxies (proxy.go, proxyconfig.go, proxyitems.go, proxytasks.go): an active zabbix_proxy (a
// catalog.Proxy of status 5) asks "proxy config", sends "proxy data"
// and "proxy heartbeat" on the trapper port. Each names the proxy
// ("host"): an unknown one is answered failed with 6.0's
// `proxy "NAME" not found`; the proxy's proxy_address (if set) and
// tls_accept are checked as a host's. "proxy config" gets the proxy's
// hosts, interfaces and items in 6.0's table form (recorded from 6.0.14
// in testdata/proxy_config_zabbix60.json and, for HTTP agent, SSH,
// Telnet, JMX, database monitor and script items with a script's
// parameters, proxy_config_types_zabbix60.json), user macros expanded,
// their enabled web scenarios in 6.0's httptest tables (the real proxy
// runs them: TestIntegrationRealProxyWebScenario), and the
// autoregistration encryption settings (Options.AutoregSettings)
// the proxy applies to its agents, and the proxy's enabled network
// discovery rules (Options.DRules) in 6.0's drules and dchecks tables
// (recorded from 6.0.14 in testdata/proxy_config_drules_zabbix60.json;
// a delay or check field with global macros is sent expanded, as
// items are). Calculated and dependent items stay
// the server's, and preprocessing runs on the server (item_preproc is
// sent empty). "proxy data" is taken from proxies 4.2 to 6.0 (as 6.0.14;
// others get {"response":"failed"}) with a 32-character session: its
// "history data" rows go through the one way in with the proxy's clock
// and ns, for enabled items of hosts that proxy monitors (others are
// counted failed, as unknown items, and logged); per (proxy, session)
// the highest row id stored is kept as for agents, so a resent row is
// stored once; the reply is 6.0's {"upload":"enabled","response":
// "success"} only once the values are durable, else failed, and the
// proxy resends. Tasks (proxytasks.go; recorded from 6.0.14 in
// testdata/proxy_tasks_zabbix60.json): ProxyCommand and ProxyCheckNow
// queue remote commands and check-now requests per proxy (in memory, at
// most 1,000 a proxy, dropped past their ttl); they go in the reply to
// the proxy's next "proxy data" (a passive proxy's acknowledgement) as
// "tasks", and a remote command's result, in a later "proxy data"'s
// "tasks", is what ProxyCommand returns. A malformed part refuses the whole request (6.0
// ignores it). Auto-registration and discovery parts ("discovery
// data" rows recorded from 6.0.14 in testdata/proxy_discovery_*; see
// proxy_discovery_zabbix60.md) go to Options.ProxyExtras before the
// history, for active and passive proxies alike; its error refuses the
// request (result bad_part, or store_error when it wraps
// ErrProxyStore) and the proxy resends it. Without it they are counted
// and logged.
// Sender and agent values for hosts behind a proxy are refused
// (monitored_by_proxy). Decoding "proxy data" counts against the
// memory budget (decodeProxyData; refused "over_budget" when it does not
// fit). Last contact times (lastaccess) are kept in memory
// (Server.ProxyLastAccess) and handed to the server to save
// (TakeProxyLastAccess). Passive proxies (passive.go, status 6):
// RunPassiveProxies connects to each on its interface with its
// tls_connect, pushes "proxy config" (the tables under "data") and asks
// "proxy data", taken as an active proxy's (takeProxyData), one
// exchange at a time per proxy, proxies in parallel.
//
// It does not own the catalog, the pipeline, storage or the acceptance
// and conversion rules; it reaches the first three through the Catalog
// and Submitter interfaces that main wires in.
//
// Bounds: at most MaxConnections connections are served at once (the rest
// wait in the kernel's accept queue); frames larger than MaxFrameSize are
// refused; every read and write has a deadline, so slow or half-open
// clients are disconnected (reason timeout) without holding anyone else
// up. Bad input is answered or dropped, counted by reason, and logged at
// most once per window per reason.
//
// Memory: everything a request makes grows with what it holds, and all of
// it counts against MaxBufferedBytes: frame buffers, inflated payloads
// (a compressed body is inflated as it arrives and never held whole),
// zlib state, decoded rows, samples and copies of string values. JSON
// strings are unescaped in place, so there is no scratch buffer beside
// the payload. Memory is taken as it is allocated, never for the size a
// header announces: a client that announces a frame and stalls holds
// nothing, and one 64 KiB quantum once it has sent more than 512 bytes. One connection holds at most
// 7/8 of the budget: a frame that needs more (a frame close to
// MaxBufferedBytes, or one of very many tiny values) is refused
// (memory_share); keep MaxBufferedBytes at two to four times
// MaxFrameSize. Small frames pass big ones; big ones are served oldest
// first, and once a big frame's body has arrived whole it claims all its
// header says it may need, so younger frames wait instead of taking the
// room it will need: a frame the client sent whole and that stays
// within that estimate is not refused because the server is slow to
// decode it (TestIntegrationInflateMemory failed that way under CPU
// starvation). A request that finds no room waits until its frame's
// deadline,
// and when every byte is held by frames waiting for more, the youngest is
// refused (memory_busy). See byteBudget for the rules. Released buffers
// count until the garbage collector frees them, and the trapper runs a
// collection itself when they stand in the way, so the heap does not
// reach twice the budget between the runtime's own collections.
// Between frames a connection keeps its buffers for the next frame: up
// to 1 MiB each while its client sends frame after frame, 64 KiB once it
// has waited a second for the next one (or at once when a quarter of the
// budget is in use); what it keeps stays counted.
//
// The bound: the process's peak RSS stays within what it had before the
// load (its code, linked libraries such as OpenSSL for pre-shared keys,
// the catalog) plus MaxBufferedBytes plus 48 MiB (Go runtime and
// allocator slack), plus about 8 KiB
// per open connection for its goroutine and socket state, which no
// budget counts (6.8 KB each, measured with 2,000 connections waiting in
// a header; 32 MiB at the default 4,096 connections).
// TestIntegrationInflateMemory measures it:
// with a 64 MiB budget, 48 concurrent compressed frames announcing 64 MiB
// of JSON and then 48 of 4 MiB peak at about 90 MiB (887 MiB before this
// accounting).
//
// Concurrency: one goroutine per connection; shared state is atomic
// counters, the catalog's immutable snapshot, the pipeline, and for
// active agents the session registry (16 independently locked shards),
// the agent registry (one mutex, taken once per "active checks") and
// LogPositions (a read lock per log item in "active checks"; one writer
// goroutine).
package ingest
