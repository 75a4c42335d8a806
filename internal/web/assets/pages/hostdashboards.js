// A host's dashboards: the dashboards of the templates it links,
// directly or not (host.get's selectDashboards, then
// templatedashboard.get for their pages), drawn for this host as Zabbix
// 6.0 does under Monitoring → Hosts → Dashboards. A widget names the
// template's own objects; each is resolved to the host's copy as 6.0
// resolves it: a graph by its name, an item by its key, a graph
// prototype to the graphs discovery made from the host's copy of it
// (one page of columns × rows of them at a time), an item prototype to
// the items made from it. Other widget types are drawn by widgets.js
// with the fields resolved the same way. Nothing here writes.
import { call } from '../api.js';
import { h, clear } from '../dom.js';
import { formatUnitsUI as formatUnits } from '../units.js';
import { renderWidget } from './widgets.js';

const COLS = 24;
const ROW_PX = 70;
const REFRESH = 60_000;
// Widget field types of 6.0 that name objects.
const F_ITEM = '4';
const F_ITEM_PROTO = '5';
const F_GRAPH = '6';
const F_GRAPH_PROTO = '7';
// Colours for a simple graph's and a prototype item's line.
const PALETTE = ['1A7C11', 'F63100', '2774A4', 'A54F10', 'FC6EA3', '6C59DC', 'AC8C14', '611F27'];

export async function render(main, q) {
  const hostid = q.get('hostid') || '';
  const title = h('h1', { id: 'hostdash-title' }, 'Dashboards');
  const tabs = h('span', { class: 'dashboard-tabs', id: 'hostdash-tabs' });
  const pageTabs = h('span', { class: 'dashboard-tabs', id: 'hostdash-pages' });
  const grid = h('div', { class: 'dash-grid', id: 'hostdash-grid' });
  main.append(h('div', { class: 'toolbar' }, h('a', { href: '/hosts' }, '‹ Hosts'), title, tabs, pageTabs), grid);
  if (!/^\d+$/.test(hostid)) {
    grid.append(h('p', {}, 'Choose a host on the ', h('a', { href: '/hosts' }, 'Hosts'), ' page.'));
    return null;
  }
  const [host] = await call('host.get', { hostids: [hostid], output: ['hostid', 'name'], selectDashboards: ['dashboardid', 'name', 'templateid'] });
  if (!host) {
    grid.append(h('p', { class: 'error', role: 'alert' }, 'No such host, or you may not read it.'));
    return null;
  }
  title.textContent = `Dashboards: ${host.name}`;
  const list = [...(host.dashboards || [])].sort((a, b) => a.name.localeCompare(b.name));
  if (!list.length) {
    grid.append(h('p', { class: 'muted', id: 'hostdash-none' }, 'The templates of this host have no dashboards.'));
    return null;
  }
  const timers = new Set();
  const stopAll = () => { for (const t of timers) t(); timers.clear(); };
  let current = list.find((d) => d.dashboardid === q.get('dashboardid')) || list[0];
  let dash = null;
  let res = null;
  let pageNo = 0;

  async function open(d) {
    current = d;
    pageNo = 0;
    stopAll();
    clear(grid).append(h('p', { class: 'muted' }, 'Loading…'));
    [dash] = await call('templatedashboard.get', { dashboardids: [d.dashboardid], output: 'extend', selectPages: 'extend' });
    if (current !== d) return;
    res = dash ? await resolver(hostid, dash.pages) : null;
    if (current !== d) return;
    history.replaceState(null, '', `/hostdashboards?hostid=${encodeURIComponent(hostid)}&dashboardid=${encodeURIComponent(d.dashboardid)}`);
    draw();
  }

  function draw() {
    stopAll();
    clear(tabs);
    for (const d of list) {
      tabs.append(h('button', { type: 'button', class: d === current ? 'active page-tab' : 'page-tab', dataset: { dashboardid: d.dashboardid }, onclick: () => open(d) }, d.name));
    }
    clear(pageTabs);
    clear(grid);
    if (!dash) {
      grid.append(h('p', { class: 'error', role: 'alert' }, 'The dashboard is gone.'));
      return;
    }
    if (dash.pages.length > 1) {
      dash.pages.forEach((p, i) => pageTabs.append(h('button', { type: 'button', class: i === pageNo ? 'active page-tab' : 'page-tab', onclick: () => { pageNo = i; draw(); } }, p.name || `Page ${i + 1}`)));
    }
    const page = dash.pages[pageNo] || { widgets: [] };
    let rows = 8;
    for (const w of page.widgets) rows = Math.max(rows, Number(w.y) + Number(w.height));
    grid.style.height = `${rows * ROW_PX}px`;
    for (const w of page.widgets) {
      const body = h('div', { class: 'widget-body' });
      const name = h('span', { class: 'widget-title' }, w.name || '');
      const box = h('div', { class: 'widget', dataset: { type: w.type, widgetid: w.widgetid } }, h('div', { class: 'widget-head' }, name), body);
      box.style.left = `${(Number(w.x) / COLS) * 100}%`;
      box.style.width = `${(Number(w.width) / COLS) * 100}%`;
      box.style.top = `${Number(w.y) * ROW_PX}px`;
      box.style.height = `${Number(w.height) * ROW_PX}px`;
      grid.append(box);
      timers.add(drawWidget(w, body, name, res));
    }
  }

  await open(current);
  return stopAll;
}

const fieldOf = (w, name) => (w.fields.find((f) => f.name === name) || {}).value;
const ofType = (w, type) => w.fields.filter((f) => f.type === type).map((f) => f.value);

// resolver reads, in a few requests, what the widgets of pages name
// and the host's copies of it; it returns lookups from a template
// object's ID to the host's.
async function resolver(hostid, pages) {
  const ids = { [F_ITEM]: new Set(), [F_ITEM_PROTO]: new Set(), [F_GRAPH]: new Set(), [F_GRAPH_PROTO]: new Set() };
  for (const p of pages) for (const w of p.widgets) for (const f of w.fields) if (ids[f.type]) ids[f.type].add(f.value);
  const list = (t) => [...ids[t]];
  const none = Promise.resolve([]);
  const [tItems, tIProtos, tGraphs, tGProtos] = await Promise.all([
    ids[F_ITEM].size ? call('item.get', { itemids: list(F_ITEM), output: ['itemid', 'key_'], templated: true }) : none,
    ids[F_ITEM_PROTO].size ? call('itemprototype.get', { itemids: list(F_ITEM_PROTO), output: ['itemid', 'key_'] }) : none,
    ids[F_GRAPH].size ? call('graph.get', { graphids: list(F_GRAPH), output: ['graphid', 'name'] }) : none,
    ids[F_GRAPH_PROTO].size ? call('graphprototype.get', { graphids: list(F_GRAPH_PROTO), output: ['graphid', 'name'] }) : none,
  ]);
  const gitems = ['itemid', 'color', 'sortorder'];
  const [hItems, hIProtos, hGraphs, hGProtos, found, foundItems] = await Promise.all([
    tItems.length ? call('item.get', { hostids: [hostid], filter: { key_: tItems.map((i) => i.key_) }, output: ['itemid', 'key_'] }) : none,
    tIProtos.length ? call('itemprototype.get', { hostids: [hostid], filter: { key_: tIProtos.map((i) => i.key_) }, output: ['itemid', 'key_'] }) : none,
    tGraphs.length ? call('graph.get', { hostids: [hostid], filter: { name: tGraphs.map((g) => g.name) }, output: ['graphid', 'name'], selectGraphItems: gitems }) : none,
    tGProtos.length ? call('graphprototype.get', { hostids: [hostid], filter: { name: tGProtos.map((g) => g.name) }, output: ['graphid', 'name'] }) : none,
    tGProtos.length ? call('graph.get', { hostids: [hostid], output: ['graphid', 'name', 'flags'], selectGraphDiscovery: ['parent_graphid'], selectGraphItems: gitems, sortfield: 'name' }) : none,
    tIProtos.length ? call('item.get', { hostids: [hostid], output: ['itemid', 'name', 'flags'], selectItemDiscovery: ['parent_itemid'], sortfield: 'name' }) : none,
  ]);
  const byKey = (tmpl, host) => new Map(tmpl.map((t) => [t.itemid, host.find((x) => x.key_ === t.key_)]));
  const byName = (tmpl, host) => new Map(tmpl.map((t) => [t.graphid, host.find((x) => x.name === t.name)]));
  const gproto = byName(tGProtos, hGProtos);
  const iproto = byKey(tIProtos, hIProtos);
  return {
    item: byKey(tItems, hItems),
    graph: byName(tGraphs, hGraphs),
    // The graphs (items) discovery made from the host's copy of a
    // template's graph (item) prototype.
    graphsOf: (id) => {
      const p = gproto.get(id);
      return p ? found.filter((g) => g.flags === '4' && g.graphDiscovery && g.graphDiscovery.parent_graphid === p.graphid) : [];
    },
    itemsOf: (id) => {
      const p = iproto.get(id);
      return p ? foundItems.filter((i) => i.flags === '4' && i.itemDiscovery && i.itemDiscovery.parent_itemid === p.itemid) : [];
    },
  };
}

// drawWidget draws w (a template's widget) for the host in body and
// returns the function that stops its refresh.
function drawWidget(w, body, title, res) {
  let stopped = false;
  let timer = 0;
  let pageNo = 0;
  const show = (node) => { if (!stopped) clear(body).append(node); };
  const run = async () => {
    try {
      if (w.type === 'graph') await classic(w, body, title, res, show);
      else if (w.type === 'graphprototype') await prototypes(w, title, res, show, pageNo, (n) => { pageNo = n; run(); });
      else return;
    } catch (e) {
      show(h('p', { class: 'error' }, String(e.data || e.message || e)));
    }
    clearTimeout(timer);
    if (!stopped) timer = setTimeout(run, REFRESH);
  };
  if (w.type === 'graph' || w.type === 'graphprototype') {
    run();
    return () => { stopped = true; clearTimeout(timer); };
  }
  // Any other type: widgets.js, with the template's items replaced by
  // the host's.
  const fields = w.fields.map((f) => {
    if (f.type !== F_ITEM) return f;
    const it = res.item.get(f.value);
    return { ...f, value: it ? it.itemid : '' };
  });
  return renderWidget({ ...w, fields }, body);
}

// classic draws a graph widget: the host's copy of the template's
// graph (source_type 0) or a simple graph of the host's copy of an item
// (source_type 1).
async function classic(w, body, title, res, show) {
  if (fieldOf(w, 'source_type') === '1') {
    const [id] = ofType(w, F_ITEM);
    const it = res.item.get(id);
    if (!it) return show(missing('item'));
    if (!w.name) title.textContent = it.key_;
    return show(await graphBox([{ itemid: it.itemid, color: PALETTE[0] }]));
  }
  const [id] = ofType(w, F_GRAPH);
  const g = res.graph.get(id);
  if (!g) return show(missing('graph'));
  if (!w.name) title.textContent = g.name;
  return show(await graphBox(sorted(g.gitems), g.name));
}

// prototypes draws a graph prototype widget: the graphs discovered
// from the host's copy of the prototype (source_type 2) or simple
// graphs of the items discovered from an item prototype (source_type
// 3), columns × rows of them per page.
async function prototypes(w, title, res, show, pageNo, turn) {
  const per = Math.max(1, Number(fieldOf(w, 'columns') || 2) * Number(fieldOf(w, 'rows') || 1));
  const cols = Math.max(1, Number(fieldOf(w, 'columns') || 2));
  let list;
  if (fieldOf(w, 'source_type') === '3') {
    list = ofType(w, F_ITEM_PROTO).flatMap((id) => res.itemsOf(id)).map((i, n) => ({ name: i.name, gitems: [{ itemid: i.itemid, color: PALETTE[n % PALETTE.length] }] }));
  } else {
    list = ofType(w, F_GRAPH_PROTO).flatMap((id) => res.graphsOf(id)).map((g) => ({ name: g.name, gitems: sorted(g.gitems) }));
  }
  if (!list.length) return show(h('p', { class: 'muted widget-empty' }, 'Nothing discovered from this prototype on this host yet.'));
  const pages = Math.ceil(list.length / per);
  const at = Math.min(pageNo, pages - 1);
  const shown = list.slice(at * per, at * per + per);
  if (!w.name) title.textContent = pages > 1 ? `${shown[0].name} (${at + 1} of ${pages})` : shown[0].name;
  const boxes = await Promise.all(shown.map((g) => graphBox(g.gitems, g.name)));
  const gridEl = h('div', { class: 'proto-graphs' }, boxes);
  gridEl.style.gridTemplateColumns = `repeat(${cols}, 1fr)`;
  const nav = pages > 1 ? h('div', { class: 'proto-pager' },
    h('button', { type: 'button', class: 'proto-prev', disabled: at === 0, onclick: () => turn(at - 1) }, '‹'),
    h('span', { class: 'muted' }, `${at + 1} / ${pages}`),
    h('button', { type: 'button', class: 'proto-next', disabled: at === pages - 1, onclick: () => turn(at + 1) }, '›')) : '';
  return show(h('div', { class: 'proto-box' }, nav, gridEl));
}

const sorted = (gitems) => [...(gitems || [])].sort((a, b) => Number(a.sortorder) - Number(b.sortorder));
const missing = (what) => h('p', { class: 'muted widget-unsupported' }, `This host has no copy of the template's ${what}.`);

// graphBox draws the last hour of gitems' items (numeric ones) as
// lines in their colours (from the first value when that is later),
// with a legend (name, last, min, max) and a link to the graph page.
async function graphBox(gitems, name) {
  const ids = gitems.map((g) => g.itemid);
  const now = Math.floor(Date.now() / 1000);
  const from = now - 3600;
  const items = await call('item.get', { itemids: ids, output: ['itemid', 'name', 'value_type', 'units'] });
  const byType = {};
  for (const it of items) if (it.value_type === '0' || it.value_type === '3') (byType[it.value_type] ||= []).push(it.itemid);
  const hist = (await Promise.all(Object.entries(byType).map(([t, l]) => call('history.get', {
    itemids: l, history: Number(t), time_from: from, sortfield: 'clock', sortorder: 'ASC', output: ['itemid', 'clock', 'value'] })))).flat();
  const series = gitems.map((g) => {
    const it = items.find((x) => x.itemid === g.itemid) || { name: g.itemid, units: '' };
    return { itemid: g.itemid, color: `#${g.color || PALETTE[0]}`, name: it.name, units: it.units,
      pts: hist.filter((v) => v.itemid === g.itemid).map((v) => [Number(v.clock), Number(v.value)]) };
  });
  // A host younger than the hour is drawn from its first value.
  let first = now;
  for (const s of series) if (s.pts.length) first = Math.min(first, s.pts[0][0]);
  const start = Math.max(from, Math.min(first, now - 60));
  const link = h('a', { class: 'graph-open', href: `/graph?itemids=${ids.join(',')}` }, name || 'Open graph');
  const span = h('span', { class: 'muted' }, start > from ? ` since ${new Date(start * 1000).toLocaleTimeString()}` : ' last hour');
  return h('div', { class: 'widget-graph-box host-graph', dataset: { itemids: ids.join(',') } }, svgLines(series, start, now), legend(series), h('div', {}, link, span));
}

// svgLines draws each series as a polyline over one shared scale.
function svgLines(series, from, to) {
  const NS = 'http://www.w3.org/2000/svg';
  const W = 600;
  const H = 160;
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.setAttribute('preserveAspectRatio', 'none');
  svg.setAttribute('class', 'widget-graph');
  let lo = Infinity;
  let hi = -Infinity;
  for (const s of series) for (const [, v] of s.pts) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  if (lo === Infinity) return h('p', { class: 'muted no-values' }, 'No values in the last hour.');
  if (lo > 0) lo = 0;
  const span = hi - lo || 1;
  for (const s of series) {
    if (!s.pts.length) continue;
    const line = document.createElementNS(NS, 'polyline');
    line.setAttribute('points', s.pts.map(([t, v]) => `${(((t - from) / (to - from)) * W).toFixed(1)},${(H - ((v - lo) / span) * (H - 10) - 5).toFixed(1)}`).join(' '));
    line.setAttribute('class', 'graph-line');
    line.setAttribute('stroke', s.color);
    line.style.stroke = s.color;
    svg.append(line);
  }
  return svg;
}

function legend(series) {
  const head = h('thead', {}, h('tr', {}, h('th', {}), h('th', { class: 'num' }, 'last'), h('th', { class: 'num' }, 'min'), h('th', { class: 'num' }, 'max')));
  return h('table', { class: 'plain graph-legend' }, head, h('tbody', {}, series.map((s) => {
    const vs = s.pts.map((p) => p[1]);
    const cell = (v) => h('td', { class: 'num' }, vs.length ? formatUnits(v, s.units) : '—');
    const swatch = h('span', { class: 'swatch' }, '■');
    swatch.style.color = s.color;
    return h('tr', { dataset: { itemid: s.itemid } }, h('td', {}, swatch, ' ', s.name),
      cell(vs[vs.length - 1]), cell(Math.min(...vs)), cell(Math.max(...vs)));
  })));
}
