// Package server assembles a Peregrine server from its stages: catalog,
// history store, pipeline, housekeeping (flush, retention, compaction),
// trapper, the check scheduler with its checkers (passive agent, SNMP,
// simple checks: ICMP, TCP services, web pages; HTTP agent, database
// monitor, calculated, internal), the SNMP trap receiver (when snmp.trap_listen is set) and
// the HTTP listener (web UI, API, metrics), and runs them as one group
// that starts together and stops in dependency order (ingest first, then the pipeline
// drains and housekeeping stops, then the store and catalog close).
//
// Stages of New: construction runs in four stages, each a function in
// its own file whose comment says what it builds and what it needs from
// the stages before it; a later feature adds to one of them.
//
//   - openState (server_state.go): the data directory, catalog, event
//     store, history backend, value cache, item runtime, housekeeper,
//     API accounts (the first credentials written here, before any port
//     is bound), Zabbix 6.0's default objects in the catalog and the
//     accounts (defaults.go: once per data directory, the catalog's
//     before anything creates a group) and active agents' log
//     positions. It needs nothing else. Settings changed through the
//     API (auditlog_enabled, hk_audit*) are applied here at start and by
//     the API's SettingsHook after; the housekeeping settings lay over
//     the items' retention at every run (housekeepingRetention).
//   - buildRules (server_rules.go): maintenance, the pool of script
//     workers (Server.JS, javascript.* settings: users' JavaScript runs
//     in processes of this binary, for webhooks here and for the
//     pipeline's steps and the API's preprocessing.test later), the
//     alert engine with its remote-command agent checker, the problem state machine and
//     the trigger evaluator, over the state. Hooks into later stages
//     (last values from the pipeline, soft-state re-checks on the poller)
//     are read when called, and nothing calls them before Run.
//   - openWaysIn (server_wayin.go): the pipeline (its commit hook feeds
//     the value cache, then the evaluator), the self-monitoring host,
//     last values restored from history, the checkers and the poller,
//     then the trapper's and the SNMP trap receiver's ports.
//   - openHTTP (server_http.go): the HTTP port, the API, web UI, pprof
//     and /metrics over everything above.
//
// Certificate files (tls, http.tls_*) are read between the first two, so
// a bad one stops the start before a port opens. If a stage fails, what
// was opened is closed (closeAll). The logs' fsync settings
// (history.fsync, events.fsync, alerts.fsync) become WAL sync modes in
// one function, walSync.
//
// Triggers: the catalog validates trigger expressions with the expression
// parser (trigger.ItemRefs as catalog.Options.ExprRefs); the event store
// (data_dir/events, events.* settings) and the problem state machine
// over it are opened before the listeners and serve the trigger, problem
// and event API methods. Evaluation (trigger.Evaluator, Server.Evaluator)
// is the pipeline's OnCommit hook: each committed batch queues the
// triggers of its items with their values' times in the evaluation shard
// that owns each trigger (triggers.eval_shards, one goroutine each), and
// the shards evaluate them, every second of values in order,
// against the value cache (Server.ValueCache, fed by the same hook just
// before, falling back to the history store; calculated items read it
// too) and feeds Server.Triggers; a timer
// (triggers.timer_interval) evaluates time-based triggers. At shutdown,
// after the pipeline has written its last batches, one more pass
// evaluates what they queued. The event store's retention runs
// beside housekeeping and stops with it, and so does a loop that resolves
// the problems of deleted triggers (Machine.Reconcile) after every
// catalog change. Maintenance (maintenance.Tracker, Server.Maintenance)
// decides at problem creation whether a maintenance covers it
// (trigger.Options.Suppress) and, on its own goroutine, suppresses and
// unsuppresses open problems at every minute boundary and catalog
// change; its Suppressed(eventID) is the hook for the action engine.
// User macros come from the catalog snapshot (Snapshot.UserMacros) in
// every consumer, so API changes apply without a restart.
//
// Notifications: the alert engine (package alert, Server.Alerts, log
// under data_dir/alerts, alerts.* settings) is opened with the event
// store; the state machine commits through a wrapper of the event store
// that hands every committed batch (problems, OK events, acknowledges)
// to Engine.Notify, which only queues it. The engine reads actions,
// media types and users' media from the catalog (AlertConfig), user
// groups and users' rights (recipients need read on a host of the
// event) from the account store, {ITEM.LASTVALUE} from the pipeline, and
// serves the API's mediatype.*, action.*, script.* and alert.get. Remote
// commands run on the server through /bin/sh or on agents through a
// passive agent checker of their own (system.run), bounded by
// alerts.command_timeout. It stops after the last evaluation pass at
// shutdown.
//
// IT services (package service, Server.Services, data_dir/services.db)
// get the same committed batches (the wrapper's notify calls both) and
// only queue them; on their own goroutine they recompute the services'
// statuses and store each change. They read the event store's open
// problems at start, serve the API's service.* and sla.*, and stop with
// the alert engine.
//
// It knows history backends only through history's interfaces: it opens
// the configured one and hands it on; trends and housekeeping find the
// optional interfaces by assertion.
//
// Self-monitoring: the first start of a data directory creates the host
// "Zabbix server" (group "Zabbix servers"), named as a fresh Zabbix 6.0
// names it and with its ID (10084: catalog.FirstHostID) so that
// dashboards and scripts naming it keep working, with
// internal items (SelfHostSpec), then writes a marker file (SelfHostMarkerPath; a
// catalog mark on an HA cluster, shared by its nodes) so that
// a user who deletes the host does not get it back. The internal items
// are answered by package poll/selfcheck from figures wired here: the
// pipeline's per-type counts, the runtime's not-supported counts, the
// poller's queue, the catalog and each stage's busy meter.
//
// Calculated items (type 15) are evaluated by package poll/calc on the
// scheduler's intervals, reading the history store; the catalog refuses
// a formula that does not parse (CheckFormula, package expr).
//
// External checks (type 10) and nagios[] plugin checks run as processes
// from poll.external_scripts through package poll/external, with its
// own process pool (poll.external_max_processes) and output bound.
//
// HTTP port: the web UI (internal/web) at / when http.ui is on, the
// JSON-RPC API at /api_jsonrpc.php, /metrics (to http.metrics_allow's
// networks and http.metrics_token_file's bearer token only) and
// /healthz (health.go). With
// http.tls_cert_file and tls_key_file the port serves HTTPS only (TLS 1.2
// or later) and every response carries Strict-Transport-Security; the
// certificate is loaded in New, so a bad file stops the start.
//
// Storage readiness (health.go): storageErr is why values are refused
// now, the data directory's file system below history.min_free_space
// (fsutil.SpaceGuard, measured at most once a second) or a store whose
// log cannot write (history.WriteChecker); the pipeline asks it before
// each request (Admit), so a request is refused whole before any write,
// and /healthz answers 503 with the reason while it says no. Both clear
// by themselves once space is back, without a restart.
//
// HA cluster node (hanode.go, hanode_http.go, hanode_standby.go,
// hanode_standby_api.go, hanode_queue.go, hanode_logout.go;
// docs/ha.md): with ha.node_name, New checks the start (ClickHouse
// answering, ha.Open's refusals) and registers the node as standby,
// binding only the HTTP port. A standby serves the API and UI for reads
// from the cluster's stores opened without writing (the catalog, users,
// events, services, alert and audit logs, item states and interface
// availabilities from PostgreSQL, history and last values from
// ClickHouse), followed every standbyPoll (2 s), asks
// the active node's trapper for its queue, lets a user log out (the
// session's row deleted unfenced, the audit record handed to the active
// node by a PostgreSQL notification), and refuses changes naming the
// active node; they are closed before the node becomes active. Run builds a whole server with the
// four stages when the node wins the lease, its stores of state on
// PostgreSQL through the lease (pgState), runs it until the lease ends
// and goes back to standby. The catalog, users and services open through
// one function each (openCatalog, openAuth, openServices): on PostgreSQL
// on an active node, shared by every node (the Admin user is made once,
// by the first node to be active; the self-monitoring host's marker is
// a catalog mark, Catalog.Mark, instead of the file).
//
// It holds the wiring that would otherwise sit in main, so that tests and
// the bench harness can run a whole server in-process.
package server
