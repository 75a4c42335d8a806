// Configuration: actions of every event source (action.*): name,
// status, conditions (each source's condition types and operators, and
// how they combine: and/or, and, or, a custom formula), and the three
// lists of operations: on the problem (escalation steps from/to and
// their duration; send a message, run a remote command, and for
// discovery and autoregistration the host operations), on recovery and
// on update (send a message, a command, notify all involved).
// Everything goes through action.create/update/delete; what the server
// does not support (Peregrine makes trigger events only) comes back as
// the API's error beside the form. Media types have their own page
// (/admin/mediatypes).
import { call } from '../../api.js';
import { h, clear, SEVERITIES } from '../../dom.js';
import { crudPage, input, fld, rowTable } from '../../crud.js';

const N = 'action';
const SOURCES = [[0, 'Trigger actions'], [1, 'Discovery actions'], [2, 'Autoregistration actions'], [3, 'Internal actions'], [4, 'Service actions']];
const OPERATORS = { 0: 'equals', 1: 'does not equal', 2: 'contains', 3: 'does not contain', 4: 'is in', 5: 'is greater than or equals',
  6: 'is less than or equals', 7: 'is not in', 8: 'matches', 9: 'does not match', 10: 'yes', 11: 'no' };
// Condition types per event source, with their operators (Zabbix 6.0's
// numbers).
const COND = {
  0: 'Host group', 1: 'Host', 2: 'Trigger', 3: 'Event name', 4: 'Trigger severity', 6: 'Time period', 7: 'Host IP', 8: 'Service type',
  9: 'Service port', 10: 'Discovery status', 11: 'Uptime/Downtime', 12: 'Received value', 13: 'Template', 16: 'Problem is suppressed',
  18: 'Discovery rule', 19: 'Discovery check', 20: 'Proxy', 21: 'Discovery object', 22: 'Host name', 23: 'Event type', 24: 'Host metadata',
  25: 'Tag name', 26: 'Tag value', 27: 'Service', 28: 'Service name',
};
const COND_OPS = { 0: [0, 1], 1: [0, 1], 2: [0, 1], 3: [2, 3], 4: [0, 1, 5, 6], 6: [4, 7], 7: [0, 1], 8: [0, 1], 9: [0, 1], 10: [0],
  11: [5, 6], 12: [0, 1, 5, 6, 2, 3], 13: [0, 1], 16: [10, 11], 18: [0, 1], 19: [0, 1], 20: [0, 1], 21: [0], 22: [2, 3, 8, 9],
  23: [0], 24: [2, 3, 8, 9], 25: [0, 1, 2, 3], 26: [0, 1, 2, 3], 27: [0, 1], 28: [0, 1, 2, 3] };
const SOURCE_COND = { 0: [0, 1, 2, 3, 4, 6, 13, 16, 25, 26], 1: [7, 8, 9, 10, 11, 12, 18, 19, 20, 21], 2: [20, 22, 24],
  3: [0, 1, 13, 23, 25, 26], 4: [27, 28, 25, 26] };
const OPTYPES = { 0: 'Send message', 1: 'Remote command', 2: 'Add host', 3: 'Remove host', 4: 'Add to host group', 5: 'Remove from host group',
  6: 'Link to template', 7: 'Unlink from template', 8: 'Enable host', 9: 'Disable host', 10: 'Set host inventory mode',
  11: 'Notify all involved', 12: 'Notify all involved' };
const SOURCE_OPS = { 0: [0, 1], 1: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 2: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 3: [0], 4: [0] };
const label = (list, v) => (list.find(([x]) => String(x) === String(v)) || [0, v])[1];

export async function render(main) {
  await crudPage(main, {
    api: 'action', id: 'actionid', ids: 'actionids', noun: N, label: 'action', title: 'Actions', section: 'config', path: '/config/actions',
    sort: [['name', 'Name'], ['status', 'Status']],
    search: { field: 'name', label: 'Search name' },
    filters: [{ id: 'eventsource', label: 'Event source', options: SOURCES, apply: (p, v) => { p.filter = { ...p.filter, eventsource: v }; } },
      { id: 'status', label: 'Status', options: [[0, 'Enabled'], [1, 'Disabled']], apply: (p, v) => { p.filter = { ...p.filter, status: v }; } }],
    rowParams: { output: ['actionid', 'name', 'eventsource', 'status'], selectFilter: 'extend', selectOperations: ['operationtype'] },
    columns: [
      { label: 'Name', sort: 'name', cell: (a) => a.name },
      { label: 'Event source', cell: (a) => label(SOURCES, a.eventsource) },
      { label: 'Conditions', cell: (a) => ((a.filter && a.filter.conditions) || []).map((c) => `${COND[c.conditiontype] || c.conditiontype} ${OPERATORS[c.operator] || ''} ${c.value}`).join('; ') },
      { label: 'Operations', cell: (a) => (a.operations || []).map((o) => OPTYPES[o.operationtype] || o.operationtype).join(', ') },
      { label: 'Status', sort: 'status', cell: (a) => (a.status === '1' ? h('span', { class: 'ack-no' }, 'Disabled') : h('span', { class: 'ack-yes' }, 'Enabled')) },
    ],
    status: { field: 'status', on: 0, off: 1 },
    editParams: { selectFilter: 'extend', selectOperations: 'extend', selectRecoveryOperations: 'extend', selectUpdateOperations: 'extend' },
    prepare: async () => {
      const [users, userGroups, mediaTypes, hostGroups, scripts] = await Promise.all([
        call('user.get', { output: ['userid', 'username'], sortfield: 'username' }),
        call('usergroup.get', { output: ['usrgrpid', 'name'], sortfield: 'name' }),
        call('mediatype.get', { output: ['mediatypeid', 'name'] }).then((l) => l.sort((a, b) => a.name.localeCompare(b.name))),
        call('hostgroup.get', { output: ['groupid', 'name'], sortfield: 'name' }),
        call('script.get', { output: ['scriptid', 'name'], filter: { scope: 1 }, sortfield: 'name' }).catch(() => []),
      ]);
      return { users, userGroups, mediaTypes, hostGroups, scripts };
    },
    newObject: { eventsource: '0', status: '0', esc_period: '1h', pause_suppressed: '1', notify_if_canceled: '1', filter: { evaltype: '0', conditions: [] },
      operations: [], recovery_operations: [], update_operations: [] },
    clone: (a) => ({ ...a, name: `${a.name} (copy)` }),
    form: actionForm,
  });
}

const strip = (ops) => (ops || []).map(({ operationid, actionid, ...o }) => o);

function actionForm(a, lists, isNew) {
  const src = input.select(N, 'eventsource', SOURCES, a.eventsource);
  src.disabled = !isNew;
  const f = {
    name: input.text(N, 'name', a.name, { maxlength: 255 }),
    status: input.check(N, 'status', String(a.status ?? '0') === '0'),
    esc_period: input.text(N, 'esc_period', a.esc_period),
    pause_suppressed: input.check(N, 'pause_suppressed', a.pause_suppressed),
    notify_if_canceled: input.check(N, 'notify_if_canceled', a.notify_if_canceled),
    evaltype: input.select(N, 'evaltype', [[0, 'And/Or'], [1, 'And'], [2, 'Or'], [3, 'Custom expression']], (a.filter && a.filter.evaltype) || 0),
    formula: input.text(N, 'formula', a.filter && a.filter.formula, { placeholder: 'A and (B or C)' }),
  };
  const conds = h('div', {});
  const ops = h('div', {});
  let condTable; let opTables;
  const draw = (keep) => {
    const s = src.value;
    condTable = rowTable('action-conditions', ['Label', 'Type', 'Operator', 'Value', 'Tag'], keep ? (a.filter && a.filter.conditions) || [] : [], (c) => condRow(s, c, lists), 'filter');
    clear(conds).append(condTable.el);
    opTables = [['operations', 'Operations'], ['recovery_operations', 'Recovery operations'], ['update_operations', 'Update operations']]
      .filter(([k]) => k === 'operations' || s === '0' || s === '3' || s === '4')
      .map(([k, title]) => [k, title, rowTable(`action-${k.replace('_', '-')}`, k === 'operations' && ['0', '3', '4'].includes(s)
        ? ['Steps', 'Step duration', 'Operation', 'Details'] : ['', '', 'Operation', 'Details'], keep ? strip(a[k]) : [], (o) => opRow(s, k, o, lists), k)]);
    clear(ops).append(...opTables.flatMap(([, title, t]) => [h('h4', {}, title), t.el]));
  };
  src.addEventListener('change', () => draw(false));
  draw(true);
  return {
    body: [
      h('div', { class: 'form-grid' }, fld('Event source', src), fld('Name', f.name), fld('Enabled', f.status), fld('Default operation step duration', f.esc_period),
        fld('Pause operations for suppressed problems', f.pause_suppressed), fld('Notify about canceled escalations', f.notify_if_canceled)),
      h('h4', {}, 'Conditions'), h('div', { class: 'form-grid' }, fld('Type of calculation', f.evaltype), fld('Custom expression', f.formula)), conds,
      ops,
    ],
    read: () => {
      const s = Number(src.value);
      const conditions = condTable.values().map((c, i) => ({ ...c, formulaid: String.fromCharCode(65 + i) }));
      const o = { name: f.name.value, status: f.status.checked ? 0 : 1, filter: { evaltype: Number(f.evaltype.value), conditions } };
      if (o.filter.evaltype === 3) o.filter.formula = f.formula.value;
      if (s === 0 || s === 3 || s === 4) o.esc_period = f.esc_period.value;
      if (s === 0) Object.assign(o, { pause_suppressed: f.pause_suppressed.checked ? 1 : 0, notify_if_canceled: f.notify_if_canceled.checked ? 1 : 0 });
      for (const [k, , t] of opTables) o[k] = t.values();
      if (isNew) o.eventsource = s;
      return o;
    },
  };
}

// condRow is one condition: type, operator, value (a list where the
// value is one of few: host groups, severities, ...), a tag name for a
// tag value condition.
function condRow(source, c, { hostGroups }) {
  const types = SOURCE_COND[source];
  const type = h('select', { class: 'condition-type', 'aria-label': 'Condition type' },
    types.map((t) => h('option', { value: String(t), selected: String(t) === String(c.conditiontype ?? types[0]) }, COND[t])));
  const op = h('select', { class: 'condition-operator', 'aria-label': 'Operator' });
  const value2 = h('input', { type: 'text', class: 'condition-value2', 'aria-label': 'Tag name', placeholder: 'tag name', value: c.value2 ?? '' });
  const cell = h('span', {});
  const tag = h('span', { class: 'muted condition-label' }, c.formulaid || '');
  let valueEl;
  const fill = (keep) => {
    clear(op);
    for (const o of COND_OPS[type.value]) op.append(h('option', { value: String(o), selected: keep && String(o) === String(c.operator) }, OPERATORS[o]));
    const v = keep ? c.value : '';
    const choices = {
      0: hostGroups.map((g) => [g.groupid, g.name]), 4: SEVERITIES.map((s, i) => [i, s]), 10: [[0, 'Up'], [1, 'Down'], [2, 'Discovered'], [3, 'Lost']],
      21: [[1, 'Device'], [2, 'Service']], 23: [[0, 'Item in "not supported" state'], [2, 'Trigger in "unknown" state'], [3, 'Low-level discovery rule in "not supported" state']],
    }[type.value];
    if (choices) valueEl = h('select', { class: 'condition-value', 'aria-label': 'Value' }, choices.map(([x, t]) => h('option', { value: String(x), selected: String(x) === String(v) }, t)));
    else if (type.value === '16') valueEl = h('input', { type: 'hidden', class: 'condition-value', value: '' });
    else valueEl = h('input', { type: 'text', class: 'condition-value', 'aria-label': 'Value', value: v ?? '',
      placeholder: { 1: 'host ID', 2: 'trigger ID', 13: 'template ID', 18: 'discovery rule ID', 19: 'check ID', 20: 'proxy ID', 27: 'service ID', 6: '1-7,00:00-24:00' }[type.value] || '' });
    cell.replaceChildren(valueEl);
    value2.hidden = type.value !== '26';
  };
  type.addEventListener('change', () => fill(false));
  fill(true);
  return {
    cells: [tag, type, op, cell, value2],
    read: () => ({ conditiontype: Number(type.value), operator: Number(op.value), value: valueEl.value ?? '', value2: type.value === '26' ? value2.value : '' }),
  };
}

// opRow is one operation of list kind ('operations', 'recovery_...',
// 'update_...') for the source: its type and the fields of that type.
function opRow(source, kind, o, { users, userGroups, mediaTypes, hostGroups, scripts }) {
  const types = kind === 'operations' ? SOURCE_OPS[source] : [0, 1, kind === 'recovery_operations' ? 11 : 12];
  const steps = kind === 'operations' && ['0', '3', '4'].includes(source);
  const type = h('select', { class: 'op-type', 'aria-label': 'Operation' },
    types.map((t) => h('option', { value: String(t), selected: String(t) === String(o.operationtype ?? 0) }, OPTYPES[t])));
  const from = h('input', { type: 'number', class: 'op-step-from', 'aria-label': 'From step', min: 1, value: o.esc_step_from ?? 1 });
  const to = h('input', { type: 'number', class: 'op-step-to', 'aria-label': 'To step (0: to the end)', min: 0, value: o.esc_step_to ?? 1 });
  const dur = h('input', { type: 'text', class: 'op-period', 'aria-label': 'Step duration (0: the action\'s)', value: o.esc_period ?? '0' });
  const multi = (cls, lbl, choices, picked) => {
    const set = new Set((picked || []).map(String));
    return h('select', { multiple: true, class: cls, 'aria-label': lbl, size: Math.min(4, Math.max(2, choices.length)) },
      choices.map(([v, t]) => h('option', { value: v, selected: set.has(String(v)) }, t)));
  };
  const pick = (s) => [...s.selectedOptions].map((x) => x.value);
  const msg = o.opmessage || {};
  const mt = h('select', { class: 'op-mediatype', 'aria-label': 'Send only to' }, h('option', { value: '0' }, 'All media types'),
    mediaTypes.map((x) => h('option', { value: x.mediatypeid, selected: msg.mediatypeid === x.mediatypeid }, x.name)));
  const us = multi('op-users', 'Send to users', users.map((u) => [u.userid, u.username]), (o.opmessage_usr || []).map((x) => x.userid));
  const gs = multi('op-groups', 'Send to user groups', userGroups.map((g) => [g.usrgrpid, g.name]), (o.opmessage_grp || []).map((x) => x.usrgrpid));
  const custom = h('input', { type: 'checkbox', class: 'op-custom', 'aria-label': 'Custom message', checked: String(msg.default_msg ?? '1') === '0' });
  const subject = h('input', { type: 'text', class: 'op-subject', 'aria-label': 'Subject', value: msg.subject ?? '' });
  const message = h('textarea', { class: 'op-message', 'aria-label': 'Message', rows: 2 });
  message.value = msg.message ?? '';
  const script = h('select', { class: 'op-script', 'aria-label': 'Script' },
    scripts.map((x) => h('option', { value: x.scriptid, selected: o.opcommand && o.opcommand.scriptid === x.scriptid }, x.name)));
  const current = h('input', { type: 'checkbox', class: 'op-current-host', 'aria-label': 'Current host',
    checked: !o.opcommand_hst || o.opcommand_hst.some((x) => String(x.hostid) === '0') });
  const cmdGroups = multi('op-command-groups', 'On host groups', hostGroups.map((g) => [g.groupid, g.name]), (o.opcommand_grp || []).map((x) => x.groupid));
  const hostGroupSel = multi('op-hostgroups', 'Host groups', hostGroups.map((g) => [g.groupid, g.name]), (o.opgroup || []).map((x) => x.groupid));
  const templates = h('input', { type: 'text', class: 'op-templates', 'aria-label': 'Template IDs', placeholder: 'template IDs, comma-separated',
    value: (o.optemplate || []).map((x) => x.templateid).join(', ') });
  const inv = h('select', { class: 'op-inventory', 'aria-label': 'Inventory mode' }, [[0, 'Manual'], [1, 'Automatic'], [-1, 'Disabled']]
    .map(([v, t]) => h('option', { value: String(v), selected: String(v) === String((o.opinventory || {}).inventory_mode ?? 0) }, t)));
  const details = h('div', { class: 'op-details' });
  const draw = () => {
    const t = type.value;
    // Built on each change: an element lives in one place, and the
    // message fields serve several types.
    const parts = {
      0: () => [fld('Send to users', us), fld('Send to user groups', gs), fld('Send only to', mt), fld('Custom message', custom), fld('Subject', subject), fld('Message', message)],
      1: () => [fld('Script', script), fld('Current host', current), fld('Host groups', cmdGroups)],
      4: () => [fld('Host groups', hostGroupSel)], 5: () => [fld('Host groups', hostGroupSel)],
      6: () => [fld('Templates', templates)], 7: () => [fld('Templates', templates)], 10: () => [fld('Inventory mode', inv)],
      11: () => [fld('Send only to', mt), fld('Custom message', custom), fld('Subject', subject), fld('Message', message)],
    };
    parts[12] = parts[11];
    details.replaceChildren(...(parts[t] ? parts[t]() : [h('span', { class: 'muted' }, 'No details.')]));
  };
  type.addEventListener('change', draw);
  draw();
  return {
    cells: steps ? [h('span', {}, from, ' – ', to), dur, type, details] : [h('span', {}), h('span', {}), type, details],
    read: () => {
      const t = Number(type.value);
      const out = { operationtype: t };
      if (steps) Object.assign(out, { esc_step_from: Number(from.value), esc_step_to: Number(to.value), esc_period: dur.value });
      if (t === 0 || t === 11 || t === 12) {
        out.opmessage = custom.checked ? { default_msg: 0, subject: subject.value, message: message.value, mediatypeid: mt.value } : { default_msg: 1, mediatypeid: mt.value };
        if (t === 0) Object.assign(out, { opmessage_usr: pick(us).map((userid) => ({ userid })), opmessage_grp: pick(gs).map((usrgrpid) => ({ usrgrpid })) });
      } else if (t === 1) {
        Object.assign(out, { opcommand: { scriptid: script.value }, opcommand_hst: current.checked ? [{ hostid: '0' }] : [],
          opcommand_grp: pick(cmdGroups).map((groupid) => ({ groupid })) });
      } else if (t === 4 || t === 5) {
        out.opgroup = pick(hostGroupSel).map((groupid) => ({ groupid }));
      } else if (t === 6 || t === 7) {
        out.optemplate = templates.value.split(',').map((x) => x.trim()).filter(Boolean).map((templateid) => ({ templateid }));
      } else if (t === 10) {
        out.opinventory = { inventory_mode: Number(inv.value) };
      }
      return out;
    },
  };
}
