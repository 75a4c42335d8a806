// Configuration: actions and media types. Both are listed (action.get,
// mediatype.get) with enable/disable in place (*.update status), and
// created and edited through forms that make the same calls any client
// makes: mediatype.create/update (email, script and webhook fields) and
// action.create/update (name, conditions, operations with their steps
// and recipients). A server without these methods answers "Incorrect
// API" (-32601): each section then says it is not available, so the page
// works before and after the alerting methods exist. Every name, value
// and message is shown as text (dom.js).
//
// Each media type shows its queue: alerts waiting or being sent, and
// escalations waiting for room in the queue (mediatype.get selectQueue,
// a Peregrine addition), read again every 5 s while the page is open. A
// server without it (Zabbix) shows "—".
import { call, APIError } from '../../api.js';
import { h, clear, SEVERITIES } from '../../dom.js';
import { field, rowsEditor, select, showError, configNav } from '../../form.js';

const EVENT_SOURCES = { 0: 'Triggers', 1: 'Discovery', 2: 'Autoregistration', 3: 'Internal', 4: 'Services' };
const MEDIA_TYPES = { 0: 'Email', 1: 'Script', 2: 'SMS', 4: 'Webhook' };
// The media types Peregrine sends through (no SMS modem).
const EDITABLE_MEDIA = [[0, 'Email'], [1, 'Script'], [4, 'Webhook']];

// Trigger action conditions Peregrine evaluates (catalog.Cond*), with
// the operators each takes, in Zabbix's numbers.
const CONDITIONS = [
  [0, 'Host group', [0, 1]],
  [1, 'Host', [0, 1]],
  [2, 'Trigger', [0, 1]],
  [3, 'Event name', [2, 3]],
  [4, 'Trigger severity', [0, 1, 5, 6]],
  [16, 'Problem is suppressed', [10, 11]],
  [25, 'Tag name', [0, 1, 2, 3]],
  [26, 'Tag value', [0, 1, 2, 3]],
];
const OPERATORS = { 0: 'equals', 1: 'does not equal', 2: 'contains', 3: 'does not contain', 5: 'is greater than or equals', 6: 'is less than or equals', 10: 'yes', 11: 'no' };

export async function render(main) {
  const actions = h('section', { class: 'card', id: 'config-actions' });
  const media = h('section', { class: 'card', id: 'config-mediatypes' });
  const formBox = h('section', { class: 'card config-form', id: 'alerting-form', hidden: true });
  main.append(configNav('actions'), h('div', { class: 'toolbar' }, h('h1', {}, 'Actions and media types')), formBox, actions, h('div', { class: 'gap' }), media);
  const done = () => { formBox.hidden = true; clear(formBox); reload(); };
  const sections = [
    section(actions, 'Actions', 'action', 'actionid', ['actionid', 'name', 'eventsource', 'status'],
      (a) => [a.name, EVENT_SOURCES[a.eventsource] || a.eventsource], (a) => editAction(formBox, a, done)),
    section(media, 'Media types', 'mediatype', 'mediatypeid', ['mediatypeid', 'name', 'type', 'status'],
      (m) => [m.name, MEDIA_TYPES[m.type] || m.type], (m) => editMediaType(formBox, m, done), true),
  ];
  const reload = () => Promise.all(sections.map((s) => s())).catch((e) => showError(formBox, e));
  await reload();
  const timer = setInterval(() => queues(media).catch((e) => console.error(e)), 5000);
  return () => clearInterval(timer);
}

// queueText says what waits for a media type: "empty", "12 alerts",
// "10000 alerts, 3500 escalations waiting".
function queueText(q) {
  if (!q) return '—';
  const a = Number(q.alerts) || 0;
  const e = Number(q.escalations) || 0;
  if (!a && !e) return 'empty';
  return `${a} alert${a === 1 ? '' : 's'}` + (e ? `, ${e} escalation${e === 1 ? '' : 's'} waiting` : '');
}

// queues fills the media types' queue cells.
async function queues(el) {
  const cells = el.querySelectorAll('.mediatype-queue');
  if (!cells.length) return;
  let by = new Map();
  try {
    const qs = await call('mediatype.get', { output: ['mediatypeid'], selectQueue: 'extend' });
    by = new Map(qs.map((m) => [m.mediatypeid, m.queue]));
  } catch (e) {
    if (!(e instanceof APIError)) throw e;
  }
  for (const td of cells) td.textContent = queueText(by.get(td.dataset.id));
}

// section returns a loader that lists one API's objects with a status
// switch, an edit link and a create button, or says that the server has
// no such API.
function section(el, title, api, idField, output, cols, edit, queueCol) {
  const err = h('p', { class: 'error', role: 'alert', hidden: true });
  async function load() {
    let objs;
    try {
      // Sorted here: Zabbix 6.0's mediatype.get refuses sortfield "name"
      // (only mediatypeid), and the page reads any Zabbix-shaped server.
      objs = await call(`${api}.get`, { output });
      objs.sort((a, b) => String(a.name).localeCompare(String(b.name)));
    } catch (e) {
      clear(el);
      el.append(h('h3', {}, title));
      if (e instanceof APIError && e.code === -32601) {
        el.append(h('p', { class: 'muted not-available', id: `${api}-not-available` }, `Not available: this server has no ${api}.get (${e.data || e.message}).`));
        return;
      }
      throw e;
    }
    clear(el);
    el.append(h('div', { class: 'toolbar' }, h('h3', {}, title),
      h('button', { type: 'button', id: `${api}-create`, onclick: () => edit(null) }, `Create ${api === 'action' ? 'action' : 'media type'}`)), err);
    if (!objs.length) el.append(h('p', { class: 'muted' }, 'None.'));
    const table = h('table', { class: 'plain' }, h('tr', {}, h('th', {}, 'Name'), h('th', {}, 'Type'), queueCol ? h('th', {}, 'Queue') : null, h('th', {}, 'Status')));
    for (const o of objs) {
      const on = o.status === '0';
      const [name, kind] = cols(o);
      table.append(h('tr', { class: `${api}-row`, dataset: { id: o[idField] } },
        h('td', {}, h('a', { href: '#', class: `${api}-name`, onclick: (e) => { e.preventDefault(); edit(o); } }, name)), h('td', {}, kind),
        queueCol ? h('td', { class: `${api}-queue`, dataset: { id: o[idField] } }, '…') : null,
        h('td', {}, h('button', { type: 'button', class: 'status-toggle', title: on ? 'Disable' : 'Enable', onclick: async () => {
          try {
            await call(`${api}.update`, { [idField]: o[idField], status: on ? 1 : 0 });
            await load();
          } catch (e) {
            showError(err, e);
          }
        } }, on ? 'Enabled' : 'Disabled'))));
    }
    el.append(table);
    if (queueCol) await queues(el);
  }
  return load;
}

// choice is a select for a repeated row (a class, not an id).
const choice = (cls, label, options, value) => h('select', { class: cls, 'aria-label': label },
  options.map(([v, t]) => h('option', { value: String(v), selected: String(v) === String(value) }, t)));
const text = (id, value, attrs) => h('input', { type: 'text', id, value: value ?? '', ...attrs });
const num = (id, value) => h('input', { type: 'number', id, value: value ?? '', min: 0 });

// editMediaType shows the media type form: common fields, then the
// fields of the chosen type (the others hidden). A stored SMTP password
// is never sent to the page (mediatype.get does not return it): an
// empty password field keeps it.
async function editMediaType(box, m, done) {
  clear(box);
  box.hidden = false;
  const isNew = !m;
  if (m) [m] = await call('mediatype.get', { output: 'extend', mediatypeids: [m.mediatypeid] });
  m = m || { type: '4', maxsessions: '1', maxattempts: '3', attempt_interval: '10s', timeout: '30s', smtp_port: '25', parameters: [{ name: 'URL', value: '' }] };
  const type = select('mediatype-type', EDITABLE_MEDIA, m.type);
  const f = {
    name: text('mediatype-name', m.name),
    description: text('mediatype-description', m.description),
    smtp_server: text('mediatype-smtp-server', m.smtp_server),
    smtp_port: num('mediatype-smtp-port', m.smtp_port),
    smtp_helo: text('mediatype-smtp-helo', m.smtp_helo),
    smtp_email: text('mediatype-smtp-email', m.smtp_email),
    smtp_security: select('mediatype-smtp-security', [[0, 'None'], [1, 'STARTTLS'], [2, 'SSL/TLS']], m.smtp_security || 0),
    smtp_authentication: select('mediatype-smtp-auth', [[0, 'None'], [1, 'Username and password']], m.smtp_authentication || 0),
    username: text('mediatype-username', m.username, { autocomplete: 'off' }),
    content_type: select('mediatype-content-type', [[0, 'Plain text'], [1, 'HTML']], m.content_type || 0),
    exec_path: text('mediatype-exec-path', m.exec_path),
    exec_params: h('textarea', { id: 'mediatype-exec-params', rows: 3, placeholder: 'One parameter a line' }),
    script: h('textarea', { id: 'mediatype-script', rows: 6, placeholder: 'JavaScript (optional with a URL parameter)' }),
    timeout: text('mediatype-timeout', m.timeout),
    maxsessions: num('mediatype-maxsessions', m.maxsessions),
    maxattempts: num('mediatype-maxattempts', m.maxattempts),
    attempt_interval: text('mediatype-attempt-interval', m.attempt_interval),
  };
  f.exec_params.value = m.exec_params || '';
  f.script.value = m.script || '';
  const passwd = h('input', { type: 'password', id: 'mediatype-passwd', autocomplete: 'new-password', placeholder: isNew ? '' : 'unchanged' });
  const params = rowsEditor('mediatype-params', [{ key: 'name', label: 'Name' }, { key: 'value', label: 'Value' }], m.parameters || []);
  const groups = {
    0: h('div', { class: 'form-grid type-fields', id: 'mediatype-email-fields' },
      field('SMTP server', f.smtp_server), field('SMTP server port', f.smtp_port), field('SMTP helo', f.smtp_helo),
      field('Email (from)', f.smtp_email), field('Connection security', f.smtp_security), field('Authentication', f.smtp_authentication),
      field('Username', f.username), field('Password', passwd), field('Message format', f.content_type)),
    1: h('div', { class: 'type-fields', id: 'mediatype-script-fields' },
      h('div', { class: 'form-grid' }, field('Script name', f.exec_path)), field('Script parameters', f.exec_params)),
    4: h('div', { class: 'type-fields', id: 'mediatype-webhook-fields' },
      h('h4', {}, 'Parameters'), params.el, field('Script', f.script), h('div', { class: 'form-grid' }, field('Timeout', f.timeout))),
  };
  const show = () => { for (const [t, g] of Object.entries(groups)) g.hidden = t !== type.value; };
  type.addEventListener('change', show);
  show();
  const err = h('p', { class: 'error', id: 'mediatype-error', role: 'alert', hidden: true });
  const save = async (ev) => {
    ev.preventDefault();
    const t = Number(type.value);
    const o = {
      name: f.name.value, type: t, description: f.description.value,
      maxsessions: Number(f.maxsessions.value), maxattempts: Number(f.maxattempts.value), attempt_interval: f.attempt_interval.value,
    };
    if (t === 0) {
      Object.assign(o, {
        smtp_server: f.smtp_server.value, smtp_port: Number(f.smtp_port.value), smtp_helo: f.smtp_helo.value, smtp_email: f.smtp_email.value,
        smtp_security: Number(f.smtp_security.value), smtp_authentication: Number(f.smtp_authentication.value),
        username: f.username.value, content_type: Number(f.content_type.value),
      });
      if (passwd.value !== '') o.passwd = passwd.value;
    } else if (t === 1) {
      Object.assign(o, { exec_path: f.exec_path.value, exec_params: f.exec_params.value });
    } else {
      Object.assign(o, { parameters: params.values().map((p) => ({ name: p.name, value: p.value })), script: f.script.value, timeout: f.timeout.value });
    }
    try {
      if (isNew) await call('mediatype.create', o);
      else await call('mediatype.update', { mediatypeid: m.mediatypeid, ...o });
      done();
    } catch (e) {
      showError(err, e);
    }
  };
  box.append(h('form', { id: 'mediatype-edit', onsubmit: save },
    h('h3', {}, isNew ? 'New media type' : `Media type ${m.name}`),
    h('div', { class: 'form-grid' }, field('Name', f.name), field('Type', type), field('Description', f.description)),
    groups[0], groups[1], groups[4],
    h('h4', {}, 'Delivery'),
    h('div', { class: 'form-grid' }, field('Concurrent sessions (0: unlimited)', f.maxsessions), field('Attempts', f.maxattempts), field('Attempt interval', f.attempt_interval)),
    err,
    h('div', { class: 'form-buttons' },
      h('button', { type: 'submit', id: 'mediatype-save' }, isNew ? 'Create' : 'Update'),
      h('button', { type: 'button', onclick: () => { box.hidden = true; } }, 'Cancel'))));
}

// editAction shows the action form: name, default step duration,
// conditions (type, operator, value; and/or), and operations: send a
// message from step to step (0: to the end), every step duration, to
// users and user groups, through one media type or all of them.
async function editAction(box, a, done) {
  clear(box);
  box.hidden = false;
  const isNew = !a;
  const [full, users, groups, mediaTypes, hostGroups, hosts] = await Promise.all([
    a ? call('action.get', { output: 'extend', actionids: [a.actionid], selectFilter: 'extend', selectOperations: 'extend' }).then((x) => x[0]) : null,
    call('user.get', { output: ['userid', 'username'], sortfield: 'username' }),
    call('usergroup.get', { output: ['usrgrpid', 'name'], sortfield: 'name' }),
    call('mediatype.get', { output: ['mediatypeid', 'name'] }).then((l) => l.sort((a, b) => a.name.localeCompare(b.name))),
    call('hostgroup.get', { output: ['groupid', 'name'], sortfield: 'name' }),
    call('host.get', { output: ['hostid', 'name'], sortfield: 'name' }),
  ]);
  a = full || { name: '', esc_period: '1h', filter: { evaltype: '0', conditions: [] }, operations: [] };
  const name = text('action-name', a.name);
  const period = text('action-esc-period', a.esc_period);
  const evaltype = select('action-evaltype', [[0, 'And/Or'], [1, 'And'], [2, 'Or']], (a.filter && a.filter.evaltype) || 0);

  // Conditions: one row each; the value is a list for host groups,
  // hosts and severities, text otherwise (a trigger by its ID).
  const condBody = h('tbody', {});
  const valueInput = (type, v) => {
    const choices = { 0: hostGroups.map((g) => [g.groupid, g.name]), 1: hosts.map((x) => [x.hostid, x.name]), 4: SEVERITIES.map((s, i) => [i, s]) }[type];
    if (choices) return choice('condition-value', 'Value', choices, v);
    if (type === '16') return h('span', { class: 'muted' }, '');
    return h('input', { type: 'text', class: 'condition-value', 'aria-label': 'Value', value: v ?? '' });
  };
  const addCond = (c) => {
    const type = choice('condition-type', 'Condition', CONDITIONS.map(([t, label]) => [t, label]), c.conditiontype ?? 4);
    const op = h('select', { class: 'condition-operator', 'aria-label': 'Operator' });
    const value2 = h('input', { type: 'text', class: 'condition-value2', 'aria-label': 'Tag name', placeholder: 'tag name', value: c.value2 ?? '' });
    const cell = h('td', {});
    const tr = h('tr', { class: 'condition-row' }, h('td', {}, type), h('td', {}, op), cell, h('td', {}, value2),
      h('td', {}, h('button', { type: 'button', class: 'remove-row', onclick: () => tr.remove() }, 'Remove')));
    const fill = (keep) => {
      const ops = CONDITIONS.find(([t]) => String(t) === type.value)[2];
      clear(op);
      for (const o of ops) op.append(h('option', { value: String(o), selected: keep && String(o) === String(c.operator) }, OPERATORS[o]));
      tr.value = valueInput(type.value, keep ? c.value : undefined);
      cell.replaceChildren(tr.value);
      value2.hidden = type.value !== '26';
    };
    type.addEventListener('change', () => fill(false));
    fill(true);
    tr.read = () => ({ conditiontype: Number(type.value), operator: Number(op.value), value: tr.value.value ?? '', value2: type.value === '26' ? value2.value : '' });
    condBody.append(tr);
  };
  for (const c of (a.filter && a.filter.conditions) || []) addCond(c);

  // Operations: steps, duration, media type, recipients (lists that
  // take several: an operation keeps every user and group it names).
  const opBody = h('tbody', {});
  const multi = (cls, label, choices, chosen) => h('select', { multiple: true, class: cls, 'aria-label': label, size: Math.min(4, Math.max(2, choices.length)) },
    choices.map(([v, t]) => h('option', { value: v, selected: chosen.includes(v) }, t)));
  const addOp = (o) => {
    const from = h('input', { type: 'number', class: 'op-step-from', 'aria-label': 'From step', min: 1, value: o.esc_step_from ?? 1 });
    const to = h('input', { type: 'number', class: 'op-step-to', 'aria-label': 'To step (0: to the end)', min: 0, value: o.esc_step_to ?? 1 });
    const dur = h('input', { type: 'text', class: 'op-period', 'aria-label': 'Step duration (0: the action\'s)', value: o.esc_period ?? '0' });
    const mt = h('select', { class: 'op-mediatype', 'aria-label': 'Send only to' },
      h('option', { value: '0' }, 'All media types'),
      mediaTypes.map((x) => h('option', { value: x.mediatypeid, selected: o.opmessage && o.opmessage.mediatypeid === x.mediatypeid }, x.name)));
    const us = multi('op-users', 'Send to users', users.map((u) => [u.userid, u.username]), (o.opmessage_usr || []).map((x) => x.userid));
    const gs = multi('op-groups', 'Send to user groups', groups.map((g) => [g.usrgrpid, g.name]), (o.opmessage_grp || []).map((x) => x.usrgrpid));
    const tr = h('tr', { class: 'operation-row' }, [from, to, dur, mt, us, gs].map((x) => h('td', {}, x)),
      h('td', {}, h('button', { type: 'button', class: 'remove-row', onclick: () => tr.remove() }, 'Remove')));
    const chosen = (s) => [...s.selectedOptions].map((x) => x.value);
    tr.read = () => ({
      operationtype: 0, esc_step_from: Number(from.value), esc_step_to: Number(to.value), esc_period: dur.value,
      // A custom subject and message, which this form does not edit,
      // are kept as they are; Zabbix refuses them beside default_msg 1.
      opmessage: o.opmessage && Number(o.opmessage.default_msg) === 0
        ? { default_msg: 0, subject: o.opmessage.subject || '', message: o.opmessage.message || '', mediatypeid: mt.value }
        : { default_msg: 1, mediatypeid: mt.value },
      opmessage_usr: chosen(us).map((userid) => ({ userid })), opmessage_grp: chosen(gs).map((usrgrpid) => ({ usrgrpid })),
    });
    opBody.append(tr);
  };
  for (const o of a.operations || []) if (String(o.operationtype) === '0') addOp(o);
  if (isNew) addOp({});

  const err = h('p', { class: 'error', id: 'action-error', role: 'alert', hidden: true });
  const save = async (ev) => {
    ev.preventDefault();
    const o = {
      name: name.value, esc_period: period.value,
      filter: { evaltype: Number(evaltype.value), conditions: [...condBody.children].map((tr) => tr.read()) },
      operations: [...opBody.children].map((tr) => tr.read()),
    };
    try {
      if (isNew) await call('action.create', { eventsource: 0, ...o });
      else await call('action.update', { actionid: a.actionid, ...o });
      done();
    } catch (e) {
      showError(err, e);
    }
  };
  const head = (...labels) => h('thead', {}, h('tr', {}, labels.map((l) => h('th', {}, l)), h('th', {})));
  box.append(h('form', { id: 'action-edit', onsubmit: save },
    h('h3', {}, isNew ? 'New action (trigger events)' : `Action ${a.name}`),
    h('div', { class: 'form-grid' }, field('Name', name), field('Default step duration', period), field('Conditions apply', evaltype)),
    h('h4', {}, 'Conditions'),
    h('table', { class: 'plain', id: 'action-conditions' }, head('Type', 'Operator', 'Value', 'Tag name'), condBody),
    h('button', { type: 'button', id: 'action-add-condition', onclick: () => addCond({}) }, 'Add condition'),
    h('h4', {}, 'Operations: send a message'),
    h('table', { class: 'plain', id: 'action-operations' }, head('From step', 'To step (0: end)', 'Step duration', 'Media type', 'Users', 'User groups'), opBody),
    h('button', { type: 'button', id: 'action-add-operation', onclick: () => addOp({}) }, 'Add operation'),
    err,
    h('div', { class: 'form-buttons' },
      h('button', { type: 'submit', id: 'action-save' }, isNew ? 'Create' : 'Update'),
      h('button', { type: 'button', onclick: () => { box.hidden = true; } }, 'Cancel'))));
}
