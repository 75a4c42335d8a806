// The item form of Zabbix 6.0 for items (items.js) and item prototypes
// (prototypes.js): three tabs (the item, its tags, its preprocessing)
// and, on the first, exactly the fields 6.0 shows for the chosen type,
// type of information, SSH authentication method, HTTP authentication
// and "Enable trapping" (recorded from 6.0.14's items.php form, its
// field_switches: internal/web/testdata/item-form-6.0.14.json; the
// browser test checks every type against it). Every field is the
// API's member of the same meaning (item.create/update, item.get).
//
// Secrets (password, ssl_key_password) are never shown: the API does not
// return them; an empty field keeps what is stored, a typed one
// replaces it. 6.0's Database monitor has no DSN field of its own: the
// DSN is the key's second parameter (db.odbc.select[name,dsn]), as the
// key's placeholder says.
import { h, clear } from '../../dom.js';
import { preprocEditor } from './preproc.js';
import { tabs } from './tabs.js';

// ITEM_TYPES in 6.0's menu order (6.0 has no Zabbix aggregate type: it
// became calculated items' aggregate functions in 5.4).
export const ITEM_TYPES = [[0, 'Zabbix agent'], [7, 'Zabbix agent (active)'], [3, 'Simple check'], [20, 'SNMP agent'], [17, 'SNMP trap'],
  [5, 'Zabbix internal'], [2, 'Zabbix trapper'], [10, 'External check'], [11, 'Database monitor'], [19, 'HTTP agent'], [12, 'IPMI agent'],
  [13, 'SSH agent'], [14, 'TELNET agent'], [16, 'JMX agent'], [15, 'Calculated'], [18, 'Dependent item'], [21, 'Script']];
export const VALUE_TYPES = [[3, 'Numeric (unsigned)'], [0, 'Numeric (float)'], [1, 'Character'], [2, 'Log'], [4, 'Text']];

const DELAY = ['delay', 'delay_flex'];
// BY_TYPE: the fields each type shows beyond name, type, key, type of
// information, history, description and status.
export const BY_TYPE = {
  0: ['interfaceid', ...DELAY],
  2: ['trapper_hosts'],
  3: ['interfaceid', 'username', 'password', ...DELAY],
  5: DELAY,
  7: DELAY,
  10: ['interfaceid', ...DELAY],
  11: ['username', 'password', 'sql_query', ...DELAY],
  12: ['interfaceid', 'ipmi_sensor', ...DELAY],
  13: ['interfaceid', 'authtype', 'username', 'password', 'executed_script', ...DELAY],
  14: ['interfaceid', 'username', 'password', 'executed_script', ...DELAY],
  15: ['formula', ...DELAY],
  16: ['interfaceid', 'jmx_endpoint', 'username', 'password', ...DELAY],
  17: ['interfaceid'],
  18: ['master_itemid'],
  19: ['url', 'query_fields', 'request_method', 'timeout', 'post_type', 'posts', 'headers', 'status_codes', 'follow_redirects', 'retrieve_mode',
    'output_format', 'http_proxy', 'http_authtype', 'verify_peer', 'verify_host', 'ssl_cert_file', 'ssl_key_file', 'ssl_key_password',
    'interfaceid', ...DELAY, 'allow_traps'],
  20: ['interfaceid', 'snmp_oid', ...DELAY],
  21: ['parameters', 'script', 'timeout', ...DELAY],
};
// BY_VALUE_TYPE: the fields each type of information shows.
export const BY_VALUE_TYPE = {
  0: ['units', 'trends', 'valuemapid', 'inventory_link'], 3: ['units', 'trends', 'valuemapid', 'inventory_link'],
  1: ['valuemapid', 'inventory_link'], 2: ['logtimefmt'], 4: ['inventory_link'],
};
// The interface type an item type checks through (0: any, -1: any or
// none), as 6.0's interface_types.
const IFACE_OF = { 0: 1, 20: 2, 17: 2, 12: 3, 16: 4, 3: 0, 10: 0, 13: 0, 14: 0, 19: -1 };
const IFACE_NAMES = { 1: 'Agent', 2: 'SNMP', 3: 'IPMI', 4: 'JMX' };
// The key placeholders 6.0 gives these types.
const KEY_HINT = { 11: 'db.odbc.select[<unique short description>,<dsn>,<connection string>]', 13: 'ssh.run[<unique short description>,<ip>,<port>,<encoding>]',
  14: 'telnet.run[<unique short description>,<ip>,<port>,<encoding>]' };
// INVENTORY_FIELDS are the labels of inventory_link 1..70 (6.0.14).
const INVENTORY_FIELDS = ['Type', 'Type (Full details)', 'Name', 'Alias', 'OS', 'OS (Full details)', 'OS (Short)', 'Serial number A', 'Serial number B',
  'Tag', 'Asset tag', 'MAC address A', 'MAC address B', 'Hardware', 'Hardware (Full details)', 'Software', 'Software (Full details)',
  'Software application A', 'Software application B', 'Software application C', 'Software application D', 'Software application E', 'Contact',
  'Location', 'Location latitude', 'Location longitude', 'Notes', 'Chassis', 'Model', 'HW architecture', 'Vendor', 'Contract number',
  'Installer name', 'Deployment status', 'URL A', 'URL B', 'URL C', 'Host networks', 'Host subnet mask', 'Host router', 'OOB IP address',
  'OOB subnet mask', 'OOB router', 'Date HW purchased', 'Date HW installed', 'Date HW maintenance expires', 'Date HW decommissioned',
  'Site address A', 'Site address B', 'Site address C', 'Site city', 'Site state / province', 'Site country', 'Site ZIP / postal',
  'Site rack location', 'Site notes', 'Primary POC name', 'Primary POC email', 'Primary POC phone A', 'Primary POC phone B',
  'Primary POC cell', 'Primary POC screen name', 'Primary POC notes', 'Secondary POC name', 'Secondary POC email',
  'Secondary POC phone A', 'Secondary POC phone B', 'Secondary POC cell', 'Secondary POC screen name', 'Secondary POC notes'];

// newItem is a new item's values: 6.0's form defaults.
export const newItem = () => ({ name: '', key_: '', type: '0', value_type: '3', delay: '1m', history: '90d', trends: '365d', units: '', status: '0',
  discover: '0', valuemapid: '0', inventory_link: '0', description: '', url: '', query_fields: [], request_method: '0', timeout: '3s', post_type: '0',
  posts: '', headers: [], status_codes: '200', follow_redirects: '1', retrieve_mode: '0', output_format: '0', http_proxy: '', authtype: '0',
  username: '', verify_peer: '0', verify_host: '0', ssl_cert_file: '', ssl_key_file: '', allow_traps: '0', trapper_hosts: '', snmp_oid: '',
  ipmi_sensor: '', jmx_endpoint: 'service:jmx:rmi:///jndi/rmi://{HOST.CONN}:{HOST.PORT}/jmxrmi', publickey: '', privatekey: '', params: '',
  parameters: [], master_itemid: '0', logtimefmt: '', tags: [], preprocessing: [] });

// cloneItem is what 6.0's Clone starts from: the form's values without
// the id, inheritance and secrets (which were never shown).
export const cloneItem = (o) => ({ ...o, itemid: undefined, templateid: '0', uuid: undefined });

// splitDelay reads "1m;50s/1-5,09:00-18:00;wd1-5h9" as the interval and
// custom intervals (flexible: interval and period; scheduling).
export function splitDelay(d) {
  const [base, ...rest] = String(d ?? '').split(';');
  return { base, flex: rest.filter((x) => x !== '').map((x) => {
    const i = x.indexOf('/');
    return i >= 0 ? { kind: '0', interval: x.slice(0, i), period: x.slice(i + 1) } : { kind: '1', interval: x, period: '' };
  }) };
}

const idOf = (noun, key) => `${noun}-${key.replace(/_$/, '').replace(/_/g, '-')}`;
const opt = (list, v) => list.map(([x, t]) => h('option', { value: String(x), selected: String(x) === String(v) }, t));

// pairsEditor edits name/value pairs (query fields, headers, script
// parameters); values() leaves out rows without a name.
function pairsEditor(id, key, pairs) {
  const body = h('tbody', {});
  const add = (n = '', v = '') => {
    const name = h('input', { type: 'text', class: 'pair-name', value: n, placeholder: 'name', 'aria-label': 'Name' });
    const value = h('input', { type: 'text', class: 'pair-value', value: v, placeholder: 'value', 'aria-label': 'Value' });
    const tr = h('tr', { class: `${id}-row` }, h('td', {}, name), h('td', {}, '⇒'), h('td', {}, value),
      h('td', {}, h('button', { type: 'button', class: 'remove-row', onclick: () => tr.remove() }, 'Remove')));
    tr.read = () => (name.value.trim() === '' ? null : [name.value, value.value]);
    body.append(tr);
  };
  for (const [n, v] of pairs) add(n, v);
  if (!pairs.length) add();
  return {
    el: h('div', { class: 'rows-editor pairs', id, dataset: { key } }, h('table', { class: 'plain' }, body),
      h('button', { type: 'button', class: 'add-row', id: `${id}-add`, onclick: () => add() }, 'Add')),
    values: () => [...body.children].map((tr) => tr.read()).filter((x) => x !== null),
  };
}

// asPairs reads the API's headers (an object, or [] for none), query
// fields ([{name: value}]) or parameters ([{name, value}]) as pairs.
function asPairs(v, named) {
  if (!v) return [];
  if (named) return v.map((p) => [p.name, p.value]);
  if (Array.isArray(v)) return v.flatMap((o) => Object.entries(o));
  return Object.entries(v);
}

// itemForm builds the form's body for o. ctx: host ({hostid, name,
// interfaces, template}), valuemaps (null: no valuemap.get), masters
// ([{itemid, name}] the dependent item may depend on), proto (an item
// prototype: "Create enabled", "Discover", no inventory), readOnly.
// Returns {body, read(), fieldsShown()}; read() is the API's object.
export function itemForm(noun, o, ctx) {
  const N = noun;
  const rows = {};
  const inputs = {};
  // row makes one labelled row of the form; key is the API member
  // (data-key: where an error naming it is shown).
  const row = (field, label, el, key) => {
    const r = h('div', { class: 'iform-row', dataset: { field } }, h('label', { class: 'iform-label', for: el.id || undefined }, label), h('div', { class: 'iform-field' }, el));
    rows[field] = r;
    // A field of several controls names the one an error goes beside.
    r.el = el.keyEl || el;
    if (key) r.el.dataset.key = key;
    r.key = key;
    return r;
  };
  const text = (field, v, attrs = {}) => (inputs[field] = h('input', { type: 'text', id: idOf(N, field), value: v ?? '', maxlength: 255, ...attrs }));
  const area = (field, v, rowsN = 3, attrs = {}) => {
    const t = h('textarea', { id: idOf(N, field), rows: rowsN, spellcheck: 'false', ...attrs });
    t.value = v ?? '';
    return (inputs[field] = t);
  };
  const sel = (field, list, v, id) => (inputs[field] = h('select', { id: id || idOf(N, field), 'aria-label': field }, opt(list, v)));
  const check = (field, on) => (inputs[field] = h('input', { type: 'checkbox', id: idOf(N, field), checked: String(on) === '1' }));
  const radios = (field, list, v) => {
    const name = `${N}-${field}-${Math.random().toString(36).slice(2)}`;
    const box = h('span', { class: 'radios', id: idOf(N, field) }, list.map(([x, t]) => h('label', {},
      h('input', { type: 'radio', name, value: String(x), checked: String(x) === String(v) }), t)));
    Object.defineProperty(box, 'value', { get: () => box.querySelector('input:checked')?.value ?? String(list[0][0]),
      set: (x) => { for (const i of box.querySelectorAll('input')) i.checked = i.value === String(x); } });
    return (inputs[field] = box);
  };

  const type = sel('type', ITEM_TYPES, o.type);
  const vt = sel('value_type', VALUE_TYPES, o.value_type);
  const isHTTP = String(o.type) === '19';
  const { base, flex } = splitDelay(o.delay);

  // Interfaces of the host, by type; the chosen one kept when it fits.
  const ifaceSel = h('select', { id: idOf(N, 'interfaceid'), 'aria-label': 'Host interface' });
  inputs.interfaceid = ifaceSel;
  const fillIfaces = () => {
    const want = IFACE_OF[type.value];
    const cur = ifaceSel.value || String(o.interfaceid || '');
    const list = (ctx.host.interfaces || []).filter((f) => want === undefined || want <= 0 || Number(f.type) === want);
    clear(ifaceSel);
    if (want === -1) ifaceSel.append(h('option', { value: '0' }, 'None'));
    for (const f of list) {
      const addr = (f.useip === '0' ? f.dns : f.ip) || f.ip || f.dns || '';
      ifaceSel.append(h('option', { value: f.interfaceid }, `${IFACE_NAMES[f.type] || f.type}: ${addr}${f.port ? ':' + f.port : ''}`));
    }
    if (!list.length && want !== -1) ifaceSel.append(h('option', { value: '' }, want > 0 ? `No ${IFACE_NAMES[want]} interface on the host` : 'No interface on the host'));
    const main = list.find((f) => Number(f.type) === want && f.main === '1') || list[0];
    ifaceSel.value = [...ifaceSel.options].some((x) => x.value === cur) ? cur : (want === -1 && !cur ? '0' : main ? main.interfaceid : ifaceSel.options[0]?.value || '');
  };

  // Custom intervals: flexible (interval, period) or scheduling.
  const flexBody = h('tbody', {});
  const addFlex = (f = { kind: '0', interval: '', period: '1-7,00:00-24:00' }) => {
    const kind = h('select', { class: 'flex-type', 'aria-label': 'Type' }, opt([[0, 'Flexible'], [1, 'Scheduling']], f.kind));
    const interval = h('input', { type: 'text', class: 'flex-interval', value: f.interval, placeholder: f.kind === '1' ? 'wd1-5h9-18' : '50s', 'aria-label': 'Interval' });
    const period = h('input', { type: 'text', class: 'flex-period', value: f.period, placeholder: '1-7,00:00-24:00', 'aria-label': 'Period' });
    const sync = () => { period.hidden = kind.value === '1'; interval.placeholder = kind.value === '1' ? 'wd1-5h9-18' : '50s'; };
    kind.addEventListener('change', sync);
    sync();
    const tr = h('tr', { class: 'flex-row' }, h('td', {}, kind), h('td', {}, interval), h('td', {}, period),
      h('td', {}, h('button', { type: 'button', class: 'remove-row', onclick: () => tr.remove() }, 'Remove')));
    tr.read = () => (interval.value.trim() === '' ? null : kind.value === '1' ? interval.value.trim() : `${interval.value.trim()}/${period.value.trim()}`);
    flexBody.append(tr);
  };
  for (const f of flex) addFlex(f);
  const flexEl = h('div', { class: 'rows-editor', id: idOf(N, 'delay_flex') },
    h('table', { class: 'plain' }, h('thead', {}, h('tr', {}, h('th', {}, 'Type'), h('th', {}, 'Interval'), h('th', {}, 'Period'), h('th', {}))), flexBody),
    h('button', { type: 'button', class: 'add-row', id: `${idOf(N, 'delay_flex')}-add`, onclick: () => addFlex() }, 'Add'));

  // History and trends: "Do not keep" or a storage period ("0" is
  // "do not keep" in the API).
  const period = (field, v) => {
    const mode = radios(`${field}_mode`, [[0, 'Do not keep'], [1, 'Storage period']], String(v) === '0' ? 0 : 1);
    const t = text(field, String(v) === '0' ? (field === 'history' ? '90d' : '365d') : v, { class: 'narrow' });
    const sync = () => { t.disabled = mode.value === '0' || !!ctx.readOnly; };
    mode.addEventListener('change', sync);
    sync();
    const box = h('span', { class: 'period' }, mode, t);
    box.keyEl = t;
    box.read = () => (mode.value === '0' ? '0' : t.value);
    return box;
  };
  const history = period('history', o.history ?? '90d');
  const trends = period('trends', o.trends ?? '365d');

  const masters = (ctx.masters || []).filter((m) => m.itemid !== o.itemid);
  const master = sel('master_itemid', [['0', '— choose an item —'], ...masters.map((m) => [m.itemid, `${m.name} (${m.key_})`])], o.master_itemid || '0');
  const vms = ctx.valuemaps;
  const valuemap = vms ? sel('valuemapid', [['0', 'none'], ...vms.map((m) => [m.valuemapid, m.name])], o.valuemapid || '0', `${N}-valuemap`)
    : h('span', { class: 'muted', id: `${N}-valuemap` }, 'not available (no valuemap.get)');
  const inventory = sel('inventory_link', [[0, '-None-'], ...INVENTORY_FIELDS.map((l, i) => [i + 1, l])], o.inventory_link || '0');
  const isSSH = String(o.type) === '13';
  const queryFields = pairsEditor(idOf(N, 'query_fields'), 'query_fields', asPairs(o.query_fields));
  const headers = pairsEditor(idOf(N, 'headers'), 'headers', asPairs(o.headers));
  const parameters = pairsEditor(idOf(N, 'parameters'), 'parameters', asPairs(o.parameters, true));
  const params = String(o.params ?? '');
  const p = (t) => (String(o.type) === String(t) ? params : '');
  const secret = (field, stored) => text(field, '', { type: 'password', placeholder: stored ? 'stored: type to replace' : '', autocomplete: 'new-password' });
  const status = check('status', String(o.status) === '0' ? '1' : '0');
  const discover = check('discover', String(o.discover ?? '0') === '0' ? '1' : '0');

  const all = [
    row('name', 'Name', text('name', o.name, { placeholder: '' }), 'name'),
    row('type', 'Type', type, 'type'),
    row('key', 'Key', text('key', o.key_, { maxlength: 2048 }), 'key_'),
    row('value_type', 'Type of information', vt, 'value_type'),
    row('url', 'URL', text('url', isHTTP ? o.url : '', { maxlength: 2048 }), 'url'),
    row('query_fields', 'Query fields', queryFields.el),
    row('parameters', 'Parameters', parameters.el),
    row('script', 'Script', area('script', p(21), 6, { placeholder: 'return value' }), 'params'),
    row('request_method', 'Request type', sel('request_method', [[0, 'GET'], [1, 'POST'], [2, 'PUT'], [3, 'HEAD']], o.request_method ?? '0'), 'request_method'),
    row('timeout', 'Timeout', text('timeout', o.timeout || '3s', { class: 'narrow' }), 'timeout'),
    row('post_type', 'Request body type', radios('post_type', [[0, 'Raw data'], [2, 'JSON data'], [3, 'XML data']], o.post_type ?? '0'), 'post_type'),
    row('posts', 'Request body', area('posts', isHTTP ? o.posts : '', 3), 'posts'),
    row('headers', 'Headers', headers.el),
    row('status_codes', 'Required status codes', text('status_codes', isHTTP ? o.status_codes : '200'), 'status_codes'),
    row('follow_redirects', 'Follow redirects', check('follow_redirects', o.follow_redirects ?? '1'), 'follow_redirects'),
    row('retrieve_mode', 'Retrieve mode', radios('retrieve_mode', [[0, 'Body'], [1, 'Headers'], [2, 'Body and headers']], o.retrieve_mode ?? '0'), 'retrieve_mode'),
    row('output_format', 'Convert to JSON', check('output_format', o.output_format ?? '0'), 'output_format'),
    row('http_proxy', 'HTTP proxy', text('http_proxy', o.http_proxy, { placeholder: '[protocol://][user[:password]@]proxy.example.com[:port]' }), 'http_proxy'),
    row('http_authtype', 'HTTP authentication', sel('http_authtype', [[0, 'None'], [1, 'Basic'], [2, 'NTLM'], [3, 'Kerberos'], [4, 'Digest']], isHTTP ? o.authtype : '0'), 'authtype'),
    row('http_username', 'User name', text('http_username', isHTTP ? o.username : ''), 'username'),
    row('http_password', 'Password', secret('http_password', isHTTP && o.itemid), 'password'),
    row('verify_peer', 'SSL verify peer', check('verify_peer', o.verify_peer ?? '0'), 'verify_peer'),
    row('verify_host', 'SSL verify host', check('verify_host', o.verify_host ?? '0'), 'verify_host'),
    row('ssl_cert_file', 'SSL certificate file', text('ssl_cert_file', o.ssl_cert_file), 'ssl_cert_file'),
    row('ssl_key_file', 'SSL key file', text('ssl_key_file', o.ssl_key_file), 'ssl_key_file'),
    row('ssl_key_password', 'SSL key password', secret('ssl_key_password', isHTTP && o.itemid), 'ssl_key_password'),
    row('master_itemid', 'Master item', master, 'master_itemid'),
    row('interfaceid', 'Host interface', ifaceSel, 'interfaceid'),
    row('snmp_oid', 'SNMP OID', text('snmp_oid', o.snmp_oid, { placeholder: 'walk[OID1,OID2,...] or get[OID]', maxlength: 512 }), 'snmp_oid'),
    row('ipmi_sensor', 'IPMI sensor', text('ipmi_sensor', o.ipmi_sensor), 'ipmi_sensor'),
    row('authtype', 'Authentication method', sel('authtype', [[0, 'Password'], [1, 'Public key']], isSSH ? o.authtype : '0'), 'authtype'),
    row('jmx_endpoint', 'JMX endpoint', text('jmx_endpoint', o.jmx_endpoint || newItem().jmx_endpoint), 'jmx_endpoint'),
    row('username', 'User name', text('username', isHTTP ? '' : o.username), 'username'),
    row('publickey', 'Public key file', text('publickey', o.publickey), 'publickey'),
    row('privatekey', 'Private key file', text('privatekey', o.privatekey), 'privatekey'),
    row('password', 'Password', secret('password', !isHTTP && o.itemid), 'password'),
    row('executed_script', 'Executed script', area('executed_script', p(13) || p(14), 4), 'params'),
    row('sql_query', 'SQL query', area('sql_query', p(11), 4), 'params'),
    row('formula', 'Formula', area('formula', p(15), 3, { placeholder: 'avg(/host/key,1h)' }), 'params'),
    row('units', 'Units', text('units', o.units, { class: 'narrow' }), 'units'),
    row('delay', 'Update interval', text('delay', base || '1m', { class: 'narrow' }), 'delay'),
    row('delay_flex', 'Custom intervals', flexEl),
    row('history', 'History storage period', history, 'history'),
    row('trends', 'Trend storage period', trends, 'trends'),
    row('logtimefmt', 'Log time format', text('logtimefmt', o.logtimefmt, { placeholder: 'pppppp:yyyyMMdd:hhmmss' }), 'logtimefmt'),
    row('valuemapid', 'Value mapping', valuemap, 'valuemapid'),
    row('allow_traps', 'Enable trapping', check('allow_traps', o.allow_traps ?? '0'), 'allow_traps'),
    row('trapper_hosts', 'Allowed hosts', text('trapper_hosts', o.trapper_hosts, { placeholder: '127.0.0.1, 192.168.1.0/24, 192.168.3.1-255, zabbix.example.com' }), 'trapper_hosts'),
    row('inventory_link', 'Populates host inventory field', inventory, 'inventory_link'),
    row('description', 'Description', area('description', o.description, 3), 'description'),
    row('status', ctx.proto ? 'Create enabled' : 'Enabled', status, 'status'),
    ctx.proto ? row('discover', 'Discover', discover, 'discover') : null,
  ].filter(Boolean);
  if (o.templateid && o.templateid !== '0') all.unshift(h('p', { class: 'muted iform-note' }, 'Inherited from a template: its name, key, type and most type settings are the template\'s.'));

  // fieldsShown names the rows in view.
  const fieldsShown = () => {
    const t = Number(type.value);
    const v = Number(vt.value);
    const on = new Set(['name', 'type', 'key', 'value_type', 'history', 'description', 'status', ...(BY_TYPE[t] || []), ...(BY_VALUE_TYPE[v] || [])]);
    if (ctx.proto) {
      on.add('discover');
      on.delete('inventory_link');
    }
    if (t === 13 && inputs.authtype.value === '1') ['publickey', 'privatekey'].forEach((f) => on.add(f));
    if (t === 19 && inputs.http_authtype.value !== '0') ['http_username', 'http_password'].forEach((f) => on.add(f));
    if (t === 19 && inputs.allow_traps.checked) on.add('trapper_hosts');
    // A template has no interfaces: its items choose none.
    if (ctx.host.template) on.delete('interfaceid');
    return on;
  };
  const sync = () => {
    const on = fieldsShown();
    for (const [f, r] of Object.entries(rows)) {
      r.hidden = !on.has(f);
      // Only a field in view takes an error naming its member.
      if (r.key) {
        if (r.hidden) delete r.el.dataset.key;
        else r.el.dataset.key = r.key;
      }
    }
    inputs.key.placeholder = KEY_HINT[type.value] || '';
    // SSH with a public key: the password is the key's passphrase.
    rows.password.firstChild.textContent = type.value === '13' && inputs.authtype.value === '1' ? 'Key passphrase' : 'Password';
    // HEAD answers headers only.
    if (inputs.request_method.value === '3') inputs.retrieve_mode.value = '1';
  };
  type.addEventListener('change', () => { fillIfaces(); sync(); });
  for (const f of ['value_type', 'authtype', 'http_authtype', 'allow_traps', 'request_method']) inputs[f].addEventListener('change', sync);
  fillIfaces();
  sync();

  // Tags.
  const tagBody = h('tbody', {});
  const addTag = (t = {}) => {
    const tag = h('input', { type: 'text', class: 'tag-tag', value: t.tag || '', placeholder: 'tag', 'aria-label': 'Name' });
    const value = h('input', { type: 'text', class: 'tag-value', value: t.value || '', placeholder: 'value', 'aria-label': 'Value' });
    const tr = h('tr', { class: `${N}-tags-row` }, h('td', {}, tag), h('td', {}, value), h('td', {}, h('button', { type: 'button', class: 'remove-row', onclick: () => tr.remove() }, 'Remove')));
    tr.read = () => (tag.value.trim() === '' ? null : { tag: tag.value, value: value.value });
    tagBody.append(tr);
  };
  for (const t of o.tags || []) addTag(t);
  const tagsEl = h('div', { class: 'rows-editor', id: `${N}-tags`, dataset: { key: 'tags' } },
    h('table', { class: 'plain' }, h('thead', {}, h('tr', {}, h('th', {}, 'Name'), h('th', {}, 'Value'), h('th', {}))), tagBody),
    h('button', { type: 'button', class: 'add-row', id: `${N}-tags-add`, onclick: () => addTag() }, 'Add'));

  const pp = preprocEditor(`${N}-preprocessing`, o.preprocessing, { valueType: () => vt.value, readOnly: ctx.readOnly });
  const body = [tabs(`${N}-tabs`, [
    ['Item', [h('div', { class: 'iform', id: `${N}-fields` }, all)]],
    ['Tags', [tagsEl]],
    ['Preprocessing', [pp.el]],
  ])];

  const read = () => {
    const t = Number(type.value);
    const v = Number(vt.value);
    const on = fieldsShown();
    const r = { name: inputs.name.value, key_: inputs.key.value, type: t, value_type: v, history: history.read(), description: inputs.description.value,
      status: status.checked ? 0 : 1, tags: [...tagBody.children].map((tr) => tr.read()).filter(Boolean), preprocessing: pp.values() };
    if (ctx.proto) r.discover = discover.checked ? 0 : 1;
    const val = (f) => inputs[f].value;
    const num = (f) => Number(inputs[f].value);
    const flag = (f) => (inputs[f].checked ? 1 : 0);
    if (on.has('delay')) r.delay = [val('delay'), ...[...flexBody.children].map((tr) => tr.read()).filter(Boolean)].join(';');
    if (on.has('units')) r.units = val('units');
    if (on.has('trends')) r.trends = trends.read();
    if (on.has('valuemapid') && vms) r.valuemapid = val('valuemapid');
    if (on.has('inventory_link')) r.inventory_link = num('inventory_link');
    if (on.has('logtimefmt')) r.logtimefmt = val('logtimefmt');
    if (on.has('interfaceid')) r.interfaceid = val('interfaceid') || '0';
    if (on.has('trapper_hosts')) r.trapper_hosts = val('trapper_hosts');
    const secretOf = (f) => { if (val(f) !== '') r.password = val(f); };
    switch (t) {
      case 19:
        Object.assign(r, { url: val('url'), query_fields: queryFields.values().map(([n, x]) => ({ [n]: x })), request_method: num('request_method'),
          timeout: val('timeout'), post_type: num('post_type'), posts: val('posts'), headers: Object.fromEntries(headers.values()),
          status_codes: val('status_codes'), follow_redirects: flag('follow_redirects'), retrieve_mode: num('retrieve_mode'),
          output_format: flag('output_format'), http_proxy: val('http_proxy'), authtype: num('http_authtype'), verify_peer: flag('verify_peer'),
          verify_host: flag('verify_host'), ssl_cert_file: val('ssl_cert_file'), ssl_key_file: val('ssl_key_file'), allow_traps: flag('allow_traps') });
        if (r.authtype !== 0) {
          r.username = val('http_username');
          secretOf('http_password');
        }
        if (val('ssl_key_password') !== '') r.ssl_key_password = val('ssl_key_password');
        break;
      case 20: r.snmp_oid = val('snmp_oid'); break;
      case 12: r.ipmi_sensor = val('ipmi_sensor'); break;
      case 16: Object.assign(r, { jmx_endpoint: val('jmx_endpoint'), username: val('username') }); secretOf('password'); break;
      case 13:
        Object.assign(r, { authtype: num('authtype'), username: val('username'), params: val('executed_script') });
        if (r.authtype === 1) Object.assign(r, { publickey: val('publickey'), privatekey: val('privatekey') });
        secretOf('password');
        break;
      case 14: Object.assign(r, { username: val('username'), params: val('executed_script') }); secretOf('password'); break;
      case 3: r.username = val('username'); secretOf('password'); break;
      case 11: Object.assign(r, { username: val('username'), params: val('sql_query') }); secretOf('password'); break;
      case 15: r.params = val('formula'); break;
      case 18: r.master_itemid = val('master_itemid'); break;
      case 21: Object.assign(r, { params: val('script'), timeout: val('timeout'), parameters: parameters.values().map(([name, value]) => ({ name, value })) }); break;
      default:
    }
    return r;
  };
  return { body, read, fieldsShown, sync, inputs, pp };
}
