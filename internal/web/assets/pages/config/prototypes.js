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
import { ITEM_TYPES, VALUE_TYPES, itemForm, newItem, cloneItem } from './itemform.js';
import { graphForm, graphClone, graphNew, GRAPH_TYPES } from './graphform.js';
import { tabs } from './tabs.js';

const KINDS = [['item', 'Item prototypes'], ['trigger', 'Trigger prototypes'], ['graph', 'Graph prototypes'], ['host', 'Host prototypes']];
const ENABLED = [[0, 'Enabled'], [1, 'Disabled']];
const DISCOVER = [[0, 'Yes'], [1, 'No']];
const label = (list, v) => (list.find(([x]) => String(x) === String(v)) || [0, v])[1];
const statusCell = (o) => (o.status === '1' ? h('span', { class: 'ack-no' }, 'Disabled') : h('span', { class: 'ack-yes' }, 'Enabled'));
const discoverCell = (o) => (o.discover === '1' ? 'No' : 'Yes');

function itemSpec(rule, host, lists) {
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
    editParams: { selectPreprocessing: 'extend', selectTags: 'extend' },
    newObject: newItem(),
    clone: (o) => ({ ...cloneItem(o), name: `${o.name} (copy)` }),
    // 6.0's item form (itemform.js) with "Create enabled" and
    // "Discover"; a dependent prototype's master is one of the host's
    // items or of the rule's item prototypes.
    form: (o) => {
      const f = itemForm(N, o, { host, valuemaps: lists.valuemaps, masters: lists.masters, proto: true });
      return {
        body: f.body,
        read: () => {
          const r = f.read();
          if (!o.itemid) Object.assign(r, { hostid: host.hostid, ruleid: rule.itemid });
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
  return {
    api: 'graphprototype', id: 'graphid', ids: 'graphids', noun: N, label: 'graph prototype', title: 'Graph prototypes',
    sort: [['name', 'Name'], ['graphtype', 'Type']],
    search: { field: 'name', label: 'Search name' },
    rowParams: { output: ['graphid', 'name', 'width', 'height', 'graphtype', 'discover'] },
    columns: [
      { label: 'Name', sort: 'name', cell: (o) => o.name },
      { label: 'Width', cell: (o) => o.width }, { label: 'Height', cell: (o) => o.height },
      { label: 'Type', sort: 'graphtype', cell: (o) => label(GRAPH_TYPES, o.graphtype) },
      { label: 'Discover', cell: discoverCell },
    ],
    editParams: { selectGraphItems: 'extend' },
    newObject: { ...graphNew, discover: '0' },
    clone: graphClone,
    form: (o) => {
      const discover = input.select(N, 'discover', DISCOVER, o.discover);
      const f = graphForm(N, o, lists.items, [fld('Discover', discover)]);
      return { body: f.body, read: () => ({ ...f.read(), discover: Number(discover.value) }) };
    },
  };
}

const IFTYPES = [[1, 'Agent'], [2, 'SNMP'], [3, 'IPMI'], [4, 'JMX']];
const IFPORTS = { 1: '10050', 2: '161', 3: '623', 4: '12345' };
const INVENTORY = [[-1, 'Disabled'], [0, 'Manual'], [1, 'Automatic']];
const MACRO_TYPES = [[0, 'Text'], [1, 'Secret text']];
const macroKey = (l) => JSON.stringify(l.map((m) => [m.macro, String(m.type), m.type === '1' || m.type === 1 ? '' : m.value, m.description || '']));

// hostIfaceRow edits one interface of a host prototype: type, IP or DNS
// (use IP), port, default, and an SNMP interface's version and
// community.
function hostIfaceRow(f) {
  const type = h('select', { class: 'if-type', 'aria-label': 'Type' }, IFTYPES.map(([v, t]) => h('option', { value: String(v), selected: String(v) === String(f.type ?? 1) }, t)));
  const ip = h('input', { type: 'text', class: 'if-ip', value: f.ip ?? '', 'aria-label': 'IP address' });
  const dns = h('input', { type: 'text', class: 'if-dns', value: f.dns || '', 'aria-label': 'DNS name' });
  const useip = h('select', { class: 'if-useip', 'aria-label': 'Connect to' }, [[1, 'IP'], [0, 'DNS']].map(([v, t]) => h('option', { value: String(v), selected: String(v) === String(f.useip ?? 1) }, t)));
  const port = h('input', { type: 'text', class: 'if-port', value: f.port || IFPORTS[f.type || 1], 'aria-label': 'Port', size: 6 });
  const main = h('input', { type: 'checkbox', class: 'if-main', checked: String(f.main ?? 1) === '1', 'aria-label': 'Default' });
  const d = f.details && !Array.isArray(f.details) ? f.details : {};
  const version = h('select', { class: 'if-snmp-version', 'aria-label': 'SNMP version' }, [[1, 'SNMPv1'], [2, 'SNMPv2'], [3, 'SNMPv3']].map(([v, t]) => h('option', { value: String(v), selected: String(v) === String(d.version || 2) }, t)));
  const community = h('input', { type: 'text', class: 'if-snmp-community', value: d.community ?? '{$SNMP_COMMUNITY}', 'aria-label': 'SNMP community' });
  const snmp = h('span', { class: 'if-snmp' }, version, community);
  const show = () => { snmp.hidden = type.value !== '2'; };
  type.addEventListener('change', () => { port.value = IFPORTS[type.value]; show(); });
  show();
  return { cells: [type, ip, dns, useip, port, main, snmp], read: () => {
    const o = { type: Number(type.value), ip: ip.value, dns: dns.value, useip: Number(useip.value), port: port.value, main: main.checked ? 1 : 0 };
    if (o.type === 2) o.details = { version: version.value, bulk: String(d.bulk ?? 1), community: community.value };
    return o;
  } };
}

function hostSpec(rule, lists) {
  const N = 'hostproto';
  return {
    api: 'hostprototype', id: 'hostid', ids: 'hostids', noun: N, label: 'host prototype', title: 'Host prototypes',
    sort: [['name', 'Name'], ['host', 'Host name'], ['status', 'Status']],
    search: { field: 'name', label: 'Search name' },
    status: { field: 'status', on: 0, off: 1 },
    rowParams: { output: ['hostid', 'host', 'name', 'status', 'discover'], selectTemplates: ['templateid', 'name'], selectTags: 'extend' },
    columns: [
      { label: 'Name', sort: 'name', cell: (o) => o.name },
      { label: 'Host name', sort: 'host', cell: (o) => o.host },
      { label: 'Templates', cell: (o) => (o.templates || []).map((t) => t.name).join(', ') },
      { label: 'Status', sort: 'status', cell: statusCell },
      { label: 'Discover', cell: discoverCell },
      { label: 'Tags', cell: (o) => (o.tags || []).map((x) => h('span', { class: 'tag' }, x.value ? `${x.tag}: ${x.value}` : x.tag)) },
    ],
    editParams: { selectGroupLinks: 'extend', selectGroupPrototypes: 'extend', selectTemplates: ['templateid'], selectTags: 'extend', selectMacros: 'extend', selectInterfaces: 'extend' },
    newObject: { host: '', name: '', status: '0', discover: '0', inventory_mode: '-1', custom_interfaces: '0', groupLinks: [], groupPrototypes: [], templates: [], tags: [], macros: [], interfaces: [] },
    // A clone's secret macros are never read back: as 6.0's clone, their
    // value and type are reset (text, empty).
    clone: (o) => ({ ...o, host: `${o.host}-copy`, name: `${o.name} (copy)`, templateid: '0', uuid: undefined,
      macros: (o.macros || []).map((m) => (String(m.type) === '1' ? { ...m, value: '', type: '0' } : m)),
      groupPrototypes: (o.groupPrototypes || []).map(({ name }) => ({ name })), groupLinks: (o.groupLinks || []).map(({ groupid }) => ({ groupid })) }),
    form: (o) => {
      const f = {
        host: input.text(N, 'host', o.host, { placeholder: '{#HOST.NAME}' }), name: input.text(N, 'name', o.name === o.host ? '' : o.name, { placeholder: 'same as the host name' }),
        groupLinks: input.multi(N, 'groupLinks', lists.groups.map((g) => [g.groupid, g.name]), (o.groupLinks || []).map((g) => g.groupid)),
        templates: input.multi(N, 'templates', lists.templates.map((t) => [t.templateid, t.name]), (o.templates || []).map((t) => t.templateid)),
        status: input.select(N, 'status', ENABLED, o.status), discover: input.select(N, 'discover', DISCOVER, o.discover),
        custom_interfaces: input.select(N, 'custom_interfaces', [[0, 'Inherit'], [1, 'Custom']], o.custom_interfaces),
        inventory_mode: input.select(N, 'inventory_mode', INVENTORY, o.inventory_mode ?? '-1'),
      };
      const gp = rowTable('hostproto-groupprototypes', ['Group prototype'], o.groupPrototypes, (g) => {
        const name = h('input', { type: 'text', class: 'gp-name', value: g.name || '', placeholder: '{#MACRO} servers', 'aria-label': 'Group prototype' });
        return { cells: [name], read: () => (name.value.trim() === '' ? null : { name: name.value }) };
      }, 'groupPrototypes');
      const ifaces = rowTable('hostproto-interfaces', ['Type', 'IP address', 'DNS name', 'Connect to', 'Port', 'Default', 'SNMP'], o.interfaces, hostIfaceRow, 'interfaces');
      const ifBox = h('div', { id: 'hostproto-interfaces-box' }, ifaces.el);
      const showIf = () => { ifBox.hidden = f.custom_interfaces.value !== '1'; };
      f.custom_interfaces.addEventListener('change', showIf);
      showIf();
      const tags = rowTable('hostproto-tags', ['Tag', 'Value'], o.tags, (x) => {
        const tag = h('input', { type: 'text', class: 'tag-tag', value: x.tag || '', 'aria-label': 'Tag' });
        const value = h('input', { type: 'text', class: 'tag-value', value: x.value || '', 'aria-label': 'Value' });
        return { cells: [tag, value], read: () => (tag.value.trim() === '' ? null : { tag: tag.value, value: value.value }) };
      }, 'tags');
      // The API replaces a prototype's macros whole and never returns a
      // secret's value: macros are sent only when changed, and then a
      // stored secret must be typed again (else nothing is saved).
      const stored = (m) => String(m.type) === '1' && !!o.hostid;
      const macros = rowTable('hostproto-macros', ['Macro', 'Value', 'Type', 'Description'], o.macros, (m) => {
        const macro = h('input', { type: 'text', class: 'macro-name', value: m.macro || '', placeholder: '{$MACRO}', 'aria-label': 'Macro' });
        const value = h('input', { type: String(m.type) === '1' ? 'password' : 'text', class: 'macro-value', value: stored(m) ? '' : (m.value || ''),
          placeholder: stored(m) ? 'unchanged' : 'value', autocomplete: 'new-password', 'aria-label': 'Value' });
        const type = h('select', { class: 'macro-type', 'aria-label': 'Type' }, MACRO_TYPES.map(([v, l]) => h('option', { value: String(v), selected: String(v) === String(m.type || 0) }, l)));
        const description = h('input', { type: 'text', class: 'macro-description', value: m.description || '', 'aria-label': 'Description' });
        return { cells: [macro, value, type, description], read: () => (macro.value.trim() === '' ? null
          : { macro: macro.value.trim(), value: value.value, type: Number(type.value), description: description.value, untyped: stored(m) && value.value === '' && type.value === '1' }) };
      }, 'macros');
      return {
        body: [tabs('hostproto-tabs', [
          ['Host prototype', [h('div', { class: 'form-grid' }, fld('Host name', f.host), fld('Visible name', f.name), fld('Templates', f.templates), fld('Host groups', f.groupLinks),
            fld('Create enabled', f.status), fld('Discover', f.discover)), h('h4', {}, 'Group prototypes'), gp.el,
          h('h4', {}, 'Interfaces'), fld('Interfaces', f.custom_interfaces), ifBox]],
          ['Tags', [tags.el]],
          ['Macros', [macros.el]],
          ['Inventory', [fld('Inventory mode', f.inventory_mode)]],
        ])],
        read: () => {
          const r = { host: f.host.value, name: f.name.value || f.host.value, status: Number(f.status.value), discover: Number(f.discover.value),
            groupLinks: chosen(f.groupLinks).map((groupid) => ({ groupid })), groupPrototypes: gp.values(), templates: chosen(f.templates).map((templateid) => ({ templateid })),
            custom_interfaces: Number(f.custom_interfaces.value), inventory_mode: Number(f.inventory_mode.value), tags: tags.values() };
          if (r.custom_interfaces === 1) r.interfaces = ifaces.values();
          const ms = macros.values();
          if (!o.hostid || macroKey(ms) !== macroKey(o.macros || []) || ms.some((m) => !m.untyped && m.type === 1)) {
            const missing = ms.filter((m) => m.untyped).map((m) => m.macro);
            if (missing.length) throw new Error(`Invalid parameter "/1/macros": type the secret value of ${missing.join(', ')} again: the API replaces the macros whole and never returns a secret.`);
            r.macros = ms.map(({ untyped, ...m }) => m);
          }
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
  if (kind === 'item') {
    // The item form shows the host's interfaces by address and offers
    // the host's items and the rule's prototypes as masters.
    const [[full], protos, items, valuemaps] = await Promise.all([
      call('host.get', { output: ['hostid'], hostids: [rule.hostid], selectInterfaces: ['interfaceid', 'type', 'main', 'ip', 'dns', 'useip', 'port'] }),
      call('itemprototype.get', { discoveryids: [ruleid], output: ['itemid', 'name', 'key_'] }),
      call('item.get', { hostids: [rule.hostid], output: ['itemid', 'name', 'key_'] }),
      call('valuemap.get', { output: ['valuemapid', 'name'], hostids: [rule.hostid] }).catch(() => null)]);
    if (full) host.interfaces = full.interfaces;
    lists.masters = [...items, ...protos];
    lists.valuemaps = valuemaps;
  }
  if (kind === 'graph') {
    const [protos, items] = await Promise.all([call('itemprototype.get', { discoveryids: [ruleid], output: ['itemid', 'name', 'key_', 'units'] }),
      call('item.get', { hostids: [rule.hostid], output: ['itemid', 'name', 'key_', 'units'], filter: { value_type: [0, 3] } })]);
    lists.items = [...protos.map((x) => ({ ...x, prototype: true })), ...items];
  }
  if (kind === 'host') {
    [lists.groups, lists.templates] = await Promise.all([call('hostgroup.get', { output: ['groupid', 'name'], sortfield: 'name' }),
      call('template.get', { output: ['templateid', 'name'], sortfield: 'name' })]);
  }
  const spec = { item: itemSpec, trigger: triggerSpec, graph: graphSpec, host: hostSpec }[kind](rule, kind === 'item' ? host : lists, lists);
  const where = h('p', { class: 'proto-where' }, 'Discovery rule ', h('strong', { id: 'proto-rule' }, rule.name), ' of ',
    h('a', { href: `/config/discovery?hostid=${rule.hostid}` }, host.name), ': ',
    KINDS.map(([k, l]) => [h('a', { href: `/config/prototypes?ruleid=${ruleid}&kind=${k}`, class: k === kind ? 'active proto-kind' : 'proto-kind', dataset: { kind: k } }, l), ' ']));
  await crudPage(main, {
    ...spec, section: 'config', path: '/config/discovery', params: { discoveryids: [ruleid] }, editable: true, toolbar: [where],
    search: spec.search || { field: 'name', label: 'Search name' },
  });
}
