// Package selfcheck answers Zabbix internal items (item type 5, keys
// zabbix[...]) from the server's own figures, as a poll.Checker: the
// scheduler runs these items on their intervals like any polled item
// (without an interface: CheckerSpec.NoInterface), and their values go
// the usual way (conversion, pipeline, history), so they are stored,
// graphed and can trigger.
//
// It owns the keys and their answers; it does not own the figures. The
// server wires them as functions (Figures): values written per value
// type and not-supported states (pipeline), the queue (poll scheduler),
// the catalog snapshot, busy meters (selfmon.Busy) of the stages. The
// package imports no stage.
//
// Keys (Zabbix 6.0 semantics; the rest are not supported with Zabbix's
// message "Internal check is not supported.", a key other than
// zabbix[...] with "Unsupported item key for this item type."):
//
//   - zabbix[wcache,values] (or ,all), zabbix[wcache,values,float|uint|
//     str|log|text]: values stored since the start, in total or of one
//     value type; zabbix[wcache,values,not supported]: times an item
//     became or stayed not supported (a check or agent row that left it
//     so). Counters: totals since the start, which Zabbix's templates
//     store with the "change per second" preprocessing step.
//   - zabbix[queue,<from>,<to>]: polled checks late by at least from
//     (default 6 s) and less than to (default: no bound); time suffixes
//     allowed. Exact to the second below an hour, to the minute below a
//     day (see poll.Scheduler.QueueRange).
//   - zabbix[requiredperformance]: new values per second expected, the
//     sum of 1/interval over enabled items with an update interval on
//     monitored hosts (main interval; flexible ones left out, as Zabbix).
//   - zabbix[items], zabbix[items_unsupported], zabbix[hosts]: enabled
//     items on monitored hosts (discovery rules not counted for
//     zabbix[items], as 6.0), those of them not supported now,
//     monitored hosts.
//   - zabbix[process,<type>,avg,busy|idle] for the types in Processes:
//     the percentage of wall time the stage's goroutines were working
//     since this item's previous check (the first check: since the
//     start), averaged over the stage's goroutines. Each stage adds the
//     duration of each unit of work to a selfmon.Busy: the poller its
//     scheduler loop's turns (one goroutine; checks waiting on the
//     network are not work), the trapper each request from frame read to
//     reply written, store waits included (over trapper.max_connections
//     slots, as Zabbix's trappers are its StartTrappers processes), the
//     pipeline shards their store writes (over the shard count), the
//     housekeeper its flushes and retention passes (over its two loops).
//   - zabbix[uptime] (seconds), zabbix[boottime] (unix seconds),
//     zabbix[version].
//   - zabbix[proxy,<name>,lastaccess|delay]: the proxy's last contact
//     (unix seconds) and the seconds since (Figures.ProxyLastAccess);
//     zabbix[proxy_history] is a proxy's own item, refused as 6.0 does.
//   - zabbix[cluster,discovery,nodes]: the HA cluster's nodes as JSON
//     (Figures.ClusterNodes, from internal/ha); "[]" on a standalone
//     server, as 6.0.14's.
//
// Concurrency: Check answers each batch on a goroutine of its own (a
// large catalog's item count takes milliseconds, which the scheduler's
// loop must not wait for); the figures are read without locks but for
// the per-item busy samples, under one mutex.
package selfcheck
