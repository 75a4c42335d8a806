// Network discovery rules (drule.*; Configuration → Discovery in 6.0):
// the list with IP range, proxy, interval, checks and status (search,
// filter by status, mass enable/disable/delete), and the form: name,
// proxy, IP range, update interval, the checks (every 6.0 check type
// with its fields: ports, agent key, SNMP OID and community, the SNMPv3
// security settings), the device uniqueness criteria (IP address or
// the value of one agent/SNMP check), host name and visible name
// sources, and status. drule.* is one of 6.0's legacy APIs: its errors
// name fields as 'field "iprange"' (netnav.js finds them).
import { call } from '../../api.js';
import { h, clear } from '../../dom.js';
import { crudPage, input, fld, rowTable } from '../../crud.js';

const N = 'drule';
// Check types: number, name, default ports ('' for none).
export const DCHECK_TYPES = [[0, 'SSH', '22'], [1, 'LDAP', '389'], [2, 'SMTP', '25'], [3, 'FTP', '21'], [4, 'HTTP', '80'], [5, 'POP', '110'],
  [6, 'NNTP', '119'], [7, 'IMAP', '143'], [8, 'TCP', ''], [9, 'Zabbix agent', '10050'], [10, 'SNMPv1 agent', '161'], [11, 'SNMPv2 agent', '161'],
  [12, 'ICMP ping', ''], [13, 'SNMPv3 agent', '161'], [14, 'HTTPS', '443'], [15, 'Telnet', '23']];
const SNMP = [10, 11, 13];
// valueCheck: checks with a value (agent and SNMP), which alone may
// make a device unique or name it.
const valueCheck = (t) => t === 9 || SNMP.includes(t);
const SECLEVEL = [[0, 'noAuthNoPriv'], [1, 'authNoPriv'], [2, 'authPriv']];
const AUTHPROTO = [[0, 'MD5'], [1, 'SHA1'], [2, 'SHA224'], [3, 'SHA256'], [4, 'SHA384'], [5, 'SHA512']];
const PRIVPROTO = [[0, 'DES'], [1, 'AES128'], [2, 'AES192'], [3, 'AES256'], [4, 'AES192C'], [5, 'AES256C']];

export function checkName(c) {
  const t = Number(c.type);
  const name = (DCHECK_TYPES.find(([v]) => v === t) || [0, `type ${t}`])[1];
  const ports = c.ports && c.ports !== '0' && t !== 12 ? ` (${c.ports})` : '';
  const key = t === 9 ? ` "${c.key_}"` : SNMP.includes(t) ? ` "${c.key_}"` : '';
  return `${name}${ports}${key}`;
}

export async function render(main) {
  await crudPage(main, {
    api: 'drule', id: 'druleid', ids: 'druleids', noun: N, label: 'discovery rule', title: 'Network discovery rules', section: 'config', path: '/config/drules',
    sort: [['name', 'Name']],
    search: { field: 'name', label: 'Search name' },
    filters: [{ id: 'status', label: 'Status', options: [[0, 'Enabled'], [1, 'Disabled']], apply: (p, v) => { p.filter = { status: v }; } }],
    rowParams: { output: ['druleid', 'name', 'iprange', 'delay', 'status', 'proxy_hostid'], selectDChecks: ['type', 'ports', 'key_'] },
    columns: [
      { label: 'Name', sort: 'name', cell: (r) => r.name },
      { label: 'IP range', cell: (r) => r.iprange },
      { label: 'Proxy', cell: (r) => h('span', { class: 'drule-proxy', dataset: { id: r.proxy_hostid } }, r.proxy_hostid === '0' ? '' : `#${r.proxy_hostid}`) },
      { label: 'Interval', cell: (r) => r.delay },
      { label: 'Checks', cell: (r) => (r.dchecks || []).map(checkName).join(', ') },
      { label: 'Status', cell: (r) => (r.status === '1' ? h('span', { class: 'ack-no' }, 'Disabled') : h('span', { class: 'ack-yes' }, 'Enabled')) },
    ],
    status: { field: 'status', on: 0, off: 1 },
    afterPage: async (listEl) => {
      // Proxy names for the rows in view (one read).
      const els = [...listEl.querySelectorAll('.drule-proxy')].filter((e) => e.dataset.id !== '0');
      if (!els.length) return;
      const ps = await call('proxy.get', { proxyids: [...new Set(els.map((e) => e.dataset.id))], output: ['proxyid', 'host'] }).catch(() => []);
      const names = new Map(ps.map((p) => [p.proxyid, p.host]));
      for (const e of els) if (names.has(e.dataset.id)) e.textContent = names.get(e.dataset.id);
    },
    editParams: { selectDChecks: 'extend' },
    prepare: async () => ({ proxies: await call('proxy.get', { output: ['proxyid', 'host'], sortfield: 'host' }).catch(() => []) }),
    newObject: { iprange: '192.168.0.1-254', delay: '1h', status: '0', proxy_hostid: '0', dchecks: [] },
    clone: (r) => ({ ...r, name: `${r.name} (copy)`, dchecks: (r.dchecks || []).map(({ dcheckid, druleid, ...c }) => c) }),
    form: druleForm,
  });
}

function druleForm(r, { proxies }) {
  const f = {
    name: input.text(N, 'name', r.name, { maxlength: 255 }),
    proxy_hostid: input.select(N, 'proxy_hostid', [[0, 'No proxy'], ...proxies.map((p) => [p.proxyid, p.host])], r.proxy_hostid),
    iprange: input.area(N, 'iprange', r.iprange, 2),
    delay: input.text(N, 'delay', r.delay),
    status: input.check(N, 'status', String(r.status ?? '0') === '0'),
  };
  const uniq = h('select', { id: 'drule-uniq', 'aria-label': 'Device uniqueness criteria' });
  const hostSrc = h('select', { id: 'drule-host-source', 'aria-label': 'Host name' });
  const nameSrc = h('select', { id: 'drule-name-source', 'aria-label': 'Visible name' });
  const rows = [];
  // Which check each source names: 'c<i>' is the row's index in rows.
  const initial = (r.dchecks || []);
  const pick = (k, base) => {
    const i = initial.findIndex((c) => String(c[k]) === '3');
    if (i >= 0) return `c${i}`;
    return initial.length ? String(initial[0][k] ?? base) : String(base);
  };
  let want = { uniq: initial.findIndex((c) => String(c.uniq) === '1') >= 0 ? `c${initial.findIndex((c) => String(c.uniq) === '1')}` : 'ip',
    host: pick('host_source', 1), name: pick('name_source', 0) };
  const fillSources = () => {
    const kept = rows.filter(live);
    const valued = kept.map((x, i) => [x, i]).filter(([x]) => valueCheck(Number(x.type.value)));
    const opts = (sel, base, cur) => {
      clear(sel);
      for (const [v, t] of base) sel.append(h('option', { value: v, selected: v === cur }, t));
      for (const [x] of valued) sel.append(h('option', { value: `r${rows.indexOf(x)}`, selected: `r${rows.indexOf(x)}` === cur }, checkName(x.read())));
    };
    opts(uniq, [['ip', 'IP address']], want.uniq);
    opts(hostSrc, [['1', 'DNS name'], ['2', 'IP address']], want.host);
    opts(nameSrc, [['0', 'Host name'], ['1', 'DNS name'], ['2', 'IP address']], want.name);
  };
  const remember = () => { want = { uniq: uniq.value, host: hostSrc.value, name: nameSrc.value }; };
  for (const s of [uniq, hostSrc, nameSrc]) s.addEventListener('change', remember);
  const checks = rowTable('drule-checks', ['Type', 'Ports', 'Key / SNMP OID', 'SNMP community', 'SNMPv3'], [], (c) => {
    const x = checkRow(c, fillSources);
    rows.push(x);
    return x;
  }, 'dchecks');
  initial.forEach((c) => checks.add(c));
  // The sources chosen by a check's index now point at its row.
  const byRow = (v) => (/^c\d+$/.test(v) ? `r${v.slice(1)}` : v);
  want = { uniq: byRow(want.uniq), host: byRow(want.host), name: byRow(want.name) };
  fillSources();
  const add = checks.el.querySelector('.add-row');
  add.addEventListener('click', () => fillSources());
  checks.el.addEventListener('click', (ev) => { if (ev.target.classList.contains('remove-row')) fillSources(); });
  return {
    body: [
      h('div', { class: 'form-grid' }, fld('Name', f.name), fld('Discovery by proxy', f.proxy_hostid), fld('Update interval', f.delay), fld('Enabled', f.status)),
      fld('IP range', f.iprange),
      h('h4', {}, 'Checks'), checks.el,
      h('div', { class: 'form-grid' }, fld('Device uniqueness criteria', uniq), fld('Host name', hostSrc), fld('Visible name', nameSrc)),
    ],
    read: () => {
      remember();
      const kept = rows.filter(live);
      const dchecks = kept.map((x) => {
        const c = x.read();
        const me = `r${rows.indexOf(x)}`;
        const v = valueCheck(Number(c.type));
        c.uniq = v && want.uniq === me ? 1 : 0;
        c.host_source = v && want.host === me ? 3 : (want.host === '2' ? 2 : 1);
        c.name_source = v && want.name === me ? 3 : (/^[012]$/.test(want.name) ? Number(want.name) : 0);
        return c;
      });
      return { name: f.name.value, proxy_hostid: f.proxy_hostid.value, iprange: f.iprange.value.trim(), delay: f.delay.value,
        status: f.status.checked ? 0 : 1, dchecks };
    },
  };
}

// live: the check's row is still in the table (Remove takes it out).
const live = (x) => !!(x.tr && x.tr.parentNode);

// checkRow is one check: its type and the fields the type has.
function checkRow(c, changed) {
  const t0 = Number(c.type ?? 12);
  const type = h('select', { class: 'dcheck-type', 'aria-label': 'Check type' },
    DCHECK_TYPES.map(([v, t]) => h('option', { value: String(v), selected: v === t0 }, t)));
  const ports = h('input', { type: 'text', class: 'dcheck-ports', 'aria-label': 'Port range', value: c.ports && c.ports !== '0' ? c.ports : '' });
  const key = h('input', { type: 'text', class: 'dcheck-key', 'aria-label': 'Key or SNMP OID', value: c.key_ ?? '' });
  const community = h('input', { type: 'text', class: 'dcheck-community', 'aria-label': 'SNMP community', value: c.snmp_community ?? '' });
  const v3 = {
    securityname: h('input', { type: 'text', class: 'dcheck-v3-securityname', 'aria-label': 'Security name', placeholder: 'security name', value: c.snmpv3_securityname ?? '' }),
    securitylevel: h('select', { class: 'dcheck-v3-securitylevel', 'aria-label': 'Security level' },
      SECLEVEL.map(([v, t]) => h('option', { value: String(v), selected: String(v) === String(c.snmpv3_securitylevel ?? 0) }, t))),
    authprotocol: h('select', { class: 'dcheck-v3-authprotocol', 'aria-label': 'Authentication protocol' },
      AUTHPROTO.map(([v, t]) => h('option', { value: String(v), selected: String(v) === String(c.snmpv3_authprotocol ?? 0) }, t))),
    authpassphrase: h('input', { type: 'text', class: 'dcheck-v3-authpassphrase', 'aria-label': 'Authentication passphrase', placeholder: 'auth passphrase', value: c.snmpv3_authpassphrase ?? '' }),
    privprotocol: h('select', { class: 'dcheck-v3-privprotocol', 'aria-label': 'Privacy protocol' },
      PRIVPROTO.map(([v, t]) => h('option', { value: String(v), selected: String(v) === String(c.snmpv3_privprotocol ?? 0) }, t))),
    privpassphrase: h('input', { type: 'text', class: 'dcheck-v3-privpassphrase', 'aria-label': 'Privacy passphrase', placeholder: 'priv passphrase', value: c.snmpv3_privpassphrase ?? '' }),
    contextname: h('input', { type: 'text', class: 'dcheck-v3-contextname', 'aria-label': 'Context name', placeholder: 'context name', value: c.snmpv3_contextname ?? '' }),
  };
  const v3box = h('div', { class: 'dcheck-v3' }, Object.values(v3));
  let last = t0;
  const show = () => {
    const t = Number(type.value);
    // A new type starts with its standard ports.
    if (t !== last) {
      ports.value = (DCHECK_TYPES.find(([v]) => v === t) || [0, '', ''])[2];
      last = t;
    }
    ports.hidden = t === 12;
    key.hidden = !valueCheck(t);
    key.placeholder = t === 9 ? 'agent key, e.g. system.uname' : 'SNMP OID';
    community.hidden = t !== 10 && t !== 11;
    v3box.hidden = t !== 13;
    const lvl = Number(v3.securitylevel.value);
    v3.authprotocol.hidden = v3.authpassphrase.hidden = lvl < 1;
    v3.privprotocol.hidden = v3.privpassphrase.hidden = lvl < 2;
    changed();
  };
  type.addEventListener('change', show);
  v3.securitylevel.addEventListener('change', show);
  key.addEventListener('change', changed);
  ports.addEventListener('change', changed);
  const x = {
    type,
    cells: [type, ports, key, community, v3box],
    read: () => {
      const t = Number(type.value);
      const o = { type: t, ports: t === 12 ? '0' : ports.value, key_: valueCheck(t) ? key.value : '' };
      if (c.dcheckid) o.dcheckid = c.dcheckid;
      if (t === 10 || t === 11) o.snmp_community = community.value;
      if (t === 13) {
        const lvl = Number(v3.securitylevel.value);
        Object.assign(o, { snmpv3_securityname: v3.securityname.value, snmpv3_securitylevel: lvl, snmpv3_contextname: v3.contextname.value });
        if (lvl >= 1) Object.assign(o, { snmpv3_authprotocol: Number(v3.authprotocol.value), snmpv3_authpassphrase: v3.authpassphrase.value });
        if (lvl >= 2) Object.assign(o, { snmpv3_privprotocol: Number(v3.privprotocol.value), snmpv3_privpassphrase: v3.privpassphrase.value });
      }
      return o;
    },
  };
  // rowTable's <tr> is made after make() returns: found on first use.
  Object.defineProperty(x, 'tr', { get: () => type.closest('tr') });
  queueMicrotask(show);
  return x;
}
