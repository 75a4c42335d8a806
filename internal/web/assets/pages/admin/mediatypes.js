// Administration: media types (mediatype.*), every type the API has:
// email (SMTP server, security, authentication, format), SMS (GSM
// modem), script (path and parameters) and webhook (parameters, the
// JavaScript, timeout, tags, event menu entry), with the delivery
// settings, the status and the message templates (a subject and a
// message per event source and operation mode). A stored password is
// never shown (mediatype.get does not return it): an empty field keeps
// it.
//
// "Test" (a row's, Super admin: the page's own access) sends one
// message now through mediatype.test, Peregrine's method for what
// Zabbix 6.0's frontend asks its server outside the API ("alert.send"):
// email, SMS and script to a given address with a subject and message,
// a webhook with its parameters' values (changeable for the test); the
// answer, or what the far end said, is shown under the dialog, and a
// webhook's response beside it. Nothing is stored.
//
// Each media type's queue (alerts waiting or being sent, escalations
// waiting for room: mediatype.get selectQueue, a Peregrine addition) is
// read again every 5 s; "—" on a server without it.
import { call, APIError } from '../../api.js';
import { h, clear } from '../../dom.js';
import { crudPage, input, fld, rowTable, showErrorAt, numVal } from '../../crud.js';
import { rowsEditor } from '../../form.js';

const N = 'mediatype';
const TYPES = [[0, 'Email'], [1, 'Script'], [2, 'SMS'], [4, 'Webhook']];
const SOURCES = [[0, 'Trigger'], [1, 'Discovery'], [2, 'Autoregistration'], [3, 'Internal'], [4, 'Service']];
const MODES = [[0, 'Problem'], [1, 'Recovery'], [2, 'Update']];

// queueText says what waits for a media type: "empty", "12 alerts",
// "10000 alerts, 3500 escalations waiting".
function queueText(q) {
  if (!q) return '—';
  const a = Number(q.alerts) || 0;
  const e = Number(q.escalations) || 0;
  if (!a && !e) return 'empty';
  return `${a} alert${a === 1 ? '' : 's'}` + (e ? `, ${e} escalation${e === 1 ? '' : 's'} waiting` : '');
}

async function queues(el) {
  const cells = el.querySelectorAll('.mediatype-queue');
  if (!cells.length) return;
  let by = new Map();
  try {
    const qs = await call('mediatype.get', { output: ['mediatypeid'], mediatypeids: [...cells].map((c) => c.dataset.id), selectQueue: 'extend' });
    by = new Map(qs.map((m) => [m.mediatypeid, m.queue]));
  } catch (e) {
    if (!(e instanceof APIError)) throw e;
  }
  for (const td of cells) td.textContent = queueText(by.get(td.dataset.id));
}

// testDialog fills box with the test form of media type m (read whole:
// its type, status and parameters).
async function testDialog(box, id) {
  clear(box);
  box.hidden = false;
  const [m] = await call('mediatype.get', { output: 'extend', mediatypeids: [id] });
  if (!m) {
    box.append(h('p', { class: 'error', role: 'alert' }, 'It is gone: someone deleted it meanwhile.'));
    return;
  }
  const webhook = m.type === '4';
  const T = 'mediatype-test';
  const sendto = input.text(T, 'sendto', '', { placeholder: m.type === '0' ? 'name@example.com' : '' });
  const subject = input.text(T, 'subject', 'Test subject');
  const message = input.area(T, 'message', 'This is the test message from Peregrine', 3);
  const params = rowsEditor('mediatype-test-params', [{ key: 'name', label: 'Name' }, { key: 'value', label: 'Value' }], (m.parameters || []).map((x) => ({ name: x.name, value: x.value })));
  const result = h('p', { id: 'mediatype-test-result', role: 'status', hidden: true });
  const response = h('pre', { id: 'mediatype-test-response', hidden: true });
  const form = h('form', { id: 'mediatype-test-form', onsubmit: async (ev) => {
    ev.preventDefault();
    for (const old of form.querySelectorAll('.field-error')) old.remove();
    result.hidden = true;
    response.hidden = true;
    const send = form.querySelector('#mediatype-test-send');
    send.disabled = true;
    try {
      const p = { mediatypeid: m.mediatypeid };
      if (webhook) p.parameters = params.values().map((x) => ({ name: x.name, value: x.value }));
      else Object.assign(p, { sendto: sendto.value, subject: subject.value, message: message.value });
      const r = await call('mediatype.test', p);
      result.className = 'ack-yes';
      result.hidden = false;
      result.textContent = 'Media type test successful.';
      if (webhook) {
        let v = r.value;
        let kind = 'String';
        try { v = JSON.stringify(JSON.parse(v), null, 2); kind = 'JSON'; } catch { /* a string */ }
        response.hidden = false;
        response.textContent = `Response type: ${kind}\n${v}`;
      }
    } catch (e) {
      showErrorAt(form, result, e);
      result.className = 'error';
    } finally {
      send.disabled = false;
    }
  } },
  h('h3', {}, `Test media type: ${m.name}`),
  m.status === '1' ? h('p', { class: 'muted' }, 'This media type is disabled: enable it to test it.') : null,
  webhook ? [h('h4', {}, 'Parameters'), params.el]
    : h('div', { class: 'form-grid' }, fld('Send to', sendto), fld('Subject', subject)),
  webhook ? null : fld('Message', message),
  result, response,
  h('div', { class: 'form-buttons' }, h('button', { type: 'submit', id: 'mediatype-test-send' }, 'Test'),
    h('button', { type: 'button', id: 'mediatype-test-cancel', onclick: () => { box.hidden = true; clear(box); } }, 'Cancel')));
  box.append(form);
}

export async function render(main) {
  let listEl = null;
  const testBox = h('section', { class: 'card config-form', id: 'mediatype-test', hidden: true });
  await crudPage(main, {
    api: 'mediatype', id: 'mediatypeid', ids: 'mediatypeids', noun: N, label: 'media type', title: 'Media types', section: 'admin', path: '/admin/mediatypes',
    // Zabbix 6.0's mediatype.get sorts by mediatypeid only.
    clientSort: true,
    search: { field: 'name', label: 'Search name' },
    filters: [{ id: 'status', label: 'Status', options: [[0, 'Enabled'], [1, 'Disabled']], apply: (p, v) => { p.filter = { ...p.filter, status: v }; } },
      { id: 'type', label: 'Type', options: TYPES, apply: (p, v) => { p.filter = { ...p.filter, type: v }; } }],
    rowParams: { output: ['mediatypeid', 'name', 'type', 'status', 'description'] },
    columns: [
      { label: 'Name', sort: 'name', cell: (m) => m.name },
      { label: 'Type', cell: (m) => (TYPES.find(([v]) => String(v) === m.type) || [0, m.type])[1] },
      { label: 'Status', cell: (m) => (m.status === '1' ? h('span', { class: 'ack-no' }, 'Disabled') : h('span', { class: 'ack-yes' }, 'Enabled')) },
      { label: 'Queue', cell: (m) => h('span', { class: 'mediatype-queue', dataset: { id: m.mediatypeid } }, '…') },
      { label: 'Description', cell: (m) => m.description },
      { label: 'Action', cell: (m) => h('button', { type: 'button', class: 'mediatype-test-open', dataset: { id: m.mediatypeid },
        onclick: () => testDialog(testBox, m.mediatypeid).catch((e) => testBox.append(h('p', { class: 'error' }, String(e.data || e.message)))) }, 'Test') },
    ],
    status: { field: 'status', on: 0, off: 1 },
    editParams: { selectMessageTemplates: 'extend' },
    afterPage: (el) => { listEl = el; return queues(el).catch((e) => console.error(e)); },
    newObject: { type: '4', status: '0', maxsessions: '1', maxattempts: '3', attempt_interval: '10s', timeout: '30s', smtp_port: '25',
      parameters: [{ name: 'URL', value: '' }], message_templates: [] },
    clone: (m) => ({ ...m, name: `${m.name} (copy)` }),
    form: mediaTypeForm,
  });
  main.querySelector('.toolbar').after(testBox);
  const timer = setInterval(() => { if (listEl) queues(listEl).catch((e) => console.error(e)); }, 5000);
  return () => clearInterval(timer);
}

function mediaTypeForm(m, _lists, isNew) {
  const t = (k, attrs) => input.text(N, k, m[k], attrs);
  const f = {
    name: t('name', { maxlength: 100 }),
    type: input.select(N, 'type', TYPES, m.type),
    description: input.area(N, 'description', m.description, 2),
    status: input.check(N, 'status', String(m.status ?? '0') === '0'),
    smtp_server: t('smtp_server'), smtp_port: input.num(N, 'smtp_port', m.smtp_port), smtp_helo: t('smtp_helo'), smtp_email: t('smtp_email'),
    smtp_security: input.select(N, 'smtp_security', [[0, 'None'], [1, 'STARTTLS'], [2, 'SSL/TLS']], m.smtp_security || 0),
    smtp_verify_peer: input.check(N, 'smtp_verify_peer', m.smtp_verify_peer), smtp_verify_host: input.check(N, 'smtp_verify_host', m.smtp_verify_host),
    smtp_authentication: input.select(N, 'smtp_authentication', [[0, 'None'], [1, 'Username and password']], m.smtp_authentication || 0),
    username: t('username', { autocomplete: 'off' }),
    content_type: input.select(N, 'content_type', [[1, 'HTML'], [0, 'Plain text']], m.content_type ?? 1),
    gsm_modem: t('gsm_modem'),
    exec_path: t('exec_path'),
    exec_params: input.area(N, 'exec_params', m.exec_params, 3),
    script: input.area(N, 'script', m.script, 8),
    timeout: t('timeout'),
    process_tags: input.check(N, 'process_tags', m.process_tags),
    show_event_menu: input.check(N, 'show_event_menu', m.show_event_menu),
    event_menu_url: t('event_menu_url'), event_menu_name: t('event_menu_name'),
    maxsessions: input.num(N, 'maxsessions', m.maxsessions), maxattempts: input.num(N, 'maxattempts', m.maxattempts),
    attempt_interval: t('attempt_interval'),
  };
  f.exec_params.placeholder = 'One parameter a line';
  const passwd = h('input', { type: 'password', id: 'mediatype-passwd', dataset: { key: 'passwd' }, autocomplete: 'new-password', placeholder: isNew ? '' : 'unchanged' });
  const params = rowsEditor('mediatype-params', [{ key: 'name', label: 'Name' }, { key: 'value', label: 'Value' }], m.parameters || []);
  const templates = rowTable('mediatype-templates', ['Message type', 'Operation mode', 'Subject', 'Message'], m.message_templates || [], (x) => {
    const src = h('select', { class: 'template-source', 'aria-label': 'Event source' }, SOURCES.map(([v, l]) => h('option', { value: String(v), selected: String(v) === String(x.eventsource ?? 0) }, l)));
    const mode = h('select', { class: 'template-mode', 'aria-label': 'Operation mode' }, MODES.map(([v, l]) => h('option', { value: String(v), selected: String(v) === String(x.recovery ?? 0) }, l)));
    const subject = h('input', { type: 'text', class: 'template-subject', 'aria-label': 'Subject', value: x.subject ?? '' });
    const message = h('textarea', { class: 'template-message', 'aria-label': 'Message', rows: 3 });
    message.value = x.message ?? '';
    return { cells: [src, mode, subject, message], read: () => ({ eventsource: Number(src.value), recovery: Number(mode.value), subject: subject.value, message: message.value }) };
  }, 'message_templates');
  const groups = {
    0: h('div', { class: 'form-grid type-fields', id: 'mediatype-email-fields' },
      fld('SMTP server', f.smtp_server), fld('SMTP server port', f.smtp_port), fld('SMTP helo', f.smtp_helo),
      fld('Email (from)', f.smtp_email), fld('Connection security', f.smtp_security), fld('Verify peer', f.smtp_verify_peer),
      fld('Verify host', f.smtp_verify_host), fld('Authentication', f.smtp_authentication),
      fld('Username', f.username), fld('Password', passwd), fld('Message format', f.content_type)),
    1: h('div', { class: 'type-fields', id: 'mediatype-script-fields' },
      h('div', { class: 'form-grid' }, fld('Script name', f.exec_path)), fld('Script parameters', f.exec_params)),
    2: h('div', { class: 'form-grid type-fields', id: 'mediatype-sms-fields' }, fld('GSM modem', f.gsm_modem)),
    4: h('div', { class: 'type-fields', id: 'mediatype-webhook-fields' },
      h('h4', {}, 'Parameters'), params.el, fld('Script', f.script),
      h('div', { class: 'form-grid' }, fld('Timeout', f.timeout), fld('Process tags', f.process_tags), fld('Include event menu entry', f.show_event_menu),
        fld('Menu entry name', f.event_menu_name), fld('Menu entry URL', f.event_menu_url))),
  };
  const show = () => { for (const [k, g] of Object.entries(groups)) g.hidden = k !== f.type.value; };
  f.type.addEventListener('change', show);
  show();
  return {
    body: [
      h('div', { class: 'form-grid' }, fld('Name', f.name), fld('Type', f.type), fld('Enabled', f.status)), fld('Description', f.description),
      groups[0], groups[1], groups[2], groups[4],
      h('h4', {}, 'Message templates'), templates.el,
      h('h4', {}, 'Delivery'),
      h('div', { class: 'form-grid' }, fld('Concurrent sessions (0: unlimited)', f.maxsessions), fld('Attempts', f.maxattempts), fld('Attempt interval', f.attempt_interval)),
    ],
    read: () => {
      const type = Number(f.type.value);
      const o = {
        name: f.name.value, type, description: f.description.value, status: f.status.checked ? 0 : 1,
        maxsessions: numVal(f.maxsessions), maxattempts: numVal(f.maxattempts), attempt_interval: f.attempt_interval.value,
        message_templates: templates.values(),
      };
      if (type === 0) {
        Object.assign(o, {
          smtp_server: f.smtp_server.value, smtp_port: numVal(f.smtp_port), smtp_helo: f.smtp_helo.value, smtp_email: f.smtp_email.value,
          smtp_security: Number(f.smtp_security.value), smtp_authentication: Number(f.smtp_authentication.value),
          username: f.username.value, content_type: Number(f.content_type.value),
        });
        if (o.smtp_security !== 0) Object.assign(o, { smtp_verify_peer: f.smtp_verify_peer.checked ? 1 : 0, smtp_verify_host: f.smtp_verify_host.checked ? 1 : 0 });
        if (passwd.value !== '') o.passwd = passwd.value;
      } else if (type === 1) {
        Object.assign(o, { exec_path: f.exec_path.value, exec_params: f.exec_params.value });
      } else if (type === 2) {
        o.gsm_modem = f.gsm_modem.value;
      } else {
        Object.assign(o, {
          parameters: params.values().map((p) => ({ name: p.name, value: p.value })), script: f.script.value, timeout: f.timeout.value,
          process_tags: f.process_tags.checked ? 1 : 0, show_event_menu: f.show_event_menu.checked ? 1 : 0,
          event_menu_url: f.event_menu_url.value, event_menu_name: f.event_menu_name.value,
        });
      }
      return o;
    },
  };
}
