// Configuration: the items of one host. The list (item.get) and a form
// to create or edit an item: name, key, type, type of information,
// update interval, units, value map, status (item.create, item.update).
// Items of types that check through an interface get the host's
// interface of the matching kind.
import { call } from '../../api.js';
import { h, clear } from '../../dom.js';
import { field, select, showError, configNav, hostPicker, hostOrTemplate, cloneAndDelete, readOnly } from '../../form.js';
import { navigate } from '../../app.js';

export const ITEM_TYPES = [[0, 'Zabbix agent'], [7, 'Zabbix agent (active)'], [2, 'Zabbix trapper'], [3, 'Simple check'], [5, 'Zabbix internal'],
  [10, 'External check'], [15, 'Calculated'], [18, 'Dependent item'], [19, 'HTTP agent'], [20, 'SNMP agent'], [17, 'SNMP trap']];
export const VALUE_TYPES = [[0, 'Numeric (float)'], [3, 'Numeric (unsigned)'], [1, 'Character'], [2, 'Log'], [4, 'Text']];
// IFACE_OF is the interface type an item type checks through.
const IFACE_OF = { 0: 1, 20: 2, 17: 2, 12: 3, 16: 4 };

const name = (list, v) => (list.find((x) => String(x[0]) === String(v)) || [v, String(v)])[1];

export async function render(main, q) {
  const hostid = q.get('hostid') || '';
  const picker = await hostPicker(call, hostid, (id) => navigate(`/config/items?hostid=${id}`));
  const count = h('span', { class: 'muted', id: 'config-item-count' });
  const formBox = h('section', { class: 'card config-form', id: 'item-form', hidden: true });
  const table = h('table', { class: 'plain', id: 'config-items' });
  const createBtn = h('button', { type: 'button', id: 'item-create', disabled: !hostid, onclick: () => edit(null) }, 'Create item');
  main.append(configNav('items'), h('div', { class: 'toolbar' }, h('h1', {}, 'Items'), picker, createBtn, count), formBox, h('div', { class: 'scroll' }, table));
  if (!hostid) {
    table.append(h('tr', {}, h('td', { class: 'muted' }, 'Choose a host.')));
    return;
  }
  const host = await hostOrTemplate(call, hostid);
  // Items of a host or template the user may only read: no create, and
  // their forms read-only (the API would refuse the change).
  const [wh, wt] = await Promise.all([call('host.get', { hostids: [hostid], editable: true, countOutput: true }),
    call('template.get', { templateids: [hostid], editable: true, countOutput: true }).catch(() => 0)]);
  const canWrite = Number(wh) + Number(wt) > 0;
  createBtn.hidden = !canWrite;
  const valuemaps = await call('valuemap.get', { output: ['valuemapid', 'name'], hostids: [hostid] }).catch(() => null);

  async function load() {
    const items = await call('item.get', { output: ['itemid', 'name', 'key_', 'type', 'value_type', 'delay', 'units', 'status', 'valuemapid', 'interfaceid'], hostids: [hostid], sortfield: 'name' });
    count.textContent = items.length === 1 ? '1 item' : `${items.length} items`;
    clear(table);
    table.append(h('tr', {}, ['Name', 'Key', 'Type', 'Information', 'Interval', 'Status'].map((x) => h('th', {}, x))));
    for (const it of items) {
      table.append(h('tr', { class: 'config-item-row', dataset: { itemid: it.itemid } },
        h('td', {}, h('a', { href: '#', class: 'item-name', onclick: (e) => { e.preventDefault(); edit(it); } }, it.name)),
        h('td', {}, h('code', { class: 'item-key' }, it.key_)),
        h('td', {}, name(ITEM_TYPES, it.type)),
        h('td', {}, name(VALUE_TYPES, it.value_type)),
        h('td', { class: 'item-delay' }, it.delay),
        h('td', {}, it.status === '1' ? h('span', { class: 'ack-no' }, 'Disabled') : h('span', { class: 'ack-yes' }, 'Enabled'))));
    }
  }

  // edit opens an item's form; with asClone, it is a new item's values.
  function edit(it, asClone) {
    clear(formBox);
    formBox.hidden = false;
    const isNew = !it || !!asClone;
    const ro = !canWrite;
    it = it || { name: '', key_: '', type: '2', value_type: '3', delay: '0', units: '', status: '0', valuemapid: '0' };
    const nm = h('input', { type: 'text', id: 'item-name', value: it.name });
    const key = h('input', { type: 'text', id: 'item-key', value: it.key_ });
    const type = select('item-type', ITEM_TYPES, it.type);
    const vt = select('item-value-type', VALUE_TYPES, it.value_type);
    const delay = h('input', { type: 'text', id: 'item-delay', value: it.delay });
    const units = h('input', { type: 'text', id: 'item-units', value: it.units });
    const vm = valuemaps
      ? select('item-valuemap', [['0', 'none'], ...valuemaps.map((m) => [m.valuemapid, m.name])], it.valuemapid || '0')
      : h('span', { class: 'muted' }, 'not available (no valuemap.get)');
    const status = select('item-status', [[0, 'Enabled'], [1, 'Disabled']], it.status);
    const err = h('p', { class: 'error', id: 'item-error', role: 'alert', hidden: true });
    const save = async (ev) => {
      ev.preventDefault();
      const p = { name: nm.value, key_: key.value, type: Number(type.value), value_type: Number(vt.value), delay: delay.value, units: units.value, status: Number(status.value) };
      if (valuemaps) p.valuemapid = vm.value;
      const want = IFACE_OF[p.type];
      if (want) {
        const f = (host.interfaces || []).find((x) => Number(x.type) === want && x.main === '1') || (host.interfaces || []).find((x) => Number(x.type) === want);
        if (f) p.interfaceid = f.interfaceid;
      }
      try {
        if (isNew) await call('item.create', { hostid, ...p });
        else await call('item.update', { itemid: it.itemid, ...p });
        formBox.hidden = true;
        await load();
      } catch (e) {
        showError(err, e);
      }
    };
    formBox.append(h('form', { id: 'item-edit', onsubmit: save },
      h('h3', {}, asClone ? `New item on ${host.name} (a clone)` : isNew ? `New item on ${host.name}` : `Item ${it.name}${ro ? ' (read-only)' : ''}`),
      h('div', { class: 'form-grid' },
        field('Name', nm), field('Key', key), field('Type', type), field('Type of information', vt),
        field('Update interval', delay), field('Units', units), field('Value map', vm), field('Status', status)),
      err,
      h('div', { class: 'form-buttons' },
        ro ? null : h('button', { type: 'submit', id: 'item-save' }, isNew ? 'Create' : 'Update'),
        isNew || ro ? null : cloneAndDelete('item', err, () => edit({ name: nm.value, key_: key.value, type: type.value, value_type: vt.value, delay: delay.value,
          units: units.value, status: status.value, valuemapid: valuemaps ? vm.value : '0' }, true), async () => {
          await call('item.delete', [it.itemid]);
          formBox.hidden = true;
          await load();
        }),
        h('button', { type: 'button', onclick: () => { formBox.hidden = true; } }, 'Cancel'))));
    if (ro) readOnly(formBox.lastChild);
  }
  await load();
}
