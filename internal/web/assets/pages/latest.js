// Latest data: items with last value, last check, change, state/error.
// Built for 100,000 items: the server filters and sorts (item.get
// "search", "sortfield"), and answers first with item ids only (about
// 20 bytes an item); the rows in view then fetch their details by id
// (item.get "itemids", a screenful at a time) and are refreshed every
// 30 s while they stay in view. Nothing is rendered out of view. Values
// of items with a value map show as Zabbix shows them, "Up (1)"
// (valuemap.js: the maps of the rows in view, read once).
import { call } from '../api.js';
import { h, debounce, fmtTime, fmtAge, fmtValue } from '../dom.js';
import { VList, cells } from '../vlist.js';
import { navigate } from '../app.js';
import { ValueMaps } from '../valuemap.js';

const DETAIL = ['itemid', 'hostid', 'name', 'key_', 'lastvalue', 'lastclock', 'prevvalue', 'units', 'value_type', 'state', 'error', 'status', 'valuemapid'];
const REFRESH_MS = 30000;
// FIRST_ROWS fills a tall screen.
const FIRST_ROWS = 60;

export async function render(main, q) {
  const hostid = q.get('hostid') || '';
  const search = h('input', { type: 'search', id: 'item-search', placeholder: 'Search item name', 'aria-label': 'Search item name', value: q.get('search') || '' });
  const status = h('span', { class: 'muted', id: 'item-count' });
  const graphBtn = h('button', { type: 'button', id: 'graph-selected', disabled: true }, 'Graph selected');
  const title = h('h1', {}, 'Latest data');
  let ids = [];
  const details = new Map(); // itemid -> item
  const hostNames = new Map();
  const selected = new Set();
  let inFlight = new Set();
  const vmaps = new ValueMaps();

  const list = new VList({
    header: ['', 'Host', 'Name', 'Last check', 'Last value', 'Change', 'Info'],
    columns: '2rem minmax(6rem, 1fr) minmax(10rem, 3fr) 10rem minmax(7rem, 1.2fr) 6rem minmax(5rem, 1fr)',
    renderRow(i) {
      const id = ids[i];
      const it = details.get(id);
      const box = h('input', { type: 'checkbox', 'aria-label': 'select', checked: selected.has(id), onchange: (e) => {
        if (e.target.checked) selected.add(id); else selected.delete(id);
        graphBtn.disabled = selected.size === 0;
      } });
      if (!it) return h('div', { class: 'item-row loading', dataset: { itemid: id } }, cells(box, '…', '', '', '', '', ''));
      const numeric = it.value_type === '0' || it.value_type === '3';
      let change = '';
      if (numeric && it.prevvalue !== '' && it.lastvalue !== '' && it.lastclock !== '0') {
        const d = Number(it.lastvalue) - Number(it.prevvalue);
        if (d !== 0) change = (d > 0 ? '+' : '') + fmtValue(Math.round(d * 1e4) / 1e4, it.units, it.value_type);
      }
      const name = numeric
        ? h('a', { href: `/graph?itemids=${it.itemid}`, class: 'item-name', title: it.key_ }, it.name)
        : h('span', { class: 'item-name', title: it.key_ }, it.name);
      const info = it.state === '1'
        ? h('span', { class: 'badge avail-bad', title: it.error }, 'not supported')
        : (it.status === '1' ? h('span', { class: 'muted' }, 'disabled') : '');
      return h('div', { class: 'item-row', dataset: { itemid: id } }, cells(
        box,
        h('span', { class: 'muted' }, hostNames.get(it.hostid) || ''),
        name,
        h('span', { title: fmtTime(it.lastclock) }, it.lastclock !== '0' ? fmtAge(it.lastclock) + ' ago' : ''),
        // Zabbix reports lastvalue "0" for an item with no value yet:
        // lastclock 0 tells them apart.
        h('span', { class: 'last-value', title: it.lastvalue }, it.lastclock !== '0' ? vmaps.fmt(it.lastvalue, it) : ''),
        change,
        info,
      ));
    },
    onRange: (start, end) => fetchDetails(start, end, false),
  });

  // fetchDetails loads the rows in view that have no details yet (or
  // all of them, to refresh), in one item.get by ids.
  async function fetchDetails(start, end, all) {
    const want = [];
    for (let i = start; i < end; i++) {
      const id = ids[i];
      if ((all || !details.has(id)) && !inFlight.has(id)) want.push(id);
    }
    if (!want.length) return;
    for (const id of want) inFlight.add(id);
    const gen = inFlight;
    try {
      const items = await call('item.get', { output: DETAIL, itemids: want });
      await Promise.all([hostsFor(items), vmaps.load(items)]);
      if (gen !== inFlight) return; // the list was reloaded meanwhile
      for (const it of items) details.set(it.itemid, it);
      const pos = new Map(want.map((id) => [id, ids.indexOf(id, start)]));
      const idx = new Set(want.map((id) => pos.get(id)));
      list.replaceRows((i) => idx.has(i));
    } finally {
      for (const id of want) gen.delete(id);
    }
  }

  // load asks for the first screenful with details (limit) and for all
  // matching ids at once: the first answer is small and paints the top
  // of the list while the id list (2 MB for 100k items) is on its way.
  let seq = 0;
  async function load() {
    const my = ++seq;
    // templated: false: item.get also lists templates' items, which
    // have no data (6.0's Latest data asks the same).
    const params = { output: ['itemid'], sortfield: 'name', templated: false };
    if (hostid) params.hostids = [hostid];
    if (search.value) params.search = { name: search.value };
    const t0 = performance.now();
    let all = false;
    const first = call('item.get', { ...params, output: DETAIL, limit: FIRST_ROWS }).then(async (items) => {
      await Promise.all([hostsFor(items), vmaps.load(items)]);
      if (my !== seq) return;
      for (const it of items) details.set(it.itemid, it);
      if (all) { list.refresh(); return; }
      ids = items.map((x) => x.itemid);
      status.textContent = items.length < FIRST_ROWS ? `${ids.length} items` : 'counting…';
      list.setCount(ids.length);
    });
    const res = await call('item.get', params);
    if (my !== seq) return;
    all = true;
    ids = res.map((x) => x.itemid);
    inFlight = new Set();
    status.textContent = `${ids.length} items`;
    list.setCount(ids.length, true);
    status.dataset.ms = String(Math.round(performance.now() - t0));
    await first;
  }

  async function hostsFor(items) {
    const newHosts = [...new Set(items.map((x) => x.hostid).filter((x) => !hostNames.has(x)))];
    if (newHosts.length) {
      for (const ho of await call('host.get', { output: ['hostid', 'name'], hostids: newHosts })) hostNames.set(ho.hostid, ho.name);
    }
  }

  graphBtn.addEventListener('click', () => navigate(`/graph?itemids=${[...selected].join(',')}`));
  search.addEventListener('input', debounce(load, 250));
  main.append(h('div', { class: 'toolbar' }, title, search, graphBtn, status), list.el);
  if (hostid) {
    const [ho] = await call('host.get', { output: ['name'], hostids: [hostid] });
    if (ho) title.textContent = `Latest data: ${ho.name}`;
  }
  await load();
  const timer = setInterval(() => {
    const [s, e] = list.range();
    fetchDetails(s, e, true).catch((err) => console.error(err));
  }, REFRESH_MS);
  return () => { clearInterval(timer); list.destroy(); };
}
