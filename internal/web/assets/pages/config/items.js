// Configuration: the items of one host or template. The list (item.get)
// and 6.0's item form (itemform.js: the fields of the chosen type, tags,
// preprocessing with its Test dialog, preproc.js) to create, edit, clone
// or delete an item: one item.create or item.update with the API's own
// members, so a refused item saves nothing; the API's error is shown
// under the form and beside the field it names.
import { call } from '../../api.js';
import { h, clear } from '../../dom.js';
import { configNav, hostPicker, cloneAndDelete, readOnly } from '../../form.js';
import { showErrorAt } from '../../crud.js';
import { navigate } from '../../app.js';
import { ITEM_TYPES, VALUE_TYPES, itemForm, newItem, cloneItem } from './itemform.js';

export { ITEM_TYPES, VALUE_TYPES };

const name = (list, v) => (list.find((x) => String(x[0]) === String(v)) || [v, String(v)])[1];

// hostWithInterfaces reads a host with its interfaces' addresses, or
// the template of that id (no interfaces).
async function hostWithInterfaces(hostid) {
  const [host] = await call('host.get', { output: ['hostid', 'name'], hostids: [hostid], selectInterfaces: ['interfaceid', 'type', 'main', 'ip', 'dns', 'useip', 'port'] });
  if (host) return host;
  const [t] = await call('template.get', { output: ['templateid', 'name'], templateids: [hostid] });
  if (!t) throw new Error('No such host or template: it may have been deleted.');
  return { hostid: t.templateid, name: t.name, interfaces: [], template: true };
}

export async function render(main, q) {
  const hostid = q.get('hostid') || '';
  // The form waits for the page's data (the host, its value maps) and
  // the list: a dependent item's masters are its items.
  let markLoaded;
  const loaded = new Promise((resolve) => { markLoaded = resolve; });
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
  const host = await hostWithInterfaces(hostid);
  // Items of a host or template the user may only read: no create, and
  // their forms read-only (the API would refuse the change).
  const [wh, wt] = await Promise.all([call('host.get', { hostids: [hostid], editable: true, countOutput: true }),
    call('template.get', { templateids: [hostid], editable: true, countOutput: true }).catch(() => 0)]);
  const canWrite = Number(wh) + Number(wt) > 0;
  createBtn.hidden = !canWrite;
  const valuemaps = await call('valuemap.get', { output: ['valuemapid', 'name'], hostids: [hostid] }).catch(() => null);
  let items = [];
  // close hides the form and drops it, so that nothing of an item
  // closed (a typed secret) stays in the page.
  const close = () => {
    formBox.hidden = true;
    clear(formBox);
  };

  async function load() {
    items = await call('item.get', { output: ['itemid', 'name', 'key_', 'type', 'value_type', 'delay', 'history', 'trends', 'units', 'status', 'valuemapid', 'interfaceid', 'master_itemid'],
      hostids: [hostid], sortfield: 'name', selectPreprocessing: 'count' });
    count.textContent = items.length === 1 ? '1 item' : `${items.length} items`;
    clear(table);
    table.append(h('tr', {}, ['Name', 'Key', 'Interval', 'History', 'Trends', 'Type', 'Information', 'Status'].map((x) => h('th', {}, x))));
    for (const it of items) {
      table.append(h('tr', { class: 'config-item-row', dataset: { itemid: it.itemid } },
        h('td', {}, h('a', { href: '#', class: 'item-name', onclick: (e) => { e.preventDefault(); edit(it); } }, it.name)),
        h('td', {}, h('code', { class: 'item-key' }, it.key_)),
        h('td', { class: 'item-delay' }, ['2', '17', '18'].includes(it.type) ? '' : it.delay),
        h('td', {}, it.history),
        h('td', {}, ['0', '3'].includes(it.value_type) ? it.trends : ''),
        h('td', { class: 'item-type' }, name(ITEM_TYPES, it.type)),
        h('td', {}, name(VALUE_TYPES, it.value_type)),
        h('td', {}, it.status === '1' ? h('span', { class: 'ack-no' }, 'Disabled') : h('span', { class: 'ack-yes' }, 'Enabled'))));
    }
  }

  // edit opens an item's form (read in full: its type's fields, tags
  // and preprocessing); with asClone, o is a new item's values.
  async function edit(it, asClone) {
    await loaded;
    let o = it;
    if (it && !asClone) {
      [o] = await call('item.get', { output: 'extend', itemids: [it.itemid], selectPreprocessing: 'extend', selectTags: 'extend' });
      if (!o) {
        await load();
        return;
      }
    }
    o = o || newItem();
    clear(formBox);
    formBox.hidden = false;
    const isNew = !it || !!asClone;
    const ro = !canWrite;
    const f = itemForm('item', o, { host, valuemaps, masters: items.filter((m) => m.itemid !== o.itemid), readOnly: ro });
    const err = h('p', { class: 'error', id: 'item-error', role: 'alert', hidden: true });
    const save = async (ev) => {
      ev.preventDefault();
      err.hidden = true;
      const p = f.read();
      try {
        if (isNew) await call('item.create', { hostid, ...p });
        else await call('item.update', { itemid: o.itemid, ...p });
        close();
        await load();
      } catch (e) {
        showErrorAt(form, err, e);
      }
    };
    const form = h('form', { id: 'item-edit', onsubmit: save, novalidate: true },
      h('h3', {}, asClone ? `New item on ${host.name} (a clone)` : isNew ? `New item on ${host.name}` : `Item ${o.name}${ro ? ' (read-only)' : ''}`),
      f.body,
      err,
      h('div', { class: 'form-buttons' },
        ro ? null : h('button', { type: 'submit', id: 'item-save' }, isNew ? 'Add' : 'Update'),
        isNew || ro ? null : cloneAndDelete('item', err, () => edit(cloneItem({ ...o, ...f.read() }), true), async () => {
          await call('item.delete', [o.itemid]);
          close();
          await load();
        }),
        h('button', { type: 'button', id: 'item-cancel', onclick: close }, 'Cancel')));
    formBox.append(form);
    if (ro) readOnly(form);
    formBox.scrollIntoView({ block: 'nearest' });
  }
  await load();
  markLoaded();
}
