// Configuration: low-level discovery rules of one host or template
// (discoveryrule.*; network discovery is /config/drules). The list is a
// crud.js page limited to the chosen host (params hostids), with the
// number of each rule's item, trigger, graph and host prototypes linking
// to their lists (/config/prototypes). The form has 6.0's tabs: the rule
// (name, type, key, interval, lifetime, status, description), its
// preprocessing steps, LLD macro paths, the filter (conditions with
// and/or, and, or or a custom formula) and overrides (each with its own
// filter and operations on prototypes: discover or not, create enabled
// or disabled). Everything is one discoveryrule.create or update: a
// refused rule saves nothing.
import { call } from '../../api.js';
import { h } from '../../dom.js';
import { crudPage, input, fld, rowTable } from '../../crud.js';
import { hostPicker, hostOrTemplate } from '../../form.js';
import { navigate } from '../../app.js';
import { tabs } from './tabs.js';
import { preprocEditor } from './preproc.js';

const N = 'lld';
export const LLD_TYPES = [[0, 'Zabbix agent'], [7, 'Zabbix agent (active)'], [2, 'Zabbix trapper'], [3, 'Simple check'], [5, 'Zabbix internal'],
  [10, 'External check'], [19, 'HTTP agent'], [20, 'SNMP agent'], [21, 'Script']];
const IFACE_OF = { 0: 1, 20: 2, 12: 3, 16: 4 };
export const EVALTYPES = [[0, 'And/Or'], [1, 'And'], [2, 'Or'], [3, 'Custom expression']];
export const COND_OPS = [[8, 'matches'], [9, 'does not match'], [12, 'exists'], [13, 'does not exist']];
const OP_OBJECTS = [[0, 'Item prototype'], [1, 'Trigger prototype'], [2, 'Graph prototype'], [3, 'Host prototype']];
const OP_OPERATORS = [[0, 'equals'], [1, 'does not equal'], [2, 'contains'], [3, 'does not contain'], [8, 'matches'], [9, 'does not match']];
const label = (list, v) => (list.find(([x]) => String(x) === String(v)) || [0, v])[1];
const sel = (cls, list, v, aria) => h('select', { class: cls, 'aria-label': aria }, list.map(([x, t]) => h('option', { value: String(x), selected: String(x) === String(v) }, t)));
const txt = (cls, v, aria, attrs = {}) => h('input', { type: 'text', class: cls, value: v ?? '', 'aria-label': aria, ...attrs });

// filterEditor edits a filter ({evaltype, formula, conditions}); id
// names its elements. read() returns the filter in the API's form, the
// conditions' formula ids A, B, ... in row order.
export function filterEditor(id, f) {
  f = f || { evaltype: '0', formula: '', conditions: [] };
  const evaltype = h('select', { id: `${id}-evaltype`, class: 'filter-evaltype', 'aria-label': 'Type of calculation' },
    EVALTYPES.map(([v, t]) => h('option', { value: String(v), selected: String(v) === String(f.evaltype) }, t)));
  const formula = h('input', { type: 'text', id: `${id}-formula`, class: 'filter-formula', value: f.formula || '', placeholder: 'A and (B or C)', 'aria-label': 'Formula' });
  const conds = rowTable(`${id}-conditions`, ['Label', 'Macro', 'Operator', 'Regular expression'], f.conditions, (c) => {
    const macro = txt('cond-macro', c.macro, 'Macro', { placeholder: '{#MACRO}' });
    const op = sel('cond-operator', COND_OPS, c.operator ?? 8, 'Operator');
    const value = txt('cond-value', c.value, 'Regular expression');
    const lbl = h('span', { class: 'cond-label muted' }, c.formulaid || '');
    return { cells: [lbl, macro, op, value], read: () => (macro.value.trim() === '' ? null : { macro: macro.value.trim(), operator: Number(op.value), value: value.value }) };
  }, 'conditions');
  const formulaField = fld('Custom expression', formula);
  const showFormula = () => { formulaField.hidden = evaltype.value !== '3'; };
  evaltype.addEventListener('change', showFormula);
  showFormula();
  return {
    el: h('div', { class: 'filter-editor', id }, h('div', { class: 'form-grid' }, fld('Type of calculation', evaltype), formulaField), conds.el),
    read: () => {
      const conditions = conds.values().map((c, i) => ({ ...c, formulaid: String.fromCharCode(65 + i) }));
      const o = { evaltype: Number(evaltype.value), conditions };
      if (o.evaltype === 3) o.formula = formula.value;
      return o;
    },
  };
}

// overridesEditor edits a rule's overrides: one card each, in step
// order, with a filter and operations.
function overridesEditor(list) {
  const box = h('div', { id: 'lld-overrides', dataset: { key: 'overrides' } });
  const cards = [];
  const add = (o) => {
    const n = cards.length;
    const name = txt('ov-name', o.name, 'Override name');
    const stop = h('input', { type: 'checkbox', class: 'ov-stop', checked: String(o.stop) === '1', 'aria-label': 'Stop processing next overrides if matches' });
    const filter = filterEditor(`lld-ov-${n}-filter`, o.filter);
    const ops = rowTable(`lld-ov-${n}-ops`, ['Object', 'Condition', 'Value', 'Discover', 'Create enabled'], o.operations, (p) => {
      const obj = sel('op-object', OP_OBJECTS, p.operationobject ?? 0, 'Object');
      const op = sel('op-operator', OP_OPERATORS, p.operator ?? 0, 'Condition');
      const value = txt('op-value', p.value, 'Value');
      const disc = sel('op-discover', [['', 'unchanged'], [0, 'Yes'], [1, 'No']], p.opdiscover ? p.opdiscover.discover : '', 'Discover');
      const status = sel('op-status', [['', 'unchanged'], [0, 'Yes'], [1, 'No']], p.opstatus ? p.opstatus.status : '', 'Create enabled');
      return { cells: [obj, op, value, disc, status], read: () => {
        const r = { operationobject: Number(obj.value), operator: Number(op.value), value: value.value };
        if (disc.value !== '') r.opdiscover = { discover: Number(disc.value) };
        if (status.value !== '' && r.operationobject !== 2) r.opstatus = { status: Number(status.value) };
        return r;
      } };
    });
    const card = h('fieldset', { class: 'card lld-override' }, h('legend', {}, 'Override'),
      h('div', { class: 'form-grid' }, fld('Name', name), fld('If filter matches, stop processing next overrides', stop)),
      h('h4', {}, 'Filter'), filter.el, h('h4', {}, 'Operations'), ops.el,
      h('button', { type: 'button', class: 'remove-override', onclick: () => { card.remove(); cards.splice(cards.indexOf(c), 1); } }, 'Remove override'));
    const c = { read: () => ({ name: name.value, stop: stop.checked ? 1 : 0, filter: filter.read(), operations: ops.values() }) };
    cards.push(c);
    box.insertBefore(card, addBtn);
  };
  const addBtn = h('button', { type: 'button', id: 'lld-overrides-add', onclick: () => add({}) }, 'Add override');
  box.append(addBtn);
  for (const o of list || []) add(o);
  return { el: box, read: () => cards.map((c, i) => ({ ...c.read(), step: i + 1 })) };
}

export async function render(main, q) {
  const hostid = q.get('hostid') || '';
  const picker = await hostPicker(call, hostid, (id) => navigate(`/config/discovery?hostid=${id}`));
  if (!hostid) {
    main.append(h('div', { class: 'toolbar' }, h('h1', {}, 'Discovery rules'), picker), h('p', { class: 'muted' }, 'Choose a host or template.'));
    return;
  }
  const host = await hostOrTemplate(call, hostid);
  const protoLink = (r, kind, key) => {
    const n = Array.isArray(r[key]) ? r[key].length : r[key];
    return h('a', { href: `/config/prototypes?ruleid=${r.itemid}&kind=${kind}`, class: `lld-${kind}-protos` }, `${n ?? 0}`);
  };
  await crudPage(main, {
    api: 'discoveryrule', id: 'itemid', ids: 'itemids', noun: N, label: 'discovery rule', title: `Discovery rules of ${host.name}`, section: 'config', path: '/config/discovery',
    params: { hostids: [hostid] },
    sort: [['name', 'Name'], ['key_', 'Key'], ['delay', 'Interval'], ['type', 'Type'], ['status', 'Status']],
    search: { field: 'name', label: 'Search name' },
    filters: [{ id: 'status', label: 'Status', options: [[0, 'Enabled'], [1, 'Disabled']], apply: (p, v) => { p.filter = { status: v }; } }],
    toolbar: [picker],
    editable: true,
    status: { field: 'status', on: 0, off: 1 },
    rowParams: { output: ['itemid', 'name', 'key_', 'type', 'delay', 'status', 'lifetime', 'templateid'], selectItems: 'count', selectTriggers: 'count',
      selectGraphs: 'count', selectHostPrototypes: 'count' },
    columns: [
      { label: 'Name', sort: 'name', cell: (r) => r.name },
      { label: 'Items', cell: (r) => protoLink(r, 'item', 'items') },
      { label: 'Triggers', cell: (r) => protoLink(r, 'trigger', 'triggers') },
      { label: 'Graphs', cell: (r) => protoLink(r, 'graph', 'graphs') },
      { label: 'Hosts', cell: (r) => protoLink(r, 'host', 'hostPrototypes') },
      { label: 'Key', sort: 'key_', cell: (r) => h('code', { class: 'lld-key' }, r.key_) },
      { label: 'Interval', sort: 'delay', cell: (r) => r.delay },
      { label: 'Type', sort: 'type', cell: (r) => label(LLD_TYPES, r.type) },
      { label: 'Status', sort: 'status', cell: (r) => (r.status === '1' ? h('span', { class: 'ack-no' }, 'Disabled') : h('span', { class: 'ack-yes' }, 'Enabled')) },
    ],
    editParams: { selectFilter: 'extend', selectLLDMacroPaths: 'extend', selectOverrides: 'extend', selectPreprocessing: 'extend' },
    newObject: { name: '', key_: '', type: '2', delay: '1h', lifetime: '30d', status: '0', description: '', filter: { evaltype: '0', formula: '', conditions: [] },
      lld_macro_paths: [], overrides: [], preprocessing: [] },
    clone: (r) => ({ ...r, name: `${r.name} (copy)`, templateid: '0' }),
    form: (r) => {
      const f = {
        name: input.text(N, 'name', r.name, { maxlength: 255 }), key_: input.text(N, 'key_', r.key_, { maxlength: 2048 }),
        type: input.select(N, 'type', LLD_TYPES, r.type), delay: input.text(N, 'delay', r.delay), lifetime: input.text(N, 'lifetime', r.lifetime),
        status: input.select(N, 'status', [[0, 'Enabled'], [1, 'Disabled']], r.status), description: input.area(N, 'description', r.description, 2),
        url: input.text(N, 'url', r.url), timeout: input.text(N, 'timeout', r.timeout || '3s'),
      };
      const http = h('div', { class: 'form-grid' }, fld('URL', f.url), fld('Timeout', f.timeout));
      const show = () => { http.hidden = f.type.value !== '19'; f.delay.disabled = f.type.value === '2'; };
      f.type.addEventListener('change', show);
      show();
      // 6.0's discovery rule steps (a subset of an item's), with Test.
      const pp = preprocEditor('lld-preprocessing', r.preprocessing, { lld: true });
      const paths = rowTable('lld-macro-paths', ['LLD macro', 'JSONPath'], r.lld_macro_paths, (m) => {
        const macro = txt('path-macro', m.lld_macro, 'LLD macro', { placeholder: '{#MACRO}' });
        const path = txt('path-path', m.path, 'JSONPath', { placeholder: '$.path' });
        return { cells: [macro, path], read: () => (macro.value.trim() === '' ? null : { lld_macro: macro.value.trim(), path: path.value }) };
      }, 'lld_macro_paths');
      const filter = filterEditor('lld-filter', r.filter);
      const overrides = overridesEditor(r.overrides);
      const inherited = r.templateid && r.templateid !== '0' ? h('p', { class: 'muted' }, 'Inherited from a template: the key and type are the template\'s.') : null;
      return {
        body: [tabs('lld-tabs', [
          ['Discovery rule', [inherited, h('div', { class: 'form-grid' }, fld('Name', f.name), fld('Type', f.type), fld('Key', f.key_),
            fld('Update interval', f.delay), fld('Keep lost resources period', f.lifetime), fld('Status', f.status)), http, fld('Description', f.description)]],
          ['Preprocessing', [pp.el]],
          ['LLD macros', [paths.el]],
          ['Filters', [filter.el]],
          ['Overrides', [overrides.el]],
        ])],
        read: () => {
          const type = Number(f.type.value);
          const o = { name: f.name.value, key_: f.key_.value, type, lifetime: f.lifetime.value, status: Number(f.status.value), description: f.description.value,
            preprocessing: pp.values(), lld_macro_paths: paths.values(), filter: filter.read(), overrides: overrides.read() };
          if (type !== 2) o.delay = f.delay.value;
          if (type === 19) Object.assign(o, { url: f.url.value, timeout: f.timeout.value });
          if (!r.itemid) o.hostid = hostid;
          const want = IFACE_OF[type];
          if (want && !host.template) {
            const i = (host.interfaces || []).find((x) => Number(x.type) === want && x.main === '1') || (host.interfaces || []).find((x) => Number(x.type) === want);
            if (i) o.interfaceid = i.interfaceid;
          }
          if (r.templateid && r.templateid !== '0') {
            delete o.key_;
            delete o.type;
          }
          return o;
        },
      };
    },
    formButtons: (r) => [h('a', { href: `/config/prototypes?ruleid=${r.itemid}&kind=item`, id: 'lld-protos-link' }, 'Prototypes')],
  });
}
