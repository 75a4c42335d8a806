// Web scenarios of a host or template (httptest.*;
// /config/webscenarios?hostid=): the list (steps, interval, attempts,
// authentication, proxy, status, tags; search, status filter, mass
// enable/disable/delete) and the form as 6.0's three tabs in one:
// the scenario (name, interval, attempts, agent, HTTP proxy,
// variables, headers, tags, enabled), its steps (each with URL, query
// fields, post fields or raw post, variables, headers, redirects,
// retrieve mode, timeout, required string and status codes), and
// authentication (HTTP authentication, SSL peer and host checks,
// certificate files). http_password and ssl_key_password are never
// returned by the API: an empty field keeps them.
import { call } from '../../api.js';
import { h } from '../../dom.js';
import { crudPage, input, fld, rowTable, subnav, numVal } from '../../crud.js';
import { rowsEditor } from '../../form.js';

const N = 'httptest';
const AUTH = [[0, 'None'], [1, 'Basic'], [2, 'NTLM'], [3, 'Kerberos'], [4, 'Digest']];
const RETRIEVE = [[0, 'Body'], [1, 'Headers'], [2, 'Body and headers']];
const label = (list, v) => (list.find(([x]) => String(x) === String(v)) || [0, v])[1];
const pairs = (l) => (l || []).map((x) => ({ name: x.name, value: x.value }));

export async function render(main, params) {
  const hostid = params.get('hostid') || '';
  const [hosts, templates] = await Promise.all([
    call('host.get', { output: ['hostid', 'name'], sortfield: 'name' }),
    call('template.get', { output: ['templateid', 'name'], sortfield: 'name' }).catch(() => []),
  ]);
  const sel = h('select', { id: 'httptest-host', 'aria-label': 'Host or template', onchange: () => {
    history.replaceState(null, '', sel.value ? `/config/webscenarios?hostid=${encodeURIComponent(sel.value)}` : '/config/webscenarios');
    dispatchEvent(new PopStateEvent('popstate'));
  } }, h('option', { value: '' }, 'Choose a host or template…'),
  h('optgroup', { label: 'Hosts' }, hosts.map((x) => h('option', { value: x.hostid, selected: x.hostid === hostid }, x.name))),
  templates.length ? h('optgroup', { label: 'Templates' }, templates.map((x) => h('option', { value: x.templateid, selected: x.templateid === hostid }, x.name))) : null);
  if (!hostid) {
    main.append(subnav('config', '/config/webscenarios'), h('div', { class: 'toolbar' }, h('h1', {}, 'Web scenarios'), sel), h('p', { class: 'muted' }, 'Choose the host or template whose web scenarios to show.'));
    return null;
  }
  await crudPage(main, {
    api: 'httptest', id: 'httptestid', ids: 'httptestids', noun: N, label: 'web scenario', title: 'Web scenarios', section: 'config',
    path: '/config/webscenarios',
    params: { hostids: [hostid] },
    sort: [['name', 'Name']],
    search: { field: 'name', label: 'Search name' },
    filters: [{ id: 'status', label: 'Status', options: [[0, 'Enabled'], [1, 'Disabled']], apply: (p, v) => { p.filter = { status: v }; } }],
    rowParams: { output: ['httptestid', 'name', 'delay', 'retries', 'authentication', 'http_proxy', 'status', 'templateid'], selectSteps: ['httpstepid'], selectTags: 'extend' },
    columns: [
      { label: 'Name', sort: 'name', cell: (t) => t.name },
      { label: 'Number of steps', cell: (t) => String((t.steps || []).length) },
      { label: 'Interval', cell: (t) => t.delay },
      { label: 'Attempts', cell: (t) => t.retries },
      { label: 'Authentication', cell: (t) => label(AUTH, t.authentication) },
      { label: 'HTTP proxy', cell: (t) => (t.http_proxy ? 'Yes' : 'No') },
      { label: 'Status', cell: (t) => (t.status === '1' ? h('span', { class: 'ack-no' }, 'Disabled') : h('span', { class: 'ack-yes' }, 'Enabled')) },
      { label: 'Tags', cell: (t) => (t.tags || []).map((x) => h('span', { class: 'tag' }, x.value ? `${x.tag}: ${x.value}` : x.tag)) },
    ],
    status: { field: 'status', on: 0, off: 1 },
    editParams: { selectSteps: 'extend', selectTags: 'extend' },
    newObject: { hostid, delay: '1m', retries: '1', agent: 'Zabbix', status: '0', authentication: '0', verify_peer: '0', verify_host: '0',
      variables: [], headers: [], tags: [], steps: [] },
    clone: (t) => ({ ...t, name: `${t.name} (copy)`, templateid: '0', steps: (t.steps || []).map(({ httpstepid, httptestid, ...s }) => s) }),
    form: (t, _l, isNew) => scenarioForm(t, isNew, hostid),
  });
  main.querySelector('.toolbar h1').after(sel);
  return null;
}

function scenarioForm(t, isNew, hostid) {
  const f = {
    name: input.text(N, 'name', t.name, { maxlength: 64 }),
    delay: input.text(N, 'delay', t.delay),
    retries: input.num(N, 'retries', t.retries, { min: 1, max: 10 }),
    agent: input.text(N, 'agent', t.agent),
    http_proxy: input.text(N, 'http_proxy', t.http_proxy, { placeholder: '[protocol://][user[:password]@]proxy.example.com[:port]' }),
    status: input.check(N, 'status', String(t.status ?? '0') === '0'),
    authentication: input.select(N, 'authentication', AUTH, t.authentication),
    http_user: input.text(N, 'http_user', t.http_user, { autocomplete: 'off' }),
    http_password: h('input', { type: 'password', id: 'httptest-http-password', dataset: { key: 'http_password' }, autocomplete: 'new-password' }),
    verify_peer: input.check(N, 'verify_peer', t.verify_peer),
    verify_host: input.check(N, 'verify_host', t.verify_host),
    ssl_cert_file: input.text(N, 'ssl_cert_file', t.ssl_cert_file),
    ssl_key_file: input.text(N, 'ssl_key_file', t.ssl_key_file),
    ssl_key_password: h('input', { type: 'password', id: 'httptest-ssl-key-password', dataset: { key: 'ssl_key_password' }, autocomplete: 'new-password' }),
  };
  const kv = [{ key: 'name', label: 'Name' }, { key: 'value', label: 'Value' }];
  const vars = rowsEditor('httptest-variables', kv, pairs(t.variables));
  const headers = rowsEditor('httptest-headers', kv, pairs(t.headers));
  const tags = rowsEditor('httptest-tags', [{ key: 'tag', label: 'Tag' }, { key: 'value', label: 'Value' }], (t.tags || []).map((x) => ({ tag: x.tag, value: x.value })));
  const steps = rowTable('httptest-steps', ['Step'], t.steps || [], stepRow, 'steps');
  const userFields = h('div', { class: 'form-grid' }, fld('User', f.http_user), fld('Password', f.http_password));
  const show = () => { userFields.hidden = f.authentication.value === '0'; };
  f.authentication.addEventListener('change', show);
  show();
  const inherited = !isNew && t.templateid && t.templateid !== '0';
  return {
    body: [
      inherited ? h('p', { class: 'muted' }, 'This scenario comes from a template: the template owns its name and steps.') : null,
      h('h4', {}, 'Scenario'),
      h('div', { class: 'form-grid' }, fld('Name', f.name), fld('Update interval', f.delay), fld('Attempts', f.retries), fld('Agent', f.agent),
        fld('HTTP proxy', f.http_proxy), fld('Enabled', f.status)),
      h('h4', {}, 'Variables'), vars.el, h('h4', {}, 'Headers'), headers.el, h('h4', {}, 'Tags'), tags.el,
      h('h4', {}, 'Steps'), steps.el,
      h('h4', {}, 'Authentication'),
      h('div', { class: 'form-grid' }, fld('HTTP authentication', f.authentication), fld('SSL verify peer', f.verify_peer), fld('SSL verify host', f.verify_host),
        fld('SSL certificate file', f.ssl_cert_file), fld('SSL key file', f.ssl_key_file), fld('SSL key password', f.ssl_key_password)),
      userFields,
      !isNew ? h('p', { class: 'muted' }, 'Stored passwords are never shown: leave a password field empty to keep it.') : null,
    ].filter(Boolean), // the form appends these: a null would be text
    read: () => {
      const o = { name: f.name.value, delay: f.delay.value, retries: numVal(f.retries), agent: f.agent.value, http_proxy: f.http_proxy.value,
        status: f.status.checked ? 0 : 1, authentication: Number(f.authentication.value), verify_peer: f.verify_peer.checked ? 1 : 0,
        verify_host: f.verify_host.checked ? 1 : 0, ssl_cert_file: f.ssl_cert_file.value, ssl_key_file: f.ssl_key_file.value,
        variables: vars.values().map((x) => ({ name: x.name, value: x.value })), headers: headers.values().map((x) => ({ name: x.name, value: x.value })),
        tags: tags.values().map((x) => ({ tag: x.tag, value: x.value })),
        steps: steps.values().map((s, i) => ({ ...s, no: i + 1 })) };
      if (o.authentication !== 0) o.http_user = f.http_user.value;
      if (f.http_password.value !== '') o.http_password = f.http_password.value;
      if (f.ssl_key_password.value !== '') o.ssl_key_password = f.ssl_key_password.value;
      if (isNew) o.hostid = hostid;
      if (inherited) {
        // 6.0 refuses changes of a template's name and steps here.
        delete o.name;
        delete o.steps;
      }
      return o;
    },
  };
}

// stepRow is one step: its fields in a grid of their own.
function stepRow(s) {
  const t = (cls, lbl, v, attrs = {}) => h('input', { type: 'text', class: `step-${cls}`, 'aria-label': lbl, value: v ?? '', ...attrs });
  const name = t('name', 'Step name', s.name, { maxlength: 64 });
  const url = t('url', 'URL', s.url, { placeholder: 'https://example.com/login' });
  const timeout = t('timeout', 'Timeout', s.timeout ?? '15s');
  const required = t('required', 'Required string', s.required);
  const codes = t('status-codes', 'Required status codes', s.status_codes, { placeholder: '200,201,210-299' });
  const follow = h('input', { type: 'checkbox', class: 'step-follow-redirects', 'aria-label': 'Follow redirects', checked: String(s.follow_redirects ?? '1') === '1' });
  const retrieve = h('select', { class: 'step-retrieve-mode', 'aria-label': 'Retrieve mode' },
    RETRIEVE.map(([v, x]) => h('option', { value: String(v), selected: String(v) === String(s.retrieve_mode ?? 0) }, x)));
  const formPost = Array.isArray(s.posts);
  const postType = h('select', { class: 'step-post-type', 'aria-label': 'Post type' },
    [['1', 'Form data'], ['0', 'Raw data']].map(([v, x]) => h('option', { value: v, selected: (formPost || String(s.post_type) === '1') === (v === '1') }, x)));
  const raw = h('textarea', { class: 'step-posts', 'aria-label': 'Raw post', rows: 2 });
  raw.value = formPost ? '' : (s.posts ?? '');
  const kv = [{ key: 'name', label: 'Name' }, { key: 'value', label: 'Value' }];
  const uid = Math.random().toString(36).slice(2, 8);
  const query = rowsEditor(`step-query-${uid}`, kv, pairs(s.query_fields));
  const posts = rowsEditor(`step-postfields-${uid}`, kv, formPost ? pairs(s.posts) : []);
  const vars = rowsEditor(`step-variables-${uid}`, kv, pairs(s.variables));
  const headers = rowsEditor(`step-headers-${uid}`, kv, pairs(s.headers));
  for (const [e, cls] of [[query, 'step-query'], [posts, 'step-postfields'], [vars, 'step-variables'], [headers, 'step-headers']]) e.el.classList.add(cls);
  const showPost = () => {
    posts.el.hidden = postType.value !== '1';
    raw.hidden = postType.value === '1';
  };
  postType.addEventListener('change', showPost);
  showPost();
  const body = h('div', { class: 'step-fields' },
    h('div', { class: 'form-grid' }, fld('Name', name), fld('URL', url), fld('Timeout', timeout), fld('Required string', required),
      fld('Required status codes', codes), fld('Follow redirects', follow), fld('Retrieve mode', retrieve), fld('Post type', postType)),
    h('div', { class: 'form-grid' }, h('div', {}, h('span', { class: 'field-label' }, 'Query fields'), query.el),
      h('div', {}, h('span', { class: 'field-label' }, 'Post fields'), posts.el, raw),
      h('div', {}, h('span', { class: 'field-label' }, 'Variables'), vars.el),
      h('div', {}, h('span', { class: 'field-label' }, 'Headers'), headers.el)));
  return {
    cells: [body],
    read: () => {
      const o = { name: name.value, url: url.value, timeout: timeout.value, required: required.value, status_codes: codes.value,
        follow_redirects: follow.checked ? 1 : 0, retrieve_mode: Number(retrieve.value),
        query_fields: query.values().map((x) => ({ name: x.name, value: x.value })),
        variables: vars.values().map((x) => ({ name: x.name, value: x.value })), headers: headers.values().map((x) => ({ name: x.name, value: x.value })) };
      if (s.httpstepid) o.httpstepid = s.httpstepid;
      if (postType.value === '1') o.posts = posts.values().map((x) => ({ name: x.name, value: x.value }));
      else o.posts = raw.value;
      return o;
    },
  };
}
