// Package autoreg is Zabbix 6.0's auto-registration of active agents
// (event source 2).
//
// # What it owns
//
//   - The queue (Registrar.Register): the trapper hands it every
//     "active checks" request (ingest.Registration, converted by the
//     server), a proxy's data its agents' registrations. Register never
//     blocks: nothing is queued while no auto-registration action is
//     enabled (6.0 registers nothing then); a host waiting already is
//     replaced by the newer request (coalesced); past Options.QueueSize
//     hosts a request is dropped and counted (the agent asks again at
//     its next refresh); one proxy's requests take at most
//     Options.MaxPerProxy of the queue (a quarter), so a proxy flooding
//     random names leaves room for the others (result
//     "proxy_share_full"). Which requests register is 6.0's rule, recorded
//     from 6.0.14: a host not in the catalog at every request; a host
//     in the catalog once after the start, then when its host metadata
//     or connection flag changes, or with HostInterface its interface or
//     port. Metrics: peregrine_autoreg_requests_total{result},
//     _registrations_total, _failed_total, _hosts_created_total,
//     _store_errors_total,
//     _operation_errors_total, _queue_length, _batch_seconds.
//   - Registrations (Host, Lookup): the latest of each host name with a
//     stable ID, the events' objectid (Zabbix's autoreg_host), bounded
//     by Options.MaxHosts (least recently registered forgotten); kept
//     across restarts by Options.Store (Store: a SQLite file in the data
//     directory, saved after each batch's events, loaded by New; or,
//     from OpenStorePG, table autoreg_host in PostgreSQL, every save
//     fenced by the HA lease), so a restart does not register known
//     hosts again.
//   - Run: batches of up to Options.BatchSize, each stored as events of
//     source 2, object 3, value 1 (committed before anything else; the
//     alert engine gets them for the actions' "send message"), then the
//     matching actions' host operations in one catalog edit (one edit
//     per host if the batch's is refused, so one host cannot hold the
//     others): add host (the agent interface: by IP, or by DNS name for
//     a HostInterface that is one; port from the request; in the
//     settings' discovery group; with the autoregistration key, PSK both
//     ways, when the agent registered with it; monitored by the proxy
//     it registered through, unless that proxy is gone; the same for
//     network discovery's plans, Target.ProxyID), remove host, add to and
//     remove from host groups, link and unlink (and clear) templates,
//     enable and disable. Every operation but remove host, remove from
//     group and unlink creates the host first, as 6.0 does. "Set host
//     inventory mode" is accepted and has no effect: Peregrine keeps no
//     host inventory.
//   - Matching (Matches): host metadata and host name like (contains),
//     not like, matches and does not match a regular expression (RE2
//     syntax; "@name" a global regular expression), proxy equal or not;
//     the filter's evaluation is alert.FilterHolds.
//
// # What it does not own
//
// Checking the autoregistration encryption policy (the server's hook,
// against catalog.AutoregSettings), sending messages (package alert,
// through the events), the actions' validation (the API).
//
// # Concurrency contract
//
// Register, Lookup, Matches and QueueLen may be called from any
// goroutine; Run's goroutine alone stores events and edits the catalog.
package autoreg
