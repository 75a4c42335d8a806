// Package migrate is `peregrine migrate`: it copies a running Zabbix
// 6.0's configuration, and optionally its recent history, into a running
// Peregrine, through both servers' JSON-RPC APIs. Going through
// Peregrine's API rather than its data directory keeps one way in: every
// object gets the checks, permissions and audit records a user's request
// gets, and the server need not be stopped.
//
// What it owns:
//
//   - The client (client.go): one JSON-RPC client for either side, logged
//     in with user and password or an API token, answers bounded.
//   - Names as join keys (refs.go): each object is turned into a
//     canonical form holding the members its create/update methods take,
//     with every ID replaced by a reference to the referred object's
//     name. The same mapping applied to the target's object tells whether
//     anything differs (a second run changes nothing and says so); the
//     target's request is the canonical form with the references resolved
//     to the target's IDs.
//   - The kinds (kinds.go, actions.go): host groups, proxies, hosts (with
//     interfaces, macros, tags, inventory, groups, templates, proxy),
//     value maps, global macros, regular expressions, media types, roles,
//     user groups, users, scripts, network discovery
//     rules (drules.go), actions, maintenances, services, SLAs,
//     written in that order (what is referred to first). Templates
//     (templates.go) go through the source's configuration.export and the
//     target's configuration.import, one at a time, parents first; so do
//     the hosts' own items, triggers, graphs, discovery rules and web
//     scenarios (hostparts.go), host by host, with the hosts rule off.
//     Action conditions on triggers name the trigger by its hosts and
//     description (refs.go).
//   - Choosing (migrate.go): with a prefix, the objects whose names start
//     with it and, transitively, what they refer to.
//   - The report (report.go): per object created, updated (with the
//     members that differed), unchanged or not copied (with the reason),
//     and the secrets the source API never returns (passwords, PSKs,
//     secret macros), which are never guessed: the objects are made
//     without them and listed for re-entry.
//   - History (history.go): the copied hosts' items' values of the last N
//     days, item by item, oldest first, in pages of history.get, stored
//     by Peregrine's history.import (the pipeline, the values' own clocks,
//     no preprocessing), with a checkpoint file of finished items. Where
//     an unfinished item got to is read back from the target itself, so a
//     resumed run never stores a value twice.
//
// What it does not own: what the target accepts (its API's checks decide,
// and a refusal is a report entry); trends, which Peregrine computes from
// the copied history.
//
// Concurrency: a run is sequential, one request at a time on each side;
// the Client is safe for concurrent use.
package migrate
