// Proxies (proxy.*; in 6.0 under Administration, for super admins):
// the list with mode, encryption, compression, last seen and the hosts
// each monitors (filter by mode, search by name, mass delete, and the
// mass "enable/disable hosts" 6.0 has), and the form: name, mode
// (active or passive), the passive proxy's interface, the active
// proxy's allowed addresses, description, the hosts it monitors, and
// encryption. The API never returns a PSK identity or key: the fields
// start empty, an empty field keeps what is stored, and switching a
// proxy to PSK needs both. Compression is read-only in 6.0's API (the
// server decides it), so it is shown, not edited.
import { call } from '../../api.js';
import { h, fmtAge } from '../../dom.js';
import { crudPage, input, fld, picker } from '../../crud.js';

const N = 'proxy';
const MODES = [[5, 'Active'], [6, 'Passive']];
const CONNECT = [[1, 'No encryption'], [2, 'PSK'], [4, 'Certificate']];
const label = (list, v) => (list.find(([x]) => String(x) === String(v)) || [0, v])[1];

// encryption is the list's "Encryption" text of a proxy: the direction
// the server uses (to a passive proxy, from an active one).
function encryption(p) {
  if (p.status === '6') return label(CONNECT, p.tls_connect).replace('No encryption', 'None');
  const acc = Number(p.tls_accept);
  const parts = CONNECT.filter(([v]) => acc & v).map(([v, t]) => (v === 1 ? 'None' : t));
  return parts.join(', ') || 'None';
}

export async function render(main) {
  await crudPage(main, {
    api: 'proxy', id: 'proxyid', ids: 'proxyids', noun: N, label: 'proxy', title: 'Proxies', section: 'admin', path: '/config/proxies',
    sort: [['host', 'Name'], ['status', 'Mode']],
    search: { field: 'host', label: 'Search name' },
    filters: [{ id: 'status', label: 'Mode', options: MODES, apply: (p, v) => { p.filter = { status: v }; } }],
    rowParams: { output: ['proxyid', 'host', 'status', 'tls_connect', 'tls_accept', 'auto_compress', 'lastaccess', 'description'],
      selectHosts: ['hostid', 'name'] },
    columns: [
      { label: 'Name', sort: 'host', cell: (p) => p.host },
      { label: 'Mode', sort: 'status', cell: (p) => label(MODES, p.status) },
      { label: 'Encryption', cell: (p) => h('span', { class: 'proxy-encryption' }, encryption(p)) },
      { label: 'Compression', cell: (p) => (p.auto_compress === '1' ? 'On' : 'Off') },
      // 6.0's proxy.get has no version (6.4 added it).
      { label: 'Last seen (age)', cell: (p) => (p.lastaccess && p.lastaccess !== '0' ? fmtAge(p.lastaccess) : 'Never') },
      { label: 'Host count', cell: (p) => h('span', { class: 'proxy-host-count' }, String((p.hosts || []).length)) },
      { label: 'Hosts', cell: (p) => (p.hosts || []).slice(0, 5).map((x) => h('span', { class: 'tag' }, x.name)).concat((p.hosts || []).length > 5 ? ['…'] : []) },
    ],
    mass: [
      { id: 'enable-hosts', label: 'Enable hosts', run: (sel) => hostsStatus(sel, 0) },
      { id: 'disable-hosts', label: 'Disable hosts', run: (sel) => hostsStatus(sel, 1) },
    ],
    editParams: { selectHosts: ['hostid', 'name'], selectInterface: 'extend' },
    newObject: { status: '5', tls_connect: '1', tls_accept: '1', auto_compress: '1', hosts: [], interface: { useip: '1', ip: '127.0.0.1', dns: '', port: '10051' } },
    // A host has one proxy: a clone starts with none of them.
    clone: (p) => ({ ...p, host: `${p.host}-copy`, hosts: [] }),
    form: proxyForm,
  });
}

// hostsStatus enables or disables the hosts of the chosen proxies.
async function hostsStatus(sel, status) {
  const ps = await call('proxy.get', { proxyids: sel, output: ['proxyid'], selectHosts: ['hostid'] });
  const hosts = ps.flatMap((p) => p.hosts || []).map((x) => ({ hostid: x.hostid }));
  if (hosts.length) await call('host.massupdate', { hosts, status });
}

function proxyForm(p, lists, isNew) {
  const iface = (p.interface && !Array.isArray(p.interface) ? p.interface : null) || { useip: '1', ip: '', dns: '', port: '10051' };
  const f = {
    host: input.text(N, 'host', p.host, { maxlength: 128 }),
    status: input.select(N, 'status', MODES, p.status),
    proxy_address: input.text(N, 'proxy_address', p.proxy_address, { placeholder: '192.0.2.1, 192.0.2.0/24, proxy.example.com' }),
    description: input.area(N, 'description', p.description, 3),
    ip: h('input', { type: 'text', id: 'proxy-ip', dataset: { key: 'interface' }, value: iface.ip ?? '', 'aria-label': 'IP address' }),
    dns: h('input', { type: 'text', id: 'proxy-dns', value: iface.dns ?? '', 'aria-label': 'DNS name' }),
    useip: h('select', { id: 'proxy-useip', 'aria-label': 'Connect to' },
      [['1', 'IP'], ['0', 'DNS']].map(([v, t]) => h('option', { value: v, selected: String(iface.useip ?? '1') === v }, t))),
    port: h('input', { type: 'text', id: 'proxy-port', dataset: { key: 'interface/port' }, value: iface.port ?? '10051', 'aria-label': 'Port' }),
    tls_connect: input.select(N, 'tls_connect', CONNECT, p.tls_connect ?? 1),
    tls_psk_identity: h('input', { type: 'text', id: 'proxy-tls-psk-identity', dataset: { key: 'tls_psk_identity' }, autocomplete: 'off', maxlength: 128 }),
    tls_psk: h('input', { type: 'password', id: 'proxy-tls-psk', dataset: { key: 'tls_psk' }, autocomplete: 'new-password', maxlength: 512 }),
    tls_issuer: input.text(N, 'tls_issuer', p.tls_issuer),
    tls_subject: input.text(N, 'tls_subject', p.tls_subject),
  };
  const acc = Number(p.tls_accept ?? 1);
  const accept = CONNECT.map(([v, t]) => h('label', { class: 'check' },
    h('input', { type: 'checkbox', class: 'proxy-accept', id: `proxy-accept-${v}`, value: String(v), checked: (acc & v) !== 0 }), t));
  const hosts = picker('proxy-hosts', (p.hosts || []).map((x) => [x.hostid, x.name]),
    async (q) => (await call('host.get', { output: ['hostid', 'name'], search: { name: q }, sortfield: 'name', limit: 50 })).map((x) => [x.hostid, x.name]));
  // PSK in use now: empty fields keep the stored identity and key.
  const hadPSK = !isNew && (p.status === '6' ? p.tls_connect === '2' : (Number(p.tls_accept) & 2) !== 0);
  const pskNote = h('p', { class: 'muted', id: 'proxy-psk-note' }, hadPSK
    ? 'A PSK is stored and never shown. Leave both fields empty to keep it; type both to replace it.'
    : 'Type the PSK identity and the key (at least 32 hexadecimal digits).');
  const passive = h('div', { class: 'form-grid type-fields', id: 'proxy-passive' },
    fld('Interface: IP address', f.ip), fld('DNS name', f.dns), fld('Connect to', f.useip), fld('Port', f.port));
  const active = h('div', { class: 'form-grid type-fields', id: 'proxy-active' }, fld('Proxy address', f.proxy_address));
  const connectFld = fld('Connections to proxy', f.tls_connect);
  const acceptFld = h('div', { class: 'field' }, h('span', { class: 'field-label' }, 'Connections from proxy'),
    h('div', { class: 'checks', dataset: { key: 'tls_accept' } }, accept));
  const psk = h('div', { class: 'type-fields', id: 'proxy-psk' }, pskNote,
    h('div', { class: 'form-grid' }, fld('PSK identity', f.tls_psk_identity), fld('PSK', f.tls_psk)));
  const cert = h('div', { class: 'form-grid type-fields', id: 'proxy-cert' }, fld('Issuer', f.tls_issuer), fld('Subject', f.tls_subject));
  const acceptMask = () => accept.reduce((m, l) => m | (l.firstChild.checked ? Number(l.firstChild.value) : 0), 0);
  const show = () => {
    const isPassive = f.status.value === '6';
    passive.hidden = !isPassive;
    active.hidden = isPassive;
    connectFld.hidden = !isPassive;
    acceptFld.hidden = isPassive;
    const mask = isPassive ? Number(f.tls_connect.value) : acceptMask();
    psk.hidden = (mask & 2) === 0;
    cert.hidden = (mask & 4) === 0;
  };
  f.status.addEventListener('change', show);
  f.tls_connect.addEventListener('change', show);
  for (const l of accept) l.firstChild.addEventListener('change', show);
  show();
  const compression = h('span', { id: 'proxy-compression' }, String(p.auto_compress ?? '1') === '1' ? 'On' : 'Off');
  return {
    body: [
      h('div', { class: 'form-grid' }, fld('Proxy name', f.host), fld('Proxy mode', f.status), fld('Compression (set by the server)', compression)),
      passive, active,
      h('h4', {}, 'Hosts monitored by this proxy'), hosts.el,
      fld('Description', f.description),
      h('h4', {}, 'Encryption'), h('div', { class: 'form-grid' }, connectFld, acceptFld), psk, cert,
    ],
    read: () => {
      const status = Number(f.status.value);
      const o = { host: f.host.value, status, description: f.description.value, hosts: hosts.values().map((hostid) => ({ hostid })) };
      let mask;
      if (status === 6) {
        o.interface = { useip: Number(f.useip.value), ip: f.ip.value, dns: f.dns.value, port: f.port.value };
        o.tls_connect = Number(f.tls_connect.value);
        o.tls_accept = 1;
        mask = o.tls_connect;
        if (!isNew) o.proxy_address = '';
      } else {
        o.proxy_address = f.proxy_address.value;
        o.tls_accept = acceptMask() || 1;
        o.tls_connect = 1;
        mask = o.tls_accept;
      }
      if (mask & 4) Object.assign(o, { tls_issuer: f.tls_issuer.value, tls_subject: f.tls_subject.value });
      // Secrets: sent only when typed (an empty pair keeps the stored one).
      if (mask & 2) {
        if (f.tls_psk_identity.value !== '' || !hadPSK) o.tls_psk_identity = f.tls_psk_identity.value;
        if (f.tls_psk.value !== '' || !hadPSK) o.tls_psk = f.tls_psk.value;
      }
      return o;
    },
  };
}
