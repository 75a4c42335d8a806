// Configuration: hosts. The list (host.get with groups, interfaces, tags)
// and one form to create or edit a host, tabbed as 6.0's: the host
// (technical and visible name, linked templates with unlink and unlink
// and clear, host groups, interfaces, the monitoring proxy, status,
// tags), macros (a secret's value never shown), inventory (mode and
// fields), encryption (PSK, certificate issuer and subject), IPMI
// (the password never shown) and the host's value maps; the sections
// are built in hostform.js. One host.create or host.update saves it all
// (value maps: each on its own); the API's error is shown under the
// form and beside the field it names (on its tab).
//
// Mass actions on the checked hosts, as 6.0's host list has them:
// Enable and Disable (one host.update of them all, as 6.0's buttons
// send), Export (configuration.export of the hosts as a YAML download),
// Mass update (hostmass.js) and Delete (host.delete, asked in place).
// Only hosts the user may change get a check box; a user who may change
// none sees no mass action.
import { call } from '../../api.js';
import { h, clear, debounce } from '../../dom.js';
import { massUpdateForm } from './hostmass.js';
import { download } from './tabs.js';
import { field, select, rowsEditor, showError, configNav, cloneAndDelete, readOnly } from '../../form.js';
import { showErrorAt } from '../../crud.js';
import { tabs } from './tabs.js';
import { templatesSection, macrosSection, inventorySection, encryptionSection, proxySelect, ipmiSection, valuemapsSection, errorToTab, placeMacroError } from './hostform.js';

const IFTYPES = [[1, 'Agent'], [2, 'SNMP'], [3, 'IPMI'], [4, 'JMX']];
const STATUS = [[0, 'Enabled'], [1, 'Disabled']];

export async function render(main) {
  const search = h('input', { type: 'search', id: 'config-host-search', placeholder: 'Search host name', 'aria-label': 'Search host name' });
  const count = h('span', { class: 'muted', id: 'config-host-count' });
  const formBox = h('section', { class: 'card config-form', id: 'host-form', hidden: true });
  const table = h('table', { class: 'plain', id: 'config-hosts' });
  const createBtn = h('button', { type: 'button', id: 'host-create', onclick: () => edit(null) }, 'Create host');
  const massBar = h('div', { class: 'toolbar mass', id: 'host-mass', hidden: true });
  const massErr = h('p', { class: 'error', id: 'host-mass-error', role: 'alert', hidden: true });
  const massNote = h('div', { class: 'muted', id: 'host-mass-note', role: 'status' });
  main.append(configNav('hosts'), h('div', { class: 'toolbar' }, h('h1', {}, 'Hosts'), search, createBtn, count), formBox, massErr, massNote, massBar, h('div', { class: 'scroll' }, table));
  const groups = await call('hostgroup.get', { output: ['groupid', 'name'], sortfield: 'name' });
  // A user with read rights only (no group to write in) creates nothing;
  // a host they may only read opens read-only (the API would refuse).
  const writableGroups = await call('hostgroup.get', { output: ['groupid'], editable: true });
  const [templates, proxies] = await Promise.all([
    call('template.get', { output: ['templateid', 'name'], sortfield: 'name' }),
    call('proxy.get', { output: ['proxyid', 'host'], sortfield: 'host' }).catch(() => []),
  ]);
  createBtn.hidden = !writableGroups.length;
  let writable = new Set();
  const checked = new Set();

  async function load() {
    const p = { output: ['hostid', 'host', 'name', 'status'], selectGroups: ['groupid', 'name'], selectInterfaces: 'extend', selectTags: 'extend', sortfield: 'name', limit: 1000 };
    if (search.value) p.search = { name: search.value };
    const [hosts, mineRows] = await Promise.all([call('host.get', p), call('host.get', { ...p, output: ['hostid'], selectGroups: undefined, selectInterfaces: undefined, selectTags: undefined, editable: true })]);
    writable = new Set(mineRows.map((x) => x.hostid));
    count.textContent = hosts.length === 1 ? '1 host' : `${hosts.length} hosts${hosts.length === 1000 ? ' (the first 1000: search to narrow)' : ''}`;
    for (const id of [...checked]) if (!writable.has(id)) checked.delete(id);
    clear(table);
    const mine = hosts.filter((ho) => writable.has(ho.hostid));
    const all = h('input', { type: 'checkbox', id: 'host-check-all', 'aria-label': 'Select all', checked: mine.length > 0 && mine.every((ho) => checked.has(ho.hostid)), onchange: () => {
      for (const ho of mine) all.checked ? checked.add(ho.hostid) : checked.delete(ho.hostid);
      for (const c of table.querySelectorAll('.host-check')) c.checked = all.checked;
      drawMass();
    } });
    table.append(h('tr', {}, h('th', {}, mine.length ? all : null), ['Name', 'Host', 'Groups', 'Interfaces', 'Tags', 'Status', ''].map((x) => h('th', {}, x))));
    for (const ho of hosts) {
      table.append(h('tr', { class: 'config-host-row', dataset: { hostid: ho.hostid } },
        h('td', {}, writable.has(ho.hostid) ? h('input', { type: 'checkbox', class: 'host-check', 'aria-label': `Select ${ho.name}`, checked: checked.has(ho.hostid), onchange: (e) => {
          e.target.checked ? checked.add(ho.hostid) : checked.delete(ho.hostid);
          drawMass();
        } }) : null),
        h('td', {}, h('a', { href: '#', class: 'host-name', onclick: (e) => { e.preventDefault(); open(ho).catch((er) => showError(count, er)); } }, ho.name)),
        h('td', { class: 'muted' }, ho.host),
        h('td', {}, (ho.groups || []).map((g) => g.name).join(', ')),
        h('td', {}, (ho.interfaces || []).map((f) => `${(IFTYPES.find((t) => String(t[0]) === f.type) || [0, '?'])[1]} ${f.useip === '0' ? f.dns : f.ip}:${f.port}`).join(', ')),
        h('td', {}, (ho.tags || []).map((t) => h('span', { class: 'tag' }, t.value ? `${t.tag}: ${t.value}` : t.tag))),
        h('td', {}, ho.status === '1' ? h('span', { class: 'ack-no' }, 'Disabled') : h('span', { class: 'ack-yes' }, 'Enabled')),
        h('td', {}, h('a', { href: `/config/items?hostid=${ho.hostid}` }, 'Items'), ' ', h('a', { href: `/config/triggers?hostid=${ho.hostid}` }, 'Triggers'))));
    }
    massBar.hidden = !mine.length;
    drawMass();
  }

  // drawMass draws the mass actions for the checked hosts; confirming:
  // Delete asks in place.
  function drawMass(confirming) {
    clear(massBar);
    const n = checked.size;
    const act = async (f) => {
      massErr.hidden = true;
      massNote.textContent = '';
      try {
        await f([...checked]);
        await load();
      } catch (e) {
        showErrorAt(massBar, massErr, e);
      }
    };
    const btn = (id, label, f) => h('button', { type: 'button', id: `host-mass-${id}`, disabled: !n, onclick: f }, label);
    const status = (v) => (sel) => call('host.update', sel.map((hostid) => ({ hostid, status: v })));
    massBar.append(h('span', { class: 'muted', id: 'host-mass-count' }, `${n} selected`),
      btn('enable', 'Enable', () => act(status(0))),
      btn('disable', 'Disable', () => act(status(1))),
      btn('export', 'Export', () => act(async (sel) => {
        const doc = await call('configuration.export', { format: 'yaml', options: { hosts: sel } });
        const a = download('host-export-link', 'zbx_export_hosts.yaml', doc, 'application/yaml');
        massNote.replaceChildren('Export ready: ', a, ' ',
          h('details', {}, h('summary', {}, 'Show the document'), h('pre', { id: 'host-export-text', class: 'export-text' }, doc)));
        a.click();
      })),
      btn('update', 'Mass update', async () => {
        massErr.hidden = true;
        massNote.textContent = '';
        try {
          const f = await massUpdateForm([...checked], { groups, templates, proxies }, async () => {
            formBox.hidden = true;
            clear(formBox);
            massNote.textContent = `Updated ${n} host${n === 1 ? '' : 's'}.`;
            await load();
          }, () => { formBox.hidden = true; clear(formBox); });
          clear(formBox);
          formBox.append(f);
          formBox.hidden = false;
          formBox.scrollIntoView({ block: 'nearest' });
        } catch (e) {
          showErrorAt(massBar, massErr, e);
        }
      }));
    if (confirming) {
      massBar.append(h('span', {}, ` Delete ${n} host${n === 1 ? '' : 's'}? `),
        h('button', { type: 'button', id: 'host-mass-delete-yes', onclick: () => act(async (sel) => {
          await call('host.delete', sel);
          for (const id of sel) checked.delete(id);
        }) }, 'Yes, delete'),
        h('button', { type: 'button', onclick: () => drawMass(false) }, 'No'));
    } else {
      massBar.append(btn('delete', 'Delete', () => drawMass(true)));
    }
  }

  // open reads a host whole (its templates, macros, inventory,
  // encryption and proxy) and opens its form.
  async function open(ho) {
    const [full] = await call('host.get', { hostids: [ho.hostid], output: ['hostid', 'host', 'name', 'status', 'proxy_hostid', 'inventory_mode',
      'tls_connect', 'tls_accept', 'tls_issuer', 'tls_subject', 'ipmi_authtype', 'ipmi_privilege', 'ipmi_username'], selectGroups: ['groupid', 'name'], selectInterfaces: 'extend', selectTags: 'extend',
    selectParentTemplates: ['templateid', 'name'], selectMacros: 'extend', selectInventory: 'extend' });
    edit(full || ho);
  }

  // edit opens a host's form; with asClone, ho is a new host's values
  // (a clone: 6.0's Clone, the host's groups, interfaces, tags,
  // templates, macros (a secret one starts empty: its value is never
  // read), inventory, proxy and encryption (a PSK is typed again)).
  function edit(ho, asClone) {
    clear(formBox);
    formBox.hidden = false;
    const isNew = !ho || !!asClone;
    const ro = !isNew && !writable.has(ho.hostid);
    ho = ho || { host: '', name: '', status: '0', groups: [], interfaces: [], tags: [], inventory_mode: '-1' };
    const host = h('input', { type: 'text', id: 'host-host', dataset: { key: 'host' }, value: ho.host, required: true });
    const name = h('input', { type: 'text', id: 'host-name', dataset: { key: 'name' }, value: ho.name === ho.host ? '' : ho.name, placeholder: 'same as the host name' });
    const secs = { templates: templatesSection(ho, templates, isNew), macros: macrosSection(ho), inventory: inventorySection(ho),
      tls: encryptionSection(ho, isNew), proxy: proxySelect(ho, proxies), ipmi: ipmiSection(ho, isNew), valuemaps: valuemapsSection(ho, isNew, ro) };
    const inGroup = new Set((ho.groups || []).map((g) => g.groupid));
    const groupSel = h('select', { id: 'host-groups', multiple: true, size: Math.min(6, Math.max(2, groups.length)), 'aria-label': 'Host groups' },
      groups.map((g) => h('option', { value: g.groupid, selected: inGroup.has(g.groupid) }, g.name)));
    const ifaces = rowsEditor('host-ifaces', [
      { key: 'type', label: 'Type', type: 'select', options: IFTYPES, def: 1 },
      { key: 'ip', label: 'IP address', def: '' },
      { key: 'dns', label: 'DNS name', def: '' },
      { key: 'port', label: 'Port', def: '10050' },
      { key: 'useip', label: 'Use IP', type: 'checkbox', def: '1' },
      { key: 'main', label: 'Default', type: 'checkbox', def: '1' },
    ], ho.interfaces || []);
    const tags = rowsEditor('host-tags', [{ key: 'tag', label: 'Tag' }, { key: 'value', label: 'Value' }], ho.tags || []);
    const status = select('host-status', STATUS, ho.status);
    const err = h('p', { class: 'error', id: 'host-error', role: 'alert', hidden: true });
    const save = async (ev) => {
      ev.preventDefault();
      const p = {
        host: host.value.trim(), name: name.value.trim() || host.value.trim(), status: Number(status.value),
        groups: [...groupSel.selectedOptions].map((o) => ({ groupid: o.value })),
        interfaces: ifaces.values().map((f) => {
          const o = { type: Number(f.type), main: Number(f.main), useip: Number(f.useip), ip: f.ip, dns: f.dns, port: f.port };
          if (f.interfaceid) o.interfaceid = f.interfaceid;
          // SNMP interfaces need their details; a new one gets SNMPv2c
          // with the usual community macro.
          if (o.type === 2) o.details = f.details && !Array.isArray(f.details) ? f.details : { version: 2, bulk: 1, community: '{$SNMP_COMMUNITY}' };
          return o;
        }),
        tags: tags.values().map((t) => ({ tag: t.tag, value: t.value })),
      };
      for (const sec of Object.values(secs)) Object.assign(p, sec.read());
      try {
        if (isNew) await call('host.create', p);
        else await call('host.update', { hostid: ho.hostid, ...p });
        formBox.hidden = true;
        await load();
      } catch (e) {
        const form = formBox.querySelector('form');
        showErrorAt(form, err, e);
        placeMacroError(form, String(e.data || e.message || e));
        errorToTab(form);
      }
    };
    formBox.append(h('form', { id: 'host-edit', onsubmit: save },
      h('h3', {}, asClone ? 'New host (a clone)' : isNew ? 'New host' : `Host ${ho.name}${ro ? ' (read-only)' : ''}`),
      tabs('host-tabs', [
        ['Host', [h('div', { class: 'form-grid' },
          field('Host name', host), field('Visible name', name), ...secs.templates.el, field('Host groups', groupSel),
          field('Monitored by proxy', secs.proxy.el), field('Status', status)),
        h('h4', {}, 'Interfaces'), ifaces.el,
        h('h4', {}, 'Tags'), tags.el]],
        ['Macros', secs.macros.el],
        ['Inventory', secs.inventory.el],
        ['Encryption', secs.tls.el],
        ['IPMI', secs.ipmi.el],
        ['Value mapping', secs.valuemaps.el],
      ]),
      err,
      h('div', { class: 'form-buttons' },
        ro ? null : h('button', { type: 'submit', id: 'host-save' }, isNew ? 'Create' : 'Update'),
        isNew || ro ? null : cloneAndDelete('host', err, () => edit({
          host: host.value.trim(), name: name.value.trim() || host.value.trim(), status: status.value,
          groups: [...groupSel.selectedOptions].map((o) => ({ groupid: o.value })),
          interfaces: ifaces.values().map(({ interfaceid, ...f }) => f), tags: tags.values(),
          ...cloneRest(secs),
        }, true), async () => {
          await call('host.delete', [ho.hostid]);
          formBox.hidden = true;
          await load();
        }),
        h('button', { type: 'button', onclick: () => { formBox.hidden = true; } }, 'Cancel'))));
    if (ro) {
      readOnly(formBox.lastChild);
      for (const b of formBox.querySelectorAll('.template-unlink, .template-unlink-clear, #host-psk-change')) b.hidden = true;
    }
    else host.focus();
  }

  // cloneRest is what a clone takes from the form's other sections.
  function cloneRest(secs) {
    const t = secs.templates.read();
    const tls = secs.tls.read();
    const names = new Map(templates.map((x) => [x.templateid, x.name]));
    return {
      parentTemplates: t.templates.map(({ templateid }) => ({ templateid, name: names.get(templateid) || templateid })),
      macros: secs.macros.read().macros.map(({ hostmacroid, ...m }) => (m.type === 1 && m.value === undefined ? { ...m, type: 0, value: '' } : m))
        .map((m) => ({ ...m, type: String(m.type) })),
      ...secs.inventory.read(), ...secs.proxy.read(),
      tls_connect: tls.tls_connect, tls_accept: tls.tls_accept, tls_issuer: tls.tls_issuer, tls_subject: tls.tls_subject,
      ...secs.ipmi.read(),
    };
  }

  search.addEventListener('input', debounce(() => load().catch((e) => showError(count, e)), 250));
  await load();
}
