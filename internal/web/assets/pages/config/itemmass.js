// The items list's Mass update and Copy (items.js opens them for the
// checked items), as Zabbix 6.0's items list has them.
//
// Mass update: a field applies only when its check box is ticked (type,
// host interface, update interval, history, trends, status, units,
// value map, description, tags added, replaced or removed,
// preprocessing replaced). Like 6.0's popup.massupdate.item, the tags
// are worked out per item from its own (item.get) and everything is
// sent as one item.update of all checked items, which the API makes at
// once or not at all; its error is shown beside the field it names.
//
// Copy: the checked items' definitions made on the chosen hosts,
// templates or the hosts of the chosen host groups with one item.create
// (6.0's copy does the same and is refused whole when a key exists on a
// target: the API's error is shown).
import { call } from '../../api.js';
import { h } from '../../dom.js';
import { fld, chosen, rowTable, showErrorAt } from '../../crud.js';
import { ITEM_TYPES } from './itemform.js';
import { preprocEditor } from './preproc.js';

const N = 'imu';
// 6.0's ZBX_ACTION_* values for tags.
const ADD = '0', REPLACE = '1', REMOVE = '2';
const IFACE_NAMES = { 1: 'Agent', 2: 'SNMP', 3: 'IPMI', 4: 'JMX' };

// optional is one field of the dialog: a check box (id imu-vis-<key>)
// that shows the control and makes it apply.
function optional(key, label, ...els) {
  const box = h('div', { class: 'mu-control', hidden: true }, els);
  const cb = h('input', { type: 'checkbox', id: `${N}-vis-${key}`, class: 'mu-visible', dataset: { vis: key }, onchange: () => { box.hidden = !cb.checked; } });
  return { el: h('div', { class: 'mu-field' }, h('label', { class: 'mu-label' }, cb, ' ', label), box), on: () => cb.checked };
}

const sel = (id, key, opts, v) => h('select', { id, dataset: { key }, 'aria-label': key }, opts.map(([x, l]) => h('option', { value: String(x), selected: String(x) === String(v) }, l)));
const text = (id, key, v = '') => h('input', { type: 'text', id, dataset: { key }, value: v, 'aria-label': key });

// tagRows: tag and value.
function tagRows() {
  return rowTable(`${N}-tags`, ['Name', 'Value'], [{}], () => {
    const tag = h('input', { type: 'text', class: 'tag-tag', 'aria-label': 'Tag' });
    const value = h('input', { type: 'text', class: 'tag-value', 'aria-label': 'Value' });
    return { cells: [tag, value], read: () => (tag.value.trim() === '' && value.value === '' ? null : { tag: tag.value.trim(), value: value.value }) };
  }, 'tags');
}

// massUpdateForm is the dialog for the items itemids of host (with its
// interfaces) and valuemaps (the host's); done() after a save, cancel()
// to close.
export function massUpdateForm(itemids, host, valuemaps, done, cancel) {
  const f = {
    type: optional('type', 'Type', sel(`${N}-type`, 'type', ITEM_TYPES, 0)),
    interfaceid: optional('interfaceid', 'Host interface', sel(`${N}-interface`, 'interfaceid',
      [['0', 'None'], ...(host.interfaces || []).map((x) => [x.interfaceid, `${IFACE_NAMES[x.type] || x.type}: ${x.useip === '0' ? x.dns : x.ip}:${x.port}`])], '0')),
    delay: optional('delay', 'Update interval', text(`${N}-delay`, 'delay', '1m')),
    history: optional('history', 'History storage period', text(`${N}-history`, 'history', '90d')),
    trends: optional('trends', 'Trend storage period', text(`${N}-trends`, 'trends', '365d')),
    status: optional('status', 'Status', sel(`${N}-status`, 'status', [[0, 'Enabled'], [1, 'Disabled']], 0)),
    units: optional('units', 'Units', text(`${N}-units`, 'units')),
    valuemapid: optional('valuemapid', 'Value mapping', sel(`${N}-valuemap`, 'valuemapid', [['0', 'None'], ...(valuemaps || []).map((m) => [m.valuemapid, m.name])], '0')),
    description: optional('description', 'Description', h('textarea', { id: `${N}-description`, dataset: { key: 'description' }, rows: 3, 'aria-label': 'description' })),
  };
  const tagAction = sel(`${N}-tags-action`, 'tags-action', [[ADD, 'Add'], [REPLACE, 'Replace'], [REMOVE, 'Remove']], ADD);
  const tags = tagRows();
  const tagsF = optional('tags', 'Tags', tagAction, tags.el);
  const pp = preprocEditor(`${N}-preprocessing`, [], {});
  const ppF = optional('preprocessing', 'Preprocessing steps (replace)', h('div', { dataset: { key: 'preprocessing' } }, pp.el));
  const err = h('p', { class: 'error', id: `${N}-error`, role: 'alert', hidden: true });
  const form = h('form', { id: 'item-massupdate', novalidate: true, onsubmit: async (ev) => {
    ev.preventDefault();
    err.hidden = true;
    try {
      const common = {};
      for (const [k, o] of Object.entries(f)) {
        if (!o.on()) continue;
        const el = o.el.querySelector(`[data-key="${k}"]`);
        common[k] = ['type', 'status'].includes(k) ? Number(el.value) : el.value;
      }
      if (ppF.on()) common.preprocessing = pp.values();
      let current = new Map();
      if (tagsF.on() && tagAction.value !== REPLACE) {
        const rows = await call('item.get', { itemids, output: ['itemid'], selectTags: ['tag', 'value'] });
        current = new Map(rows.map((r) => [r.itemid, r.tags || []]));
      }
      const given = tags.values();
      const same = (a, b) => a.tag === b.tag && a.value === b.value;
      const upd = itemids.map((itemid) => {
        const o = { itemid, ...common };
        if (tagsF.on()) {
          const mine = current.get(itemid) || [];
          if (tagAction.value === REPLACE) o.tags = given;
          else if (tagAction.value === ADD) o.tags = [...mine, ...given.filter((g) => !mine.some((m) => same(m, g)))];
          else o.tags = mine.filter((m) => !given.some((g) => same(m, g)));
        }
        return o;
      });
      if (Object.keys(upd[0]).length > 1) await call('item.update', upd);
      await done();
    } catch (e) {
      showErrorAt(form, err, e);
    }
  } },
  h('h3', {}, `Mass update of ${itemids.length} item${itemids.length === 1 ? '' : 's'}`),
  h('div', { class: 'mu-fields' }, ...Object.values(f).map((o) => o.el), tagsF.el, ppF.el),
  err,
  h('div', { class: 'form-buttons' }, h('button', { type: 'submit', id: `${N}-save` }, 'Update'), h('button', { type: 'button', id: `${N}-cancel`, onclick: cancel }, 'Cancel')));
  return form;
}

// COPY_KEYS are the members of an item copied to another host; the
// others (ids, state, the host's interface) are the target's.
const COPY_KEYS = ['name', 'key_', 'type', 'value_type', 'delay', 'history', 'trends', 'units', 'status', 'description', 'trapper_hosts', 'logtimefmt',
  'snmp_oid', 'ipmi_sensor', 'jmx_endpoint', 'params', 'authtype', 'username', 'publickey', 'privatekey', 'url', 'query_fields', 'request_method',
  'timeout', 'post_type', 'posts', 'headers', 'status_codes', 'follow_redirects', 'retrieve_mode', 'output_format', 'http_proxy', 'verify_peer',
  'verify_host', 'ssl_cert_file', 'ssl_key_file', 'allow_traps', 'parameters', 'inventory_link'];
const NUMERIC = new Set(['0', '3']);
// The interface type an item type needs (0: any; absent: none), as
// 6.0's interface_types.
const IFACE_OF = { 0: 1, 20: 2, 17: 2, 12: 3, 16: 4, 3: 0, 10: 0, 13: 0, 14: 0 };
// A member only some types or types of information take.
const ONLY = {
  trends: (it) => NUMERIC.has(it.value_type), units: (it) => NUMERIC.has(it.value_type), logtimefmt: (it) => it.value_type === '2',
  inventory_link: (it) => it.value_type !== '2', delay: (it) => !['2', '17', '18'].includes(it.type),
  trapper_hosts: (it) => it.type === '2', snmp_oid: (it) => it.type === '20', ipmi_sensor: (it) => it.type === '12', jmx_endpoint: (it) => it.type === '16',
  params: (it) => ['11', '13', '14', '15', '21'].includes(it.type), authtype: (it) => ['13', '19'].includes(it.type),
  username: (it) => ['3', '11', '13', '14', '16', '19'].includes(it.type), publickey: (it) => it.type === '13', privatekey: (it) => it.type === '13',
  timeout: (it) => ['19', '21'].includes(it.type), parameters: (it) => it.type === '21', allow_traps: (it) => it.type === '19',
};
for (const k of ['url', 'query_fields', 'request_method', 'post_type', 'posts', 'headers', 'status_codes', 'follow_redirects', 'retrieve_mode',
  'output_format', 'http_proxy', 'verify_peer', 'verify_host', 'ssl_cert_file', 'ssl_key_file']) ONLY[k] = (it) => it.type === '19';

// copyItems makes the items itemids on each target (hosts with their
// interfaces) with one item.create; an item that needs an interface the
// target lacks is refused before anything is made.
export async function copyItems(itemids, targets) {
  const items = await call('item.get', { itemids, output: 'extend', selectPreprocessing: ['type', 'params', 'error_handler', 'error_handler_params'], selectTags: ['tag', 'value'] });
  const out = [];
  for (const t of targets) {
    for (const it of items) {
      if (it.type === '18') throw new Error(`Cannot copy the dependent item "${it.name}": copy its master item with it from its own form.`);
      const o = { hostid: t.hostid, preprocessing: it.preprocessing, tags: it.tags };
      for (const k of COPY_KEYS) if (k in it && (!ONLY[k] || ONLY[k](it))) o[k] = it[k];
      const need = IFACE_OF[it.type];
      if (need !== undefined && !t.template) {
        const f = (t.interfaces || []).find((x) => x.main === '1' && (need === 0 || String(x.type) === String(need)));
        if (!f) throw new Error(`Cannot find host interface on "${t.name}" for item key "${it.key_}".`);
        o.interfaceid = f.interfaceid;
      }
      out.push(o);
    }
  }
  if (out.length) await call('item.create', out);
  return out.length;
}

// copyForm is 6.0's "Copy" dialog: the target type (host groups, hosts,
// templates) and the targets.
export async function copyForm(itemids, done, cancel) {
  const [groups, hosts, templates] = await Promise.all([
    call('hostgroup.get', { output: ['groupid', 'name'], editable: true, sortfield: 'name' }),
    call('host.get', { output: ['hostid', 'name'], editable: true, sortfield: 'name' }),
    call('template.get', { output: ['templateid', 'name'], editable: true, sortfield: 'name' }).catch(() => []),
  ]);
  const lists = { 0: groups.map((g) => [g.groupid, g.name]), 1: hosts.map((x) => [x.hostid, x.name]), 2: templates.map((x) => [x.templateid, x.name]) };
  const kind = sel(`${N}-copy-type`, 'copy_type', [[0, 'Host groups'], [1, 'Hosts'], [2, 'Templates']], 1);
  const targets = h('select', { id: `${N}-copy-targets`, dataset: { key: 'copy_targetids' }, multiple: true, size: 8, 'aria-label': 'Target' });
  const fill = () => targets.replaceChildren(...lists[kind.value].map(([v, l]) => h('option', { value: v }, l)));
  kind.addEventListener('change', fill);
  fill();
  const err = h('p', { class: 'error', id: `${N}-copy-error`, role: 'alert', hidden: true });
  const form = h('form', { id: 'item-copy', onsubmit: async (ev) => {
    ev.preventDefault();
    err.hidden = true;
    try {
      const ids = chosen(targets);
      if (!ids.length) throw new Error('No target selected.');
      let to;
      if (kind.value === '2') to = (await call('template.get', { templateids: ids, output: ['templateid', 'name'] })).map((x) => ({ hostid: x.templateid, name: x.name, template: true }));
      else {
        const p = { output: ['hostid', 'name'], selectInterfaces: ['interfaceid', 'type', 'main'], editable: true };
        to = await call('host.get', kind.value === '0' ? { ...p, groupids: ids } : { ...p, hostids: ids });
      }
      const n = await copyItems(itemids, to);
      await done(n);
    } catch (e) {
      showErrorAt(form, err, e);
    }
  } },
  h('h3', {}, `Copy ${itemids.length} item${itemids.length === 1 ? '' : 's'}`),
  h('div', { class: 'form-grid' }, fld('Target type', kind), fld('Target', targets)),
  err,
  h('div', { class: 'form-buttons' }, h('button', { type: 'submit', id: `${N}-copy-save` }, 'Copy'), h('button', { type: 'button', onclick: cancel }, 'Cancel')));
  return form;
}
