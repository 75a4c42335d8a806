// Dashboard widgets: the types Peregrine draws from the data its other
// pages show, each with its fields (6.0's names and field types, so a
// dashboard made in Zabbix shows here and back) and a renderer that
// reads its data with one HTTP request per refresh (several API calls
// go as one JSON-RPC batch; the clock and the URL none) and stops when
// the page goes. A widget refreshes every rf_rate seconds (its field, as
// in 6.0; 0: never), by default 6.0's for its type (refreshRate): 16
// viewers of a 12-widget dashboard are 12 small requests each per
// refresh, never a page reload (`peregrine bench ui-dashboard` measures
// it). Problem hosts, top hosts and data overview are in
// widgets_hosts.js, the SLA report in widgets_sla.js. Types Peregrine cannot draw
// (maps, graph prototypes, SVG graphs, favourites...) show a notice
// saying so instead of a guess.
import { call, batch } from '../api.js';
import { h, clear, SEVERITIES, fmtAge, fmtTime } from '../dom.js';
import { formatUnitsUI as formatUnits } from '../units.js';
import { DRAW_HOSTS, tagFilter } from './widgets_hosts.js';
import { fieldsForm, F_INT, F_STR, F_GROUP, F_HOST, F_ITEM, F_SERVICE, F_SLA, F_CHOICE, F_CHECK, F_SEVERITIES, F_TAGS, F_COLUMNS } from './widgets_form.js';
import { DRAW_SLA } from './widgets_sla.js';

// refreshRate is a widget's refresh period in seconds: its rf_rate
// field, else 6.0's default for the type (recorded from 6.0.14's
// frontend: 15 min for the clock, host availability and system
// information, none for the URL, 1 min for the rest).
export function refreshRate(w) {
  const f = (w.fields || []).find((x) => x.name === 'rf_rate');
  if (f && f.value !== '' && Number.isFinite(Number(f.value))) return Math.max(0, Number(f.value));
  if (w.type === 'url') return 0;
  if (['clock', 'hostavail', 'systeminfo'].includes(w.type)) return 900;
  return 60;
}

// results unpacks a batch's answers, throwing the first error.
function results(rs) {
  for (const r of rs) if (r.error) throw r.error;
  return rs.map((r) => r.result);
}

// WIDGETS are the types a user may add, with their fields in the order
// of 6.0's widget forms: [name, field type, label, {def, options}]. The
// options and defaults are 6.0.14's (recorded from its widget forms);
// a field at its default is not stored, as in 6.0.
const GROUPS = ['groupids', F_GROUP, 'Host groups'];
const EXCLUDE = ['exclude_groupids', F_GROUP, 'Exclude host groups'];
const HOSTS = ['hostids', F_HOST, 'Hosts'];
const PROBLEM = ['problem', F_STR, 'Problem'];
const SEVERITY = ['severities', F_SEVERITIES, 'Severity'];
const TAGS = ['tags', F_TAGS, 'Tags'];
const SUPPRESSED = ['show_suppressed', F_CHECK, 'Show suppressed problems', { def: 0 }];
const OPDATA = ['show_opdata', F_CHOICE, 'Show operational data', { def: 0, options: [[0, 'None'], [1, 'Separately'], [2, 'With problem name']] }];
const EXT_ACK = ['ext_ack', F_CHOICE, 'Problem display', { def: 0, options: [[0, 'All'], [2, 'Separated'], [1, 'Unacknowledged only']] }];
const HIDE_EMPTY = ['hide_empty_groups', F_CHECK, 'Hide groups without problems', { def: 0 }];
const STYLE = ['style', F_CHOICE, 'Hosts location', { def: 0, options: [[0, 'Left'], [1, 'Top']] }];
export const WIDGETS = [
  { type: 'problems', label: 'Problems', fields: [
    ['show', F_CHOICE, 'Show', { def: 1, options: [[1, 'Recent problems'], [3, 'Problems'], [2, 'History']] }],
    GROUPS, EXCLUDE, HOSTS, PROBLEM, SEVERITY, TAGS,
    ['show_tags', F_CHOICE, 'Show tags', { def: 0, options: [[0, 'None'], [1, '1'], [2, '2'], [3, '3']] }],
    ['tag_name_format', F_CHOICE, 'Tag name', { def: 0, options: [[0, 'Full'], [1, 'Shortened'], [2, 'None']] }],
    ['tag_priority', F_STR, 'Tag display priority'], OPDATA, SUPPRESSED,
    ['unacknowledged', F_CHECK, 'Show unacknowledged only', { def: 0 }],
    ['sort_triggers', F_CHOICE, 'Sort entries by', { def: 4, options: [[4, 'Time (descending)'], [3, 'Time (ascending)'], [1, 'Severity (descending)'],
      [13, 'Severity (ascending)'], [16, 'Problem (descending)'], [15, 'Problem (ascending)'], [14, 'Host (descending)'], [2, 'Host (ascending)']] }],
    ['show_timeline', F_CHECK, 'Show timeline', { def: 1 }], ['show_lines', F_INT, 'Show lines', { def: 25, maxlength: 3 }]] },
  { type: 'problemsbysv', label: 'Problems by severity', fields: [GROUPS, EXCLUDE, HOSTS, PROBLEM, SEVERITY, TAGS,
    ['show_type', F_CHOICE, 'Show', { def: 0, options: [[0, 'Host groups'], [1, 'Totals']] }],
    ['layout', F_CHOICE, 'Layout', { def: 0, options: [[0, 'Horizontal'], [1, 'Vertical']] }], OPDATA, SUPPRESSED, HIDE_EMPTY, EXT_ACK,
    ['show_timeline', F_CHECK, 'Show timeline', { def: 1 }]] },
  { type: 'graph', label: 'Graph (classic)', fields: [['itemid', F_ITEM, 'Item']] },
  { type: 'item', label: 'Item value', fields: [['itemid', F_ITEM, 'Item']] },
  { type: 'plaintext', label: 'Plain text', fields: [['itemids', F_ITEM, 'Item'], ['show_lines', F_INT, 'Show lines']] },
  { type: 'clock', label: 'Clock', fields: [] },
  { type: 'hostavail', label: 'Host availability', fields: [GROUPS] },
  { type: 'problemhosts', label: 'Problem hosts', fields: [GROUPS, EXCLUDE, HOSTS, PROBLEM, SEVERITY, TAGS, SUPPRESSED, HIDE_EMPTY, EXT_ACK] },
  { type: 'tophosts', label: 'Top hosts', fields: [GROUPS, HOSTS, ['tags', F_TAGS, 'Host tags'], ['columns', F_COLUMNS, 'Columns'],
    ['order', F_CHOICE, 'Order', { def: 2, options: [[2, 'Top N'], [3, 'Bottom N']] }], ['column', F_INT, 'Order column (its number, from 0)'],
    ['count', F_INT, 'Host count', { def: 10, maxlength: 3 }]] },
  { type: 'dataover', label: 'Data overview', fields: [GROUPS, HOSTS, TAGS, SUPPRESSED, STYLE] },
  { type: 'trigover', label: 'Trigger overview', fields: [['show', F_CHOICE, 'Show', { def: 1, options: [[1, 'Recent problems'], [3, 'Problems'], [2, 'Any']] }],
    GROUPS, HOSTS, TAGS, SUPPRESSED, STYLE] },
  { type: 'slareport', label: 'SLA report', fields: [['slaid', F_SLA, 'SLA'], ['serviceid', F_SERVICE, 'Service'], ['show_periods', F_INT, 'Show periods'],
    ['date_from', F_STR, 'From (YYYY-MM-DD)'], ['date_to', F_STR, 'To (YYYY-MM-DD)']] },
  { type: 'url', label: 'URL', fields: [['url', F_STR, 'URL']] },
  { type: 'systeminfo', label: 'System information', fields: [] },
];

// The types 6.0 has that Peregrine does not draw, and why.
const NOT_DRAWN = {
  map: 'Maps are not built in Peregrine.', navtree: 'Maps are not built in Peregrine.', favmaps: 'Maps are not built in Peregrine.',
  graphprototype: 'Graph prototypes (low-level discovery) are not shown by Peregrine’s dashboards.',
  svggraph: 'The SVG graph widget is not drawn by Peregrine; use a classic graph widget.',
  favgraphs: 'Favourite graphs are not kept by Peregrine.', favscreens: 'Screens are not in Zabbix 6.0.',
  actionlog: 'The action log is not drawn by Peregrine.', discovery: 'Network discovery is not shown on dashboards.',
  web: 'Web monitoring is not shown on dashboards.', geomap: 'Geomaps are not drawn by Peregrine.',
};

const fieldOf = (w, name) => (w.fields.find((f) => f.name === name) || {}).value;
const fieldsOf = (w, name) => w.fields.filter((f) => f.name === name).map((f) => f.value);

// scope is a get's hosts and groups from the widget's fields.
function scope(w) {
  const p = {};
  const g = fieldsOf(w, 'groupids');
  const hs = fieldsOf(w, 'hostids');
  if (g.length) p.groupids = g;
  if (hs.length) p.hostids = hs;
  return p;
}

// problemFilter is a problem.get's filters from a widget's fields: the
// problem name, severities, tag filter, unacknowledged only and
// suppressed problems (left out unless show_suppressed is 1).
function problemFilter(w) {
  const p = { ...scope(w), ...tagFilter(w) };
  const sev = fieldsOf(w, 'severities').map(Number);
  if (sev.length) p.severities = sev;
  if (fieldOf(w, 'problem')) p.search = { name: fieldOf(w, 'problem') };
  if (fieldOf(w, 'unacknowledged') === '1' || fieldOf(w, 'ext_ack') === '1') p.acknowledged = false;
  if (fieldOf(w, 'show_suppressed') !== '1') p.suppressed = false;
  return p;
}

// renderWidget draws w in body and returns the function that stops it.
export function renderWidget(w, body) {
  const draw = DRAW[w.type];
  if (!draw) {
    body.append(h('p', { class: 'muted widget-unsupported' }, NOT_DRAWN[w.type] || `Widget type "${w.type}" is not drawn by Peregrine.`));
    return () => {};
  }
  let stopped = false;
  let timer = 0;
  const state = {}; // what a widget keeps between refreshes (an item's value type)
  const every = refreshRate(w) * 1000;
  const run = async () => {
    try {
      const out = await draw(w, state);
      if (stopped) return;
      clear(body).append(out);
    } catch (e) {
      if (!stopped) clear(body).append(h('p', { class: 'error' }, String(e.data || e.message || e)));
    }
    if (!stopped && every > 0 && w.type !== 'clock' && w.type !== 'url') timer = setTimeout(run, every);
  };
  run();
  if (w.type === 'clock') {
    const tick = setInterval(() => { if (!stopped) run(); }, 1000);
    return () => { stopped = true; clearInterval(tick); };
  }
  return () => { stopped = true; clearTimeout(timer); };
}

const sevClass = (s) => `sev sev-${s}`;

const DRAW = {
  clock: async () => {
    const d = new Date();
    return h('div', { class: 'widget-clock' }, h('div', { class: 'clock-time' }, d.toLocaleTimeString()), h('div', { class: 'muted' }, d.toLocaleDateString()));
  },
  url: async (w) => {
    const url = fieldOf(w, 'url') || '';
    if (!/^https?:\/\//i.test(url)) return h('p', { class: 'muted' }, 'No http(s) URL set.');
    // Sandboxed: no scripts, forms, top navigation or same-origin access.
    return h('iframe', { class: 'widget-url', src: url, sandbox: '', referrerpolicy: 'no-referrer', title: w.name || url });
  },
  problems: async (w) => {
    const n = Math.min(100, Math.max(1, Number(fieldOf(w, 'show_lines')) || 25));
    // show 3 is the open problems; 1 (recent) and 2 (history) also
    // those resolved in the last few minutes.
    const ps = await call('problem.get', { ...problemFilter(w), output: ['eventid', 'name', 'severity', 'clock', 'acknowledged'], sortfield: ['eventid'], sortorder: 'DESC', limit: n, recent: fieldOf(w, 'show') !== '3' });
    if (!ps.length) return h('p', { class: 'muted' }, 'No problems.');
    return h('table', { class: 'plain widget-problems' }, h('tbody', {}, ps.map((p) => h('tr', {},
      h('td', {}, fmtTime(p.clock)), h('td', {}, h('span', { class: sevClass(p.severity) }, SEVERITIES[p.severity] || p.severity)),
      h('td', {}, p.name), h('td', { class: 'muted' }, fmtAge(p.clock))))));
  },
  problemsbysv: async (w) => {
    // Six counts in one request, not every open problem's row.
    const n = results(await batch([0, 1, 2, 3, 4, 5].map((s) => ['problem.get', { ...problemFilter(w), severities: [s], countOutput: true }]))).map(Number);
    const only = fieldsOf(w, 'severities');
    const shown = [5, 4, 3, 2, 1, 0].filter((s) => !only.length || only.includes(String(s)));
    return h('div', { class: 'cards widget-bysv' }, shown.map((s) => h('div', { class: `card ${sevClass(s)}` }, h('div', { class: 'big' }, String(n[s])), SEVERITIES[s])));
  },
  hostavail: async (w) => {
    const hs = await call('host.get', { ...scope(w), output: ['hostid'], selectInterfaces: ['type', 'available'] });
    const rows = { 1: 'Agent', 2: 'SNMP', 3: 'IPMI', 4: 'JMX' };
    const count = {};
    for (const ho of hs) for (const i of ho.interfaces || []) {
      const c = (count[i.type] ||= [0, 0, 0]);
      c[Number(i.available) || 0]++;
    }
    return h('table', { class: 'plain widget-hostavail' }, h('thead', {}, h('tr', {}, h('th', {}), h('th', {}, 'Available'), h('th', {}, 'Not available'), h('th', {}, 'Unknown'))),
      h('tbody', {}, Object.entries(rows).map(([t, label]) => {
        const c = count[t] || [0, 0, 0];
        return h('tr', {}, h('td', {}, label), h('td', {}, String(c[1])), h('td', {}, String(c[2])), h('td', {}, String(c[0])));
      })));
  },
  item: async (w) => {
    const id = fieldOf(w, 'itemid');
    if (!id) return h('p', { class: 'muted' }, 'No item chosen.');
    const [it] = await call('item.get', { itemids: [id], output: ['name', 'lastvalue', 'lastclock', 'units'], selectHosts: ['name'] });
    if (!it) return h('p', { class: 'muted' }, 'The item is gone or not readable.');
    return h('div', { class: 'widget-item' }, h('div', { class: 'big' }, it.lastclock === '0' ? '—' : formatUnits(it.lastvalue, it.units)),
      h('div', { class: 'muted' }, `${(it.hosts[0] || {}).name || ''}: ${it.name}`), h('div', { class: 'muted' }, fmtTime(it.lastclock)));
  },
  plaintext: async (w, st) => {
    const id = fieldOf(w, 'itemids') || fieldOf(w, 'itemid');
    if (!id) return h('p', { class: 'muted' }, 'No item chosen.');
    const n = Math.min(100, Math.max(1, Number(fieldOf(w, 'show_lines')) || 10));
    const [it, vs] = await withItem(st, id, (vt) => ['history.get', { itemids: [id], history: vt, sortfield: 'clock', sortorder: 'DESC', limit: n, output: 'extend' }]);
    if (!it) return h('p', { class: 'muted' }, 'The item is gone or not readable.');
    return h('table', { class: 'plain widget-plaintext' }, h('tbody', {}, vs.map((v) => h('tr', {}, h('td', {}, fmtTime(v.clock)), h('td', {}, formatUnits(v.value, it.units))))));
  },
  graph: async (w, st) => {
    const id = fieldOf(w, 'itemid');
    if (!id) return h('p', { class: 'muted' }, 'No item chosen.');
    const now = Math.floor(Date.now() / 1000);
    const [it, vs] = await withItem(st, id, (vt) => ['history.get', { itemids: [id], history: vt, time_from: now - 3600, sortfield: 'clock', sortorder: 'ASC', output: ['clock', 'value'] }]);
    if (!it || !['0', '3'].includes(it.value_type)) return h('p', { class: 'muted' }, 'The item is gone, not readable or not numeric.');
    return svgLine(vs.map((v) => [Number(v.clock), Number(v.value)]), now - 3600, now, it.units);
  },
  trigover: async (w) => {
    // show 1 and 3: triggers in problem (only_true: 1 also those
    // recently resolved); 2: any trigger. Tags filter by the triggers'.
    const tq = { ...scope(w), ...tagFilter(w), output: ['description', 'value', 'priority'], selectHosts: ['name'], monitored: true, expandDescription: true, sortfield: 'description', limit: 50 };
    if (fieldOf(w, 'show') === '3') tq.filter = { value: 1 };
    else if (fieldOf(w, 'show') !== '2') tq.only_true = true;
    const ts = await call('trigger.get', tq);
    if (!ts.length) return h('p', { class: 'muted' }, 'No triggers.');
    const hosts = [...new Set(ts.flatMap((t) => t.hosts.map((x) => x.name)))].sort();
    const names = [...new Set(ts.map((t) => t.description))];
    return h('table', { class: 'plain widget-trigover' }, h('thead', {}, h('tr', {}, h('th', {}, 'Trigger'), hosts.map((x) => h('th', {}, x)))),
      h('tbody', {}, names.map((n) => h('tr', {}, h('td', {}, n), hosts.map((x) => {
        const t = ts.find((tt) => tt.description === n && tt.hosts.some((hh) => hh.name === x));
        return h('td', { class: t ? (t.value === '1' ? sevClass(t.priority) : 'ok') : '' }, t ? (t.value === '1' ? 'PROBLEM' : 'OK') : '');
      })))));
  },
  ...DRAW_HOSTS,
  ...DRAW_SLA,
  systeminfo: async () => {
    const [version, hosts, items, triggers] = results(await batch([
      ['apiinfo.version', []], ['host.get', { countOutput: true }], ['item.get', { countOutput: true }], ['trigger.get', { countOutput: true }]]));
    return h('table', { class: 'plain widget-systeminfo' }, h('tbody', {},
      [['Server is running', 'Yes'], ['API version', version], ['Number of hosts', hosts], ['Number of items', items], ['Number of triggers', triggers]]
        .map(([k, v]) => h('tr', {}, h('td', {}, k), h('td', {}, String(v))))));
  },
};

// withItem reads an item (value type, units, name) and the values
// hist(valueType) asks for in one batch: the value type is the one the
// widget's last refresh saw (the first refresh reads the item alone).
// A value type changed since is read again at once.
async function withItem(st, id, hist) {
  if (st.vt === undefined) {
    const [it] = await call('item.get', { itemids: [id], output: ['value_type', 'units', 'name'] });
    if (!it) return [undefined, []];
    st.vt = Number(it.value_type);
  }
  const [its, vs] = results(await batch([['item.get', { itemids: [id], output: ['value_type', 'units', 'name'] }], hist(st.vt)]));
  const it = its[0];
  if (!it) return [undefined, []];
  if (Number(it.value_type) !== st.vt) {
    st.vt = undefined;
    return withItem(st, id, hist);
  }
  return [it, vs];
}

// svgLine draws points [[t, v]] between from and to as an SVG line with
// its min and max, built with DOM calls.
function svgLine(pts, from, to, units) {
  const NS = 'http://www.w3.org/2000/svg';
  const W = 600;
  const H = 200;
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.setAttribute('preserveAspectRatio', 'none');
  svg.setAttribute('class', 'widget-graph');
  if (!pts.length) return h('p', { class: 'muted' }, 'No values in the last hour.');
  let lo = Infinity;
  let hi = -Infinity;
  for (const [, v] of pts) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  const span = hi - lo || 1;
  const path = document.createElementNS(NS, 'polyline');
  path.setAttribute('points', pts.map(([t, v]) => `${(((t - from) / (to - from)) * W).toFixed(1)},${(H - ((v - lo) / span) * (H - 10) - 5).toFixed(1)}`).join(' '));
  path.setAttribute('class', 'graph-line');
  svg.append(path);
  return h('div', { class: 'widget-graph-box' }, svg, h('div', { class: 'muted' }, `min ${formatUnits(lo, units)} · max ${formatUnits(hi, units)} · last ${formatUnits(pts[pts.length - 1][1], units)}`));
}

// widgetFieldsForm edits a widget type's fields (widgets_form.js).
export function widgetFieldsForm(type, fields, fixedHost) {
  return fieldsForm(WIDGETS.find((x) => x.type === type) || { type, fields: [] }, fields, fixedHost);
}
