// Configuration: triggers, of one host or all (trigger.get with hosts,
// expandExpression). A form creates or edits a trigger: name,
// expression, severity, status, PROBLEM event generation mode, what an OK
// event closes (all problems, or those whose tag of a name has its
// value) and manual close. When the API refuses an expression, its
// error is shown as it comes and, when it names a position, the
// expression is shown with the offending part marked.
import { call } from '../../api.js';
import { h, clear, SEVERITIES } from '../../dom.js';
import { field, select, showError, configNav, hostPicker, cloneAndDelete, readOnly } from '../../form.js';
import { navigate } from '../../app.js';
import { showErrorAt } from '../../crud.js';

// errorPosition finds where an expression error points: "(position N)"
// in Peregrine's message, or the text after "starting from" (Zabbix's).
export function errorPosition(msg, expr) {
  const m = /\(position (\d+)\)/.exec(msg);
  if (m) return Math.min(Number(m[1]), expr.length);
  const s = /starting from "((?:[^"\\]|\\.)*)"/.exec(msg);
  if (s) {
    const frag = s[1].replace(/\.\.\.$/, '').replace(/\\"/g, '"');
    const i = expr.indexOf(frag);
    if (i >= 0) return i;
  }
  return -1;
}

export async function render(main, q) {
  const hostid = q.get('hostid') || '';
  const picker = await hostPicker(call, hostid, (id) => navigate(id ? `/config/triggers?hostid=${id}` : '/config/triggers'));
  picker.firstChild.textContent = 'All hosts';
  const count = h('span', { class: 'muted', id: 'config-trigger-count' });
  const formBox = h('section', { class: 'card config-form', id: 'trigger-form', hidden: true });
  const table = h('table', { class: 'plain', id: 'config-triggers' });
  const createBtn = h('button', { type: 'button', id: 'trigger-create', onclick: () => edit(null) }, 'Create trigger');
  main.append(configNav('triggers'), h('div', { class: 'toolbar' }, h('h1', {}, 'Triggers'), picker, createBtn, count), formBox, h('div', { class: 'scroll' }, table));

  // Triggers the user may only read open read-only (the API would
  // refuse the change); with no host group to write in, no create.
  let writable = new Set();
  createBtn.hidden = !(await call('hostgroup.get', { output: ['groupid'], editable: true, limit: 1 })).length;

  async function load() {
    // templated: false: all hosts' triggers; one host's or template's
    // when it is chosen.
    const p = { output: ['triggerid', 'description', 'event_name', 'expression', 'priority', 'status', 'value', 'error', 'type', 'correlation_mode', 'correlation_tag', 'manual_close'], selectHosts: ['hostid', 'name'], expandExpression: true, sortfield: 'description', limit: 1000, templated: false };
    if (hostid) {
      p.hostids = [hostid];
      delete p.templated;
    }
    const [ts, mine] = await Promise.all([call('trigger.get', p), call('trigger.get', { ...p, output: ['triggerid'], selectHosts: undefined, expandExpression: undefined, editable: true })]);
    writable = new Set(mine.map((x) => x.triggerid));
    count.textContent = ts.length === 1 ? '1 trigger' : `${ts.length} triggers${ts.length === 1000 ? ' (the first 1000: choose a host)' : ''}`;
    clear(table);
    table.append(h('tr', {}, ['Severity', 'Value', 'Host', 'Name', 'Expression', 'Status'].map((x) => h('th', {}, x))));
    for (const t of ts) {
      table.append(h('tr', { class: 'config-trigger-row', dataset: { triggerid: t.triggerid } },
        h('td', {}, h('span', { class: `badge sev-${t.priority}` }, SEVERITIES[t.priority] || t.priority)),
        h('td', {}, t.value === '1' ? h('span', { class: 'ack-no' }, 'PROBLEM') : h('span', { class: 'ack-yes' }, 'OK')),
        h('td', {}, (t.hosts || []).map((x) => x.name).join(', ')),
        h('td', {}, h('a', { href: '#', class: 'trigger-name', onclick: (e) => { e.preventDefault(); edit(t); } }, t.description)),
        h('td', {}, h('code', { class: 'trigger-expression' }, t.expression)),
        h('td', {}, t.status === '1' ? h('span', { class: 'ack-no' }, 'Disabled') : h('span', { class: 'ack-yes' }, 'Enabled'))));
    }
  }

  // edit opens a trigger's form; with asClone, t is a new trigger's
  // values.
  function edit(t, asClone) {
    clear(formBox);
    formBox.hidden = false;
    const isNew = !t || !!asClone;
    const ro = !isNew && !writable.has(t.triggerid);
    t = t || { description: '', event_name: '', expression: '', priority: '2', status: '0', type: '0', correlation_mode: '0', correlation_tag: '', manual_close: '0' };
    const desc = h('input', { type: 'text', id: 'trigger-description', dataset: { key: 'description' }, value: t.description });
    // The problems' name when set (macros as in the name); empty: the trigger's name.
    const evName = h('input', { type: 'text', id: 'trigger-event-name', dataset: { key: 'event_name' }, value: t.event_name || '', placeholder: 'the trigger name' });
    const expr = h('textarea', { id: 'trigger-expression-input', dataset: { key: 'expression' }, rows: 3, 'aria-label': 'Expression' });
    expr.value = t.expression;
    const prio = select('trigger-priority', SEVERITIES.map((s, i) => [i, s]), t.priority);
    const status = select('trigger-status', [[0, 'Enabled'], [1, 'Disabled']], t.status);
    const type = select('trigger-type', [[0, 'Single'], [1, 'Multiple']], t.type || 0);
    // "OK event closes": all the trigger's problems, or only those whose
    // tag named below has the OK event's value of it.
    const corrMode = select('trigger-correlation-mode', [[0, 'All problems'], [1, 'All problems if tag values match']], t.correlation_mode || 0);
    const corrTag = h('input', { type: 'text', id: 'trigger-correlation-tag', value: t.correlation_tag || '', placeholder: 'tag' });
    const corrTagField = field('Tag for matching', corrTag);
    const showTag = () => { corrTagField.hidden = corrMode.value !== '1'; };
    corrMode.addEventListener('change', showTag);
    showTag();
    const manualClose = h('input', { type: 'checkbox', id: 'trigger-manual-close', checked: t.manual_close === '1' });
    prio.dataset.key = 'priority';
    status.dataset.key = 'status';
    const err = h('div', { class: 'error', id: 'trigger-error', role: 'alert', hidden: true });
    const save = async (ev) => {
      ev.preventDefault();
      const p = { description: desc.value, event_name: evName.value, expression: expr.value, priority: Number(prio.value), status: Number(status.value),
        type: Number(type.value), correlation_mode: Number(corrMode.value), correlation_tag: corrMode.value === '1' ? corrTag.value : '',
        manual_close: manualClose.checked ? 1 : 0 };
      try {
        if (isNew) await call('trigger.create', p);
        else await call('trigger.update', { triggerid: t.triggerid, ...p });
        formBox.hidden = true;
        await load();
      } catch (e) {
        // Under the form and beside the field the error names (its
        // path, or the name it quotes: 'Trigger "x" already exists').
        showErrorAt(formBox.querySelector('#trigger-edit'), err, e);
        const at = errorPosition(String(e.data || e.message), expr.value);
        if (at >= 0) {
          // The expression with the part the API stopped at marked.
          err.append(h('pre', { class: 'expr-error', id: 'trigger-error-pos' },
            expr.value.slice(0, at), h('mark', {}, expr.value.slice(at) || ' '), '\n', ' '.repeat(at) + '^'));
          expr.focus();
          expr.setSelectionRange(at, expr.value.length);
        }
      }
    };
    formBox.append(h('form', { id: 'trigger-edit', onsubmit: save },
      h('h3', {}, asClone ? 'New trigger (a clone)' : isNew ? 'New trigger' : `Trigger ${t.description}${ro ? ' (read-only)' : ''}`),
      h('div', { class: 'form-grid' }, field('Name', desc), field('Severity', prio), field('Status', status)),
      field('Event name', evName),
      field('Expression', expr),
      h('div', { class: 'form-grid' }, field('PROBLEM event generation mode', type), field('OK event closes', corrMode), corrTagField,
        field('Allow manual close', manualClose)),
      err,
      h('div', { class: 'form-buttons' },
        ro ? null : h('button', { type: 'submit', id: 'trigger-save' }, isNew ? 'Create' : 'Update'),
        isNew || ro ? null : cloneAndDelete('trigger', err, () => edit({ description: desc.value, event_name: evName.value, expression: expr.value,
          priority: prio.value, status: status.value, type: type.value, correlation_mode: corrMode.value, correlation_tag: corrTag.value,
          manual_close: manualClose.checked ? '1' : '0' }, true), async () => {
          await call('trigger.delete', [t.triggerid]);
          formBox.hidden = true;
          await load();
        }),
        h('button', { type: 'button', onclick: () => { formBox.hidden = true; } }, 'Cancel'))));
    if (ro) readOnly(formBox.lastChild);
  }
  await load();
}
