// The graph form shared by graphs (/config/graphs) and graph prototypes
// (/config/prototypes?kind=graph), as 6.0's graph form: name, size,
// graph type, legend, working time and triggers, the Y axes' minimum
// and maximum (calculated, fixed or an item's last value), percentile
// lines, and the items, each with its colour, function, draw style,
// Y axis side and (pie graphs) type. "Preview" draws the form's items
// over the last hour through the graph page's data path (graph.js
// fetchData: history.get downsampled, trend.get for long ranges) with
// their colours, as 6.0's Preview tab does.
import uPlot from '../../vendor/uplot/uPlot.esm.js';
import { call } from '../../api.js';
import { h, clear, fmtValue } from '../../dom.js';
import { input, fld, rowTable, numVal } from '../../crud.js';
import { fetchData } from '../graph.js';
import { tabs } from './tabs.js';

export const GRAPH_TYPES = [[0, 'Normal'], [1, 'Stacked'], [2, 'Pie'], [3, 'Exploded']];
const CALC = [[2, 'avg'], [1, 'min'], [4, 'max'], [7, 'all'], [9, 'last']];
const DRAW = [[0, 'Line'], [1, 'Filled region'], [2, 'Bold line'], [3, 'Dot'], [4, 'Dashed line'], [5, 'Gradient line']];
const YTYPES = [[0, 'Calculated'], [1, 'Fixed'], [2, 'Item']];
const SIDES = [[0, 'Left'], [1, 'Right']];
const GTYPES = [[0, 'Simple'], [2, 'Graph sum']];
const PALETTE = ['1A7C11', 'F63100', '2774A4', 'A54F10', 'FC6EA3', '6C59DC', 'AC8C14', '611F27', 'F230E0', '5CCD18'];
const opt = (list, v) => list.map(([x, t]) => h('option', { value: String(x), selected: String(x) === String(v) }, t));

export const graphNew = { name: '', width: '900', height: '200', graphtype: '0', show_legend: '1', show_work_period: '1', show_triggers: '1', show_3d: '0',
  percent_left: '0', percent_right: '0', ymin_type: '0', ymax_type: '0', yaxismin: '0', yaxismax: '100', ymin_itemid: '0', ymax_itemid: '0', gitems: [] };

// graphClone is what a clone of o sends: the items without their ids.
export function graphClone(o) {
  return { ...o, name: `${o.name} (copy)`, templateid: '0', flags: undefined,
    gitems: (o.gitems || []).map(({ itemid, color, drawtype, calc_fnc, yaxisside, type }) => ({ itemid, color, drawtype, calc_fnc, yaxisside, type })) };
}

// graphForm builds the form of graph o for the noun N (element ids);
// items are the [{itemid, name, key_, units}] a graph item may draw.
export function graphForm(N, o, items, extra = []) {
  const f = {
    name: input.text(N, 'name', o.name, { maxlength: 128 }), width: input.num(N, 'width', o.width), height: input.num(N, 'height', o.height),
    graphtype: input.select(N, 'graphtype', GRAPH_TYPES, o.graphtype),
    show_legend: input.check(N, 'show_legend', o.show_legend), show_work_period: input.check(N, 'show_work_period', o.show_work_period),
    show_triggers: input.check(N, 'show_triggers', o.show_triggers), show_3d: input.check(N, 'show_3d', o.show_3d),
    percent_left: input.text(N, 'percent_left', Number(o.percent_left) ? o.percent_left : '', { placeholder: 'off' }),
    percent_right: input.text(N, 'percent_right', Number(o.percent_right) ? o.percent_right : '', { placeholder: 'off' }),
    ymin_type: input.select(N, 'ymin_type', YTYPES, o.ymin_type), ymax_type: input.select(N, 'ymax_type', YTYPES, o.ymax_type),
    yaxismin: input.text(N, 'yaxismin', o.yaxismin), yaxismax: input.text(N, 'yaxismax', o.yaxismax),
    ymin_itemid: input.select(N, 'ymin_itemid', [['0', 'Choose…'], ...items.map((x) => [x.itemid, x.name])], o.ymin_itemid),
    ymax_itemid: input.select(N, 'ymax_itemid', [['0', 'Choose…'], ...items.map((x) => [x.itemid, x.name])], o.ymax_itemid),
  };
  const minFixed = fld('Y axis MIN value', f.yaxismin), minItem = fld('Y axis MIN item', f.ymin_itemid);
  const maxFixed = fld('Y axis MAX value', f.yaxismax), maxItem = fld('Y axis MAX item', f.ymax_itemid);
  const pctL = fld('Percentile line (left)', f.percent_left), pctR = fld('Percentile line (right)', f.percent_right);
  const yMin = fld('Y axis MIN', f.ymin_type), yMax = fld('Y axis MAX', f.ymax_type), threeD = fld('3D view', f.show_3d);
  const wp = fld('Show working time', f.show_work_period), tr = fld('Show triggers', f.show_triggers);
  let n = 0;
  const gitems = rowTable(`${N}-gitems`, ['Item', 'Function', 'Draw style', 'Y axis side', 'Type', 'Colour'], o.gitems, (g) => {
    const item = h('select', { class: 'gitem-item', 'aria-label': 'Item' }, h('option', { value: '' }, 'Choose…'),
      items.map((x) => h('option', { value: x.itemid, selected: x.itemid === g.itemid }, `${x.name} (${x.key_})`)));
    const fn = h('select', { class: 'gitem-calc', 'aria-label': 'Function' }, opt(CALC, g.calc_fnc ?? 2));
    const draw = h('select', { class: 'gitem-draw', 'aria-label': 'Draw style' }, opt(DRAW, g.drawtype ?? 0));
    const side = h('select', { class: 'gitem-side', 'aria-label': 'Y axis side' }, opt(SIDES, g.yaxisside ?? 0));
    const type = h('select', { class: 'gitem-type', 'aria-label': 'Type' }, opt(GTYPES, g.type ?? 0));
    const color = h('input', { type: 'text', class: 'gitem-color', value: g.color || PALETTE[n++ % PALETTE.length], maxlength: 6, 'aria-label': 'Colour', pattern: '[0-9A-Fa-f]{6}' });
    const swatch = h('span', { class: 'swatch' });
    const paint = () => { swatch.style.background = /^[0-9A-Fa-f]{6}$/.test(color.value) ? `#${color.value}` : 'transparent'; };
    color.addEventListener('input', paint);
    paint();
    return { cells: [item, fn, draw, side, type, h('span', {}, swatch, color)],
      read: () => (item.value === '' ? null : { itemid: item.value, calc_fnc: Number(fn.value), drawtype: Number(draw.value), yaxisside: Number(side.value),
        type: Number(type.value), color: color.value }) };
  }, 'gitems');
  const show = () => {
    const t = f.graphtype.value, pie = t === '2' || t === '3';
    for (const el of [yMin, yMax, wp, tr, pctL, pctR]) el.hidden = pie;
    threeD.hidden = !pie;
    minFixed.hidden = pie || f.ymin_type.value !== '1';
    maxFixed.hidden = pie || f.ymax_type.value !== '1';
    minItem.hidden = pie || f.ymin_type.value !== '2';
    maxItem.hidden = pie || f.ymax_type.value !== '2';
    pctL.hidden = pctR.hidden = t !== '0';
  };
  for (const k of ['graphtype', 'ymin_type', 'ymax_type']) f[k].addEventListener('change', show);
  show();
  const read = () => {
    const t = Number(f.graphtype.value), pie = t === 2 || t === 3;
    const r = { name: f.name.value, width: numVal(f.width), height: numVal(f.height), graphtype: t,
      show_legend: f.show_legend.checked ? 1 : 0, gitems: gitems.values().map((g, i) => ({ ...g, sortorder: i })) };
    if (pie) {
      r.show_3d = f.show_3d.checked ? 1 : 0;
    } else {
      Object.assign(r, { show_work_period: f.show_work_period.checked ? 1 : 0, show_triggers: f.show_triggers.checked ? 1 : 0,
        ymin_type: Number(f.ymin_type.value), ymax_type: Number(f.ymax_type.value) });
      if (r.ymin_type === 1) r.yaxismin = f.yaxismin.value;
      if (r.ymax_type === 1) r.yaxismax = f.yaxismax.value;
      if (r.ymin_type === 2) r.ymin_itemid = f.ymin_itemid.value;
      if (r.ymax_type === 2) r.ymax_itemid = f.ymax_itemid.value;
      if (t === 0) {
        r.percent_left = f.percent_left.value.trim() || '0';
        r.percent_right = f.percent_right.value.trim() || '0';
      }
    }
    return r;
  };
  const previewBox = h('div', { class: 'chart graph-preview', id: `${N}-preview` });
  const previewNote = h('p', { class: 'muted', id: `${N}-preview-note` }, 'The form\'s items over the last hour.');
  const previewTab = h('div', {}, h('button', { type: 'button', id: `${N}-preview-draw`, onclick: () => preview(previewBox, previewNote, read(), items) }, 'Draw preview'),
    previewNote, previewBox);
  return {
    body: [tabs(`${N}-tabs`, [
      ['Graph', [h('div', { class: 'form-grid' }, fld('Name', f.name), fld('Width', f.width), fld('Height', f.height), fld('Graph type', f.graphtype),
        fld('Show legend', f.show_legend), wp, tr, threeD, pctL, pctR, yMin, minFixed, minItem, yMax, maxFixed, maxItem, ...extra),
      h('h4', {}, 'Items'), gitems.el]],
      ['Preview', [previewTab]],
    ])],
    read,
  };
}

let plot = null;

// preview draws graph g's items (a Normal or Stacked graph's lines in
// their colours; a pie's items as lines too, with a note) over the last
// hour. Prototypes of items have no data: they are left out, said so.
export async function preview(box, note, g, items) {
  if (plot) { plot.destroy(); plot = null; }
  clear(box);
  box.dataset.state = 'loading';
  const byId = new Map(items.map((x) => [x.itemid, x]));
  const chosen = g.gitems.filter((x) => byId.has(x.itemid) && !byId.get(x.itemid).prototype);
  const protos = g.gitems.length - chosen.length;
  if (!chosen.length) {
    note.textContent = protos ? 'Item prototypes have no data until discovery makes their items: nothing to draw.' : 'Add an item to draw.';
    box.dataset.state = 'empty';
    return;
  }
  try {
    const full = await call('item.get', { itemids: chosen.map((x) => x.itemid), output: ['itemid', 'name', 'units', 'value_type', 'history', 'trends'] });
    const at = new Map(full.map((x) => [x.itemid, x]));
    const its = chosen.map((x) => at.get(x.itemid)).filter(Boolean);
    const till = Math.floor(Date.now() / 1000), from = till - 3600;
    const width = Math.max(300, Math.min(Number(g.width) || 900, box.clientWidth || 900));
    const { xs, series } = await fetchData(its, from, till, width);
    const data = [xs], sers = [{}];
    series.forEach((s, i) => {
      const gi = chosen[i];
      const fnArr = { 1: s.min, 4: s.max }[gi.calc_fnc] || s.avg;
      data.push(fnArr);
      sers.push({ label: s.item.name, stroke: `#${gi.color}`, width: gi.drawtype === 2 ? 3 : 1.5, dash: gi.drawtype === 4 ? [6, 4] : undefined,
        fill: gi.drawtype === 1 || gi.drawtype === 5 ? `#${gi.color}33` : undefined, scale: gi.yaxisside === 1 ? 'r' : 'y',
        value: (u, v) => fmtValue(v, s.item.units), points: { show: gi.drawtype === 3 } });
    });
    const ys = {};
    if (g.ymin_type === 1 || g.ymax_type === 1) ys.range = (u, lo, hi) => [g.ymin_type === 1 ? Number(g.yaxismin) : lo, g.ymax_type === 1 ? Number(g.yaxismax) : hi];
    // Each axis in the units of its first item, as 6.0 draws them.
    const unitsOf = (side) => (series.find((s, i) => (chosen[i].yaxisside === 1) === side) || { item: { units: '' } }).item.units;
    const lu = unitsOf(false), ru = unitsOf(true);
    plot = new uPlot({ width, height: Math.max(120, Math.min(400, Number(g.height) || 200)), series: sers,
      scales: { x: { time: true, min: from, max: till }, y: ys, r: {} },
      axes: [{}, { scale: 'y', size: 80, values: (u, vals) => vals.map((v) => fmtValue(v, lu)) },
        { scale: 'r', side: 1, size: 80, grid: { show: false }, values: (u, vals) => vals.map((v) => fmtValue(v, ru)) }],
      legend: { show: g.show_legend !== 0 } }, data, box);
    note.textContent = `${its.length} item(s) over the last hour${protos ? `; ${protos} item prototype(s) have no data` : ''}` +
      (g.graphtype >= 2 ? '; a pie graph is previewed as lines' : '') + '.';
    box.dataset.state = 'ready';
  } catch (e) {
    note.textContent = String(e.data || e.message || e);
    box.dataset.state = 'error';
  }
}
