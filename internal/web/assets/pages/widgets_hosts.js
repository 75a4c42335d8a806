// Dashboard widgets over many hosts: problem hosts (problemhosts), top
// hosts (tophosts) and data overview (dataover), drawn from the fields
// 6.0 stores for them (names and values recorded from 6.0.14's
// dashboard.get; internal/web/dashboards_hosts_integration_test.go).
// Each refresh is one JSON-RPC batch. Every user string goes into the
// page as text (h() sets textContent), never as markup.
import { batch } from '../api.js';
import { h, SEVERITIES } from '../dom.js';
import { formatUnits } from '../units.js';
import { mapValue } from '../valuemap.js';

// Limits, as 6.0's defaults: at most 100 rows of top hosts
// (ZBX_MAX_WIDGET_LINES) and 50 hosts by 50 items in a data overview
// (the "max overview table size" setting's default).
const MAX_LINES = 100;
const MAX_OVERVIEW = 50;

function results(rs) {
  for (const r of rs) if (r.error) throw r.error;
  return rs.map((r) => r.result);
}

const fieldOf = (w, name) => ((w.fields || []).find((f) => f.name === name) || {}).value;
const fieldsOf = (w, name) => (w.fields || []).filter((f) => f.name === name).map((f) => f.value);
const num = (w, name, def) => {
  const v = fieldOf(w, name);
  return v === undefined || v === '' || !Number.isFinite(Number(v)) ? def : Number(v);
};

// scope is a get's groupids and hostids from the widget's fields.
function scope(w) {
  const p = {};
  const g = fieldsOf(w, 'groupids');
  const hs = fieldsOf(w, 'hostids');
  if (g.length) p.groupids = g;
  if (hs.length) p.hostids = hs;
  return p;
}

// tagFilter is a get's evaltype and tags from 6.0's tags.tag.N,
// tags.operator.N, tags.value.N fields.
export function tagFilter(w) {
  const tags = [];
  for (const f of w.fields || []) {
    const m = /^tags\.tag\.(\d+)$/.exec(f.name);
    if (!m) continue;
    tags.push({ tag: f.value, operator: String(num(w, `tags.operator.${m[1]}`, 0)), value: fieldOf(w, `tags.value.${m[1]}`) || '' });
  }
  return tags.length ? { evaltype: num(w, 'evaltype', 0), tags } : {};
}

// shown is an item's last value as 6.0 shows it: a value map's text
// with the value in brackets, else the value with its units.
function shown(it) {
  if (!it || it.lastclock === '0' || it.lastclock === undefined) return '';
  const mapped = it.valuemap && it.valuemap.mappings ? mapValue(it.lastvalue, it.valuemap.mappings) : null;
  if (mapped !== null && mapped !== undefined) return `${mapped} (${it.lastvalue})`;
  return ['0', '3'].includes(String(it.value_type)) ? formatUnits(it.lastvalue, it.units) : it.lastvalue;
}

const empty = (text) => h('p', { class: 'muted' }, text);

// problemHosts: each host group with its hosts without and with
// problems (the latter coloured by the highest severity among them)
// and the total, as 6.0's problem hosts widget.
async function problemHosts(w) {
  const sc = scope(w);
  const sev = fieldsOf(w, 'severities').map(Number);
  const extAck = num(w, 'ext_ack', 0);
  const pq = { ...sc, ...tagFilter(w), output: ['objectid', 'severity', 'acknowledged'] };
  if (sev.length) pq.severities = sev;
  if (fieldOf(w, 'problem')) pq.search = { name: fieldOf(w, 'problem') };
  if (extAck === 1) pq.acknowledged = false;
  if (num(w, 'show_suppressed', 0) !== 1) pq.suppressed = false;
  const [groups, hosts, triggers, problems] = results(await batch([
    ['hostgroup.get', { ...sc, output: ['groupid', 'name'], monitored_hosts: true, sortfield: 'name' }],
    ['host.get', { ...sc, output: ['hostid', 'name'], selectGroups: ['groupid'], monitored_hosts: true }],
    ['trigger.get', { ...sc, output: ['triggerid'], selectHosts: ['hostid'], monitored: true, filter: { value: 1 } }],
    ['problem.get', pq],
  ]));
  const exclude = new Set(fieldsOf(w, 'exclude_groupids'));
  const onHosts = new Map(triggers.map((t) => [t.triggerid, t.hosts.map((x) => x.hostid)]));
  const worst = new Map(); // hostid -> highest severity
  const unacked = new Map(); // hostid -> has an unacknowledged problem
  for (const p of problems) {
    for (const id of onHosts.get(p.objectid) || []) {
      worst.set(id, Math.max(worst.get(id) ?? -1, Number(p.severity)));
      if (p.acknowledged === '0') unacked.set(id, true);
    }
  }
  const rows = [];
  for (const g of groups) {
    if (exclude.has(g.groupid)) continue;
    const in_ = hosts.filter((x) => x.groups.some((gg) => gg.groupid === g.groupid) && !x.groups.some((gg) => exclude.has(gg.groupid)));
    if (!in_.length) continue;
    const bad = in_.filter((x) => worst.has(x.hostid));
    if (num(w, 'hide_empty_groups', 0) === 1 && !bad.length) continue;
    const top = bad.reduce((m, x) => Math.max(m, worst.get(x.hostid)), -1);
    const bySev = [5, 4, 3, 2, 1, 0].map((s) => [s, bad.filter((x) => worst.get(x.hostid) === s).length]).filter(([, n]) => n);
    const unack = bad.filter((x) => unacked.get(x.hostid)).length;
    const withText = extAck === 2 && bad.length ? `${unack} of ${bad.length}` : String(bad.length);
    rows.push(h('tr', {}, h('td', {}, g.name), h('td', {}, String(in_.length - bad.length)),
      h('td', { class: top >= 0 ? `sev sev-${top}` : '', title: bySev.map(([s, n]) => `${SEVERITIES[s]}: ${n}`).join(', ') }, bad.length ? withText : ''),
      h('td', {}, String(in_.length))));
  }
  if (!rows.length) return empty('No data found.');
  return h('table', { class: 'plain widget-problemhosts' },
    h('thead', {}, h('tr', {}, h('th', {}, 'Host group'), h('th', {}, 'Without problems'), h('th', {}, 'With problems'), h('th', {}, 'Total'))),
    h('tbody', {}, rows));
}

// topHostColumns reads 6.0's columns.<field>.<N> fields in order.
export function topHostColumns(w) {
  const cols = [];
  for (const f of w.fields || []) {
    const m = /^columns\.data\.(\d+)$/.exec(f.name);
    if (!m) continue;
    const i = m[1];
    cols[Number(i)] = { data: Number(f.value), name: fieldOf(w, `columns.name.${i}`) || '', item: fieldOf(w, `columns.item.${i}`) || '', text: fieldOf(w, `columns.text.${i}`) || '' };
  }
  return cols.filter(Boolean);
}

// topHosts: the hosts ordered by the order column's item value (top or
// bottom N, count), one row each with its columns: an item's last
// value by the item's name, the host's name, or a text.
async function topHosts(w) {
  const cols = topHostColumns(w);
  if (!cols.length) return empty('No columns set.');
  let by = num(w, 'column', 0);
  if (!cols[by] || cols[by].data !== 1) by = cols.findIndex((c) => c.data === 1);
  const count = Math.min(MAX_LINES, Math.max(1, num(w, 'count', 10)));
  const sc = scope(w);
  const itemCols = cols.map((c, i) => [c, i]).filter(([c]) => c.data === 1);
  const rs = results(await batch([
    ['host.get', { ...sc, ...tagFilter(w), output: ['hostid', 'name'], monitored_hosts: true }],
    ...itemCols.map(([c]) => ['item.get', { ...sc, output: ['itemid', 'hostid', 'lastvalue', 'lastclock', 'value_type', 'units'], selectValueMap: ['mappings'], monitored: true, filter: { name: c.item } }]),
  ]));
  const hosts = rs[0];
  const values = new Map(); // column index -> hostid -> item
  itemCols.forEach(([, i], k) => {
    const m = new Map();
    for (const it of rs[k + 1]) if (!m.has(it.hostid)) m.set(it.hostid, it);
    values.set(i, m);
  });
  let order = hosts;
  if (by >= 0) {
    const m = values.get(by);
    const val = (x) => Number((m.get(x.hostid) || {}).lastvalue);
    order = hosts.filter((x) => { const it = m.get(x.hostid); return it && ['0', '3'].includes(String(it.value_type)) && it.lastclock !== '0'; });
    const dir = num(w, 'order', 2) === 3 ? 1 : -1;
    order.sort((a, b) => dir * (val(a) - val(b)) || a.name.localeCompare(b.name));
  } else {
    order = [...hosts].sort((a, b) => a.name.localeCompare(b.name));
  }
  order = order.slice(0, count);
  if (!order.length) return empty('No data found.');
  return h('table', { class: 'plain widget-tophosts' },
    h('thead', {}, h('tr', {}, cols.map((c) => h('th', {}, c.name)))),
    h('tbody', {}, order.map((x) => h('tr', {}, cols.map((c, i) => {
      if (c.data === 2) return h('td', {}, x.name);
      if (c.data === 3) return h('td', {}, c.text);
      return h('td', { class: 'num' }, shown(values.get(i).get(x.hostid)));
    })))));
}

// dataOverview: the hosts' items' last values, hosts by item names
// (hosts on the left, or on top when style is 1), a cell coloured by
// the highest severity of its item's triggers in problem.
async function dataOverview(w) {
  const sc = scope(w);
  const [items, triggers] = results(await batch([
    ['item.get', { ...sc, ...tagFilter(w), output: ['itemid', 'hostid', 'name', 'lastvalue', 'lastclock', 'value_type', 'units'], selectHosts: ['name'], selectValueMap: ['mappings'], monitored: true, sortfield: 'name', limit: 2000 }],
    ['trigger.get', { ...sc, output: ['triggerid', 'priority'], selectItems: ['itemid'], monitored: true, filter: { value: 1 } }],
  ]));
  if (!items.length) return empty('No data found.');
  const sev = new Map();
  for (const t of triggers) for (const it of t.items) sev.set(it.itemid, Math.max(sev.get(it.itemid) ?? -1, Number(t.priority)));
  const hostNames = [...new Set(items.map((it) => it.hosts[0].name))].sort();
  const itemNames = [...new Set(items.map((it) => it.name))].sort();
  const cut = hostNames.length > MAX_OVERVIEW || itemNames.length > MAX_OVERVIEW;
  const hs = hostNames.slice(0, MAX_OVERVIEW);
  const ns = itemNames.slice(0, MAX_OVERVIEW);
  const cell = new Map(items.map((it) => [`${it.hosts[0].name}\u0000${it.name}`, it]));
  const td = (host, name) => {
    const it = cell.get(`${host}\u0000${name}`);
    if (!it) return h('td', {});
    const s = sev.get(it.itemid);
    return h('td', { class: s >= 0 ? `num sev sev-${s}` : 'num' }, shown(it));
  };
  const top = num(w, 'style', 0) === 1;
  const [rowsOf, colsOf] = top ? [ns, hs] : [hs, ns];
  const table = h('table', { class: 'plain widget-dataover' },
    h('thead', {}, h('tr', {}, h('th', {}, top ? 'Items' : 'Hosts'), colsOf.map((c) => h('th', { class: 'vertical' }, c)))),
    h('tbody', {}, rowsOf.map((r) => h('tr', {}, h('th', {}, r), colsOf.map((c) => (top ? td(c, r) : td(r, c)))))));
  return cut ? h('div', {}, table, h('p', { class: 'muted' }, 'Not all results are displayed. Please provide more specific search criteria.')) : table;
}

export const DRAW_HOSTS = { problemhosts: problemHosts, tophosts: topHosts, dataover: dataOverview };
