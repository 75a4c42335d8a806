// Package catalog owns Peregrine's configuration of what is monitored:
// host groups, hosts and their items. It persists them in an embedded
// SQLite database and serves them to the rest of the server as an
// immutable in-memory Snapshot. With Options.Postgres the database is
// in PostgreSQL (an HA cluster's, docs/ha.md); opened read-only there
// (sqlitedb.PG.ReadOnly, a standby) it writes nothing and follows the
// writer with Reload. Mark and Marked record things done once per
// database (the self-monitoring host).
//
// # What it owns
//
//   - The SQLite schema and file (Options.Path, plus SQLite's -wal and -shm
//     files beside it). The file is opened with journal_mode=WAL and
//     synchronous=FULL, so a change that Apply acknowledged survives a
//     crash or power loss. IDs are assigned by SQLite, never reused, and
//     stable across restarts; an updated host or item keeps its ID.
//     With Options.Postgres the same tables live in PostgreSQL instead
//     (schema peregrine_catalog, sqlitedb.OpenPG, docs/ha.md): the same
//     statements through a dialect layer, the same ID rules, and every
//     write transaction fenced by the HA lease, so a node that lost its
//     lease commits nothing and keeps its snapshot.
//   - The import document (Spec, LoadSpecFile, docs/import-format.md): a
//     declarative, idempotent description applied with Catalog.Apply.
//     Apply creates and updates; it never deletes anything that is absent
//     from the document.
//   - Single-object changes by ID (Catalog.Edit: edit.go holds the
//     transaction and overlay, edit_group.go, edit_host.go and
//     edit_item.go one object family each), the write side
//     of the Zabbix API: create, update and delete of host groups, hosts
//     and items, in batches. Deleting a host deletes its items; deleting
//     a group that is some host's only group is refused. Deleting an item
//     leaves its history in the history store: IDs are never reused, so
//     those values cannot be attributed to another item, and retention
//     drops them with their partitions.
//   - Host interfaces (iface.go, edit_iface.go): where polled checks
//     connect, with the Zabbix 6.0 rules: per type at most one main
//     interface (exactly one if the type is present), agent items need an
//     agent interface of their own host (the API refuses them without;
//     the import stores them unpolled, see ApplyResult.NotPolled), and an
//     interface an item uses can be neither deleted nor changed to another
//     type. Items carry InterfaceID and Timeout.
//   - SNMP (schema version 7): SNMP interfaces' details are validated
//     with Zabbix 6.0's rules and stored complete (iface.go,
//     checkSNMPDetails); SNMP agent items carry snmp_oid, validated by
//     package zbx/snmpoid; SNMP trap items (type 17,
//     snmptrap[regex] and snmptrap.fallback) are pushed like trapper
//     items (delay "0") and use the host's SNMP interface.
//   - Host encryption settings (HostExtra.TLS, Zabbix's tls_connect,
//     tls_accept, tls_issuer, tls_subject; schema version 5), set through
//     the edit API or a host's tls in the import (HostSpec.TLS); a host
//     without one in the import keeps its settings, a new one gets
//     Zabbix's default (unencrypted both ways). Pre-shared keys
//     (tls_psk_identity, tls_psk; schema version 21) are stored as 6.0
//     stores them, set exactly when tls_connect is 2 or tls_accept has
//     2, dropped when the settings stop using PSK, indexed by identity
//     (Snapshot.PSKHosts, PSKKey); the key is a zbxpsk.Secret, which
//     never formats. A build without OpenSSL refuses them when an edit
//     or import asks for them (HostTLS.CheckSupported); rows stored by
//     a build with it still load.
//   - IPMI (ipmi.go, schema version 20): a host's IPMI settings
//     (HostExtra.IPMI: Zabbix's ipmi_authtype, ipmi_privilege, ipmi_username,
//     ipmi_password; table host_ipmi, a row only when not the default)
//     and an item's ipmi_sensor (Item.IPMISensor; table item_ipmi),
//     required on IPMI items (type 12) but ipmi.get and kept on items of
//     any type, as 6.0 keeps it. The password is stored as 6.0 stores it
//     (in clear: the BMC needs it); the API never returns it.
//   - Host inventory (host_inventory.go, schema version 31): a host's
//     inventory mode and fields (HostExtra.Inventory, nil when disabled;
//     table host_inventory, a row only when not disabled), checked
//     against 6.0's field names and lengths. Automatic mode is stored;
//     items' inventory_link does not fill fields yet.
//   - An item's allowed hosts and allow_traps (ItemExtra.Traps,
//     traphosts.go, schema version 37; table item_traps, a row only when
//     either is set): checked as 6.0.14 checks trapper_hosts, kept on
//     items of any type, imported, exported and copied to linked hosts.
//   - An item's logtimefmt (Item.LogTimeFmt, logtimefmt.go, schema
//     version 35; table item_logtimefmt, a row only when set): kept on
//     items of any type as 6.0 keeps it, up to 64 characters, imported,
//     exported and copied to linked hosts. Log values do not take their
//     time stamp from it yet.
//   - An item's description (Item.Description, schema version 19; up
//     to 65,535 characters), set by the edit API and by Apply.
//   - A host's description (Host.Description, schema version 15; up to
//     65,535 characters), set through the edit API and left alone by
//     Apply, as host tags are.
//   - Item tags (Item.Tags, schema version 16; table item_tags): Zabbix
//     6.0's item tags, name/value pairs kept in their order, no pair
//     twice, names and values up to 255 characters, as host tags.
//     ItemUpdate.Tags replaces them; the import's items list them in
//     Zabbix's export form and Apply makes them equal to the list.
//     Deleting an item or its host deletes them.
//   - What issue 12 adds to items (schema version 6): preprocessing
//     steps (Item.Preprocessing, Zabbix's step objects, identical chains
//     shared), the master of a dependent item (Item.MasterItemID, with
//     Zabbix's rules: same host, no cycles, at most 3 levels below a
//     master; deleting a master deletes its dependents; items never
//     change host, so neither do masters) and the formula or script of
//     calculated and script items (Item.Params). The snapshot indexes
//     dependents by master (Snapshot.Dependents, Item.HasDependents,
//     Snapshot.Root). What steps and formulas mean is not the catalog's
//     to know: package preprocess imports this one, so it validates them
//     through hooks the server sets (Options.CheckPreprocessing,
//     Options.CheckFormula); without them only names, counts and which
//     item types may have what are checked.
//   - HTTP agent requests (http_item.go, Item.HTTP: Zabbix's url,
//     query_fields, request_method, ... of type 19 items; table item_http,
//     schema version 8), validated with Zabbix's values and names
//     (ItemSpec.HTTPSpec in the import, ItemUpdate.HTTP for the API).
//   - SSH and Telnet logins (login_item.go, Item.Login: Zabbix's
//     authtype, username, password, publickey and privatekey of type 13
//     and 14 items, whose command is their Params; table item_login,
//     schema version 22). Their authtype, username and password share
//     HTTPSpec's fields, as Zabbix's item fields are shared.
//   - JMX agent items' endpoint and credentials (jmx_item.go, Item.JMX:
//     Zabbix's jmx_endpoint, username and password of type 16 items;
//     table item_jmx, schema version 23), the endpoint defaulting to
//     Zabbix's (DefaultJMXEndpoint); the username and password are the
//     item's (ItemSpec.HTTPSpec's, as Zabbix's items share those columns).
//   - Database monitor logins (odbc_item.go, Item.ODBC: Zabbix's
//     username and password of type 11 items, whose SQL query is their
//     Params and whose data source their key names; table item_odbc,
//     schema version 24). They share HTTPSpec's fields, as Zabbix's
//     item fields are shared.
//   - Item parameters (item_params.go, Item.Parameters: Zabbix 6.0's
//     item "parameters", the name/value pairs of a script item's
//     script, names unique and not empty; table item_parameters, one
//     row per parameter in order, schema version 25); script items only.
//   - Triggers (trigger.go, edit_trigger.go, spec_trigger.go; schema
//     version 9): Zabbix's trigger fields, tags, dependencies (no cycles,
//     at most 32 deep) and the items the expressions reference, resolved
//     when stored through Options.ExprRefs, a parser hook the server
//     sets so that the catalog does not depend on the evaluator. A
//     trigger referencing an unknown host or key is refused; deleting an
//     item or host deletes the triggers referencing it. The snapshot
//     looks triggers up by ID and by item (TriggersOfItem: what to
//     evaluate when a value is committed). The import takes triggers
//     under hosts in Zabbix's export form and matches existing ones by
//     name and expression; an item's key change does not rewrite the
//     expressions that name the old key.
//   - User macros (macro.go, edit_macro.go, spec_macro.go; schema
//     version 10): global, host and template macros (types text and
//     secret; vault refused) with Zabbix's fields, and the links of
//     templates to hosts and templates. Snapshot.UserMacros gives a
//     host's resolution scope (package usermacro: host, linked templates
//     level by level in ascending ID order, global; exact context,
//     regex context, default), built once per snapshot, so a macro
//     change applies at the next evaluation without a restart;
//     Snapshot.UserMacrosOfHosts, the scope of a trigger over several
//     hosts (their own macros, then their templates depth by depth, then
//     global), is built on demand. A macro is unique per owner by name
//     and context in any spelling ({$A:x} = {$A:"x"}). Deleting a host
//     deletes its macros and links.
//   - Templates (template.go, edit_template.go, inherit.go,
//     spec_template.go; schema version 25): as in Zabbix 6.0, a template
//     is a row of hosts with status 3 (Host.IsTemplate), sharing the
//     hosts' ID sequence and namespace, in host groups, with tags, a
//     uuid, macros, linked templates, value maps, and items and triggers
//     that are ordinary rows with the template as their host (template
//     IDs above 2^40 of versions 10-19 were moved into the sequence).
//     A Snapshot keeps templates apart: its hosts, items and triggers
//     are the hosts' (what is polled, accepted and evaluated), and the
//     templates' are a part of their own (Snapshot.Templates,
//     TemplateItem, TemplateTriggers, HostOrTemplate, AnyItem), so no
//     consumer meets a template's item by walking hosts. Linking copies
//     a template's items and triggers to what links it (Item.TemplateID,
//     Trigger.TemplateID, one level up), merging an owner's own item of
//     the same key; changes to a template's item or trigger are made to
//     the copies field by field, copies accept from their owner only
//     the fields Zabbix lets an owner set and cannot be deleted alone;
//     unlinking keeps or clears them; deleting a template clears it
//     from everything linking it (inherit.go has the rules, recorded
//     from 6.0.14). Linking one template to 10,000 hosts is one Edit:
//     one transaction, its copies written many rows per statement
//     (edit_batch.go), one snapshot build. The import takes a Zabbix
//     6.0 export's templates whole (items, triggers, value maps, tags,
//     groups, macros, links, graphs, dashboards, discovery rules) and
//     refuses, naming the element and its path, what the catalog cannot
//     hold yet (item types and fields
//     it does not keep); templates, their content, links and macros are
//     applied after hosts and triggers in one more transaction.
//   - Graphs and templates' dashboards (graph.go, dashboard.go, schema
//     version 27, one migration, migrateGraphs): Zabbix 6.0's graphs
//     with their items (gitems) of one host or template, stored as
//     JSON rows and held in the snapshot's extras (Snapshot.Graphs,
//     Dashboards, HostDashboards). Edit.syncExtras runs before every
//     commit that changed graphs, links or deleted items: a template's
//     graphs are copied to what links it (items mapped by key,
//     Graph.TemplateID), an owner's own graph of the same name taken
//     over, copies that lost their template or link deleted or kept
//     as the owner's own, graphs that lost every item deleted, widget
//     fields naming deleted items or graphs dropped. Dashboards are
//     not copied: a host shows those of its templates, as in 6.0.
//     Graph prototypes (graph_proto*.go) are part of their rule's
//     LLDRule (items by key, IDs from the graphs' sequence), copied
//     with it; a discovered graph is a Graph with Discovery set
//     (ApplyDiscovery, graph_proto_apply.go), deleted with its
//     prototype, its items, or after its lifetime once lost.
//     Graph items carry their gitemid, dashboard pages and widgets
//     their dashboard_pageid and widgetid, in the rows' JSON: kept
//     while the object keeps them, new ones above every ID handed out
//     (rows stored before they had IDs are numbered when loaded).
//   - Zabbix exports in all three formats (export_decode.go:
//     ParseExport reads YAML, JSON and XML into the same Spec; Zabbix
//     Path writes a field path as 6.0's import errors do) and
//     configuration.import's rules (export_import.go: Catalog.Import,
//     one Edit: the rules filter what is created or updated, then
//     deleteMissing deletes from the document's templates what it
//     lacks); configuration.export's document (export_build.go:
//     Snapshot.Export builds 6.0.14's tree, members in 6.0's order,
//     defaults omitted, lists in 6.0's natural order; export_write.go
//     writes it as 6.0's YAML dumper, XML writer and JSON encoder do).
//     A document's media types (mediatype_import.go, mediatype_export.go)
//     go to the AlertConfig, written in the import's transaction
//     (Catalog.editImport) and published when it commits.
//   - Low-level discovery (lld.go, lld_edit.go, lld_apply.go,
//     lld_spec.go; schema version 28): a discovery rule is an item
//     (flags 1) with Item.LLD, its lifetime, filter, LLD macro paths,
//     overrides and prototypes (item prototypes, flags 2, trigger and
//     host prototypes, IDs from the items' sequence); it is text
//     without history and never a prototype's or item's key twice on a
//     host. Linking copies rules with their prototypes (TemplateID,
//     template names in trigger prototypes rewritten), UpdateRule
//     changes a rule and its copies (a copy takes from its owner only
//     its prototypes' status, discover and the like: lld_copy_edit.go;
//     a later change of the template's rule resets them). A
//     discovered item (flags 4) or
//     trigger carries Discovery (rule, prototype, ts_delete).
//     Edit.ApplyDiscovery makes one result of a rule so (package lld
//     computes it): creates, updates, marks lost (TSDelete = now +
//     lifetime) and deletes lost resources whose time came, writing
//     nothing when nothing changed. Deleting a rule deletes what it
//     discovered. The import takes a template's discovery_rules in
//     Zabbix 6.0's export form.
//   - Web scenarios (httptest.go, httptest_sync.go, httptest_spec.go,
//     httptest_export.go; schema version 34, one migration,
//     migrateHTTPTests): Zabbix 6.0's httptests with their steps,
//     variables, headers, authentication, proxy, retries, SSL fields and
//     tags, one JSON row per scenario in the snapshot's extras
//     (Snapshot.HTTPTests, HTTPTest, HTTPTestOfItem). Every scenario has
//     the items 6.0 makes for it (item type 9, WebItem: web.test.in,
//     fail and error per scenario, web.test.in, time and rspcode per
//     step, with 6.0's names, value types and units, the scenario's
//     interval, status and tags), kept by syncWebItems before every
//     commit that changed a scenario: their IDs are kept in the
//     scenario, so a rename renames them, a step made anew gets new ones
//     and the items of a removed step or scenario go. Linking copies a
//     template's scenarios (TemplateID, their items copies of the
//     template's), a template's change reaches a copy field by field
//     (what the host changed on it and the template did not stays),
//     unlinking keeps the copy as the owner's own or, with
//     templates_clear, deletes it; generic item inheritance leaves web
//     items to this. The import takes templates' httptests in 6.0's
//     export form and the export writes them as 6.0.14 does.
//   - Maintenances (maintenance.go; schema version 10): Zabbix's
//     maintenance with data collection, one time, daily and weekly
//     periods, hosts, groups and problem tag conditions, validated with
//     Zabbix's rules (times rounded down to minutes, periods of at least
//     5 minutes); monthly periods are refused. Snapshot.Maintenances
//     serves them to package maintenance, which decides when they are
//     active. A deleted host's ID stays in a maintenance and matches
//     nothing.
//   - Peregrine's soft/hard state settings (schema version 10):
//     Trigger.MaxCheckAttempts (1..100, default 1) and Item.RetryDelay
//     (1s..1d, a user macro, or none), used by package trigger and the
//     poller.
//   - The notification configuration (alert.go; schema version 11):
//     media types, trigger actions and users' media, stored as JSON
//     objects with Zabbix's field names, published whole as an
//     AlertConfig (Catalog.AlertConfig, EditAlerts, SubscribeAlerts)
//     beside the snapshot. IDs come from per-kind sequences and are
//     never reused. The catalog stores; the API validates.
//     Event correlation rules (correlation.go, their own migration)
//     are part of it too (AlertConfig.Correlations).
//   - Trigger.EventName (schema version 14): Zabbix 6.0's event name,
//     which names the trigger's events instead of its description.
//   - Value maps (valuemap.go, spec_valuemap.go; schema version 12):
//     Zabbix 6.0's per-host maps (name unique on the host, mappings of
//     types equal, ≥, ≤, range, regexp and default, ValueMap.Map applies
//     them) and Item.ValueMapID, which must name a map of the item's own
//     host. Deleting a map leaves its items without one; deleting a host
//     deletes its maps. The import declares them under hosts in Zabbix's
//     export form, applied after the items like triggers.
//     Snapshot.ValueText (valuetext.go) writes an item's value as 6.0
//     writes it into names, tags and alerts: value map, else units.
//   - Network discovery (drule.go; schema version 33): discovery rules
//     with their checks (DRules, SaveDRules; 6.0's rule 2 "Local
//     network" seeded by the schema) and what the discoverer found
//     (Discovery, SaveDiscovery: discovered hosts and services), each
//     an immutable value of its own outside the snapshot, written under
//     the writers' lock without a revision; deleting a rule or a check
//     deletes what it found.
//   - Global regular expressions (regexp.go; schema version 17): Zabbix
//     6.0's named lists of expressions (types 0-4, case sensitivity,
//     the delimiter of type 1), names unique, with the five a fresh 6.0
//     has under its IDs 1-5, seeded by the schema and its migration.
//     Snapshot.RegexpByName finds one by the name an "@name" reference
//     gives; GlobalRegexp.Match applies it (every expression must
//     match; types 3 and 4 in Go's regular expression syntax).
//   - Zabbix 6.0's default objects (defaults.go, defaults/*.json,
//     schema version 18): EnsureDefaults adds, once per database, the
//     host groups 1-19 of a fresh Zabbix, its 34 media types (Email,
//     SMS, Email (HTML) and the webhooks, their scripts and parameters
//     as Zabbix 6.0.14 answered them), its trigger action 3, global
//     scripts 1-3 and global macro {$SNMP_COMMUNITY}, with their IDs; on an older database what is missing
//     by name, never reusing an ID that was handed out. The discovery
//     action 2 and the internal-event actions 4-6 are sets of their own,
//     added once to older databases too. A
//     catalog that never had a host hands out host IDs from 10084
//     (FirstHostID, "Zabbix server" on a fresh Zabbix).
//   - Validation of configuration: host names, item keys (through
//     internal/zbx/itemkey), item and value types, intervals and retention
//     periods, with errors naming the offending field path.
//
// # What it does not own
//
// It holds no history values and takes no part in ingest, polling or
// preprocessing: those packages look items up in a Snapshot and keep their
// own per-item state keyed by Item.ID. A Snapshot's Hosts, Lookup, Item
// and Triggers never return a template or a template's item or
// trigger. It does not schedule checks; it validates polled items'
// update intervals with the scheduler's parser (internal/zbx/delay, a
// pure package) so that what it stores can be scheduled.
//
// # Memory
//
// Most of a catalog's text repeats: every host linked to a template, and
// every item or trigger a prototype discovered, carries the template's
// keys, names, units, intervals, descriptions, comments and tags. The
// writers hold each distinct text once (intern.go): Edits share them
// through the Catalog's strPool (bounded: texts up to 4 KiB, at most
// 2^20 of them, then it starts over; equal tag lists are shared whole),
// Open through an interner per
// load, and a host's copy of a template's discovery rule shares the
// template's strings (shareStrings) and has its JSON-decoded slices
// trimmed to their length (compact). Item, Host and Trigger keep their
// one-byte fields together. An Item's fields that most items leave
// empty (description, per-type settings, formula or script, timeout, UUID, discovery
// rule: ItemExtra, item_extra.go) sit behind one pointer, nil on most
// items, and the copies of one template item share one ItemExtra
// (Edit.shareExtra; Open's interner shares those with only the items
// table's fields); readers use Item.Ext, writers Item.MutExt (copy on
// write). A Host's encryption and IPMI settings, inventory, UUID and
// discovery link are likewise behind one pointer (HostExtra,
// host_extra.go: Host.Ext, Host.MutExt), which every host with
// Zabbix's defaults shares (finishHost). What an item still costs is
// measured in docs/bench/estate.md ("The catalog model at scale"): 232
// bytes of Item in its host's slice plus its host's share (Host is 224
// bytes, its key table at most two thirds full) and its indexes
// (BenchmarkDeriveScale reports heap-B/item), and in a template-linked, discovered fleet about
// 1.25 KB of heap per item with triggers, rules and graphs.
//
// An Edit that wrote no trigger and deleted no item (an item.update, a
// rename of a host no trigger names) shares the old snapshot's trigger slab and indexes
// (shareTriggers) instead of rebuilding them;
// TestEditSharedTriggersMatchReload compares random edits of both kinds
// with a reload, trigger by trigger. Hosts and items are shared too
// (derive, snapshot_derive.go): each host holds its own items and key
// table, a Host and its items are immutable and shared by every
// snapshot in which neither changed, and the indexes (hosts by name and
// ID, interfaces and items by ID) are maps split into shards, of which
// an edit copies only those it changes (cowmap.go; items by ID in pages
// of 64 IDs). An edit thus makes anew the hosts it touched, with their
// items, and copies the sorted host list (8 bytes per host): one
// item.update at a million items derives the next snapshot in
// milliseconds (BenchmarkDeriveScale; BenchmarkEditScale adds SQLite's
// transaction). TestDeriveMatchesReload checks random edits of every
// kind (items, hosts, template links, a template's item, discovery
// results) against a reload and every index against the hosts.
// What is still O(items) per edit: a change of user macros or template
// links (every host's macro scope may change, so every host is made
// anew), trigger edits (the trigger slab), and the first Copies call
// of a snapshot (the copies of templates' items are indexed on first
// use).
//
// # Concurrency contract
//
// Readers are lock-free. Catalog.Snapshot is an atomic pointer load; a
// Snapshot and everything reachable from it are never modified after
// publication, so any number of goroutines may use one concurrently, and
// a reader holding an old Snapshot keeps seeing the old configuration for
// as long as it holds it. Snapshot.Lookup, Snapshot.Host, Snapshot.Item and
// Host.Item do not allocate and do not retain their string arguments, so
// the ingest path may pass strings that alias reused byte buffers. Callers
// MUST NOT modify hosts, items or groups obtained from a Snapshot.
//
// Writers are serialised by a mutex in the Catalog: one Apply or Edit at
// a time. An Apply validates, diffs the spec against the current snapshot, writes
// the difference in one SQLite transaction, builds the next snapshot from
// the previous one plus the difference (the hosts it touched, without
// reading the database back) and publishes it with one atomic swap, then signals the
// Subscribe channels without blocking. An Edit does the same with the
// changes its function made: all of them are one transaction and one
// snapshot. Readers never wait for writers.
//
// One Catalog per database file: Apply and Edit trust the in-memory snapshot to
// match the database, so the file must not be changed by another process
// while a Catalog has it open.
package catalog
