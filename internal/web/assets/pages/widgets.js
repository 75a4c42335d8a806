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
import { input, fld } from '../crud.js';
import { DRAW_HOSTS, topHostColumns } from './widgets_hosts.js';
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

// Field types of 6.0.
const F_INT = 0;
const F_STR = 1;
const F_GROUP = 2;
const F_HOST = 3;
const F_ITEM = 4;
const F_SERVICE = 9;
const F_SLA = 10;
// A top hosts widget's columns: not a 6.0 field type but the table
// that edits its columns.<name|data|item|text>.<N> fields.
const F_COLUMNS = 'columns';
const COLUMN_FIELDS = /^columns\.(name|data|item|text)\.\d+$/;
const MAX_COLUMNS = 8;
// The get and id of the objects a select field chooses from.
const PICK = { [F_GROUP]: ['hostgroup.get', 'groupid'], [F_HOST]: ['host.get', 'hostid'], [F_SERVICE]: ['service.get', 'serviceid'], [F_SLA]: ['sla.get', 'slaid'] };

// WIDGETS are the types a user may add, with their fields:
// [name, field type, label].
export const WIDGETS = [
  { type: 'problems', label: 'Problems', fields: [['groupids', F_GROUP, 'Host group'], ['hostids', F_HOST, 'Host'], ['show_lines', F_INT, 'Show lines']] },
  { type: 'problemsbysv', label: 'Problems by severity', fields: [['groupids', F_GROUP, 'Host group'], ['hostids', F_HOST, 'Host']] },
  { type: 'graph', label: 'Graph (classic)', fields: [['itemid', F_ITEM, 'Item']] },
  { type: 'item', label: 'Item value', fields: [['itemid', F_ITEM, 'Item']] },
  { type: 'plaintext', label: 'Plain text', fields: [['itemids', F_ITEM, 'Item'], ['show_lines', F_INT, 'Show lines']] },
  { type: 'clock', label: 'Clock', fields: [] },
  { type: 'hostavail', label: 'Host availability', fields: [['groupids', F_GROUP, 'Host group']] },
  { type: 'problemhosts', label: 'Problem hosts', fields: [['groupids', F_GROUP, 'Host group'], ['hostids', F_HOST, 'Host'], ['show_suppressed', F_INT, 'Show suppressed problems (1: yes)'], ['hide_empty_groups', F_INT, 'Hide groups without problems (1: yes)']] },
  { type: 'tophosts', label: 'Top hosts', fields: [['groupids', F_GROUP, 'Host group'], ['hostids', F_HOST, 'Host'], ['columns', F_COLUMNS, 'Columns'],
    ['order', F_INT, 'Order (2: top N, 3: bottom N)'], ['column', F_INT, 'Order column (its number, from 0)'], ['count', F_INT, 'Host count']] },
  { type: 'dataover', label: 'Data overview', fields: [['groupids', F_GROUP, 'Host group'], ['hostids', F_HOST, 'Host'], ['style', F_INT, 'Hosts location (0: left, 1: top)']] },
  { type: 'trigover', label: 'Trigger overview', fields: [['groupids', F_GROUP, 'Host group'], ['hostids', F_HOST, 'Host']] },
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
    const ps = await call('problem.get', { ...scope(w), output: ['eventid', 'name', 'severity', 'clock', 'acknowledged'], sortfield: ['eventid'], sortorder: 'DESC', limit: n, recent: false });
    if (!ps.length) return h('p', { class: 'muted' }, 'No problems.');
    return h('table', { class: 'plain widget-problems' }, h('tbody', {}, ps.map((p) => h('tr', {},
      h('td', {}, fmtTime(p.clock)), h('td', {}, h('span', { class: sevClass(p.severity) }, SEVERITIES[p.severity] || p.severity)),
      h('td', {}, p.name), h('td', { class: 'muted' }, fmtAge(p.clock))))));
  },
  problemsbysv: async (w) => {
    // Six counts in one request, not every open problem's row.
    const n = results(await batch([0, 1, 2, 3, 4, 5].map((s) => ['problem.get', { ...scope(w), severities: [s], countOutput: true }]))).map(Number);
    return h('div', { class: 'cards widget-bysv' }, [5, 4, 3, 2, 1, 0].map((s) => h('div', { class: `card ${sevClass(s)}` }, h('div', { class: 'big' }, String(n[s])), SEVERITIES[s])));
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
    const ts = await call('trigger.get', { ...scope(w), output: ['description', 'value', 'priority'], selectHosts: ['name'], monitored: true, expandDescription: true, sortfield: 'description', limit: 50 });
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

// widgetFieldsForm edits a widget type's fields: host groups and hosts
// as selects, an item as a host then its items. With fixedHost (a
// template's dashboard) an item is one of that host's or template's.
export function widgetFieldsForm(type, fields, fixedHost) {
  const spec = WIDGETS.find((x) => x.type === type) || { fields: [] };
  const el = h('div', { class: 'form-grid widget-fields' });
  const readers = [];
  const value = (name) => (fields.find((f) => f.name === name) || {}).value;
  for (const [name, ftype, label] of spec.fields) {
    if (ftype === F_INT || ftype === F_STR) {
      const i = input.text('widget', name, value(name));
      el.append(fld(label, i));
      readers.push(() => (i.value === '' ? [] : [{ type: ftype, name, value: i.value }]));
    } else if (ftype === F_COLUMNS) {
      const rows = topHostColumns({ fields });
      const body = h('tbody', {});
      const cells = [];
      for (let i = 0; i < MAX_COLUMNS; i++) {
        const c = rows[i] || { data: 1, name: '', item: '', text: '' };
        const nm = input.text('widget', `columns-name-${i}`, c.name, { maxlength: 255, 'aria-label': `Column ${i} name` });
        const data = input.select('widget', `columns-data-${i}`, [['1', 'Item value'], ['2', 'Host name'], ['3', 'Text']], String(c.data));
        const v = input.text('widget', `columns-value-${i}`, c.data === 3 ? c.text : c.item, { maxlength: 255, 'aria-label': `Column ${i} item name or text` });
        cells.push([nm, data, v]);
        body.append(h('tr', {}, h('td', {}, String(i)), h('td', {}, nm), h('td', {}, data), h('td', {}, v)));
      }
      el.append(fld(label, h('table', { class: 'plain widget-columns' }, h('thead', {}, h('tr', {}, h('th', {}, '#'), h('th', {}, 'Name'), h('th', {}, 'Data'), h('th', {}, 'Item name or text'))), body)));
      // Columns are numbered in order; a row with neither a name nor an
      // item or text is left out.
      readers.push(() => cells.filter(([nm, data, v]) => nm.value !== '' || v.value !== '' || data.value === '2').flatMap(([nm, data, v], i) => {
        const out = [{ type: F_STR, name: `columns.name.${i}`, value: nm.value }, { type: F_INT, name: `columns.data.${i}`, value: data.value }];
        if (data.value === '1') out.push({ type: F_STR, name: `columns.item.${i}`, value: v.value });
        if (data.value === '3') out.push({ type: F_STR, name: `columns.text.${i}`, value: v.value });
        return out;
      }));
    } else if (PICK[ftype]) {
      const s = input.select('widget', name, [['', 'All']], '');
      el.append(fld(label, s));
      const api = PICK[ftype];
      call(api[0], { output: [api[1], 'name'], sortfield: 'name', limit: 1000 }).then((list) => {
        for (const o of list) s.append(h('option', { value: o[api[1]], selected: o[api[1]] === value(name) }, o.name));
      }).catch(() => {});
      readers.push(() => (s.value ? [{ type: ftype, name, value: s.value }] : []));
    } else if (ftype === F_ITEM && fixedHost) {
      const item = input.select('widget', name, [['', 'Choose an item']], '');
      call('item.get', { hostids: [fixedHost], output: ['itemid', 'name'], sortfield: 'name', limit: 2000 }).then((its) => {
        for (const it of its) item.append(h('option', { value: it.itemid, selected: it.itemid === value(name) }, it.name));
      }).catch(() => {});
      el.append(fld(label, item));
      readers.push(() => (item.value ? [{ type: ftype, name, value: item.value }] : []));
    } else if (ftype === F_ITEM) {
      const host = input.select('widget', `${name}-host`, [['', 'Choose a host']], '');
      const item = input.select('widget', name, [['', 'Choose an item']], '');
      const loadItems = async (hostid, chosen) => {
        clear(item).append(h('option', { value: '' }, 'Choose an item'));
        if (!hostid) return;
        const its = await call('item.get', { hostids: [hostid], output: ['itemid', 'name'], sortfield: 'name', limit: 2000 });
        for (const it of its) item.append(h('option', { value: it.itemid, selected: it.itemid === chosen }, it.name));
      };
      host.addEventListener('change', () => loadItems(host.value));
      (async () => {
        const hosts = await call('host.get', { output: ['hostid', 'name'], sortfield: 'name', limit: 1000 });
        let at = '';
        if (value(name)) {
          const [it] = await call('item.get', { itemids: [value(name)], output: ['hostid'] });
          at = it ? it.hostid : '';
        }
        for (const o of hosts) host.append(h('option', { value: o.hostid, selected: o.hostid === at }, o.name));
        if (at) await loadItems(at, value(name));
      })().catch(() => {});
      el.append(fld(`${label}: host`, host), fld(label, item));
      readers.push(() => (item.value ? [{ type: ftype, name, value: item.value }] : []));
    }
  }
  if (!spec.fields.length) el.append(h('p', { class: 'muted' }, 'This widget has no settings.'));
  // The refresh interval, as 6.0's widget form offers it (rf_rate).
  if (type !== 'clock' && type !== 'url') {
    const rf = input.select('widget', 'rf_rate', [['', 'Default'], ['0', 'No refresh'], ['10', '10 seconds'], ['30', '30 seconds'],
      ['60', '1 minute'], ['120', '2 minutes'], ['600', '10 minutes'], ['900', '15 minutes']], value('rf_rate') ?? '');
    el.append(fld('Refresh interval', rf));
    readers.push(() => (rf.value === '' ? [] : [{ type: F_INT, name: 'rf_rate', value: rf.value }]));
  }
  // Fields the form does not show (a top hosts widget's columns, tags,
  // severities...) are kept as they are.
  const shown = new Set([...spec.fields.map(([n]) => n), 'rf_rate']);
  const kept = fields.filter((f) => !shown.has(f.name) && !(shown.has('columns') && COLUMN_FIELDS.test(f.name)));
  return { el, read: () => [...kept, ...readers.flatMap((r) => r())] };
}
