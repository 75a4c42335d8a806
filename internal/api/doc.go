// Package api is Peregrine's Zabbix-compatible JSON-RPC 2.0 API at
// POST /api_jsonrpc.php: request decoding (single and batch), the error
// object and codes of the Zabbix API, authentication (the "auth" member
// or "Authorization: Bearer"), per-method roles, request limits, and one
// file per object family: apiinfo.go, hostgroup.go, host.go (host.get)
// and host_write.go (host.create and .update, checked in 6.0's order
// and words), hostiface.go
// (host interfaces: host.get's selectInterfaces and hostinterface.get;
// an SNMP interface's details are returned as Zabbix 6.0 returns them,
// community and passphrases included), hostiface_write.go
// (hostinterface.create, .update and .delete, through the catalog's host
// update so the rules are host.update's), the mass methods of 6.0
// (host_mass.go and host_massupdate.go: host.massadd/massremove/
// massupdate, read as 6.0's pre-validator code reads them, checked in
// its steps; hostgroup_mass.go: hostgroup.massadd/massremove/
// massupdate, checked by decodeRuled; hostiface_mass.go:
// hostinterface.massadd/massremove/replacehostinterfaces), each one
// catalog Edit with host.update's permission checks,
// item.go (with item_rows.go and item_rows_http.go, the answer, and item_check.go: the checks of
// item.create and .update 6.0 makes with its own code, in its order and
// words), history.go, user.go, usergroup.go,
// role.go (role.*, checked as 6.0's input validator checks them) and
// role_rules.go (what a role's rules allow: every call that needs a
// login passes them after the user type, refused with 6.0's `No
// permissions to call "x.y".`), settings.go (settings, housekeeping
// and authentication get/update over the auth store's config table;
// Options.SettingsHook tells the server what changed),
// token.go, dashboard.go and dashboard_write.go (dashboard.*: global
// dashboards kept in the auth store, checked as 6.0 checks them), push.go, task.go (task.create type 6, "check now";
// task.get, always empty: 6.0 lists only diagnostic information tasks,
// which Peregrine refuses), hanode.go (hanode.get: the HA registry on a
// cluster node, Options.HACluster; else the one node of a standalone
// 6.0, itself),
// trigger.go and trigger_write.go (trigger.get/create/update/delete,
// trigger.adddependencies/deletedependencies, selectDependencies; a
// dependency cycle is refused with Zabbix's text naming the cycle),
// httptest.go (httptest.get/create/update/delete: web scenarios with
// their steps, checked with 6.0's validator texts; the items the
// catalog makes for them are listed by item.get with webitems only and
// refused by item.update and item.delete),
// valuemap.go (valuemap.get/create/update/delete: Zabbix 6.0's per-host
// value maps with mappings of types 0-5; items name one by valuemapid,
// which item.get returns and item.create/update set),
// problem.go (problem.get and the event filters it shares with
// event.get), event.go (event.get, event.acknowledge),
// queue.go (queue.get, Peregrine's extension: Zabbix's frontend reads
// the queue through its server's internal protocol, not the API),
// history_flush.go (history.flush, Peregrine's: the history store's
// head flushed and its days compacted on an operator's demand),
// proxy.go (proxy.get, read as 6.0's legacy proxy.get reads it, and
// proxy.create/update/delete, checked as 6.0's validator checks them;
// hosts' proxy_hostid is in host_write.go and host_massupdate.go),
// drule.go (drule.get/create/update/delete, dcheck.get, dhost.get,
// dservice.get: network discovery as 6.0's legacy CDRule has it, rules
// checked field by field in its words; discovery actions' condition
// values),
// regexp.go (regexp.get/create/update/delete: the catalog's global
// regular expressions, super admins only, checked as 6.0's validator
// checks them, with decodeRuled),
// preprocessing.go (preprocessing.test, also an extension: the
// frontend's "Test" button, which Zabbix's frontend sends to its server;
// docs/api.md has its shape, and the validation of preprocessing
// objects with Zabbix's error paths, which item.create and item.update
// share; item.get returns the steps under selectPreprocessing). The
// parameters all get methods share are in get.go, and catalog.go turns
// catalog edit errors into Zabbix's.
//
// Parameters (params.go, decode.go, decode_objects.go, params_legacy.go,
// params_refs.go, params_nested.go, params_alert.go): each method declares its
// parameters in one place, a params struct next to it, one field per
// parameter: the json tag names it, the field's type and "as" tag say
// how its value is read (IDs, integers, strings, time units, outputs,
// selects, nested objects), the "in", "zbx", "key" and "default" tags
// give the values it may take, whether null means absent, the ID member
// of a list of references and its default, and a method whose rules
// depend on another parameter adjusts them in one place (ruleHook).
// Every field is an opt[T], which tells a member absent, null or given
// (empty or not). One walker reads the params object, with the rules of
// its entry point (decodeRules), which are the shapes of Zabbix 6.0's
// params as recorded from 6.0.14:
//
//   - decodeGet: the get methods 6.0 kept from before its API input
//     validator (host, hostgroup, item, trigger, template, usermacro,
//     maintenance, hostinterface, problem, event, trend, user,
//     usergroup, mediatype, action, alert) and event.acknowledge. They
//     ignore what they do not know and refuse no value for its type:
//     each is read as PHP reads it (params_legacy.go has how: IDs, PHP's
//     truth or "is set" for flags, limits, output, select*, sortorder),
//     a value the database would refuse makes the answer empty
//     (noRows), and only the few parameters 6.0 checks with its
//     validator all the same (zbx:"strict": item.get's evaltype and
//     selectValueMap, host.get's severities...) are refused, in the
//     validator's words;
//   - decodeGetStrict: queue.get (ours): unknown
//     members are refused (`Invalid parameter "/": unexpected parameter
//     "xyz".`), type errors worded as Peregrine's former get decoder did;
//   - decodeValidated: history.get, auditlog.get and the validated gets
//     (get_valid.go: token.get, valuemap.get, script.get), checked in the order and
//     with the texts of 6.0's API input validator: unknown members and
//     fields refused, a list naming a value twice too (zbx:"uniq"),
//     output lists giving the fields named and not the ID;
//   - decodeObjects (create and update: objects), decodeIDs (delete:
//     an array of IDs or, as PHP reads one, an object whose values are
//     the IDs), decodeStrictObject (preprocessing.test) and
//     decodeLenient (user.login, user.checkAuthentication,
//     script.execute, which ignore unknown members), which keep the
//     texts their methods had, quirks included ("/1/MediaType/name");
//     decodeObjects has two variants recorded from 6.0.14:
//     decodeValidatorObjects (the methods 6.0 checks with its API input
//     validator: host groups, triggers, user macros, maintenances,
//     value maps) takes {} as the empty list it is to PHP, and
//     decodeLegacyObjects (host, item, hostinterface, which 6.0 checks
//     with their own code) ignores the objects' unknown members.
//
// Every entry point drops "nopermissions", as Zabbix's API removes it
// from every call. Nested objects (params_nested.go: a value map's
// mappings, a maintenance's time periods and tags, a task's request,
// preprocessing.test's history) are params structs too, declared as:"object" or
// as:"objects" and read by the walker as encoding/json read them for
// the former decoders (a path naming no element: "/1/mappings/type").
//
// What the get methods share (get.go, get_tags.go, get_valid.go): filter and search
// read the fields of the object family's table in 6.0 (schema: numbers
// are compared as numbers, text fields are searched but not filtered, a
// field 6.0 does not have is ignored), several patterns of a field must
// all match unless searchByAny, excludeSearch is ignored as 6.0 ignores
// it; sortfield names one of the method's sort columns or gets 6.0's
// -32500 `Sorting by field "x" not allowed.`; any output list returns
// the object's ID too; an object shaped to no field is [], PHP's empty
// array; "count" selects count where 6.0 counts and leave the member
// out where it does; tags and evaltype filter hosts, items, triggers,
// problems and events as 6.0's tag filter does (get_tags.go). Item tags
// (item_tags.go) are stored and replaced as 6.0 does it: item.update's
// new tags follow the kept ones in PHP's natural order.
//
// The create and update objects of media types, actions and scripts
// and users' "medias" have a dialect of their own (params_alert.go,
// decodeAlert), that of their former decoder, which went through JSON
// maps: a pre-pass makes numeric members given as strings numbers at
// any depth, then the members are read in the order of their names
// and an update reads the stored object's members under the request's
// (alertOver); of several problems of the pre-pass, the first in the
// request's order is reported.
//
// The audit log (auditlog.go, audit_record.go, audit_spec.go,
// audit_details.go): with Options.Audit (*audit.Log) every method that
// changes something is wrapped once, when the server is built, so that
// it records what Zabbix 6.0 records for it (auditOps; the methods 6.0
// does not audit are listed in notAudited, and TestEveryWriteIsAudited
// fails for a write method in neither). The wrapper reads the objects
// the call names through their family's get method (as a super admin)
// before and after the call, computes 6.0's details (its two styles:
// full paths on add and update for the families 6.0 moved to its newer
// audit, changed scalar members in 6.0's order for hosts, triggers and
// value maps), masks secrets, and appends the records durably before the
// call is answered; the calls of one HTTP request share a record set.
// auditlog.get (super admins) reads the log.
//
// Permissions (perm.go): a super admin may do everything; anybody else
// what their user groups' rights on host groups allow, combined as Zabbix
// does (auth.Rights). Get methods, history.get and trend.get omit what
// the caller may not read; writes to hosts and items need read-write and
// otherwise fail as if the object did not exist. The rights are read
// once per request.
//
// Triggers, problems and events are read through the Events interface
// (*event.Store: open problems in O(open problems), retained events,
// acknowledge actions) and TriggerStates (*trigger.Machine: trigger
// value, state, error, last change; event.acknowledge goes through it);
// without both those methods are not served. A trigger is visible when
// every host it references is (Zabbix's rule for triggers spanning
// hosts), and so are its events; trigger.create/update/delete need
// read-write on every host the trigger references after the change,
// checked inside the catalog Edit once the expression is resolved.
// problem.get (problem_select.go) does not copy every open problem when
// the store is also an OpenScanner (*event.Store is): with a limit and
// the eventid order it walks the open problems in ID order and stops at
// the limit; when the hosts, groups or triggers it names hold under an
// eighth of the open problems it reads them through the store's index by
// trigger; a few eventids (up to that eighth) are looked up one by one;
// countOutput counts without copying. The triggers of a request's
// hosts or groups are walked once per catalog snapshot and scope (the
// server remembers up to 64 scopes per snapshot), since dashboards and
// the storm bench repeat the same request many times a second; a caller
// who sees everything and names no groups is checked per problem
// without the per-request trigger cache. event.get newest first
// with a limit (the web UI's watermark) walks the store's events from
// the newest (EventScanner) and stops at the limit.
//
// User macros (usermacro.go): usermacro.get/create/update/delete for
// host and template macros, usermacro.createglobal/updateglobal/
// deleteglobal (super admin) for global ones, and host.get's
// selectMacros and selectParentTemplates, host.create/update's macros
// (replacing the host's), templates and templates_clear. A secret
// macro's value is never returned, as Zabbix omits it; a vault macro is
// refused. Host and template macros need the rights on their host's or
// template's groups.
//
// configuration_compare.go: configuration.importcompare, the import's
// document compared with the export of what it names, as 6.0.14
// compares them (ordered maps, pairs by uuid or unique members, rules
// applied).
// configuration.go: configuration.import, a Zabbix export in YAML, XML
// or JSON (catalog.ParseExport) under 6.0's rules, checked in its words
// and applied by catalog.Import in one transaction; errors name the
// element by 6.0's path. configuration_export.go: configuration.export,
// host groups, hosts, templates and media types written as 6.0.14
// writes them (catalog.Snapshot.Export) in YAML, XML, JSON or raw; maps
// and images refused (Peregrine has none). An import's media types are
// checked by CheckMediaType (mediatype.go), mediatype.create's checks.
// Low-level discovery (discoveryrule.go, lld_items.go): discoveryrule.get,
// itemprototype.get, triggerprototype.get and hostprototype.get over the
// catalog's rules (items with LLD) and their prototypes; item.get and the
// selectItems of host.get and template.get leave rules out (flags 0 and
// 4 only, as 6.0), item.update refuses rules.
// discoveryrule_write.go, lld_protos_write.go, lld_trigger_write.go:
// discoveryrule.create/update/delete/copy and the prototypes' create,
// update and delete, checked and worded as 6.0.14 (conformance case
// lld); each call is one catalog Edit changing the rule's configuration
// (catalog.Edit.UpdateRule), which the catalog hands on to its copies.
// lld_inherited.go: what the owner of an inherited prototype and of a
// discovered host, item or trigger may change, and the refusals of the
// rest, worded as 6.0.14 (conformance case inherited_edits).
//
// Graphs (graph.go: graph.get, graphitem.get; graph_write.go:
// graph.create/update/delete, checked as 6.0's CGraph checks them with
// its own code) over the catalog's graphs, a template's copied to what
// links it; template dashboards (templatedashboard.go:
// templatedashboard.*, checked by dashboard.*'s validator rules and
// widget checks, a field naming an item or graph of the template
// itself). Recorded from 6.0.14: the conformance case graphs. Graph
// prototypes (graphprototype.go, graphprototype_write.go:
// graphprototype.*) are part of their rule's configuration in the
// catalog, written through catalog.Edit.UpdateGraphPrototypes; graph.get
// shows discovered graphs (flags 4) with their rule and prototype
// (conformance case graph_prototypes).
//
// Templates (template.go: template.get and its selects;
// template_write.go: template.create/update/delete, checked as 6.0's
// validator checks them; template_mass.go: template.massadd/
// massremove/massupdate): Zabbix 6.0's templates, in host groups, whose
// items and triggers the catalog copies to what links them (package
// catalog, inherit.go). item.get and trigger.get list templates' items
// and triggers too (templated, inherited, templateid), item.update on a
// copy drops the members 6.0 ignores there (itemParams.dropTemplated),
// and the catalog's refusals about links and copies are worded as 6.0
// words them (inheritProblem). Recorded from 6.0.14: the conformance
// case templates.
//
// Notifications go through the Alerting interface (alerting.go: the
// catalog's AlertConfig and EditAlerts, the alert engine's alerts), one
// file per family: mediatype.go, action.go, alert.go, media.go (users'
// media) and script.go.
// mediatype.get/create/update/delete (admin reads, super admin writes;
// types 0 email, 1 script, 4 webhook; SMS is refused), action.get/
// create/update/delete (admin; trigger actions only, operations that
// send messages or run remote commands, with opconditions on escalation
// steps, recovery and update operations, with selectFilter,
// selectOperations, selectRecoveryOperations, selectUpdateOperations),
// alert.get (any user; an alert is visible when every host of its
// trigger is; remote commands are alerttype 1 with hostid and output),
// script.get/create/update/delete (script.go; super admin writes, type
// 0 scripts only) and script.execute (any user with the script's user
// group and its host access on the host; run through Alerting.RunScript)
// and users' media (user.create/update "medias", user.get
// selectMedias to a super admin or the user). Members given as numeric
// strings are taken as numbers, unknown members are refused, and the
// error texts are Zabbix's where Zabbix has one. mediatype.get does not
// return passwd; its selectQueue (a Peregrine addition) adds each media
// type's backlog when Alerting also has AlertQueues. mediatype.test
// (mediatype_send.go, a Peregrine addition, Super admin) sends one test
// message when Alerting also has AlertTester: 6.0's frontend does it
// outside the API (a trapper "alert.send"). correlation.* (correlation.go):
// event correlation rules, kept in the notification configuration
// (catalog.Correlation; package trigger applies them to new problems).
// event.get shows an OK event's correlationid, problem.get a closed
// problem's (problem.go, as 6.0.14). Without Alerting
// those methods are not served.
//
// Services and SLAs (service.go, service_write.go, sla.go) go through
// the Services interface (*service.Engine: the configuration, edited
// through a copy, the statuses, the problems behind them and the status
// history); without it those methods are not served. Their parameters
// are checked as Zabbix 6.0's API input validator checks CService's and
// CSla's (service_valid.go: the vocabulary's walker over the fields in
// Zabbix's rule order, required members missing at their place, the
// validator's texts, its second pass for unique list members), then in
// CService's order of checks. Users of the User type read; admins and
// super admins write (Zabbix's default roles). sla.getsli writes PHP's
// numbers (serviceids as numbers, the SLI as PHP prints a float).
//
// Runtime state (runtime.go): item.get's "state" and "error" and the
// availability of host interfaces ("available", "error", "errors_from",
// "disable_until", on the interface as in Zabbix 6.0) are read through
// the ItemStates and Availabilities interfaces (*itemstate.Registry), and
// task.create hands "check now" requests to a CheckNower (the poller).
// Without them every item is normal, every interface unknown and check
// now is refused. queue.get reads the overdue checks through a
// QueueReader (the poller) and counts them by Zabbix's delay buckets,
// overall and per host or item type, over the hosts the caller may
// read; without one the queue is empty.
//
// It owns no data: it reads the catalog snapshot and the history store
// through the interfaces in this package, and authenticates through the
// small Authenticator interface that *auth.Store (internal/auth)
// implements as is; user and token management call the *auth.Store
// directly. main wires them. Responses of history methods are streamed
// from the store to the socket, so memory does not grow with the row
// count beyond one bounded buffer: history.get's rows are read and
// written by the subpackage histread (its doc.go has how: a numeric read
// that must be checked against api.max_rows is first buffered as compact
// rows, Options.PrefetchRows bounding all requests together, so the
// usual read needs no separate counting pass; rows are formatted
// straight into the response buffer). history.go is parse and call: it
// turns the checked parameters and the caller's readable items into a
// histread.Request, and histread's errors into Zabbix's. item.get's
// answer is streamed too (item_rows.go, itemAnswer): the rows are
// selected, filtered and sorted as item pointers, and each is encoded
// into the response as it is written, so a call over 100k items
// allocates about 1 MB, not the 100 MB of its answer several times
// over; other results already encoded (rawJSON) are written as they
// are. The scalars of
// every answer (strings, floats as Zabbix prints them) are written by
// the subpackage zjson.
//
// history.get checks its parameters as the Zabbix API's input validator
// does (history_params.go): an unknown parameter, a null "history", a
// mistyped value are refused with code -32602 and Zabbix's text
// (`Invalid parameter "/": unexpected parameter "xyz".`), never ignored;
// without itemids and hostids it reads every item of the type the
// caller may read, as 6.0 does. trend.get is a legacy get (decodeGet).
// history.get's "filter" and "search" are compiled into a predicate
// (rowmatch.go) that histread applies to the rows as they stream.
//
// Batches: each call of a JSON-RPC batch is answered in order, its
// response element written to the socket as it is produced (rows of a
// history.get included), so a batch needs the memory of one call, not
// the sum of its responses. A call without an id (a notification) runs
// and gets no element; a batch of notifications only is answered with an
// empty body. A call that fails gets its error object in its place; only
// a store error in the middle of a streamed history.get cuts the
// connection, as it does for a single call. A batch of more than
// Options.MaxBatchCalls (api.max_batch_calls) calls is refused whole.
//
// Memory bound: answering a batch of four history.get calls of 2M rows
// each (485 MB of JSON) raises the server's peak RSS by at most 64 MiB
// over its RSS before the batch, whatever the number of calls or rows
// (measured: +6 MB, and +1.4 MB with the prefetch buffer, whose 24 MiB
// one call holds and the next reuses; gathering each element first cost
// +389 MB).
// TestIntegrationBatchMemoryBounded in internal/server checks it against
// `peregrine serve`.
//
// Admission (admission.go): at most Options.MaxConcurrentCalls calls
// run at once (api.max_concurrent_calls); the others wait in their
// caller's queue (a user; without a session, the client's address), at
// most Options.MaxWaitingPerUser each, and every slot freed goes to the
// waiting caller with the fewest calls running, so one user's flood
// does not starve another's. A call beyond its caller's queue is refused
// at once, one that waits until the request's deadline then (-32500,
// "The server is busy: ..."); both are counted by reason. Each member of
// a batch is one call.
//
// Concurrency: the Handler serves requests concurrently; every
// dependency is safe for concurrent use. A history.get of many numeric
// items without a limit reads them in up to min(GOMAXPROCS, 4) parts
// on goroutines of its own, which end before the request does; a
// "sortfield": "clock" over such items merges the buffered rows rather
// than reading each item from the store (histread/prefetch.go).
package api
