// A dashboard widget's configuration form (fieldsForm), built from the
// widget type's field list in widgets.js. Each control reads and writes
// 6.0's stored fields (recorded from 6.0.14's dashboard.get after its
// own widget form saved them; internal/web/widgetfields_integration_test.go):
// host groups, excluded groups and hosts as one field per id (types 2
// and 3), severities as one "severities" field (type 0) per ticked
// severity, the tag filter as evaltype (0 And/Or, 2 Or) and
// tags.tag.N / tags.operator.N / tags.value.N (types 1, 0, 1; the value
// kept even when the operator needs none), and each option as an
// integer field. Like 6.0, a field left at its default is not stored;
// a field the widget already had is written back even at its default,
// and fields the form does not show are kept as they are, so a widget
// made in Zabbix (dashboard.create, configuration.import) and applied
// unchanged keeps exactly its fields.
import { call } from '../api.js';
import { h, clear, SEVERITIES } from '../dom.js';
import { input, fld, rowTable } from '../crud.js';
import { topHostColumns } from './widgets_hosts.js';

// Field types of 6.0 (the type member of a widget field).
export const F_INT = 0;
export const F_STR = 1;
export const F_GROUP = 2;
export const F_HOST = 3;
export const F_ITEM = 4;
export const F_SERVICE = 9;
export const F_SLA = 10;
// Controls that are not one field type: an integer chosen among
// options (radio buttons or a select in 6.0), a check box (0 or 1), the
// severities, the tag filter, and a top hosts widget's columns.
export const F_CHOICE = 'choice';
export const F_CHECK = 'check';
export const F_SEVERITIES = 'severities';
export const F_TAGS = 'tags';
export const F_COLUMNS = 'columns';

const COLUMN_FIELDS = /^columns\.(name|data|item|text)\.\d+$/;
const TAG_FIELDS = /^tags\.(tag|operator|value)\.\d+$/;
const MAX_COLUMNS = 8;
const MAX_TAGS = 50;
// Tag operators in 6.0's order (recorded from 6.0.14's widget form).
const TAG_OPERATORS = [[4, 'Exists'], [1, 'Equals'], [0, 'Contains'], [5, 'Does not exist'], [3, 'Does not equal'], [2, 'Does not contain']];
// The get and id of the objects a select field chooses from.
const PICK = { [F_GROUP]: ['hostgroup.get', 'groupid'], [F_HOST]: ['host.get', 'hostid'], [F_SERVICE]: ['service.get', 'serviceid'], [F_SLA]: ['sla.get', 'slaid'] };
// Host groups and hosts are lists (several fields of one name).
const MULTI = new Set([F_GROUP, F_HOST]);

// tagRows reads a widget's tag filter rows in their numbered order.
export function tagRows(fields) {
  const by = (name) => (fields.find((f) => f.name === name) || {}).value;
  const rows = [];
  for (const f of fields) {
    const m = /^tags\.tag\.(\d+)$/.exec(f.name);
    if (m) rows.push([Number(m[1]), { tag: f.value, operator: by(`tags.operator.${m[1]}`) ?? '0', value: by(`tags.value.${m[1]}`) ?? '' }]);
  }
  return rows.sort((a, b) => a[0] - b[0]).map(([, r]) => r);
}

// fieldsForm edits the fields of a widget type spec ({fields: [[name,
// type, label, opts]]}). opts: def (the default, not stored), options
// ([[value, label]] of a choice), maxlength. With fixedHost (a
// template's dashboard) an item is one of that template's.
export function fieldsForm(spec, fields, fixedHost) {
  const el = h('div', { class: 'form-grid widget-fields' });
  const readers = [];
  const had = new Set(fields.map((f) => f.name));
  const value = (name) => (fields.find((f) => f.name === name) || {}).value;
  const values = (name) => fields.filter((f) => f.name === name).map((f) => String(f.value));
  // one is a field unless it is at its default and was not stored.
  const one = (type, name, v, def) => (v === '' || (String(v) === String(def ?? '') && !had.has(name)) ? [] : [{ type, name, value: String(v) }]);
  for (const [name, ftype, label, opts = {}] of spec.fields) {
    if (ftype === F_INT || ftype === F_STR) {
      const i = input.text('widget', name, value(name) ?? opts.def ?? '', { maxlength: opts.maxlength || 255 });
      el.append(fld(label, i));
      readers.push(() => one(ftype, name, i.value, opts.def));
    } else if (ftype === F_CHOICE) {
      const s = input.select('widget', name, opts.options, value(name) ?? opts.def);
      el.append(fld(label, s));
      readers.push(() => one(F_INT, name, s.value, opts.def));
    } else if (ftype === F_CHECK) {
      const c = input.check('widget', name, value(name) ?? opts.def ?? 0);
      el.append(fld(label, c));
      readers.push(() => one(F_INT, name, c.checked ? '1' : '0', opts.def ?? 0));
    } else if (ftype === F_SEVERITIES) {
      const on = new Set(values('severities'));
      const boxes = SEVERITIES.map((s, k) => h('input', { type: 'checkbox', id: `widget-severities-${k}`, value: String(k), checked: on.has(String(k)) }));
      el.append(h('div', { class: 'wide' }, fld(label, h('span', { class: 'widget-severities', dataset: { key: 'severities' } },
        boxes.map((b, k) => h('label', { class: 'inline' }, b, ` ${SEVERITIES[k]}`))))));
      readers.push(() => boxes.filter((b) => b.checked).map((b) => ({ type: F_INT, name: 'severities', value: b.value })));
    } else if (ftype === F_TAGS) {
      const evaltype = input.select('widget', 'evaltype', [[0, 'And/Or'], [2, 'Or']], value('evaltype') ?? '0');
      const rows = rowTable('widget-tags', ['Tag', 'Operator', 'Value'], tagRows(fields), (o) => {
        const tag = input.text('widget', 'tag', o.tag, { maxlength: 255, placeholder: 'tag', 'aria-label': 'Tag' });
        const op = input.select('widget', 'operator', TAG_OPERATORS, o.operator ?? '0');
        const val = input.text('widget', 'value', o.value, { maxlength: 255, placeholder: 'value', 'aria-label': 'Tag value' });
        return { cells: [tag, op, val], read: () => (tag.value === '' && val.value === '' ? null : { tag: tag.value, operator: op.value, value: val.value }) };
      }, 'tags');
      const row = h('div', { class: 'wide widget-tag-filter' }, fld(label, evaltype), rows.el);
      el.append(row);
      readers.push(() => [...one(F_INT, 'evaltype', evaltype.value, 0), ...rows.values().slice(0, MAX_TAGS).flatMap((r, i) => [
        { type: F_STR, name: `tags.tag.${i}`, value: r.tag }, { type: F_INT, name: `tags.operator.${i}`, value: r.operator },
        { type: F_STR, name: `tags.value.${i}`, value: r.value }])]);
    } else if (ftype === F_COLUMNS) {
      readers.push(columnsEditor(el, label, fields));
    } else if (PICK[ftype]) {
      const multi = MULTI.has(ftype);
      const chosen = values(name);
      // Until the list arrives (or for an id the user may not read) the
      // chosen ids are options of their own, so nothing is lost.
      const s = multi ? input.multi('widget', name, chosen.map((id) => [id, `#${id}`]), chosen) : input.select('widget', name, [['', 'All'], ...chosen.map((id) => [id, `#${id}`])], chosen[0] ?? '');
      el.append(fld(label, s));
      const api = PICK[ftype];
      call(api[0], { output: [api[1], 'name'], sortfield: 'name', limit: 1000 }).then((list) => {
        for (const o of list) {
          const id = o[api[1]];
          const old = [...s.options].find((x) => x.value === id);
          if (old) old.textContent = o.name;
          else s.append(h('option', { value: id }, o.name));
        }
      }).catch(() => {});
      readers.push(() => [...s.selectedOptions].filter((o) => o.value !== '').map((o) => ({ type: ftype, name, value: o.value })));
    } else if (ftype === F_ITEM) {
      readers.push(itemPicker(el, name, label, value(name), fixedHost));
    }
  }
  if (!spec.fields.length) el.append(h('p', { class: 'muted' }, 'This widget has no settings.'));
  // The refresh interval, as 6.0's widget form offers it (rf_rate).
  if (spec.type !== 'clock' && spec.type !== 'url') {
    const rf = input.select('widget', 'rf_rate', [['', 'Default'], ['0', 'No refresh'], ['10', '10 seconds'], ['30', '30 seconds'],
      ['60', '1 minute'], ['120', '2 minutes'], ['600', '10 minutes'], ['900', '15 minutes']], value('rf_rate') ?? '');
    el.append(fld('Refresh interval', rf));
    readers.push(() => (rf.value === '' ? [] : [{ type: F_INT, name: 'rf_rate', value: rf.value }]));
  }
  // Fields the form does not show are kept as they are.
  const kinds = new Set(spec.fields.map(([, t]) => t));
  const shown = new Set([...spec.fields.map(([n]) => n), 'rf_rate', ...(kinds.has(F_TAGS) ? ['evaltype'] : [])]);
  const kept = fields.filter((f) => !shown.has(f.name) && !(kinds.has(F_COLUMNS) && COLUMN_FIELDS.test(f.name)) && !(kinds.has(F_TAGS) && TAG_FIELDS.test(f.name)));
  return { el, read: () => [...kept, ...readers.flatMap((r) => r())] };
}

// columnsEditor edits a top hosts widget's columns.<name|data|item|text>.<N>.
function columnsEditor(el, label, fields) {
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
  return () => cells.filter(([nm, data, v]) => nm.value !== '' || v.value !== '' || data.value === '2').flatMap(([nm, data, v], i) => {
    const out = [{ type: F_STR, name: `columns.name.${i}`, value: nm.value }, { type: F_INT, name: `columns.data.${i}`, value: data.value }];
    if (data.value === '1') out.push({ type: F_STR, name: `columns.item.${i}`, value: v.value });
    if (data.value === '3') out.push({ type: F_STR, name: `columns.text.${i}`, value: v.value });
    return out;
  });
}

// itemPicker chooses an item: a host then its items, or with fixedHost
// one of that host's or template's items.
function itemPicker(el, name, label, chosen, fixedHost) {
  const item = input.select('widget', name, [['', 'Choose an item'], ...(chosen ? [[chosen, `#${chosen}`]] : [])], chosen ?? '');
  const fill = (its, keep) => {
    clear(item).append(h('option', { value: '' }, 'Choose an item'));
    for (const it of its) item.append(h('option', { value: it.itemid, selected: it.itemid === keep }, it.name));
  };
  if (fixedHost) {
    call('item.get', { hostids: [fixedHost], output: ['itemid', 'name'], sortfield: 'name', limit: 2000 }).then((its) => fill(its, chosen)).catch(() => {});
    el.append(fld(label, item));
    return () => (item.value ? [{ type: F_ITEM, name, value: item.value }] : []);
  }
  const host = input.select('widget', `${name}-host`, [['', 'Choose a host']], '');
  const loadItems = async (hostid, keep) => {
    if (!hostid) { fill([], ''); return; }
    fill(await call('item.get', { hostids: [hostid], output: ['itemid', 'name'], sortfield: 'name', limit: 2000 }), keep);
  };
  host.addEventListener('change', () => loadItems(host.value));
  (async () => {
    const hosts = await call('host.get', { output: ['hostid', 'name'], sortfield: 'name', limit: 1000 });
    let at = '';
    if (chosen) {
      const [it] = await call('item.get', { itemids: [chosen], output: ['hostid'] });
      at = it ? it.hostid : '';
    }
    for (const o of hosts) host.append(h('option', { value: o.hostid, selected: o.hostid === at }, o.name));
    if (at) await loadItems(at, chosen);
  })().catch(() => {});
  el.append(fld(`${label}: host`, host), fld(label, item));
  return () => (item.value ? [{ type: F_ITEM, name, value: item.value }] : []);
}
