// Event correlation (correlation.*; /config/correlation), as 6.0's
// Configuration → Event correlation (Super admin): the list (name,
// conditions as 6.0 words them, operations, status; search, status
// filter, mass enable/disable/delete) and the form: name, description,
// the conditions (old or new event tag, new event host group, event tag
// pair, old or new event tag value) evaluated and/or, and, or or by a
// custom formula, the operations (close old events, close new event)
// and the status; create, edit, clone, delete.
import { call } from '../../api.js';
import { h } from '../../dom.js';
import { crudPage, input, fld, rowTable } from '../../crud.js';

const N = 'correlation';
export const COND_TYPES = [[0, 'Old event tag name'], [1, 'New event tag name'], [2, 'New event host group'], [3, 'Event tag pair'],
  [4, 'Old event tag value'], [5, 'New event tag value']];
const GROUP_OPS = [[0, 'equals'], [1, 'does not equal']];
const VALUE_OPS = [[0, 'equals'], [1, 'does not equal'], [2, 'contains'], [3, 'does not contain']];
const OPS = [[0, 'Close old events'], [1, 'Close new event']];
const EVALTYPES = [[0, 'And/Or'], [1, 'And'], [2, 'Or'], [3, 'Custom expression']];
const label = (list, v) => (list.find(([x]) => String(x) === String(v)) || [0, v])[1];

// condText words a condition as 6.0's list does.
function condText(c, groups) {
  switch (String(c.type)) {
    case '0': return `Old event tag name equals ${c.tag}`;
    case '1': return `New event tag name equals ${c.tag}`;
    case '2': return `New event host group ${label(GROUP_OPS, c.operator)} ${(groups.find((g) => g.groupid === c.groupid) || { name: `#${c.groupid}` }).name}`;
    case '3': return `Value of old event tag ${c.oldtag} equals value of new event tag ${c.newtag}`;
    case '4': return `Value of old event tag ${c.tag} ${label(VALUE_OPS, c.operator)} ${c.value}`;
    default: return `Value of new event tag ${c.tag} ${label(VALUE_OPS, c.operator)} ${c.value}`;
  }
}

export async function render(main) {
  const groups = await call('hostgroup.get', { output: ['groupid', 'name'], sortfield: 'name' });
  await crudPage(main, {
    api: 'correlation', id: 'correlationid', ids: 'correlationids', noun: N, label: 'event correlation', title: 'Event correlation', section: 'config',
    path: '/config/correlation',
    sort: [['name', 'Name'], ['status', 'Status']],
    search: { field: 'name', label: 'Search name' },
    filters: [{ id: 'status', label: 'Status', options: [[0, 'Enabled'], [1, 'Disabled']], apply: (p, v) => { p.filter = { status: v }; } }],
    status: { field: 'status', on: 0, off: 1 },
    rowParams: { output: ['correlationid', 'name', 'status'], selectFilter: 'extend', selectOperations: 'extend' },
    columns: [
      { label: 'Name', sort: 'name', cell: (c) => c.name },
      { label: 'Conditions', cell: (c) => h('ul', { class: 'plain-list' }, (c.filter.conditions || []).map((x) => h('li', {}, `${x.formulaid}: ${condText(x, groups)}`))) },
      { label: 'Operations', cell: (c) => (c.operations || []).map((o) => label(OPS, o.type)).join(', ') },
      { label: 'Status', sort: 'status', cell: (c) => (c.status === '1' ? h('span', { class: 'ack-no' }, 'Disabled') : h('span', { class: 'ack-yes' }, 'Enabled')) },
    ],
    editParams: { selectFilter: 'extend', selectOperations: 'extend' },
    newObject: { name: '', description: '', status: '0', filter: { evaltype: '0', formula: '', conditions: [] }, operations: [] },
    clone: (c) => ({ ...c, name: `${c.name} (copy)` }),
    form: (c) => {
      const f = {
        name: input.text(N, 'name', c.name, { maxlength: 255 }),
        description: input.area(N, 'description', c.description, 2),
        status: input.check(N, 'status', String(c.status ?? '0') === '0'),
        evaltype: input.select(N, 'evaltype', EVALTYPES, c.filter.evaltype),
        formula: input.text(N, 'formula', c.filter.formula, { placeholder: 'A and (B or C)' }),
      };
      const conds = rowTable('correlation-conditions', ['Label', 'Type', 'Condition'], c.filter.conditions, (x) => {
        const id = h('input', { type: 'text', class: 'cond-formulaid', value: x.formulaid || '', size: 3, 'aria-label': 'Label' });
        const type = h('select', { class: 'cond-type', 'aria-label': 'Type' }, COND_TYPES.map(([v, t]) => h('option', { value: String(v), selected: String(v) === String(x.type ?? 1) }, t)));
        const tag = h('input', { type: 'text', class: 'cond-tag', value: x.tag || '', placeholder: 'tag', 'aria-label': 'Tag' });
        const oldtag = h('input', { type: 'text', class: 'cond-oldtag', value: x.oldtag || '', placeholder: 'old event tag', 'aria-label': 'Old tag' });
        const newtag = h('input', { type: 'text', class: 'cond-newtag', value: x.newtag || '', placeholder: 'new event tag', 'aria-label': 'New tag' });
        const gop = h('select', { class: 'cond-group-operator', 'aria-label': 'Operator' }, GROUP_OPS.map(([v, t]) => h('option', { value: String(v), selected: String(v) === String(x.operator ?? 0) }, t)));
        const group = h('select', { class: 'cond-group', 'aria-label': 'Host group' }, groups.map((g) => h('option', { value: g.groupid, selected: g.groupid === x.groupid }, g.name)));
        const vop = h('select', { class: 'cond-value-operator', 'aria-label': 'Operator' }, VALUE_OPS.map(([v, t]) => h('option', { value: String(v), selected: String(v) === String(x.operator ?? 0) }, t)));
        const value = h('input', { type: 'text', class: 'cond-value', value: x.value || '', placeholder: 'value', 'aria-label': 'Value' });
        // One tag input serves tag-name and tag-value conditions.
        const parts = { tag: h('span', {}, tag), pair: h('span', {}, oldtag, ' = ', newtag), group: h('span', {}, gop, group), value: h('span', {}, vop, value) };
        const show = () => {
          const t = type.value;
          parts.tag.hidden = !['0', '1', '4', '5'].includes(t);
          parts.pair.hidden = t !== '3';
          parts.group.hidden = t !== '2';
          parts.value.hidden = !['4', '5'].includes(t);
        };
        type.addEventListener('change', show);
        show();
        return { cells: [id, type, h('span', {}, parts.tag, parts.pair, parts.group, parts.value)], read: () => {
          const t = Number(type.value);
          const o = { type: t };
          if (f.evaltype.value === '3') o.formulaid = id.value.trim();
          if ([0, 1, 4, 5].includes(t)) o.tag = tag.value;
          if (t === 3) Object.assign(o, { oldtag: oldtag.value, newtag: newtag.value });
          if (t === 2) Object.assign(o, { groupid: group.value, operator: Number(gop.value) });
          if (t === 4 || t === 5) Object.assign(o, { value: value.value, operator: Number(vop.value) });
          return o;
        } };
      }, 'conditions');
      const formula = fld('Custom expression', f.formula);
      const showF = () => { formula.hidden = f.evaltype.value !== '3'; };
      f.evaltype.addEventListener('change', showF);
      showF();
      const have = new Set((c.operations || []).map((o) => String(o.type)));
      const ops = OPS.map(([v, t]) => [v, h('input', { type: 'checkbox', id: `correlation-op-${v}`, checked: have.has(String(v)) }), t]);
      const opsBox = h('div', { id: 'correlation-operations', dataset: { key: 'operations' } }, ops.map(([, cb, t]) => h('label', { class: 'check' }, cb, ` ${t} `)));
      return {
        body: [h('div', { class: 'form-grid' }, fld('Name', f.name), fld('Enabled', f.status), fld('Type of calculation', f.evaltype), formula),
          fld('Description', f.description), h('h4', {}, 'Conditions'), conds.el, h('h4', {}, 'Operations'), opsBox],
        read: () => ({ name: f.name.value, description: f.description.value, status: f.status.checked ? 0 : 1,
          filter: { evaltype: Number(f.evaltype.value), ...(f.evaltype.value === '3' ? { formula: f.formula.value } : {}), conditions: conds.values() },
          operations: ops.filter(([, cb]) => cb.checked).map(([v]) => ({ type: v })) }),
      };
    },
  });
  return null;
}
