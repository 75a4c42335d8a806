// Configuration: the prototypes of one discovery rule
// (/config/prototypes?ruleid=&kind=item|trigger|graph|host), each kind
// a crud.js page on its API (itemprototype.*, triggerprototype.*,
// graphprototype.*, hostprototype.*) limited to the rule (discoveryids):
// list, create, edit, clone, delete, and mass enable/disable where the
// object has a status.
import { call } from '../../api.js';
import { h, SEVERITIES } from '../../dom.js';
import { crudPage, input, fld, chosen, rowTable } from '../../crud.js';
import { hostOrTemplate } from '../../form.js';
import { LLD_TYPES, PREPROC, preprocEditor } from './discovery.js';

const VALUE_TYPES = [[0, 'Numeric (float)'], [3, 'Numeric (unsigned)'], [1, 'Character'], [2, 'Log'], [4, 'Text']];
const ITEM_TYPES = [...LLD_TYPES, [15, 'Calculated']];
const IFACE_OF = { 0: 1, 20: 2, 12: 3, 16: 4 };
const ITEM_PREPROC = [[1, 'Custom multiplier'], [2, 'Right trim'], [3, 'Left trim'], [4, 'Trim'], [9, 'Change per second'], [10, 'Simple change'],
  [6, 'Boolean to decimal'], [7, 'Octal to decimal'], [8, 'Hexadecimal to decimal'], [13, 'In range'], [19, 'Discard unchanged'], ...PREPROC];
const KINDS = [['item', 'Item prototypes'], ['trigger', 'Trigger prototypes'], ['graph', 'Graph prototypes'], ['host', 'Host prototypes']];
const ENABLED = [[0, 'Enabled'], [1, 'Disabled']];
const DISCOVER = [[0, 'Yes'], [1, 'No']];
const label = (list, v) => (list.find(([x]) => String(x) === String(v)) || [0, v])[1];
const statusCell = (o) => (o.status === '1' ? h('span', { class: 'ack-no' }, 'Disabled') : h('span', { class: 'ack-yes' }, 'Enabled'));
const discoverCell = (o) => (o.discover === '1' ? 'No' : 'Yes');

function itemSpec(rule, host) {
  const N = 'itemproto';
  return {
    api: 'itemprototype', id: 'itemid', ids: 'itemids', noun: N, label: 'item prototype', title: 'Item prototypes',
    sort: [['name', 'Name'], ['key_', 'Key'], ['delay', 'Interval'], ['type', 'Type'], ['status', 'Status']],
    status: { field: 'status', on: 0, off: 1 },
    rowParams: { output: ['itemid', 'name', 'key_', 'type', 'value_type', 'delay', 'status', 'discover'] },
    columns: [
      { label: 'Name', sort: 'name', cell: (o) => o.name },
      { label: 'Key', sort: 'key_', cell: (o) => h('code', { class: 'itemproto-key' }, o.key_) },
      { label: 'Interval', sort: 'delay', cell: (o) => o.delay },
      { label: 'Type', sort: 'type', cell: (o) => label(ITEM_TYPES, o.type) },
      { label: 'Type of information', cell: (o) => label(VALUE_TYPES, o.value_type) },
      { label: 'Status', sort: 'status', cell: statusCell },
      { label: 'Discover', cell: discoverCell },
    ],
    editParams: { selectPreprocessing: 'extend' },
    newObject: { name: '', key_: '', type: '2', value_type: '3', delay: '1m', units: '', history: '90d', trends: '365d', status: '0', discover: '0', description: '', preprocessing: [] },
    clone: (o) => ({ ...o, name: `${o.name} (copy)`, templateid: '0' }),
    form: (o) => {
      const f = {
        name: input.text(N, 'name', o.name, { maxlength: 255 }), key_: input.text(N, 'key_', o.key_),
        type: input.select(N, 'type', ITEM_TYPES, o.type), value_type: input.select(N, 'value_type', VALUE_TYPES, o.value_type),
        delay: input.text(N, 'delay', o.delay), units: input.text(N, 'units', o.units), history: input.text(N, 'history', o.history),
        trends: input.text(N, 'trends', o.trends), params: input.area(N, 'params', o.params, 2),
        status: input.select(N, 'status', ENABLED, o.status), discover: input.select(N, 'discover', DISCOVER, o.discover),
        description: input.area(N, 'description', o.description, 2),
      };
      const formula = fld('Formula', f.params);
      const show = () => { formula.hidden = f.type.value !== '15'; };
      f.type.addEventListener('change', show);
      show();
      const pp = preprocEditor('itemproto-preprocessing', o.preprocessing, ITEM_PREPROC);
      return {
        body: [h('div', { class: 'form-grid' }, fld('Name', f.name), fld('Type', f.type), fld('Key', f.key_), fld('Type of information', f.value_type),
          fld('Update interval', f.delay), fld('Units', f.units), fld('History', f.history), fld('Trends', f.trends), fld('Create enabled', f.status),
          fld('Discover', f.discover)), formula, fld('Description', f.description), h('h4', {}, 'Preprocessing'), pp.el],
        read: () => {
          const type = Number(f.type.value);
          const r = { name: f.name.value, key_: f.key_.value, type, value_type: Number(f.value_type.value), units: f.units.value, history: f.history.value,
            status: Number(f.status.value), discover: Number(f.discover.value), description: f.description.value, preprocessing: pp.values() };
          if (type !== 2) r.delay = f.delay.value;
          if (['0', '3'].includes(f.value_type.value)) r.trends = f.trends.value;
          if (type === 15) r.params = f.params.value;
          if (!o.itemid) Object.assign(r, { hostid: host.hostid, ruleid: rule.itemid });
          const want = IFACE_OF[type];
          if (want && !host.template) {
            const i = (host.interfaces || []).find((x) => Number(x.type) === want && x.main === '1') || (host.interfaces || []).find((x) => Number(x.type) === want);
            if (i) r.interfaceid = i.interfaceid;
          }
          return r;
        },
      };
    },
  };
}

function triggerSpec(rule) {
  const N = 'triggerproto';
  return {
    api: 'triggerprototype', id: 'triggerid', ids: 'triggerids', noun: N, label: 'trigger prototype', title: 'Trigger prototypes',
    sort: [['description', 'Name'], ['priority', 'Severity'], ['status', 'Status']],
    search: { field: 'description', label: 'Search name' },
    status: { field: 'status', on: 0, off: 1 },
    rowParams: { output: ['triggerid', 'description', 'expression', 'priority', 'status', 'discover'], expandExpression: true },
    columns: [
      { label: 'Name', sort: 'description', cell: (o) => o.description },
      { label: 'Severity', sort: 'priority', cell: (o) => h('span', { class: `badge sev-${o.priority}` }, SEVERITIES[o.priority] || o.priority) },
      { label: 'Expression', cell: (o) => h('code', { class: 'triggerproto-expression' }, o.expression) },
      { label: 'Status', sort: 'status', cell: statusCell },
      { label: 'Discover', cell: discoverCell },
    ],
    editParams: { expandExpression: true },
    newObject: { description: '', event_name: '', expression: '', recovery_expression: '', priority: '2', status: '0', discover: '0', comments: '' },
    clone: (o) => ({ ...o, description: `${o.description} (copy)`, templateid: '0' }),
    form: (o) => {
      const f = {
        description: input.text(N, 'description', o.description, { maxlength: 255 }), event_name: input.text(N, 'event_name', o.event_name),
        expression: input.area(N, 'expression', o.expression, 3), priority: input.select(N, 'priority', SEVERITIES.map((s, i) => [i, s]), o.priority),
        status: input.select(N, 'status', ENABLED, o.status), discover: input.select(N, 'discover', DISCOVER, o.discover),
        comments: input.area(N, 'comments', o.comments, 2),
      };
      return {
        body: [h('div', { class: 'form-grid' }, fld('Name', f.description), fld('Severity', f.priority), fld('Create enabled', f.status), fld('Discover', f.discover)),
          fld('Event name', f.event_name), fld('Expression', f.expression), h('p', { class: 'muted' }, `Items of the rule "${rule.name}" by their prototype keys, e.g. last(/host/key[{#MACRO}])`),
          fld('Description', f.comments)],
        read: () => ({ description: f.description.value, event_name: f.event_name.value, expression: f.expression.value, priority: Number(f.priority.value),
          status: Number(f.status.value), discover: Number(f.discover.value), comments: f.comments.value }),
      };
    },
  };
}

function graphSpec(rule, lists) {
  const N = 'graphproto';
  const items = lists.items;
  return {
    api: 'graphprototype', id: 'graphid', ids: 'graphids', noun: N, label: 'graph prototype', title: 'Graph prototypes',
    sort: [['name', 'Name'], ['graphtype', 'Type']],
    search: { field: 'name', label: 'Search name' },
    rowParams: { output: ['graphid', 'name', 'width', 'height', 'graphtype', 'discover'] },
    columns: [
      { label: 'Name', sort: 'name', cell: (o) => o.name },
      { label: 'Width', cell: (o) => o.width }, { label: 'Height', cell: (o) => o.height },
      { label: 'Type', sort: 'graphtype', cell: (o) => label([[0, 'Normal'], [1, 'Stacked'], [2, 'Pie'], [3, 'Exploded']], o.graphtype) },
      { label: 'Discover', cell: discoverCell },
    ],
    editParams: { selectGraphItems: 'extend' },
    newObject: { name: '', width: '900', height: '200', graphtype: '0', discover: '0', gitems: [] },
    clone: (o) => ({ ...o, name: `${o.name} (copy)`, templateid: '0', gitems: (o.gitems || []).map(({ itemid, color, drawtype, calc_fnc, yaxisside }) => ({ itemid, color, drawtype, calc_fnc, yaxisside })) }),
    form: (o) => {
      const f = {
        name: input.text(N, 'name', o.name, { maxlength: 128 }), width: input.num(N, 'width', o.width), height: input.num(N, 'height', o.height),
        graphtype: input.select(N, 'graphtype', [[0, 'Normal'], [1, 'Stacked'], [2, 'Pie'], [3, 'Exploded']], o.graphtype),
        discover: input.select(N, 'discover', DISCOVER, o.discover),
      };
      const gitems = rowTable('graphproto-gitems', ['Item', 'Function', 'Draw style', 'Colour'], o.gitems, (g) => {
        const item = h('select', { class: 'gitem-item', 'aria-label': 'Item' }, h('option', { value: '' }, 'Choose…'),
          items.map((x) => h('option', { value: x.itemid, selected: x.itemid === g.itemid }, `${x.name} (${x.key_})`)));
        const fn = h('select', { class: 'gitem-calc', 'aria-label': 'Function' }, [[2, 'avg'], [1, 'min'], [4, 'max'], [7, 'all']].map(([v, t]) => h('option', { value: String(v), selected: String(v) === String(g.calc_fnc ?? 2) }, t)));
        const draw = h('select', { class: 'gitem-draw', 'aria-label': 'Draw style' }, [[0, 'Line'], [1, 'Filled region'], [2, 'Bold line'], [3, 'Dot'], [4, 'Dashed line'], [5, 'Gradient line']]
          .map(([v, t]) => h('option', { value: String(v), selected: String(v) === String(g.drawtype ?? 0) }, t)));
        const color = h('input', { type: 'text', class: 'gitem-color', value: g.color || '1A7C11', maxlength: 6, 'aria-label': 'Colour' });
        return { cells: [item, fn, draw, color], read: () => (item.value === '' ? null : { itemid: item.value, calc_fnc: Number(fn.value), drawtype: Number(draw.value), color: color.value }) };
      }, 'gitems');
      return {
        body: [h('div', { class: 'form-grid' }, fld('Name', f.name), fld('Width', f.width), fld('Height', f.height), fld('Graph type', f.graphtype), fld('Discover', f.discover)),
          h('h4', {}, 'Items'), gitems.el],
        read: () => ({ name: f.name.value, width: Number(f.width.value), height: Number(f.height.value), graphtype: Number(f.graphtype.value),
          discover: Number(f.discover.value), gitems: gitems.values().map((g, i) => ({ ...g, sortorder: i })) }),
      };
    },
  };
}

function hostSpec(rule, lists) {
  const N = 'hostproto';
  return {
    api: 'hostprototype', id: 'hostid', ids: 'hostids', noun: N, label: 'host prototype', title: 'Host prototypes',
    sort: [['name', 'Name'], ['host', 'Host name'], ['status', 'Status']],
    search: { field: 'name', label: 'Search name' },
    status: { field: 'status', on: 0, off: 1 },
    rowParams: { output: ['hostid', 'host', 'name', 'status', 'discover'], selectTemplates: ['templateid', 'name'] },
    columns: [
      { label: 'Name', sort: 'name', cell: (o) => o.name },
      { label: 'Host name', sort: 'host', cell: (o) => o.host },
      { label: 'Templates', cell: (o) => (o.templates || []).map((t) => t.name).join(', ') },
      { label: 'Status', sort: 'status', cell: statusCell },
      { label: 'Discover', cell: discoverCell },
    ],
    editParams: { selectGroupLinks: 'extend', selectGroupPrototypes: 'extend', selectTemplates: ['templateid'], selectTags: 'extend' },
    newObject: { host: '', name: '', status: '0', discover: '0', groupLinks: [], groupPrototypes: [], templates: [], tags: [] },
    clone: (o) => ({ ...o, host: `${o.host}-copy`, name: `${o.name} (copy)`, templateid: '0',
      groupPrototypes: (o.groupPrototypes || []).map(({ name }) => ({ name })), groupLinks: (o.groupLinks || []).map(({ groupid }) => ({ groupid })) }),
    form: (o) => {
      const f = {
        host: input.text(N, 'host', o.host, { placeholder: '{#HOST.NAME}' }), name: input.text(N, 'name', o.name === o.host ? '' : o.name, { placeholder: 'same as the host name' }),
        groupLinks: input.multi(N, 'groupLinks', lists.groups.map((g) => [g.groupid, g.name]), (o.groupLinks || []).map((g) => g.groupid)),
        templates: input.multi(N, 'templates', lists.templates.map((t) => [t.templateid, t.name]), (o.templates || []).map((t) => t.templateid)),
        status: input.select(N, 'status', ENABLED, o.status), discover: input.select(N, 'discover', DISCOVER, o.discover),
      };
      const gp = rowTable('hostproto-groupprototypes', ['Group prototype'], o.groupPrototypes, (g) => {
        const name = h('input', { type: 'text', class: 'gp-name', value: g.name || '', placeholder: '{#MACRO} servers', 'aria-label': 'Group prototype' });
        return { cells: [name], read: () => (name.value.trim() === '' ? null : { name: name.value }) };
      }, 'groupPrototypes');
      return {
        body: [h('div', { class: 'form-grid' }, fld('Host name', f.host), fld('Visible name', f.name), fld('Groups', f.groupLinks), fld('Templates', f.templates),
          fld('Create enabled', f.status), fld('Discover', f.discover)), h('h4', {}, 'Group prototypes'), gp.el],
        read: () => {
          const r = { host: f.host.value, name: f.name.value || f.host.value, status: Number(f.status.value), discover: Number(f.discover.value),
            groupLinks: chosen(f.groupLinks).map((groupid) => ({ groupid })), groupPrototypes: gp.values(), templates: chosen(f.templates).map((templateid) => ({ templateid })) };
          if (!o.hostid) r.ruleid = rule.itemid;
          return r;
        },
      };
    },
  };
}

export async function render(main, q) {
  const ruleid = q.get('ruleid') || '';
  const kind = KINDS.some(([k]) => k === q.get('kind')) ? q.get('kind') : 'item';
  const [rule] = ruleid ? await call('discoveryrule.get', { itemids: [ruleid], output: ['itemid', 'name', 'hostid'] }) : [];
  if (!rule) {
    main.append(h('h1', {}, 'Prototypes'), h('p', { class: 'muted' }, 'No such discovery rule: open one from a host\'s or template\'s discovery rules.'),
      h('a', { href: '/config/discovery' }, 'Discovery rules'));
    return;
  }
  const host = await hostOrTemplate(call, rule.hostid);
  const lists = {};
  if (kind === 'graph') {
    const [protos, items] = await Promise.all([call('itemprototype.get', { discoveryids: [ruleid], output: ['itemid', 'name', 'key_'] }),
      call('item.get', { hostids: [rule.hostid], output: ['itemid', 'name', 'key_'], filter: { value_type: [0, 3] } })]);
    lists.items = [...protos, ...items];
  }
  if (kind === 'host') {
    [lists.groups, lists.templates] = await Promise.all([call('hostgroup.get', { output: ['groupid', 'name'], sortfield: 'name' }),
      call('template.get', { output: ['templateid', 'name'], sortfield: 'name' })]);
  }
  const spec = { item: itemSpec, trigger: triggerSpec, graph: graphSpec, host: hostSpec }[kind](rule, kind === 'item' ? host : lists);
  const where = h('p', { class: 'proto-where' }, 'Discovery rule ', h('strong', { id: 'proto-rule' }, rule.name), ' of ',
    h('a', { href: `/config/discovery?hostid=${rule.hostid}` }, host.name), ': ',
    KINDS.map(([k, l]) => [h('a', { href: `/config/prototypes?ruleid=${ruleid}&kind=${k}`, class: k === kind ? 'active proto-kind' : 'proto-kind', dataset: { kind: k } }, l), ' ']));
  await crudPage(main, {
    ...spec, section: 'config', path: '/config/discovery', params: { discoveryids: [ruleid] }, editable: true, toolbar: [where],
    search: spec.search || { field: 'name', label: 'Search name' },
  });
}
