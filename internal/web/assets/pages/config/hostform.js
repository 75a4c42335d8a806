// The host form's sections beyond the name, groups, interfaces and tags
// (hosts.js): linked templates, user macros, inventory, encryption and
// the monitoring proxy, as Zabbix 6.0's host form has them. Each builder
// returns {el, read()}: read() gives the members host.create and
// host.update take under the API's own names (templates,
// templates_clear, macros, inventory_mode, inventory, tls_*,
// proxy_hostid, ipmi_*), so what is saved is what the API stores. The
// value maps tab (valuemapsSection) is the exception: each value map is
// saved on its own by valuemap.create/update/delete with the host's id.
import { h, clear } from '../../dom.js';
import { call } from '../../api.js';
import { input, fld, chosen, rowTable, showErrorAt } from '../../crud.js';
import { rowsEditor } from '../../form.js';
import { MAPPING_TYPES } from './valuemaps.js';

const N = 'host';
const MACRO_TYPES = [[0, 'Text'], [1, 'Secret text'], [2, 'Vault secret']];
export const INVENTORY_MODES = [[-1, 'Disabled'], [0, 'Manual'], [1, 'Automatic']];

// INVENTORY are the API's inventory fields in 6.0's order (the
// catalog's list, lower case); the long ones are edited in a text area.
export const INVENTORY = ['type', 'type_full', 'name', 'alias', 'os', 'os_full', 'os_short', 'serialno_a', 'serialno_b', 'tag',
  'asset_tag', 'macaddress_a', 'macaddress_b', 'hardware', 'hardware_full', 'software', 'software_full',
  'software_app_a', 'software_app_b', 'software_app_c', 'software_app_d', 'software_app_e', 'contact',
  'location', 'location_lat', 'location_lon', 'notes', 'chassis', 'model', 'hw_arch', 'vendor',
  'contract_number', 'installer_name', 'deployment_status', 'url_a', 'url_b', 'url_c', 'host_networks',
  'host_netmask', 'host_router', 'oob_ip', 'oob_netmask', 'oob_router', 'date_hw_purchase',
  'date_hw_install', 'date_hw_expiry', 'date_hw_decomm', 'site_address_a', 'site_address_b',
  'site_address_c', 'site_city', 'site_state', 'site_country', 'site_zip', 'site_rack', 'site_notes',
  'poc_1_name', 'poc_1_email', 'poc_1_phone_a', 'poc_1_phone_b', 'poc_1_cell', 'poc_1_screen',
  'poc_1_notes', 'poc_2_name', 'poc_2_email', 'poc_2_phone_a', 'poc_2_phone_b', 'poc_2_cell',
  'poc_2_screen', 'poc_2_notes'];
const LONG = /_full$|notes$|^host_networks$/;
// IPMI's authentication algorithms and privilege levels (6.0's values).
export const IPMI_AUTHTYPES = [[-1, 'Default'], [0, 'None'], [1, 'MD2'], [2, 'MD5'], [4, 'Straight'], [5, 'OEM'], [6, 'RMCP+']];
export const IPMI_PRIVILEGES = [[1, 'Callback'], [2, 'User'], [3, 'Operator'], [4, 'Admin'], [5, 'OEM']];
export const inventoryLabel = (f) => label(f);
const label = (f) => {
  const s = f.replace(/_/g, ' ').replace(/\b(os|hw|oob|poc|url)\b/g, (x) => x.toUpperCase());
  return s.charAt(0).toUpperCase() + s.slice(1);
};

// templatesSection: the linked templates, each with "Unlink" (its
// entities stay on the host as the host's own) and "Unlink and clear"
// (they go: templates_clear), and a list to link more. A new host sends
// only what it links.
export function templatesSection(ho, templates, isNew) {
  const linked = new Map((ho.parentTemplates || []).map((t) => [t.templateid, t.name]));
  const cleared = new Set();
  const list = h('ul', { id: 'host-linked-templates', class: 'linked-list' });
  const addSel = input.multi(N, 'templates', [], []);
  const draw = () => {
    clear(list);
    for (const [id, name] of linked) {
      list.append(h('li', { class: 'linked-template', dataset: { templateid: id } }, name, ' ',
        h('button', { type: 'button', class: 'template-unlink', onclick: () => { linked.delete(id); draw(); } }, 'Unlink'), ' ',
        isNew ? null : h('button', { type: 'button', class: 'template-unlink-clear', onclick: () => { linked.delete(id); cleared.add(id); draw(); } }, 'Unlink and clear')));
    }
    if (!linked.size) list.append(h('li', { class: 'muted' }, 'No templates linked.'));
    const keep = new Set(chosen(addSel));
    clear(addSel);
    for (const t of templates) {
      if (!linked.has(t.templateid)) addSel.append(h('option', { value: t.templateid, selected: keep.has(t.templateid) }, t.name));
    }
  };
  draw();
  return {
    el: [fld('Linked templates', list), fld('Link new templates', addSel)],
    read: () => {
      const o = { templates: [...linked.keys(), ...chosen(addSel)].map((templateid) => ({ templateid })) };
      if (!isNew && cleared.size) o.templates_clear = [...cleared].map((templateid) => ({ templateid }));
      return o;
    },
  };
}

// macrosSection: the host's macros. A stored secret's value is never
// shown (the API does not return it): its field is empty and saving it
// empty keeps it; typing replaces it.
export function macrosSection(ho) {
  const t = rowTable('host-macros', ['Macro', 'Value', 'Type', 'Description'], ho.macros, (m) => {
    const macro = h('input', { type: 'text', class: 'macro-name', value: m.macro || '', placeholder: '{$MACRO}', 'aria-label': 'Macro' });
    const secret = m.type === '1' && !!m.hostmacroid;
    const value = h('input', { type: m.type === '1' ? 'password' : 'text', class: 'macro-value', value: secret ? '' : (m.value || ''),
      placeholder: secret ? 'unchanged (secret)' : 'value', autocomplete: 'new-password', 'aria-label': 'Value' });
    const type = h('select', { class: 'macro-type', 'aria-label': 'Type', onchange: () => { value.type = type.value === '1' ? 'password' : 'text'; } },
      MACRO_TYPES.map(([v, l]) => h('option', { value: String(v), selected: String(v) === String(m.type || 0) }, l)));
    const description = h('input', { type: 'text', class: 'macro-description', value: m.description || '', 'aria-label': 'Description' });
    return { cells: [macro, value, type, description], read: () => {
      if (macro.value.trim() === '' && value.value === '') return null;
      const o = { macro: macro.value.trim(), type: Number(type.value), description: description.value };
      if (m.hostmacroid) o.hostmacroid = m.hostmacroid;
      if (!(secret && value.value === '' && type.value === '1')) o.value = value.value;
      return o;
    } };
  }, 'macros');
  return { el: [t.el], read: () => ({ macros: t.values() }) };
}

// inventorySection: the mode and, unless disabled, the fields. A field
// is sent when it has a value or had one (emptying it clears it).
export function inventorySection(ho) {
  const inv = ho.inventory && !Array.isArray(ho.inventory) ? ho.inventory : {};
  const mode = h('select', { id: 'host-inventory-mode', dataset: { key: 'inventory_mode' }, 'aria-label': 'Inventory mode' },
    INVENTORY_MODES.map(([v, l]) => h('option', { value: String(v), selected: String(v) === String(ho.inventory_mode ?? -1) }, l)));
  const inputs = INVENTORY.map((f) => {
    const el = LONG.test(f) ? input.area('inventory', f, inv[f], 2) : input.text('inventory', f, inv[f]);
    return [f, el];
  });
  const grid = h('div', { class: 'form-grid', id: 'host-inventory-fields' }, inputs.map(([f, el]) => fld(label(f), el)));
  const show = () => {
    grid.hidden = mode.value === '-1';
    // Automatic: the fields items fill are theirs; the rest stay editable.
    for (const [, el] of inputs) el.disabled = mode.value === '-1';
  };
  mode.addEventListener('change', show);
  show();
  return {
    el: [h('div', { class: 'form-grid' }, fld('Inventory mode', mode)), grid],
    read: () => {
      const o = { inventory_mode: Number(mode.value) };
      if (mode.value === '-1') return o;
      const fields = {};
      for (const [f, el] of inputs) if (el.value !== '' || (inv[f] || '') !== '') fields[f] = el.value;
      if (Object.keys(fields).length) o.inventory = fields;
      return o;
    },
  };
}

// encryptionSection: connections to the host (one of none, PSK,
// certificate), from it (any of them), the PSK and the certificate's
// issuer and subject. The API never returns the PSK or its identity: a
// host that has one shows "Change PSK", and both are sent only when
// changed or newly needed.
export function encryptionSection(ho, isNew) {
  const conn = Number(ho.tls_connect || 1);
  const acc = Number(ho.tls_accept || 1);
  const hadPSK = !isNew && (conn === 2 || (acc & 2) !== 0);
  const to = h('select', { id: 'host-tls-connect', dataset: { key: 'tls_connect' }, 'aria-label': 'Connections to host' },
    [[1, 'No encryption'], [2, 'PSK'], [4, 'Certificate']].map(([v, l]) => h('option', { value: String(v), selected: v === conn }, l)));
  const from = [[1, 'No encryption'], [2, 'PSK'], [4, 'Certificate']].map(([v, l]) =>
    [v, h('input', { type: 'checkbox', id: `host-tls-accept-${v}`, dataset: { key: 'tls_accept' }, checked: (acc & v) !== 0 }), l]);
  const ident = input.text(N, 'tls_psk_identity', '', { maxlength: 128, autocomplete: 'off' });
  const psk = input.text(N, 'tls_psk', '', { maxlength: 512, autocomplete: 'new-password', placeholder: 'at least 32 hexadecimal digits' });
  const issuer = input.text(N, 'tls_issuer', ho.tls_issuer || '', { maxlength: 1024 });
  const subject = input.text(N, 'tls_subject', ho.tls_subject || '', { maxlength: 1024 });
  let changing = !hadPSK;
  const pskFields = h('div', { class: 'form-grid', id: 'host-psk-fields' }, fld('PSK identity', ident), fld('PSK', psk));
  const change = h('button', { type: 'button', id: 'host-psk-change', onclick: () => { changing = true; show(); ident.focus(); } }, 'Change PSK');
  const certFields = h('div', { class: 'form-grid', id: 'host-cert-fields' }, fld('Issuer', issuer), fld('Subject', subject));
  const usesPSK = () => to.value === '2' || from[1][1].checked;
  const show = () => {
    pskFields.hidden = !usesPSK() || !changing;
    change.hidden = !usesPSK() || changing;
    certFields.hidden = !(to.value === '4' || from[2][1].checked);
  };
  to.addEventListener('change', show);
  for (const [, cb] of from) cb.addEventListener('change', show);
  show();
  return {
    el: [h('div', { class: 'form-grid' }, fld('Connections to host', to),
      fld('Connections from host', h('span', { class: 'checks', id: 'host-tls-accept' }, from.map(([, cb, l]) => h('label', {}, cb, ' ', l, ' '))))),
    change, pskFields, certFields],
    read: () => {
      const o = { tls_connect: Number(to.value), tls_accept: from.reduce((s, [v, cb]) => s + (cb.checked ? v : 0), 0) };
      if (usesPSK() && changing) {
        o.tls_psk_identity = ident.value;
        o.tls_psk = psk.value;
      }
      if (!certFields.hidden) {
        o.tls_issuer = issuer.value;
        o.tls_subject = subject.value;
      } else {
        o.tls_issuer = '';
        o.tls_subject = '';
      }
      return o;
    },
  };
}

// proxySelect: the proxy that monitors the host ("0": the server).
export function proxySelect(ho, proxies) {
  const sel = h('select', { id: 'host-proxy', dataset: { key: 'proxy_hostid' }, 'aria-label': 'Monitored by proxy' },
    h('option', { value: '0' }, '(no proxy)'),
    proxies.map((p) => h('option', { value: p.proxyid, selected: p.proxyid === String(ho.proxy_hostid || '0') }, p.host)));
  return { el: sel, read: () => ({ proxy_hostid: sel.value }) };
}

// errorToTab shows the tab holding the first field error of form.
export function errorToTab(form) {
  const e = form.querySelector('.field-error');
  const panel = e && e.closest('.tab-panel');
  if (!panel || !panel.hidden) return;
  const i = panel.id.split('-').pop();
  const btn = form.querySelector(`#${panel.id.replace(/-panel-\d+$/, '')}-${i}`);
  if (btn) btn.click();
}

// placeMacroError moves an error naming a macro row ("/1/macros/2/macro")
// beside that row's input.
export function placeMacroError(form, msg) {
  const m = /\/macros\/(\d+)\/(macro|value|description|type)"/.exec(msg);
  if (!m) return;
  const row = form.querySelectorAll('#host-macros tbody tr')[Number(m[1]) - 1];
  const at = row && row.querySelector(`.macro-${m[2] === 'macro' ? 'name' : m[2]}`);
  const old = form.querySelector('.field-error');
  if (!at || !old) return;
  old.remove();
  at.after(h('span', { class: 'error field-error', role: 'alert' }, msg));
}

// ipmiSection: the authentication algorithm, privilege level, username
// and password. The password is never shown (host.get returns it
// empty): the field starts empty and an empty field keeps it; "Remove
// the password" empties it.
export function ipmiSection(ho, isNew) {
  const authtype = input.select(N, 'ipmi_authtype', IPMI_AUTHTYPES, ho.ipmi_authtype ?? -1);
  const privilege = input.select(N, 'ipmi_privilege', IPMI_PRIVILEGES, ho.ipmi_privilege ?? 2);
  const username = input.text(N, 'ipmi_username', ho.ipmi_username || '');
  const password = input.text(N, 'ipmi_password', '', { type: 'password', autocomplete: 'new-password', placeholder: isNew ? '' : 'unchanged' });
  const forget = h('input', { type: 'checkbox', id: 'host-ipmi-password-clear' });
  return {
    el: [h('div', { class: 'form-grid' }, fld('Authentication algorithm', authtype), fld('Privilege level', privilege),
      fld('Username', username), fld('Password', password), isNew ? null : fld('Remove the password', forget))],
    read: () => {
      const o = { ipmi_authtype: Number(authtype.value), ipmi_privilege: Number(privilege.value), ipmi_username: username.value };
      if (password.value !== '') o.ipmi_password = password.value;
      else if (forget.checked) o.ipmi_password = '';
      return o;
    },
  };
}

// valuemapsSection: the host's own value maps (valuemap.get by hostid),
// each added, edited or removed at once with valuemap.create/update/
// delete, its error beside the field it names. A new host gets them
// once it is created.
export function valuemapsSection(ho, isNew, ro) {
  const list = h('table', { class: 'plain', id: 'host-valuemaps' });
  const editor = h('div', { class: 'card', id: 'host-valuemap-editor', hidden: true });
  const addBtn = h('button', { type: 'button', id: 'host-valuemap-add', hidden: isNew || ro, onclick: () => edit(null) }, 'Add');
  const note = h('p', { class: 'error', id: 'host-valuemaps-error', role: 'alert', hidden: true });
  const load = async () => {
    const maps = await call('valuemap.get', { output: ['valuemapid', 'name'], selectMappings: 'extend', hostids: [ho.hostid], sortfield: 'name' });
    clear(list);
    list.append(h('tr', {}, h('th', {}, 'Name'), h('th', {}, 'Value'), h('th', {})));
    for (const m of maps) {
      const ask = h('span', {});
      list.append(h('tr', { class: 'host-valuemap-row', dataset: { valuemapid: m.valuemapid } },
        h('td', {}, h('a', { href: '#', class: 'host-valuemap-name', onclick: (e) => { e.preventDefault(); if (!ro) edit(m); } }, m.name)),
        h('td', { class: 'muted' }, (m.mappings || []).map((x) => (x.type === '5' ? `default ⇒ ${x.newvalue}` : `${x.value} ⇒ ${x.newvalue}`)).join(', ')),
        h('td', {}, ro ? null : h('button', { type: 'button', class: 'host-valuemap-remove', onclick: () => {
          ask.replaceChildren(' Remove it? ', h('button', { type: 'button', class: 'host-valuemap-remove-yes', onclick: async () => {
            try {
              await call('valuemap.delete', [m.valuemapid]);
              await load();
            } catch (e) {
              showErrorAt(list, note, e);
            }
          } }, 'Yes, remove'));
        } }, 'Remove'), ask)));
    }
    if (!maps.length) list.append(h('tr', {}, h('td', { class: 'muted', colspan: 3 }, 'No value maps.')));
  };
  const edit = (m) => {
    clear(editor);
    editor.hidden = false;
    const name = h('input', { type: 'text', id: 'host-valuemap-name', dataset: { key: 'name' }, value: m ? m.name : '', 'aria-label': 'Value map name' });
    const rows = rowsEditor('host-valuemap-mappings', [
      { key: 'type', label: 'Type', type: 'select', options: MAPPING_TYPES, def: 0 },
      { key: 'value', label: 'Value' },
      { key: 'newvalue', label: 'Mapped to' },
    ], m ? m.mappings : [{ type: '0', value: '', newvalue: '' }]);
    rows.el.dataset.key = 'mappings';
    const err = h('p', { class: 'error', id: 'host-valuemap-error', role: 'alert', hidden: true });
    const save = async () => {
      const mappings = rows.values().map((x) => ({ type: Number(x.type), value: x.value, newvalue: x.newvalue }));
      try {
        if (m) await call('valuemap.update', { valuemapid: m.valuemapid, name: name.value, mappings });
        else await call('valuemap.create', { hostid: ho.hostid, name: name.value, mappings });
        editor.hidden = true;
        clear(editor);
        await load();
      } catch (e) {
        showErrorAt(editor, err, e);
      }
    };
    editor.append(h('h4', {}, m ? `Value map ${m.name}` : 'New value map'), fld('Name', name), rows.el, err,
      h('div', { class: 'form-buttons' }, h('button', { type: 'button', id: 'host-valuemap-save', onclick: save }, m ? 'Update' : 'Add'),
        h('button', { type: 'button', onclick: () => { editor.hidden = true; clear(editor); } }, 'Cancel')));
    name.focus();
  };
  if (isNew) return { el: [h('p', { class: 'muted', id: 'host-valuemaps-new' }, 'The host\'s value maps are added here once it is created.')], read: () => ({}) };
  load().catch((e) => showErrorAt(list, note, e));
  return { el: [list, note, addBtn, editor], read: () => ({}) };
}
