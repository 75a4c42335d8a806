// Package web is Peregrine's web UI: a small single-page app of plain ES
// modules (assets/, embedded with embed; no build step, no bundle to keep
// in step with its sources) and the few server endpoints it needs, on the
// HTTP port beside the API.
//
// Data path: the app reads and writes only through the JSON-RPC API, the
// same handler (api.Server.Handler) that serves /api_jsonrpc.php, with
// the same permissions and error texts; logging in and out are the API's
// user.login and user.logout, and the session check is
// user.checkAuthentication, all called in-process (session.go). The
// package owns no data and no second query path.
//
// Routes (Register):
//   - GET /, /overview, /problems, /hosts, /latest, /graph, /graphs (a
//     host's graphs, its templates' and discovered ones included),
//     /hostdashboards (a host's dashboards: its templates', each
//     widget's graphs and items resolved to the host's copies and to
//     what discovery made from its prototypes), the
//     configuration pages /config/hosts, /config/items,
//     /config/triggers, /config/valuemaps, /config/actions,
//     /config/maintenance, /config/templates, /config/hostgroups,
//     /config/discovery (low-level discovery rules of a host or
//     template), /config/prototypes (a rule's prototypes) and the
//     administration pages /admin/users,
//     /admin/usergroups, /admin/roles, /admin/mediatypes,
//     /admin/scripts, /admin/settings, /admin/housekeeping,
//     /admin/auditlog, /admin/queue, /admin/authentication,
//     /admin/sysinfo, /dashboards, /services, /services/sla,
//     /user/tokens and the network pages /config/proxies,
//     /config/drules, /config/webscenarios, /admin/autoreg,
//     /discovery and /web, /config/graphs (a host's or template's
//     graphs) and /config/templatedashboards (a template's
//     dashboards), /config/correlation (event correlation, a Super
//     admin's): the app document for a live
//     session, else 303 to /login. Pages are real paths (not "#"
//     fragments) so the server sees every page request. Each page has a
//     least user type (configuration: Admin, administration: Super
//     admin) and a UI element of the user role's rules
//     (administration.users, configuration.maintenance, reports.audit,
//     ...; access.go; the discovery pages open with either
//     configuration.hosts or configuration.templates): a page the user
//     may not open is refused with 403 by the server (role.get of the user's own role, in-process), and
//     the document lists the pages the user may open for the menu
//     (meta peregrine-pages), so hiding a link is never the check.
//     The API tokens page also needs the role's manage_api_tokens, and
//     the document lists the action rules the pages follow (meta
//     peregrine-actions: manage_sla makes the SLA page writable).
//   - GET /login, POST /login: the login page (html/template, every
//     field escaped) with the first-start password flow explained: the
//     name of the file in data_dir where `serve` wrote the generated
//     Admin password (Options.AdminPasswordFile; never its directory,
//     the page is for anyone) and whether it is still there, never its
//     content.
//   - POST /logout: user.logout, then the cookie is dropped.
//   - GET /ui/session: who is logged in and the CSRF token (the app
//     document carries both in meta elements; this is the fallback).
//   - POST /ui/api: JSON-RPC (single or batch) passed to the API handler
//     with "Authorization: Bearer <session>" attached here; the answer
//     carries "Server-Timing: api;dur=<ms>", the API's own time, which
//     the page's measurements read.
//   - GET /assets/...: modules, styles, vendored uPlot (no data, no
//     session needed: the login page uses the style sheet). Pages link
//     them under /assets/v-<hash of all assets>/, cached as immutable:
//     an upgrade changes every URL, and a repeat visit loads no module
//     over the network. Unversioned paths are revalidated (ETag).
//
// Session and CSRF (design): the session cookie holds the API session id
// itself, HttpOnly, SameSite=Strict, Secure when the listener serves
// HTTPS. Since no script can read an HttpOnly cookie, the app cannot put
// the session in the API's "auth" member or an Authorization header;
// /ui/api attaches it server-side instead, so the secret never reaches
// script, a URL or a log. Every state change carries a CSRF token
// (X-CSRF-Token on /ui/api, a form field on /logout), an HMAC-SHA256 of
// the session under a key drawn at start: nothing is stored, and a
// restart only makes open pages fetch a new token. /ui/api asks for it
// on reads too (one rule, and a read through a stolen session is a leak
// too). The login form has its own pair (a random cookie and its HMAC in
// the form) against login CSRF. Browsers' Origin header, when present,
// must name this host. Refusals are 403, counted
// (peregrine_web_csrf_refused_total) and logged once per 10 s.
//
// Headers on every UI response: a Content-Security-Policy that allows
// scripts, styles and connections from this origin only (no inline
// script or style element, no eval) and frames of http(s) pages (the
// dashboards' URL widget, sandboxed), nosniff, frame-ancestors 'none' /
// X-Frame-Options DENY, Referrer-Policy same-origin, and
// Strict-Transport-Security when Options.TLS. The app builds the DOM
// with textContent and properties only (assets/dom.js), never innerHTML:
// user-provided strings (host names, item values, problem names) are
// text.
//
// Large lists (assets/vlist.js): latest data and problems render only
// the rows in view, placed by transform at one fixed height, each row
// CSS-contained so that drawing or filling one lays out nothing else; a
// page that can fill a row in place (problems) gets rows scrolled out
// back for the rows scrolled in, so scrolling moves elements and sets
// text instead of making them.
// The server filters and sorts; the list's answer holds ids only
// (item.get output ["itemid"], problem.get eventid, objectid, severity
// and clock), and the rows in view fetch their details by id. Graphs use
// uPlot (assets/vendor/uplot, MIT, vendored release file) with
// history.get "downsample" (one bucket per pixel column: min/max band
// and avg line) or trend.get beyond the items' history retention.
//
// Problems (assets/pages/problems.js) are built for an incident storm:
// server-side filters (severity, host group, host, tags, acknowledged,
// name). A filter paints from one round trip, a JSON-RPC batch of the
// watermark, the first 60 problems with details and the count
// (countOutput); the hosts and the whole id list are asked for once
// the frame showing those rows has been drawn, and the list is read,
// parsed and sorted by a worker (assets/idlist.js), so 50,000 rows of
// JSON never hold the page's main thread; a filter applied meanwhile
// cancels the superseded reads. The list is windowed; the rows in view
// read their details (problem.get by eventids) once the window has
// stayed in view for a frame (a fast scroll asks for nothing until it
// stops), one read on its way at a time (a window passed meanwhile is
// never asked for), their hosts (trigger.get) beside it, and each fills
// its rows in place when it answers (a refilled row writes only the
// cells that differ; 4 rows of margin beyond the view). Event
// history (event.get) only when a row's history is asked for, never per
// row, and acknowledge, close and change severity (event.acknowledge)
// in place. Live updates without a reload: every 5 s the page reads the
// newest event id and, when it moved, only what changed since its
// watermark (problem.get and event.get with eventid_from: problems
// opened, triggers recovered) plus the rows in view by eventids,
// waiting while the list scrolls (until it has been still for 300 ms);
// the whole id list is read again every 5 min. The overview's problem counts
// follow the same watermark.
//
// Value maps (assets/valuemap.js): latest data and problem rows show a
// value through its item's value map as Zabbix does, "Up (1)"; the maps
// are read by valuemapid (valuemap.get) for the rows in view only, and
// a server without valuemap.get shows plain values. A problem without
// operational data shows the last values of its trigger's items (one
// item.get per screenful).
//
// Configuration (assets/pages/config/, assets/form.js) goes through the
// same API calls as any client: hosts (list, create and edit in 6.0's
// tabs: name, groups, interfaces, tags, status, linked templates with
// unlink and unlink and clear, the monitoring proxy, macros (a secret's
// value never shown: left empty it is kept, typed it is replaced),
// inventory mode and fields, encryption (a stored PSK shows "Change
// PSK", never its value), IPMI (the password never shown): one
// host.create/update with the API's own members, and the host's value
// maps, each saved by valuemap.*, hostform.js; the list's mass actions
// and 6.0's mass update, one host.update of every checked host worked
// out as 6.0's frontend works it out, hostmass.js), items per host
// (itemform.js: 6.0's item form, the fields each type shows in 6.0.14
// (testdata/item-form-6.0.14.json), tags, and preproc.js's
// preprocessing editor: every step type with its parameters, custom
// on fail, reordering, and the Test dialog through preprocessing.test;
// one item.create/update; item prototypes share the form, discovery
// rules the editor with their step types; the list's filter as
// item.get's filter and search, and its mass actions on checked items,
// itemmass.js), triggers (trigger.create/update; a refused
// expression is shown with the API's message and the part from the
// position it names marked), value maps (valuemap.*). A host's, item's
// or trigger's form also clones it (the form's values as a new one, as
// 6.0's Clone: for a host its groups, interfaces, tags, templates,
// macros (a secret one as empty text), inventory, proxy and encryption
// without the PSK) and deletes it
// (asked in place; host.delete, item.delete, trigger.delete). What the
// user may only read (the get with editable: true) opens read-only,
// without Create, Update, Clone or Delete; the API refuses it anyway.
//
// List-and-form pages (assets/crud.js) serve the administration pages
// (users with their media, user groups with host group rights and tag
// filters, user roles with their UI/API/action rules, media types of
// every type with message templates, global scripts) and maintenance
// periods and actions of every event source (conditions per source,
// operations, recovery and update operations). Lists are paginated on
// the server's terms: one get of ids only, filtered and sorted by the
// server, then the 50 rows in view by id; filters and sorting are the
// get's; mass enable/disable/delete act on the checked rows (delete
// asks in place). Forms create, update, clone (a new object from the
// form's current values) and delete through <api>.create/update/delete;
// an API error is shown under the form and beside the field it names
// ("/1/name"). Stored passwords are never shown; an empty password
// field keeps them. Each media type's queue (mediatype.get
// selectQueue, a Peregrine addition) is read every 5 s, "—" on a server
// without it. A media type's "Test" sends one message through
// mediatype.test (Peregrine's method; 6.0's frontend asks its server
// outside the API): an address, subject and message, or a webhook's
// parameters, with the outcome and a webhook's response shown. General settings and housekeeping (settings.* and
// housekeeping.*) are one form each sending only changed members; the
// audit log (auditlog.get) pages by time (up to the last row's clock),
// never by offset; the queue page reads queue.get (Peregrine's method)
// every 10 s.
//
// Templates, host groups and discovery (assets/pages/config/
// templates.js, hostgroups.js, discovery.js, prototypes.js; tabs.js)
// are crud.js pages. Templates: filtered by name, host group and linked
// template, with counts of their items, triggers, graphs, discovery
// rules, web scenarios and dashboards (template.get selects "count")
// linking to the pages that edit them; mass update (template.massadd,
// massupdate, massremove), export to YAML (configuration.export, a
// blob: download and a preview), import of a chosen file
// (configuration.import with 6.0's default rules), "Delete" (what links
// the template is unlinked first and keeps its copies) and "Delete and
// clear" (template.delete). The form has 6.0's tabs (template, tags,
// macros with the inherited ones read-only, value maps, graphs and
// dashboards); "Full clone" exports the template as JSON, gives every
// uuid a new value and the references to its name the new name, and
// imports that: one call, nothing half-made. Host groups list their
// host and template counts. Discovery rules (one host's or
// template's): the rule, preprocessing, LLD macro paths, the filter
// (conditions, and/or/custom formula) and overrides (filter and
// operations) in one discoveryrule.create/update; prototypes of each
// kind (item, trigger, graph, host) with create, edit, clone, delete
// and mass enable/disable. Rows the user may only read (the get with
// editable: true) have no check box and open read-only. The items,
// triggers and value maps pages take a template in their host chooser.
//
// Dashboards (assets/pages/dashboards.js, widgets.js): the list is a
// crud.js page (create, properties, sharing with users and user groups
// read-only or read-write, clone, delete); /dashboards?id= shows one
// dashboard's pages on 6.0's 24-column grid (widgets placed by the
// CSSOM, rows of 70 px). The owner, a super admin or a read-write share
// (dashboard.get editable) gets "Edit dashboard": add a widget (type,
// name, its fields: host group, host, item chosen from lists), drag it
// by its title to move it and by its corner to resize it, whole cells
// at a time and never over another widget or off the grid, remove it,
// add pages; "Save changes" sends dashboard.update with the page and
// widget ids, so the server keeps what did not change. Each widget
// reads its own data, one HTTP request per refresh (several API calls
// as one JSON-RPC batch), every rf_rate seconds (its field, else 6.0's
// default for the type: 1 min, 15 min for clock, host availability and
// system information, never for URL); nothing reloads the page:
// problems,
// problems by severity, classic graph (an item's last hour through
// history.get, drawn as SVG), item value, plain text, clock (no
// request), host availability, trigger overview, system information,
// problem hosts, top hosts and data overview (widgets_hosts.js: one
// batch each, from 6.0's stored fields: tags.tag.N..., a top hosts
// column's columns.<field>.<N>, edited in the widget form as a table
// of name, data and item name or text), SLA report (widgets_sla.js: sla.get, sla.getsli
// and service.get in one batch) and URL (a frame with the sandbox attribute empty: no scripts, forms
// or same-origin access; the CSP allows http(s) frames for it). The
// types Peregrine does not draw (maps, graph prototypes, SVG graphs,
// favourites, ...) show a notice saying so.
//
// The widget form (widgets_form.js) has 6.0's fields for each type, in
// its order and with its options and defaults (recorded from 6.0.14's
// widget forms): host groups, excluded host groups and hosts as
// multiple selects, the severity check boxes (one "severities" field
// per ticked one), the tag filter (evaltype And/Or or Or, rows of tag,
// operator and value as tags.tag.N, tags.operator.N, tags.value.N) for
// problems, problems by severity, problem hosts, trigger overview, data
// overview and top hosts (host tags), and each option. A field at its
// default is not stored, as in 6.0; one the widget already had is
// written back, and fields the form does not show are kept, so a
// widget made by dashboard.create or configuration.import and applied
// unchanged keeps exactly its fields. The problems, problems by
// severity and trigger overview widgets filter by them (problem.get
// severities, tags, evaltype, search by name, acknowledged, suppressed;
// trigger.get tags, only_true or value 1 for "Show").
//
// Services (assets/pages/services.js, sla.js): the services list with
// status and root cause (selectProblemEvents), parents and children,
// and the form (problem tags, status rules, propagation, weight, tags);
// SLAs with their form and the SLA report (sla.getsli, six periods,
// SLI per service with uptime, downtime and error budget). API tokens
// (tokens.js): a user's own tokens; "Generate secret" shows the secret
// once. Authentication (admin/authentication.js): the password policy
// only, with what Peregrine does not have (LDAP, HTTP, SAML) said.
// System information (admin/sysinfo.js): apiinfo.version, counts of
// hosts, items and triggers, the queue, and values per second from
// /metrics (two reads 10 s apart).
//
// Network pages (assets/pages/config/proxies.js, drules.js,
// webscenarios.js, admin/autoreg.js, discovery.js, web.js; their menu
// places in netnav.js): proxies (6.0 keeps them under Administration:
// Super admin, administration.proxies) with mode, interface or allowed
// addresses, hosts, and encryption; network discovery rules
// (configuration.discovery) with every check type's fields, uniqueness
// and name sources; autoregistration's TLS settings
// (administration.general); a host's or template's web scenarios
// (configuration.hosts) with steps, variables, headers, tags and
// authentication. PSK identities and keys, http_password and
// ssl_key_password are never returned by the API: their fields start
// empty and an empty field keeps what is stored. drule.* errors name a
// field as 'field "iprange"' (6.0's legacy API); netnav.js maps them.
// Monitoring → Discovery (/discovery: an Admin's, monitoring.discovery)
// shows each rule's discovered devices and services (dhost.get with
// services, the monitored host found by address); /web (6.0 has it in
// Monitoring → Hosts: monitoring.hosts) the monitored scenarios with
// status from their web.test.* items and each step's speed, response
// time and code. Kiosk mode (assets/kiosk.js): /dashboards?id=N&kiosk=1,
// or the dashboard's "Kiosk mode" button, shows the widgets without the
// header, menus and toolbar, with a "Normal view" button back.
//
// Graphs and template dashboards (assets/pages/config/graphs.js,
// graphform.js, templatedashboards.js): a host's or template's graphs
// (graph.*) and a rule's graph prototypes share graphform.js, 6.0's
// form (graph type, legend, working time, triggers, Y axis min/max
// calculated, fixed or an item's, percentile lines; items with colour,
// function, draw style, Y axis side, type) with a Preview tab drawing
// the form's items over the last hour with uPlot through graph.js's
// fetchData; graphs copied from a template or discovered open
// read-only. A template's dashboards (templatedashboard.*) are a
// crud.js list and the dashboard editor of dashboards.js (view with a
// template: widgets as placeholders, only the types 6.0 allows on a
// template, item fields among the template's items). Host prototypes
// have 6.0's tabs: the prototype (templates, group links, group
// prototypes, inherited or custom interfaces with SNMP details), tags,
// macros (the API replaces them whole and never returns a secret: they
// are sent only when changed, and then a stored secret must be typed
// again; a clone resets secrets to empty text, as 6.0 does) and the
// inventory mode.
//
// Event correlation (assets/pages/config/correlation.js): a crud.js
// page on correlation.* (conditions of the six types, and/or, and, or
// or a custom expression, the operations). crud.js's showErrorAt puts
// an error naming a nested path ("/1/filter/conditions") beside the
// first member of the path a field has.
//
// Units (assets/units.js): formatUnits follows the server's rules
// (internal/zbx/units, which expands {ITEM.VALUE} in problem names:
// "1.4 GB", "1h 2m 5s", "1 day, 01:01:01"; units_test.go runs it under
// node against the Go package); formatUnitsUI follows the 6.0 frontend's
// own rules for what the pages format themselves (latest data, graphs,
// widgets: "12.3457 %", "0.001235 W", prefixes to Y, "2023-11-14
// 22:13:20"; units starting with "!" unconverted), checked on a table
// recorded from 6.0.14's frontend (testdata/frontend-units.json).
//
// Concurrency: a UI is safe for concurrent use; its state after New is
// read-only (assets, templates, the CSRF key) apart from counters.
//
// Measuring (problems.js PHASES): a filter leaves performance marks of
// its phases (change event, request sent, first page answered with the
// API's time, rows in the DOM and on screen, whole list read); the storm
// measurement (storm_measure_integration_test.go) logs them, and the
// page's main-thread time over its scroll (DevTools counters).
package web
