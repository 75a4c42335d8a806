// Graphs: uPlot (canvas) for one or many numeric items. Data comes from
// the API already reduced to one bucket per pixel column: history.get
// with "downsample" (min, max, avg per bucket; one pass over the values
// on the server) while the range lies within the items' history
// retention, trend.get (hourly min/avg/max) beyond it, as Zabbix's graphs
// switch to trends. Each item is an average line with its min..max band.
// Drag to zoom (the zoomed range is fetched again at full resolution),
// Shift+drag or the arrows to pan.
import uPlot from '../vendor/uplot/uPlot.esm.js';
import { call, batch } from '../api.js';
import { h, clear, fmtValue, fmtTime, zabbixSeconds } from '../dom.js';


export const RANGES = [['1h', 3600], ['6h', 21600], ['1d', 86400], ['7d', 604800], ['30d', 2592000], ['90d', 7776000], ['1y', 31536000]];
const COLORS = ['#1f77b4', '#e8590c', '#2b8a3e', '#c2255c', '#7048e8', '#0c8599', '#e67700', '#5c940d', '#a61e4d', '#364fc7'];

export async function render(main, q) {
  const itemids = (q.get('itemids') || '').split(',').filter((x) => /^\d+$/.test(x));
  const now = Math.floor(Date.now() / 1000);
  let till = Number(q.get('till')) || now;
  let from = Number(q.get('from')) || till - (RANGES.find((r) => r[0] === q.get('range')) || RANGES[0])[1];

  const chartBox = h('div', { class: 'chart', id: 'chart' });
  const info = h('span', { class: 'muted', id: 'graph-info' });
  const rangeLabel = h('span', { id: 'graph-range' });
  const buttons = RANGES.map(([name, sec]) => h('button', { type: 'button', class: 'range', dataset: { range: name }, onclick: () => go(till - sec, till) }, name));
  const pan = (dir) => () => { const w = till - from; go(from + dir * w / 2, till + dir * w / 2); };
  main.append(
    h('div', { class: 'toolbar' }, h('h1', {}, 'Graph'),
      h('button', { type: 'button', id: 'pan-left', title: 'Earlier', onclick: pan(-1) }, '◀'),
      buttons,
      h('button', { type: 'button', id: 'pan-right', title: 'Later', onclick: pan(1) }, '▶'),
      h('button', { type: 'button', id: 'graph-now', onclick: () => { const w = till - from; const n = Math.floor(Date.now() / 1000); go(n - w, n); } }, 'Now'),
      rangeLabel),
    chartBox,
    h('p', { class: 'muted' }, info),
  );
  if (!itemids.length) {
    chartBox.append(h('p', {}, 'Choose items on the ', h('a', { href: '/latest' }, 'Latest data'), ' page (a numeric item\'s name, or several with "Graph selected").'));
    return null;
  }
  const items = await call('item.get', { output: ['itemid', 'hostid', 'name', 'units', 'value_type', 'history', 'trends'], itemids, selectHosts: ['name'] });
  const numeric = items.filter((it) => it.value_type === '0' || it.value_type === '3');
  if (!numeric.length) {
    chartBox.append(h('p', { class: 'error' }, 'None of these items is numeric: only numeric items can be graphed.'));
    return null;
  }

  let plot = null;
  let seq = 0;

  function go(f, t) {
    f = Math.floor(f); t = Math.floor(t);
    if (t - f < 60) { const c = (f + t) / 2; f = Math.floor(c - 30); t = f + 60; }
    const u = new URL(location.href);
    u.searchParams.set('from', String(f));
    u.searchParams.set('till', String(t));
    u.searchParams.delete('range');
    history.replaceState(null, '', u.pathname + u.search);
    from = f; till = t;
    load();
  }

  async function load() {
    const my = ++seq;
    const t0 = performance.now();
    rangeLabel.textContent = `${fmtTime(from)} – ${fmtTime(till)}`;
    chartBox.dataset.state = 'loading';
    const width = Math.max(200, Math.floor(chartBox.clientWidth || 800));
    const { xs, series, source } = await fetchData(numeric, from, till, width);
    if (my !== seq) return;
    draw(xs, series, width);
    const ms = performance.now() - t0;
    chartBox.dataset.state = 'ready';
    chartBox.dataset.renderMs = String(Math.round(ms));
    chartBox.dataset.source = source;
    chartBox.dataset.points = String(xs.length);
    info.textContent = `${source}, ${xs.length} points per item, ${Math.round(ms)} ms (API and drawing)`;
  }

  function draw(xs, series, width) {
    if (plot) { plot.destroy(); plot = null; }
    clear(chartBox);
    const dark = document.documentElement.dataset.theme === 'dark';
    const axisStroke = dark ? '#c9d1d9' : '#333';
    const grid = { stroke: dark ? '#30363d' : '#e5e5e5', width: 1 };
    const data = [xs];
    const sers = [{}];
    const bands = [];
    series.forEach((s, i) => {
      const c = COLORS[i % COLORS.length];
      const units = s.item.units;
      const label = `${(s.item.hosts && s.item.hosts[0] && s.item.hosts[0].name) || ''}: ${s.item.name}`;
      const base = data.length;
      data.push(s.max, s.min, s.avg);
      sers.push(
        { label: 'max', stroke: c + '55', width: 1, value: (u, v) => fmtValue(v, units), points: { show: false } },
        { label: 'min', stroke: c + '55', width: 1, value: (u, v) => fmtValue(v, units), points: { show: false } },
        { label, stroke: c, width: 1.5, value: (u, v) => fmtValue(v, units), points: { show: false } },
      );
      bands.push({ series: [base, base + 1], fill: c + '22' });
    });
    const opts = {
      width,
      height: Math.max(240, Math.min(480, Math.floor(window.innerHeight * 0.55))),
      series: sers,
      bands,
      axes: [
        { stroke: axisStroke, grid },
        { stroke: axisStroke, grid, size: 70, values: (u, vals) => vals.map((v) => fmtValue(v, series[0].item.units)) },
      ],
      scales: { x: { time: true, min: from, max: till } },
      cursor: { drag: { x: true, y: false, setScale: false } },
      legend: { live: true },
      hooks: {
        setSelect: [(u) => {
          if (u.select.width < 5) return;
          const f = u.posToVal(u.select.left, 'x');
          const t = u.posToVal(u.select.left + u.select.width, 'x');
          u.setSelect({ left: 0, width: 0, top: 0, height: 0 }, false);
          go(f, t);
        }],
      },
    };
    plot = new uPlot(opts, data, chartBox);
    enablePan(plot);
  }

  // enablePan: Shift+drag moves the range; the new range is fetched on
  // release.
  function enablePan(u) {
    u.over.addEventListener('mousedown', (e) => {
      if (!e.shiftKey) return;
      e.stopPropagation();
      e.preventDefault();
      const x0 = e.clientX;
      const f0 = from, t0 = till;
      const perPx = (t0 - f0) / u.over.clientWidth;
      const move = (m) => u.setScale('x', { min: f0 - (m.clientX - x0) * perPx, max: t0 - (m.clientX - x0) * perPx });
      const up = (m) => {
        removeEventListener('mousemove', move);
        removeEventListener('mouseup', up);
        const d = (m.clientX - x0) * perPx;
        if (Math.abs(m.clientX - x0) > 2) go(f0 - d, t0 - d);
      };
      addEventListener('mousemove', move);
      addEventListener('mouseup', up);
    }, true);
  }

  const onTheme = () => load();
  document.addEventListener('themechange', onTheme);
  const onResize = () => { if (plot) plot.setSize({ width: Math.max(200, chartBox.clientWidth), height: plot.height }); };
  addEventListener('resize', onResize);
  await load();
  return () => {
    document.removeEventListener('themechange', onTheme);
    removeEventListener('resize', onResize);
    if (plot) plot.destroy();
  };
}

// fetchData reads every item's buckets over [from, till] in one batch:
// trends when the range starts before an item's history retention ends
// (falling back to history if no trends exist yet), history downsampled
// to one bucket per pixel column otherwise. Returns the shared x values
// and per item min/max/avg arrays aligned on them (null where empty).
export async function fetchData(items, from, till, width) {
  const now = Math.floor(Date.now() / 1000);
  const useTrends = (it) => {
    const keep = zabbixSeconds(it.history);
    return keep > 0 && from < now - keep && zabbixSeconds(it.trends) > 0;
  };
  const calls = items.map((it) => useTrends(it)
    ? ['trend.get', { itemids: [it.itemid], time_from: from, time_till: till, output: ['itemid', 'clock', 'value_min', 'value_avg', 'value_max'] }]
    : ['history.get', { itemids: [it.itemid], history: Number(it.value_type), time_from: from, time_till: till, downsample: width, sortfield: 'clock', output: ['clock', 'min', 'max', 'avg'] }]);
  let res = await batch(calls);
  // No trends yet (a fresh server, or a store without trends): history.
  const retry = [];
  res.forEach((r, i) => {
    if (calls[i][0] === 'trend.get' && r.result && r.result.length === 0) retry.push(i);
  });
  if (retry.length) {
    const again = await batch(retry.map((i) => ['history.get', { itemids: [items[i].itemid], history: Number(items[i].value_type), time_from: from, time_till: till, downsample: width, sortfield: 'clock', output: ['clock', 'min', 'max', 'avg'] }]));
    retry.forEach((i, k) => { res[i] = again[k]; calls[i] = ['history.get']; });
  }
  for (const r of res) if (r.error) throw r.error;
  const sources = new Set(calls.map((c) => (c[0] === 'trend.get' ? 'trends (hourly)' : `history, ${width} buckets`)));
  // Rows are sorted by clock per item; align them on the union of clocks.
  const rows = res.map((r, i) => r.result.map((x) => calls[i][0] === 'trend.get'
    ? [Number(x.clock), Number(x.value_min), Number(x.value_max), Number(x.value_avg)]
    : [Number(x.clock), Number(x.min), Number(x.max), Number(x.avg)]));
  let xs;
  if (rows.length === 1) {
    xs = rows[0].map((r) => r[0]);
  } else {
    const set = new Set();
    for (const rs of rows) for (const r of rs) set.add(r[0]);
    xs = Float64Array.from(set).sort();
    xs = Array.from(xs);
  }
  const index = rows.length === 1 ? null : new Map(xs.map((x, i) => [x, i]));
  const series = rows.map((rs, i) => {
    const n = xs.length;
    const min = new Array(n).fill(null), max = new Array(n).fill(null), avg = new Array(n).fill(null);
    rs.forEach((r, k) => {
      const j = index ? index.get(r[0]) : k;
      min[j] = r[1]; max[j] = r[2]; avg[j] = r[3];
    });
    return { item: items[i], min, max, avg };
  });
  return { xs, series, source: [...sources].join(' + ') };
}


