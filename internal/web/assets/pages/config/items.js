// Configuration: the items of one host or template. The list (item.get)
// and 6.0's item form (itemform.js: the fields of the chosen type, tags,
// preprocessing with its Test dialog, preproc.js) to create, edit, clone
// or delete an item: one item.create or item.update with the API's own
// members, so a refused item saves nothing; the API's error is shown
// under the form and beside the field it names.
//
// The filter is sent to item.get as 6.0's items.php sends it: name and
// key as "search", type, type of information, update interval,
// history, trends, status, state and discovered (flags) as "filter",
// with_triggers, inherited, tags with their evaltype. Mass actions on the checked items, as 6.0's: Enable
// and Disable (one item.update of them all), Execute now (task.create,
// one type 6 task per item), Clear history (history.clear), Copy and
// Mass update (itemmass.js), Delete (item.delete, asked in place). Only
// a user who may change the host gets check boxes and mass actions.
import { call } from '../../api.js';
import { h, clear } from '../../dom.js';
import { configNav, hostPicker, cloneAndDelete, readOnly } from '../../form.js';
import { showErrorAt } from '../../crud.js';
import { navigate } from '../../app.js';
import { ITEM_TYPES, VALUE_TYPES, itemForm, newItem, cloneItem } from './itemform.js';
import { massUpdateForm, copyForm } from './itemmass.js';

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
  const flt = filterForm(() => load().catch((e) => showErrorAt(massBar, massErr, e)));
  const massBar = h('div', { class: 'toolbar mass', id: 'item-mass', hidden: true });
  const massErr = h('p', { class: 'error', id: 'item-mass-error', role: 'alert', hidden: true });
  const massNote = h('div', { class: 'muted', id: 'item-mass-note', role: 'status' });
  main.append(configNav('items'), h('div', { class: 'toolbar' }, h('h1', {}, 'Items'), picker, createBtn, count), flt.el, formBox, massErr, massNote, massBar,
    h('div', { class: 'scroll' }, table));
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
  const checked = new Set();
  // close hides the form and drops it, so that nothing of an item
  // closed (a typed secret) stays in the page.
  const close = () => {
    formBox.hidden = true;
    clear(formBox);
  };

  async function load() {
    items = await call('item.get', { output: ['itemid', 'name', 'key_', 'type', 'value_type', 'delay', 'history', 'trends', 'units', 'status', 'state', 'flags', 'valuemapid', 'interfaceid', 'master_itemid'],
      hostids: [hostid], sortfield: 'name', selectPreprocessing: 'count', selectTags: ['tag', 'value'], ...flt.params() });
    count.textContent = items.length === 1 ? '1 item' : `${items.length} items`;
    const shown = new Set(items.map((it) => it.itemid));
    for (const id of [...checked]) if (!shown.has(id)) checked.delete(id);
    clear(table);
    const all = h('input', { type: 'checkbox', id: 'item-check-all', 'aria-label': 'Select all', checked: items.length > 0 && items.every((it) => checked.has(it.itemid)), onchange: () => {
      for (const it of items) all.checked ? checked.add(it.itemid) : checked.delete(it.itemid);
      for (const c of table.querySelectorAll('.item-check')) c.checked = all.checked;
      drawMass();
    } });
    table.append(h('tr', {}, canWrite ? h('th', {}, items.length ? all : null) : null,
      ['Name', 'Key', 'Interval', 'History', 'Trends', 'Type', 'Information', 'Status', 'Tags', 'Info'].map((x) => h('th', {}, x))));
    for (const it of items) {
      table.append(h('tr', { class: 'config-item-row', dataset: { itemid: it.itemid } },
        canWrite ? h('td', {}, h('input', { type: 'checkbox', class: 'item-check', 'aria-label': `Select ${it.name}`, checked: checked.has(it.itemid), onchange: (e) => {
          e.target.checked ? checked.add(it.itemid) : checked.delete(it.itemid);
          drawMass();
        } })) : null,
        h('td', {}, h('a', { href: '#', class: 'item-name', onclick: (e) => { e.preventDefault(); edit(it); } }, it.name)),
        h('td', {}, h('code', { class: 'item-key' }, it.key_)),
        h('td', { class: 'item-delay' }, ['2', '17', '18'].includes(it.type) ? '' : it.delay),
        h('td', { class: 'item-history' }, it.history),
        h('td', {}, ['0', '3'].includes(it.value_type) ? it.trends : ''),
        h('td', { class: 'item-type' }, name(ITEM_TYPES, it.type)),
        h('td', {}, name(VALUE_TYPES, it.value_type)),
        h('td', {}, it.status === '1' ? h('span', { class: 'ack-no' }, 'Disabled') : h('span', { class: 'ack-yes' }, 'Enabled')),
        h('td', { class: 'item-tags' }, (it.tags || []).map((t) => h('span', { class: 'tag' }, t.value ? `${t.tag}: ${t.value}` : t.tag))),
        h('td', { class: 'muted' }, [it.flags === '4' ? 'Discovered' : '', it.state === '1' ? 'Not supported' : ''].filter(Boolean).join(', '))));
    }
    massBar.hidden = !canWrite || !items.length;
    drawMass();
  }

  // closeBox hides the form box and drops what it holds.
  const closeBox = () => { formBox.hidden = true; clear(formBox); };
  const showBox = (el) => {
    clear(formBox);
    formBox.append(el);
    formBox.hidden = false;
    formBox.scrollIntoView({ block: 'nearest' });
  };

  // drawMass draws the mass actions for the checked items; confirming:
  // Delete asks in place.
  function drawMass(confirming) {
    clear(massBar);
    if (!canWrite) return;
    const n = checked.size;
    const plural = (k) => `${k} item${k === 1 ? '' : 's'}`;
    const act = async (f) => {
      massErr.hidden = true;
      massNote.textContent = '';
      try {
        const note = await f([...checked]);
        await load();
        if (note) massNote.textContent = note;
      } catch (e) {
        showErrorAt(massBar, massErr, e);
      }
    };
    const btn = (id, label, f) => h('button', { type: 'button', id: `item-mass-${id}`, disabled: !n, onclick: f }, label);
    const status = (v) => async (sel) => {
      await call('item.update', sel.map((itemid) => ({ itemid, status: v })));
      return `${plural(sel.length)} ${v ? 'disabled' : 'enabled'}.`;
    };
    massBar.append(h('span', { class: 'muted', id: 'item-mass-count' }, `${n} selected`),
      btn('enable', 'Enable', () => act(status(0))),
      btn('disable', 'Disable', () => act(status(1))),
      btn('checknow', 'Execute now', () => act(async (sel) => {
        const r = await call('task.create', sel.map((itemid) => ({ type: 6, request: { itemid } })));
        massNote.dataset.taskids = (r.taskids || []).join(',');
        return `Request sent for ${plural(sel.length)}.`;
      })),
      btn('clearhistory', 'Clear history', () => act(async (sel) => {
        await call('history.clear', sel);
        return `History cleared for ${plural(sel.length)}.`;
      })),
      btn('copy', 'Copy', () => act(async (sel) => {
        showBox(await copyForm(sel, async (k) => {
          closeBox();
          massNote.textContent = `${plural(k)} copied.`;
        }, closeBox));
      })),
      btn('update', 'Mass update', () => act(async (sel) => {
        showBox(massUpdateForm(sel, host, valuemaps, async () => {
          closeBox();
          await load();
          massNote.textContent = `${plural(sel.length)} updated.`;
        }, closeBox));
      })));
    if (confirming) {
      massBar.append(h('span', {}, ` Delete ${plural(n)}? `),
        h('button', { type: 'button', id: 'item-mass-delete-yes', onclick: () => act(async (sel) => {
          await call('item.delete', sel);
          for (const id of sel) checked.delete(id);
          return `${plural(sel.length)} deleted.`;
        }) }, 'Yes, delete'),
        h('button', { type: 'button', onclick: () => drawMass(false) }, 'No'));
    } else {
      massBar.append(btn('delete', 'Delete', () => drawMass(true)));
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

// filterForm is the list's filter, 6.0's items filter: params() are
// item.get's parameters for it.
function filterForm(apply) {
  const opt = (id, label, list) => h('select', { id, 'aria-label': label }, [['', 'all'], ...list].map(([v, l]) => h('option', { value: String(v) }, l)));
  const nameIn = h('input', { type: 'search', id: 'item-filter-name', 'aria-label': 'Name' });
  const keyIn = h('input', { type: 'search', id: 'item-filter-key', 'aria-label': 'Key' });
  // Update interval, history and trends: equal to the text, as 6.0's
  // filter sends them.
  const delay = h('input', { type: 'text', id: 'item-filter-delay', class: 'narrow', 'aria-label': 'Update interval' });
  const history = h('input', { type: 'text', id: 'item-filter-history', class: 'narrow', 'aria-label': 'History' });
  const trends = h('input', { type: 'text', id: 'item-filter-trends', class: 'narrow', 'aria-label': 'Trends' });
  const type = opt('item-filter-type', 'Type', ITEM_TYPES);
  const vt = opt('item-filter-value-type', 'Type of information', VALUE_TYPES);
  const state = opt('item-filter-state', 'State', [[0, 'Normal'], [1, 'Not supported']]);
  const status = opt('item-filter-status', 'Status', [[0, 'Enabled'], [1, 'Disabled']]);
  const triggers = opt('item-filter-triggers', 'Triggers', [[1, 'Yes'], [0, 'No']]);
  const inherited = opt('item-filter-inherited', 'Inherited', [[1, 'Yes'], [0, 'No']]);
  const discovered = opt('item-filter-discovered', 'Discovered', [[1, 'Yes'], [0, 'No']]);
  const evaltype = h('select', { id: 'item-filter-evaltype', 'aria-label': 'Tags evaluation' }, [['0', 'And/Or'], ['2', 'Or']].map(([v, l]) => h('option', { value: v }, l)));
  const tag = h('input', { type: 'text', id: 'item-filter-tag', placeholder: 'tag', 'aria-label': 'Tag' });
  const op = h('select', { id: 'item-filter-tag-operator', 'aria-label': 'Tag operator' },
    [['0', 'Contains'], ['1', 'Equals'], ['2', 'Does not contain'], ['3', 'Does not equal'], ['4', 'Exists'], ['5', 'Does not exist']].map(([v, l]) => h('option', { value: v }, l)));
  const tagValue = h('input', { type: 'text', id: 'item-filter-tag-value', placeholder: 'value', 'aria-label': 'Tag value' });
  const lab = (l, el) => h('label', { class: 'filter-field' }, h('span', { class: 'muted' }, l), ' ', el);
  const reset = () => {
    for (const el of [nameIn, keyIn, delay, history, trends, tag, tagValue]) el.value = '';
    for (const el of [type, vt, state, status, triggers, inherited, discovered]) el.value = '';
    evaltype.value = '0';
    op.value = '0';
    apply();
  };
  const el = h('form', { class: 'card filter', id: 'item-filter', onsubmit: (e) => { e.preventDefault(); apply(); } },
    h('div', { class: 'toolbar' }, lab('Name', nameIn), lab('Key', keyIn), lab('Type', type), lab('Type of information', vt), lab('State', state), lab('Status', status)),
    h('div', { class: 'toolbar' }, lab('Update interval', delay), lab('History', history), lab('Trends', trends), lab('Triggers', triggers), lab('Inherited', inherited), lab('Discovered', discovered),
      lab('Tags', evaltype), tag, op, tagValue,
      h('button', { type: 'submit', id: 'item-filter-apply' }, 'Apply'), h('button', { type: 'button', id: 'item-filter-reset', onclick: reset }, 'Reset')));
  return {
    el,
    params() {
      const p = {};
      const search = {};
      const filter = {};
      if (nameIn.value.trim()) search.name = nameIn.value.trim();
      if (keyIn.value.trim()) search.key_ = keyIn.value.trim();
      if (type.value) filter.type = type.value;
      if (vt.value) filter.value_type = vt.value;
      if (status.value) filter.status = status.value;
      if (delay.value.trim()) filter.delay = delay.value.trim();
      if (history.value.trim()) filter.history = history.value.trim();
      if (trends.value.trim()) filter.trends = trends.value.trim();
      // 6.0: a state asked for means enabled items only.
      if (state.value) Object.assign(filter, { state: state.value, status: '0' });
      if (discovered.value) filter.flags = discovered.value === '1' ? '4' : '0';
      if (Object.keys(search).length) p.search = search;
      if (Object.keys(filter).length) p.filter = filter;
      if (triggers.value) p.with_triggers = triggers.value === '1';
      if (inherited.value) p.inherited = inherited.value === '1';
      if (tag.value.trim()) {
        p.evaltype = Number(evaltype.value);
        p.tags = [{ tag: tag.value.trim(), operator: Number(op.value), value: tagValue.value }];
      }
      return p;
    },
  };
}
