// Configuration: the value maps of one host (valuemap.get with
// selectMappings) and a form to create, edit or delete one
// (valuemap.create/update/delete). A server without valuemap.get shows
// that it is not available.
import { call, APIError } from '../../api.js';
import { h, clear } from '../../dom.js';
import { field, rowsEditor, showError, configNav, hostPicker } from '../../form.js';
import { navigate } from '../../app.js';
import { showErrorAt } from '../../crud.js';

export const MAPPING_TYPES = [[0, 'equals'], [1, 'is greater than or equals'], [2, 'is less than or equals'], [3, 'in range'], [4, 'matches regexp'], [5, 'default']];

export async function render(main, q) {
  const hostid = q.get('hostid') || '';
  const picker = await hostPicker(call, hostid, (id) => navigate(`/config/valuemaps?hostid=${id}`));
  const formBox = h('section', { class: 'card config-form', id: 'valuemap-form', hidden: true });
  const table = h('table', { class: 'plain', id: 'config-valuemaps' });
  const createBtn = h('button', { type: 'button', id: 'valuemap-create', disabled: !hostid, onclick: () => edit(null) }, 'Create value map');
  main.append(configNav('valuemaps'), h('div', { class: 'toolbar' }, h('h1', {}, 'Value maps'), picker, createBtn), formBox, h('div', { class: 'scroll' }, table));
  if (!hostid) {
    table.append(h('tr', {}, h('td', { class: 'muted' }, 'Choose a host.')));
    return;
  }

  async function load() {
    let maps;
    try {
      maps = await call('valuemap.get', { output: 'extend', selectMappings: 'extend', hostids: [hostid], sortfield: 'name' });
    } catch (e) {
      if (e instanceof APIError && e.code === -32601) {
        clear(table);
        table.append(h('tr', {}, h('td', { class: 'muted not-available' }, `Not available: this server has no valuemap.get (${e.data}).`)));
        createBtn.disabled = true;
        return;
      }
      throw e;
    }
    clear(table);
    table.append(h('tr', {}, h('th', {}, 'Name'), h('th', {}, 'Mappings'), h('th', {})));
    for (const m of maps) {
      table.append(h('tr', { class: 'config-valuemap-row', dataset: { valuemapid: m.valuemapid } },
        h('td', {}, h('a', { href: '#', class: 'valuemap-name', onclick: (e) => { e.preventDefault(); edit(m); } }, m.name)),
        h('td', { class: 'muted' }, (m.mappings || []).map((x) => (x.type === '5' ? `default ⇒ ${x.newvalue}` : `${x.value} ⇒ ${x.newvalue}`)).join(', ')),
        h('td', {}, h('button', { type: 'button', class: 'valuemap-delete', onclick: async () => {
          try {
            await call('valuemap.delete', [m.valuemapid]);
            await load();
          } catch (e) {
            showError(formBox, e);
          }
        } }, 'Delete'))));
    }
  }

  function edit(m) {
    clear(formBox);
    formBox.hidden = false;
    const isNew = !m;
    m = m || { name: '', mappings: [{ type: '0', value: '', newvalue: '' }] };
    const name = h('input', { type: 'text', id: 'valuemap-name', dataset: { key: 'name' }, value: m.name });
    const rows = rowsEditor('valuemap-mappings', [
      { key: 'type', label: 'Type', type: 'select', options: MAPPING_TYPES, def: 0 },
      { key: 'value', label: 'Value' },
      { key: 'newvalue', label: 'Mapped to' },
    ], m.mappings || []);
    const err = h('p', { class: 'error', id: 'valuemap-error', role: 'alert', hidden: true });
    const save = async (ev) => {
      ev.preventDefault();
      const mappings = rows.values().map((x) => ({ type: Number(x.type), value: x.value, newvalue: x.newvalue }));
      try {
        if (isNew) await call('valuemap.create', { hostid, name: name.value, mappings });
        else await call('valuemap.update', { valuemapid: m.valuemapid, name: name.value, mappings });
        formBox.hidden = true;
        await load();
      } catch (e) {
        showErrorAt(formBox.querySelector('#valuemap-edit'), err, e);
      }
    };
    formBox.append(h('form', { id: 'valuemap-edit', onsubmit: save },
      h('h3', {}, isNew ? 'New value map' : `Value map ${m.name}`),
      field('Name', name), h('h4', {}, 'Mappings'), rows.el, err,
      h('div', { class: 'form-buttons' },
        h('button', { type: 'submit', id: 'valuemap-save' }, isNew ? 'Create' : 'Update'),
        h('button', { type: 'button', onclick: () => { formBox.hidden = true; } }, 'Cancel'))));
  }
  await load();
}
