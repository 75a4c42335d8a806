// The hosts page's mass update (hosts.js opens it for the checked
// hosts), tabbed as Zabbix 6.0's "Mass update" of hosts: Host (host
// templates linked, replaced or unlinked, with "Clear when unlinking";
// host groups added, replaced or removed; description, monitored by
// proxy, status), IPMI, Tags (add, replace, remove), Macros (add with
// "Update existing", update with "Add missing", remove with "Except
// selected", remove all), Inventory (mode and each field), Encryption
// and Value mapping (add, update, rename, remove, remove all). A field
// applies only when its check box is ticked, as in 6.0.
//
// The changes are worked out per host as 6.0's frontend works them out
// (its popup.massupdate.host reads the hosts' groups, templates, tags
// and macros with host.get and sends one host.update of all of them):
// one host.get, then one host.update of every host, which the API makes
// at once or not at all. Value maps are valuemap.update/create/delete
// with the hosts' ids (6.0 makes these after host.update in the same
// database transaction; the page has only the API, so it makes the
// updates and creations first and undoes them when host.update is
// refused, and deletes last, after host.update succeeded), so a refused
// change leaves nothing half-saved.
//
// Recorded from 6.0.14's page (popup.massupdate.host posted for one
// host): "Replace" of host groups with none chosen keeps the host's
// groups ("Hosts updated"); macros "Add" without "Update existing"
// keeps a macro the host has and adds the others; "Update" without
// "Add missing" changes only the macros the host has; tags "Replace"
// with no tag leaves the host none; macros "Remove all" without its
// confirmation is refused ("Cannot update hosts"), value maps "Remove
// all" without it removes nothing and says "Hosts updated" (here both
// are refused, asking for the confirmation).
import { call } from '../../api.js';
import { h } from '../../dom.js';
import { fld, chosen, rowTable, input, showErrorAt } from '../../crud.js';
import { tabs } from './tabs.js';
import { INVENTORY, INVENTORY_MODES, IPMI_AUTHTYPES, IPMI_PRIVILEGES, inventoryLabel } from './hostform.js';
import { MAPPING_TYPES } from './valuemaps.js';
import { rowsEditor } from '../../form.js';

// 6.0's ZBX_ACTION_* values.
const ADD = '0', REPLACE = '1', REMOVE = '2', REMOVE_ALL = '3', RENAME = '4';
const N = 'hmu';

const radios = (id, opts) => h('select', { id, 'aria-label': id }, opts.map(([v, l]) => h('option', { value: v }, l)));

// optional is one field of the dialog: a check box (id hmu-vis-<key>)
// that shows the control and makes it apply.
function optional(key, label, ...els) {
  const box = h('div', { class: 'mu-control', hidden: true }, els);
  const cb = h('input', { type: 'checkbox', id: `${N}-vis-${key}`, class: 'mu-visible', dataset: { vis: key }, onchange: () => { box.hidden = !cb.checked; } });
  return { el: h('div', { class: 'mu-field' }, h('label', { class: 'mu-label' }, cb, ' ', label), box), on: () => cb.checked };
}

// macroRows: macro, value (secret or text), description.
function macroRows() {
  return rowTable(`${N}-macros`, ['Macro', 'Value', 'Type', 'Description'], [{}], () => {
    const macro = h('input', { type: 'text', class: 'macro-name', placeholder: '{$MACRO}', 'aria-label': 'Macro' });
    const value = h('input', { type: 'text', class: 'macro-value', placeholder: 'value', autocomplete: 'new-password', 'aria-label': 'Value' });
    const type = h('select', { class: 'macro-type', 'aria-label': 'Type', onchange: () => { value.type = type.value === '1' ? 'password' : 'text'; } },
      [['0', 'Text'], ['1', 'Secret text']].map(([v, l]) => h('option', { value: v }, l)));
    const description = h('input', { type: 'text', class: 'macro-description', 'aria-label': 'Description' });
    return { cells: [macro, value, type, description], read: () => {
      if (macro.value.trim() === '' && value.value === '' && description.value === '') return null;
      return { macro: macro.value.trim(), value: value.value, type: Number(type.value), description: description.value };
    } };
  }, 'macros');
}

// valueMapRows: value maps, each a name and its mappings.
function valueMapRows() {
  const list = h('div', { id: `${N}-valuemaps`, dataset: { key: 'mappings' } });
  const maps = [];
  const add = () => {
    const name = h('input', { type: 'text', class: 'valuemap-name', dataset: { key: 'name' }, placeholder: 'Name', 'aria-label': 'Value map name' });
    const rows = rowsEditor(`${N}-vm-${maps.length}`, [
      { key: 'type', label: 'Type', type: 'select', options: MAPPING_TYPES, def: 0 },
      { key: 'value', label: 'Value' },
      { key: 'newvalue', label: 'Mapped to' },
    ], [{ type: '0', value: '', newvalue: '' }]);
    const m = { name, rows };
    const box = h('div', { class: 'card mu-valuemap' }, fld('Name', name), rows.el,
      h('button', { type: 'button', class: 'remove-row', onclick: () => { box.remove(); maps.splice(maps.indexOf(m), 1); } }, 'Remove value map'));
    maps.push(m);
    list.append(box);
  };
  add();
  return {
    el: [list, h('button', { type: 'button', id: `${N}-valuemaps-add`, onclick: add }, 'Add value map')],
    values: () => maps.filter((m) => m.name.value.trim() !== '').map((m) => ({ name: m.name.value.trim(),
      mappings: m.rows.values().map((x) => ({ type: String(x.type), value: x.value, newvalue: x.newvalue })) })),
  };
}

// massUpdateForm builds the dialog for the hosts of ids; lists are the
// page's host groups, templates and proxies; done() is called after a
// saved update.
export async function massUpdateForm(ids, lists, done, cancel) {
  const own = await call('valuemap.get', { output: ['valuemapid', 'name', 'hostid'], hostids: ids, sortfield: 'name' }).catch(() => []);
  const f = {};
  const o = (key, label, ...els) => { f[key] = optional(key, label, ...els); return f[key].el; };

  // Host.
  const gAct = radios(`${N}-groups-action`, [[ADD, 'Add'], [REPLACE, 'Replace'], [REMOVE, 'Remove']]);
  const gSel = input.multi(N, 'groups', lists.groups.map((g) => [g.groupid, g.name]), []);
  const desc = input.area(N, 'description', '', 3);
  const proxy = h('select', { id: `${N}-proxy`, dataset: { key: 'proxy_hostid' }, 'aria-label': 'Monitored by proxy' },
    h('option', { value: '0' }, '(no proxy)'), lists.proxies.map((p) => h('option', { value: p.proxyid }, p.host)));
  const status = input.select(N, 'status', [[0, 'Enabled'], [1, 'Disabled']], 0);
  // Templates.
  const tAct = radios(`${N}-templates-action`, [[ADD, 'Link'], [REPLACE, 'Replace'], [REMOVE, 'Unlink']]);
  const tSel = input.multi(N, 'templates', lists.templates.map((t) => [t.templateid, t.name]), []);
  const tClear = h('input', { type: 'checkbox', id: `${N}-templates-clear` });
  // IPMI.
  const authtype = input.select(N, 'ipmi_authtype', IPMI_AUTHTYPES, -1);
  const privilege = input.select(N, 'ipmi_privilege', IPMI_PRIVILEGES, 2);
  const ipmiUser = input.text(N, 'ipmi_username', '', { maxlength: 16 });
  const ipmiPass = input.text(N, 'ipmi_password', '', { maxlength: 20, type: 'password', autocomplete: 'new-password' });
  // Tags.
  const tagAct = radios(`${N}-tags-action`, [[ADD, 'Add'], [REPLACE, 'Replace'], [REMOVE, 'Remove']]);
  const tags = rowTable(`${N}-tags`, ['Tag', 'Value'], [{}], () => {
    const tag = h('input', { type: 'text', class: 'tag-tag', 'aria-label': 'Tag' });
    const value = h('input', { type: 'text', class: 'tag-value', 'aria-label': 'Value' });
    return { cells: [tag, value], read: () => (tag.value === '' && value.value === '' ? null : { tag: tag.value, value: value.value }) };
  }, 'tags');
  // Macros.
  const mAct = radios(`${N}-macros-action`, [[ADD, 'Add'], [REPLACE, 'Update'], [REMOVE, 'Remove'], [REMOVE_ALL, 'Remove all']]);
  const macros = macroRows();
  const mChecks = {
    [ADD]: h('input', { type: 'checkbox', id: `${N}-macros-update-existing` }),
    [REPLACE]: h('input', { type: 'checkbox', id: `${N}-macros-add-missing` }),
    [REMOVE]: h('input', { type: 'checkbox', id: `${N}-macros-except` }),
    [REMOVE_ALL]: h('input', { type: 'checkbox', id: `${N}-macros-confirm` }),
  };
  const mLabels = { [ADD]: 'Update existing', [REPLACE]: 'Add missing', [REMOVE]: 'Except selected', [REMOVE_ALL]: 'I confirm to remove all macros' };
  const mOpts = Object.entries(mChecks).map(([k, cb]) => h('label', { class: 'mu-sub', dataset: { action: k } }, cb, ' ', mLabels[k]));
  const mShow = () => {
    for (const l of mOpts) l.hidden = l.dataset.action !== mAct.value;
    macros.el.hidden = mAct.value === REMOVE_ALL;
  };
  mAct.addEventListener('change', mShow);
  mShow();
  // Inventory.
  const invMode = input.select(N, 'inventory_mode', INVENTORY_MODES, 0);
  const invFields = INVENTORY.map((k) => [k, /_full$|notes$|^host_networks$/.test(k) ? input.area('inventory', k, '', 2) : input.text('inventory', k, '')]);
  // Encryption.
  const tlsTo = input.select(N, 'tls_connect', [[1, 'No encryption'], [2, 'PSK'], [4, 'Certificate']], 1);
  const tlsFrom = [[1, 'No encryption'], [2, 'PSK'], [4, 'Certificate']].map(([v, l]) =>
    [v, h('input', { type: 'checkbox', id: `${N}-tls-accept-${v}`, dataset: { key: 'tls_accept' }, checked: v === 1 }), l]);
  const pskId = input.text(N, 'tls_psk_identity', '', { maxlength: 128, autocomplete: 'off' });
  const psk = input.text(N, 'tls_psk', '', { maxlength: 512, autocomplete: 'new-password', placeholder: 'at least 32 hexadecimal digits' });
  const issuer = input.text(N, 'tls_issuer', '', { maxlength: 1024 });
  const subject = input.text(N, 'tls_subject', '', { maxlength: 1024 });
  // Value mapping.
  const vAct = radios(`${N}-valuemaps-action`, [[ADD, 'Add'], [REPLACE, 'Update'], [RENAME, 'Rename'], [REMOVE, 'Remove'], [REMOVE_ALL, 'Remove all']]);
  const vmaps = valueMapRows();
  const vRename = rowsEditor(`${N}-valuemap-rename`, [{ key: 'from', label: 'From' }, { key: 'to', label: 'To' }], [{ from: '', to: '' }]);
  const names = [...new Set(own.map((v) => v.name))];
  const vRemove = input.multi(N, 'valuemap_remove', names.map((n) => [n, n]), []);
  const vChecks = {
    [ADD]: h('input', { type: 'checkbox', id: `${N}-valuemaps-update-existing` }),
    [REPLACE]: h('input', { type: 'checkbox', id: `${N}-valuemaps-add-missing` }),
    [REMOVE]: h('input', { type: 'checkbox', id: `${N}-valuemaps-except` }),
    [REMOVE_ALL]: h('input', { type: 'checkbox', id: `${N}-valuemaps-confirm` }),
  };
  const vLabels = { [ADD]: 'Update existing', [REPLACE]: 'Add missing', [REMOVE]: 'Except selected', [REMOVE_ALL]: 'I confirm to remove all value mappings' };
  const vOpts = Object.entries(vChecks).map(([k, cb]) => h('label', { class: 'mu-sub', dataset: { action: k } }, cb, ' ', vLabels[k]));
  const vMapsBox = h('div', {}, vmaps.el);
  const vRenameBox = h('div', {}, vRename.el);
  const vRemoveBox = h('div', {}, names.length ? vRemove : h('p', { class: 'muted' }, 'The hosts have no value maps.'));
  const vShow = () => {
    for (const l of vOpts) l.hidden = l.dataset.action !== vAct.value;
    vMapsBox.hidden = vAct.value !== ADD && vAct.value !== REPLACE;
    vRenameBox.hidden = vAct.value !== RENAME;
    vRemoveBox.hidden = vAct.value !== REMOVE;
  };
  vAct.addEventListener('change', vShow);
  vShow();

  const err = h('p', { class: 'error', id: `${N}-error`, role: 'alert', hidden: true });
  const form = h('form', { id: 'host-massupdate', class: 'card config-form' },
    h('h3', {}, `Mass update of ${ids.length} host${ids.length === 1 ? '' : 's'}`),
    tabs(`${N}-tabs`, [
      ['Host', [h('div', { class: 'mu-list' },
        o('templates', 'Link templates', tAct, tSel, h('label', { class: 'mu-sub' }, tClear, ' Clear when unlinking')),
        o('groups', 'Host groups', gAct, gSel),
        o('description', 'Description', desc),
        o('proxy_hostid', 'Monitored by proxy', proxy),
        o('status', 'Status', status))]],
      ['IPMI', [h('div', { class: 'mu-list' },
        o('ipmi_authtype', 'Authentication algorithm', authtype),
        o('ipmi_privilege', 'Privilege level', privilege),
        o('ipmi_username', 'Username', ipmiUser),
        o('ipmi_password', 'Password', ipmiPass))]],
      ['Tags', [o('tags', 'Tags', tagAct, tags.el)]],
      ['Macros', [o('macros', 'Macros', mAct, macros.el, mOpts)]],
      ['Inventory', [h('div', { class: 'mu-list', id: `${N}-inventory` },
        o('inventory_mode', 'Inventory mode', invMode),
        invFields.map(([k, el]) => o(`inventory-${k}`, inventoryLabel(k), el)))]],
      ['Encryption', [o('encryption', 'Connections', h('div', { class: 'form-grid' },
        fld('Connections to host', tlsTo),
        fld('Connections from host', h('span', { class: 'checks' }, tlsFrom.map(([, cb, l]) => h('label', {}, cb, ' ', l, ' ')))),
        fld('PSK identity', pskId), fld('PSK', psk), fld('Issuer', issuer), fld('Subject', subject)))]],
      ['Value mapping', [o('valuemaps', 'Value mapping', vAct, vMapsBox, vRenameBox, vRemoveBox, vOpts)]],
    ]),
    err,
    h('div', { class: 'form-buttons' },
      h('button', { type: 'submit', id: `${N}-save` }, 'Update'),
      h('button', { type: 'button', id: `${N}-cancel`, onclick: cancel }, 'Cancel')));

  // plan reads the dialog into 6.0's per-host host.update objects.
  const plan = async () => {
    const on = (k) => f[k].on();
    const opts = { output: ['hostid', 'inventory_mode', 'flags'], hostids: ids, filter: { flags: [0, 4] } };
    if (on('groups')) opts.selectGroups = ['groupid'];
    if (on('templates') && !(tAct.value === REPLACE && !tClear.checked)) opts.selectParentTemplates = ['templateid'];
    if (on('tags') && tagAct.value !== REPLACE) opts.selectTags = ['tag', 'value'];
    if (on('macros') && mAct.value !== REMOVE_ALL) opts.selectMacros = ['hostmacroid', 'macro'];
    const hosts = await call('host.get', opts);
    const picked = chosen(gSel);
    const tpls = chosen(tSel);
    // Tags named twice count once, as in 6.0.
    const uniqTags = (l) => [...new Map(l.map((t) => [`${t.tag}:${t.value}`, { tag: t.tag, value: t.value }])).values()];
    const newTags = uniqTags(tags.values());
    const newMacros = macros.values();
    if (on('macros') && mAct.value === REMOVE_ALL && !mChecks[REMOVE_ALL].checked) throw new Error('Tick "I confirm to remove all macros" to remove them all.');
    const values = {};
    for (const [k, el] of [['description', desc], ['proxy_hostid', proxy], ['ipmi_authtype', authtype], ['ipmi_privilege', privilege], ['ipmi_username', ipmiUser], ['ipmi_password', ipmiPass]]) {
      if (on(k)) values[k] = el.tagName === 'SELECT' && k !== 'proxy_hostid' ? Number(el.value) : el.value;
    }
    if (on('status')) values.status = Number(status.value);
    let inventory = {};
    for (const [k, el] of invFields) if (on(`inventory-${k}`)) inventory[k] = el.value;
    if (on('inventory_mode')) {
      values.inventory_mode = Number(invMode.value);
      if (invMode.value === '-1') inventory = {};
    }
    if (on('encryption')) {
      values.tls_connect = Number(tlsTo.value);
      values.tls_accept = tlsFrom.reduce((s, [v, cb]) => s + (cb.checked ? v : 0), 0);
      if (values.tls_connect === 2 || (values.tls_accept & 2)) Object.assign(values, { tls_psk_identity: pskId.value, tls_psk: psk.value });
      if (values.tls_connect === 4 || (values.tls_accept & 4)) Object.assign(values, { tls_issuer: issuer.value, tls_subject: subject.value });
    }
    return hosts.map((ho) => {
      const u = { hostid: ho.hostid };
      if (on('groups')) {
        const cur = (ho.groups || []).map((g) => g.groupid);
        let gs = cur;
        if (picked.length && gAct.value === ADD) gs = [...new Set([...cur, ...picked])];
        else if (picked.length && gAct.value === REPLACE) gs = picked;
        else if (picked.length) gs = cur.filter((g) => !picked.includes(g));
        u.groups = gs.map((groupid) => ({ groupid }));
      }
      if (on('templates')) {
        const cur = (ho.parentTemplates || []).map((t) => t.templateid);
        if (tAct.value === ADD) u.templates = [...new Set([...cur, ...tpls])];
        else if (tAct.value === REPLACE) {
          u.templates = tpls;
          if (tClear.checked) u.templates_clear = cur.filter((t) => !tpls.includes(t));
        } else {
          u.templates = cur.filter((t) => !tpls.includes(t));
          if (tClear.checked) u.templates_clear = tpls;
        }
        u.templates = u.templates.map((templateid) => ({ templateid }));
        if (u.templates_clear) u.templates_clear = u.templates_clear.map((templateid) => ({ templateid }));
      }
      // Inventory: discovered hosts keep their mode; a host whose
      // inventory is disabled takes no fields.
      const flags = String(ho.flags || '0');
      if ((on('inventory_mode') && flags !== '4') || String(ho.inventory_mode) !== '-1') {
        if (Object.keys(inventory).length) u.inventory = inventory;
      }
      if (on('tags')) {
        if (newTags.length && tagAct.value === ADD) u.tags = uniqTags([...(ho.tags || []), ...newTags]);
        else if (tagAct.value === REPLACE) u.tags = newTags;
        else if (newTags.length) u.tags = (ho.tags || []).filter((a) => !newTags.some((b) => a.tag === b.tag && a.value === b.value)).map((t) => ({ tag: t.tag, value: t.value }));
        else u.tags = (ho.tags || []).map((t) => ({ tag: t.tag, value: t.value }));
      }
      if (on('macros')) {
        const cur = (ho.macros || []).map((m) => ({ hostmacroid: m.hostmacroid, macro: m.macro }));
        const byName = new Map(cur.map((m, i) => [m.macro, i]));
        const named = new Set(newMacros.map((m) => m.macro));
        switch (mAct.value) {
          case ADD:
          case REPLACE: {
            const addNew = mAct.value === ADD || mChecks[REPLACE].checked;
            const updOld = mAct.value === REPLACE || mChecks[ADD].checked;
            for (const m of newMacros) {
              if (!byName.has(m.macro)) {
                if (addNew) cur.push(m);
              } else if (updOld) {
                cur[byName.get(m.macro)] = { hostmacroid: cur[byName.get(m.macro)].hostmacroid, ...m };
              }
            }
            u.macros = cur;
            break;
          }
          case REMOVE:
            u.macros = !newMacros.length ? cur : cur.filter((m) => named.has(m.macro) === mChecks[REMOVE].checked);
            break;
          default:
            u.macros = [];
        }
      }
      Object.assign(u, values);
      if (flags === '4') delete u.inventory_mode;
      return u;
    });
  };

  // valueMapPlan is 6.0's value map change for the hosts: updates (with
  // what they were, to undo), creations and deletions.
  const valueMapPlan = async () => {
    const db = await call('valuemap.get', { output: ['valuemapid', 'name', 'hostid'], selectMappings: 'extend', hostids: ids });
    const upd = [], ins = [], del = [];
    switch (vAct.value) {
      case ADD:
      case REPLACE: {
        const want = new Map(vmaps.values().map((v) => [v.name, v]));
        if (!want.size) break;
        if (vAct.value === REPLACE || vChecks[ADD].checked) {
          for (const d of db) if (want.has(d.name)) upd.push({ valuemapid: d.valuemapid, mappings: want.get(d.name).mappings });
        }
        if (vAct.value === ADD || vChecks[REPLACE].checked) {
          for (const v of want.values()) {
            for (const hostid of ids) if (!db.some((d) => d.name === v.name && d.hostid === hostid)) ins.push({ hostid, name: v.name, mappings: v.mappings });
          }
        }
        break;
      }
      case RENAME: {
        const to = new Map(vRename.values().filter((r) => r.from !== '').map((r) => [r.from, r.to]));
        for (const d of db) if (to.has(d.name)) upd.push({ valuemapid: d.valuemapid, name: to.get(d.name) });
        break;
      }
      case REMOVE: {
        const sel = chosen(vRemove);
        if (!sel.length) break;
        const gone = vChecks[REMOVE].checked ? db.map((d) => d.name).filter((n) => !sel.includes(n)) : sel;
        for (const d of db) if (gone.includes(d.name)) del.push(d.valuemapid);
        break;
      }
      default:
        if (!vChecks[REMOVE_ALL].checked) throw new Error('Tick "I confirm to remove all value mappings" to remove them all.');
        del.push(...db.map((d) => d.valuemapid));
    }
    const was = upd.map((u) => {
      const d = db.find((x) => x.valuemapid === u.valuemapid);
      return { valuemapid: d.valuemapid, name: d.name, mappings: d.mappings.map((m) => ({ type: m.type, value: m.value, newvalue: m.newvalue })) };
    });
    return { upd, ins, del, was };
  };

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    err.hidden = true;
    let undo = async () => {};
    try {
      const hosts = await plan();
      const hostChange = hosts.some((u) => Object.keys(u).length > 1);
      const vm = f.valuemaps.on() ? await valueMapPlan() : { upd: [], ins: [], del: [], was: [] };
      if (vm.upd.length) {
        await call('valuemap.update', vm.upd);
        undo = () => call('valuemap.update', vm.was);
      }
      if (vm.ins.length) {
        const made = await call('valuemap.create', vm.ins);
        const before = undo;
        undo = async () => { await call('valuemap.delete', made.valuemapids); await before(); };
      }
      if (hostChange) await call('host.update', hosts);
      undo = async () => {};
      if (vm.del.length) await call('valuemap.delete', vm.del);
      await done();
    } catch (e) {
      try {
        await undo();
      } catch (e2) {
        e = new Error(`${e.data || e.message || e} (and the value maps changed before it could not be put back: ${e2.data || e2.message || e2})`);
      }
      showErrorAt(form, err, e);
      placeByTopic(form, String(e.data || e.message || e));
      const at = form.querySelector('.field-error');
      const panel = at && at.closest('.tab-panel');
      if (panel && panel.hidden) form.querySelector(`#${panel.id.replace(/-panel-(\d+)$/, '-$1')}`).click();
    }
  });
  return form;
}

// TOPICS place an error that names no field ('Host "a" cannot be
// without host group.') beside the control of what it is about.
const TOPICS = [[/host group/i, '#hmu-groups'], [/template/i, '#hmu-templates'], [/macro/i, '#hmu-macros'], [/inventory/i, '#hmu-inventory-mode'],
  [/PSK|certificate|encryption/i, '#hmu-tls-connect'], [/value map/i, '#hmu-valuemaps'], [/proxy/i, '#hmu-proxy'], [/tag/i, '#hmu-tags']];

function placeByTopic(form, msg) {
  if (form.querySelector('.field-error')) return;
  const t = TOPICS.find(([re]) => re.test(msg));
  const at = t && form.querySelector(t[1]);
  if (at) at.after(h('span', { class: 'error field-error', role: 'alert' }, msg));
}
