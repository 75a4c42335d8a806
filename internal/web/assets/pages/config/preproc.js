// The preprocessing editor of the item, item prototype and discovery
// rule forms, and its Test dialog (preprocessing.test).
//
// What it offers follows Zabbix 6.0.14's own forms (recorded from the
// peer's items.php, disc_prototypes.php and host_discovery.php forms,
// internal/web/testdata/item-form-6.0.14.json): the step types in their
// groups (a discovery rule has its own subset), each type's parameter
// fields, which types take "Custom on fail" (none for the trims,
// "Discard unchanged", "Discard unchanged with heartbeat", JavaScript
// and Replace; always for "Check for not supported value", which may
// appear once), and the Test dialog's inputs (the previous value and
// its time only when a step needs one: the change and discard steps).
// Steps are added, removed and reordered (drag by the handle, or the
// up and down buttons); values() reads them in the API's form, params
// joined by LF.
import { call, APIError } from '../../api.js';
import { h, clear } from '../../dom.js';

// ITEM_STEPS are the step types of an item or item prototype, grouped
// as 6.0's menu groups them.
export const ITEM_STEPS = [
  ['Text', [[5, 'Regular expression'], [25, 'Replace'], [4, 'Trim'], [2, 'Right trim'], [3, 'Left trim']]],
  ['Structured data', [[11, 'XML XPath'], [12, 'JSONPath'], [24, 'CSV to JSON'], [27, 'XML to JSON']]],
  ['Arithmetic', [[1, 'Custom multiplier']]],
  ['Change', [[9, 'Simple change'], [10, 'Change per second']]],
  ['Numeral systems', [[6, 'Boolean to decimal'], [7, 'Octal to decimal'], [8, 'Hexadecimal to decimal']]],
  ['Custom scripts', [[21, 'JavaScript']]],
  ['Validation', [[13, 'In range'], [14, 'Matches regular expression'], [15, 'Does not match regular expression'],
    [16, 'Check for error in JSON'], [17, 'Check for error in XML'], [18, 'Check for error using regular expression'], [26, 'Check for not supported value']]],
  ['Throttling', [[19, 'Discard unchanged'], [20, 'Discard unchanged with heartbeat']]],
  ['Prometheus', [[22, 'Prometheus pattern'], [23, 'Prometheus to JSON']]],
];

// LLD_STEPS are a discovery rule's.
export const LLD_STEPS = [
  ['Text', [[5, 'Regular expression'], [25, 'Replace']]],
  ['Structured data', [[11, 'XML XPath'], [12, 'JSONPath'], [24, 'CSV to JSON'], [27, 'XML to JSON']]],
  ['Custom scripts', [[21, 'JavaScript']]],
  ['Validation', [[15, 'Does not match regular expression'], [16, 'Check for error in JSON'], [17, 'Check for error in XML']]],
  ['Throttling', [[20, 'Discard unchanged with heartbeat']]],
  ['Prometheus', [[23, 'Prometheus to JSON']]],
];

export const stepName = (type) => {
  for (const [, list] of ITEM_STEPS) {
    const f = list.find(([v]) => String(v) === String(type));
    if (f) return f[1];
  }
  return `Step type ${type}`;
};

// NO_ON_FAIL are the types without "Custom on fail"; ALWAYS_ON_FAIL
// has it always on.
export const NO_ON_FAIL = new Set([2, 3, 4, 19, 20, 21, 25]);
const ALWAYS_ON_FAIL = 26;
// PREV_VALUE are the types whose test needs a previous value.
const PREV_VALUE = new Set([9, 10, 19, 20]);

// PARAMS: each type's parameter fields (placeholders as 6.0's). kind:
// text (default), area (JavaScript), prom (the Prometheus function),
// check (CSV's header row); narrow: a short field.
const PROM_FN = ['value', 'label', 'sum', 'min', 'max', 'avg', 'count'];
const PARAMS = {
  1: [{ ph: 'number', narrow: true }],
  2: [{ ph: 'list of characters', narrow: true }], 3: [{ ph: 'list of characters', narrow: true }], 4: [{ ph: 'list of characters', narrow: true }],
  5: [{ ph: 'pattern' }, { ph: 'output' }],
  11: [{ ph: 'XPath' }], 17: [{ ph: 'XPath' }],
  12: [{ ph: '$.path.to.node' }], 16: [{ ph: '$.path.to.node' }],
  13: [{ ph: 'min' }, { ph: 'max' }],
  14: [{ ph: 'pattern' }], 15: [{ ph: 'pattern' }],
  18: [{ ph: 'pattern' }, { ph: 'output' }],
  20: [{ ph: 'seconds', narrow: true }],
  21: [{ kind: 'area', ph: 'return value' }],
  22: [{ ph: '<metric name>{<label name>="<label value>", ...} == <value>' }, { kind: 'prom' }, { ph: '<label name>' }],
  23: [{ ph: '<metric name>{<label name>="<label value>", ...} == <value>' }],
  24: [{ ph: ',', narrow: true, max: 1, def: ',' }, { ph: '"', narrow: true, max: 1, def: '"' }, { kind: 'check', label: 'With header row', def: '1' }],
  25: [{ ph: 'search string' }, { ph: 'replacement' }],
};
const HANDLERS = [[1, 'Discard value'], [2, 'Set value to'], [3, 'Set error to']];

// paramInputs builds a step's parameter fields from its params (LF
// joined) and returns {els, read()}.
function paramInputs(type, params) {
  const spec = PARAMS[type] || [];
  const given = params === undefined || params === null ? null : String(params).split('\n');
  const els = [];
  const readers = [];
  spec.forEach((p, i) => {
    const v = given ? (given[i] ?? '') : (p.def ?? '');
    const cls = `pp-param pp-param-${i + 1}${i === 0 ? ' pp-params' : ''}`;
    let el;
    if (p.kind === 'area') {
      el = h('textarea', { class: cls, rows: 4, placeholder: p.ph, 'aria-label': 'JavaScript', spellcheck: 'false' });
      el.value = v;
      els.push(h('div', { class: 'pp-js' }, h('code', { class: 'muted' }, 'function (value) {'), el, h('code', { class: 'muted' }, '}')));
      readers.push(() => el.value);
      return;
    }
    if (p.kind === 'prom') {
      el = h('select', { class: cls, 'aria-label': 'Function' }, PROM_FN.map((f) => h('option', { value: f, selected: f === (v || 'value') }, f)));
      readers.push(() => el.value);
    } else if (p.kind === 'check') {
      el = h('label', { class: 'pp-check' }, h('input', { type: 'checkbox', class: cls, checked: v === '1' }), p.label);
      readers.push(() => (el.firstChild.checked ? '1' : '0'));
    } else {
      el = h('input', { type: 'text', class: cls + (p.narrow ? ' narrow' : ''), value: v, placeholder: p.ph, 'aria-label': p.ph, maxlength: p.max || 255 });
      readers.push(() => el.value);
    }
    els.push(el);
  });
  // The Prometheus pattern's label name is for the "label" function only.
  if (type === 22) {
    const [, fn, label] = els;
    const sync = () => { label.disabled = fn.value !== 'label'; };
    fn.addEventListener('change', sync);
    sync();
  }
  return { els, read: () => readers.map((r) => r()).join('\n') };
}

// typeSelect is a step type chooser with 6.0's groups.
function typeSelect(groups, value) {
  return h('select', { class: 'pp-type', 'aria-label': 'Name' }, groups.map(([g, list]) =>
    h('optgroup', { label: g }, list.map(([v, t]) => h('option', { value: String(v), selected: String(v) === String(value) }, t)))));
}

// preprocEditor edits steps. opts: lld (a discovery rule's step types),
// valueType() (the form's type of information, for Test), readOnly.
// Returns {el, values(), add(step)}.
export function preprocEditor(id, steps, opts = {}) {
  const groups = opts.lld ? LLD_STEPS : ITEM_STEPS;
  const first = groups[0][1][0][0];
  const list = h('ol', { class: 'pp-steps' });
  const head = h('div', { class: 'pp-head muted' }, h('span', {}, 'Name'), h('span', {}, 'Parameters'), h('span', {}, 'Custom on fail'), h('span', {}, 'Actions'));
  const rows = () => [...list.children];
  // Only one "Check for not supported value" step: the option is off
  // in the other rows once a row has it.
  const syncOptions = () => {
    const has = rows().some((r) => r.typeSel.value === String(ALWAYS_ON_FAIL));
    for (const r of rows()) {
      const o = r.typeSel.querySelector(`option[value="${ALWAYS_ON_FAIL}"]`);
      if (o) o.disabled = has && r.typeSel.value !== String(ALWAYS_ON_FAIL);
    }
    head.hidden = rows().length === 0;
    testAll.hidden = rows().length === 0 || !!opts.readOnly;
    rows().forEach((r, i) => { r.num.textContent = `${i + 1}:`; });
  };
  let dragged = null;
  const add = (s = {}) => {
    const type = Number(s.type ?? first);
    const typeSel = typeSelect(groups, type);
    const paramBox = h('div', { class: 'pp-param-box' });
    const onFail = h('input', { type: 'checkbox', class: 'pp-on-fail', 'aria-label': 'Custom on fail' });
    const handler = Number(s.error_handler || 0);
    const radios = HANDLERS.map(([v, t]) => h('label', { class: 'pp-handler-opt' },
      h('input', { type: 'radio', class: `pp-handler pp-handler-${v}`, value: String(v), checked: handler === v || (handler === 0 && v === 1) }), t));
    const hParams = h('input', { type: 'text', class: 'pp-error-params', value: s.error_handler_params || '', maxlength: 255, 'aria-label': 'Value or error message' });
    const failBox = h('div', { class: 'pp-fail' }, h('span', { class: 'muted' }, 'Custom on fail'), radios, hParams);
    const num = h('span', { class: 'pp-num' });
    const handle = h('span', { class: 'pp-drag', title: 'Drag to reorder', 'aria-hidden': 'true' }, '⋮⋮');
    const li = h('li', { class: 'pp-step', draggable: opts.readOnly ? 'false' : 'true' });
    let params = null;
    const radioName = `pp-h-${Math.random().toString(36).slice(2)}`;
    for (const r of radios) r.firstChild.name = radioName;
    const syncHandler = () => {
      failBox.hidden = !onFail.checked;
      const v = radios.find((r) => r.firstChild.checked)?.firstChild.value || '1';
      hParams.hidden = v === '1';
      hParams.placeholder = v === '3' ? 'error message' : 'value';
    };
    const setType = (t, p) => {
      params = paramInputs(t, p);
      clear(paramBox).append(...params.els);
      if (NO_ON_FAIL.has(t)) {
        onFail.checked = false;
        onFail.disabled = true;
      } else if (t === ALWAYS_ON_FAIL) {
        onFail.checked = true;
        onFail.disabled = true;
      } else {
        onFail.disabled = !!opts.readOnly;
      }
      syncHandler();
    };
    onFail.checked = handler > 0;
    setType(type, s.params);
    onFail.addEventListener('change', syncHandler);
    for (const r of radios) r.firstChild.addEventListener('change', syncHandler);
    typeSel.addEventListener('change', () => { setType(Number(typeSel.value)); syncOptions(); });
    const move = (d) => {
      const sib = d < 0 ? li.previousElementSibling : li.nextElementSibling;
      if (!sib) return;
      if (d < 0) list.insertBefore(li, sib);
      else list.insertBefore(sib, li);
      syncOptions();
    };
    const actions = opts.readOnly ? [] : [
      h('button', { type: 'button', class: 'pp-up', title: 'Move up', onclick: () => move(-1) }, '↑'),
      h('button', { type: 'button', class: 'pp-down', title: 'Move down', onclick: () => move(1) }, '↓'),
      h('button', { type: 'button', class: 'pp-test', onclick: () => testDialog(id, [li.read()], { ...opts, single: true, names: [typeSel.selectedOptions[0].textContent] }) }, 'Test'),
      h('button', { type: 'button', class: 'pp-remove', onclick: () => { li.remove(); syncOptions(); } }, 'Remove'),
    ];
    li.append(h('div', { class: 'pp-row' }, handle, num, typeSel, paramBox, h('span', { class: 'pp-fail-check' }, onFail), h('span', { class: 'pp-actions' }, actions)), failBox);
    li.typeSel = typeSel;
    li.num = num;
    li.read = () => {
      const t = Number(typeSel.value);
      const on = onFail.checked && !NO_ON_FAIL.has(t);
      const hv = on ? Number(radios.find((r) => r.firstChild.checked)?.firstChild.value || 1) : 0;
      return { type: t, params: params.read(), error_handler: hv, error_handler_params: hv === 2 || hv === 3 ? hParams.value : '' };
    };
    // Drag by the handle: a drop before or after the row under it.
    li.addEventListener('dragstart', (e) => {
      if (opts.readOnly) return e.preventDefault();
      dragged = li;
      li.classList.add('dragging');
      e.dataTransfer.effectAllowed = 'move';
      e.dataTransfer.setData('text/plain', '');
    });
    li.addEventListener('dragend', () => { li.classList.remove('dragging'); dragged = null; syncOptions(); });
    li.addEventListener('dragover', (e) => {
      if (!dragged || dragged === li) return;
      e.preventDefault();
      const r = li.getBoundingClientRect();
      list.insertBefore(dragged, e.clientY < r.top + r.height / 2 ? li : li.nextElementSibling);
    });
    list.append(li);
    syncOptions();
    return li;
  };
  const addBtn = h('button', { type: 'button', class: 'add-row', id: `${id}-add`, onclick: () => add({}) }, 'Add');
  const testAll = h('button', { type: 'button', id: `${id}-test-all`, onclick: () => testDialog(id, rows().map((r) => r.read()),
    { ...opts, names: rows().map((r) => r.typeSel.selectedOptions[0].textContent) }) }, 'Test all steps');
  for (const s of steps || []) add(s);
  const el = h('div', { class: 'pp-editor', id, dataset: { key: 'preprocessing' } }, head, list,
    h('div', { class: 'pp-foot' }, opts.readOnly ? null : addBtn, testAll));
  syncOptions();
  return { el, values: () => rows().map((r) => r.read()), add };
}

// testDialog asks for a value (and a previous value with its time when
// a step needs one) and shows what preprocessing.test answers: each
// step's result or error, what a custom on fail did, and the final
// result converted to the item's type of information. single: one
// step tested alone (no conversion, as 6.0's per-step Test).
export function testDialog(id, steps, opts = {}) {
  document.getElementById(`${id}-test`)?.remove();
  const names = opts.names || steps.map((s) => stepName(s.type));
  const needPrev = steps.some((s) => PREV_VALUE.has(Number(s.type)));
  const vt = opts.valueType ? String(opts.valueType()) : '4';
  const saved = testDialog.last[id] || {};
  const value = h('textarea', { id: 'pp-test-value', rows: 3, placeholder: 'value', 'aria-label': 'Value' });
  value.value = saved.value || '';
  const notSupported = h('input', { type: 'checkbox', id: 'pp-test-not-supported', 'aria-label': 'Not supported' });
  const prev = h('textarea', { id: 'pp-test-prev-value', rows: 2, placeholder: 'value', 'aria-label': 'Previous value' });
  prev.value = saved.prev || '';
  const prevTime = h('input', { type: 'text', id: 'pp-test-prev-time', value: saved.prevTime || 'now-1m', 'aria-label': 'Prev. time' });
  const eol = h('select', { id: 'pp-test-eol', 'aria-label': 'End of line sequence' }, h('option', { value: '0' }, 'LF'), h('option', { value: '1' }, 'CRLF'));
  const vtSel = h('select', { id: 'pp-test-value-type', 'aria-label': 'Type of information' },
    [[3, 'Numeric (unsigned)'], [0, 'Numeric (float)'], [1, 'Character'], [2, 'Log'], [4, 'Text']].map(([v, t]) => h('option', { value: String(v), selected: String(v) === vt }, t)));
  const results = h('table', { class: 'plain pp-test-results', id: 'pp-test-results' });
  const final = h('div', { id: 'pp-test-final', class: 'pp-test-final', hidden: true });
  const err = h('p', { class: 'error', id: 'pp-test-error', role: 'alert', hidden: true });
  const row = (label, el, hidden) => h('div', { class: 'iform-row', hidden }, h('span', { class: 'iform-label' }, label), h('div', { class: 'iform-field' }, el));
  const shown = (r) => {
    if (r === undefined || r === null) return h('span', { class: 'muted' }, 'No value');
    if (r === '') return h('span', { class: 'muted' }, '<empty string>');
    return h('code', { class: 'pp-test-value' }, r);
  };
  const draw = (res) => {
    clear(results);
    results.append(h('tr', {}, h('th', {}, 'Preprocessing steps'), h('th', {}, 'Result')));
    let failed = false;
    steps.forEach((s, i) => {
      if (failed) return; // 6.0 leaves out the steps after a failure
      const r = (res.steps || [])[i];
      const cell = h('td', { class: 'pp-test-result' });
      const name = h('td', { class: 'pp-test-name' }, `${i + 1}: ${names[i]}`);
      if (r) {
        const action = Number(r.action || 0);
        if (r.error !== undefined && action !== 2) {
          cell.append(h('span', { class: 'error pp-test-step-error' }, r.error || '<empty string>'));
          failed = true;
        } else if (r.error !== undefined) {
          cell.append(h('span', { class: 'error pp-test-step-error' }, r.error), ' ');
        } else {
          cell.append(shown(r.result));
        }
        if (action) {
          name.append(' ', h('span', { class: 'muted' }, 'Custom on fail'));
          const label = { 1: 'Discard value', 2: 'Set value to', 3: 'Set error to' }[action];
          const what = action === 2 ? r.result : action === 3 ? r.failed : null;
          cell.append(h('span', { class: 'pp-test-action muted' }, ` ${label}${what !== null && what !== undefined ? ' ' : ''}`),
            what !== null && what !== undefined ? h('code', { class: 'pp-test-action-value' }, what) : null);
        }
      }
      results.append(h('tr', { class: 'pp-test-step' }, name, cell));
    });
    clear(final);
    final.hidden = !!opts.single;
    if (opts.single) return;
    const vtName = vtSel.selectedOptions[0].textContent;
    if (res.error !== undefined) {
      final.append(h('span', { class: 'iform-label' }, 'Result'), h('span', { class: 'error', id: 'pp-test-final-error' }, res.error));
    } else {
      final.append(h('span', { class: 'iform-label' }, 'Result'), h('span', { class: 'muted' }, `Result converted to ${vtName} `),
        h('span', { id: 'pp-test-final-value' }, shown(res.result)));
    }
  };
  const run = async () => {
    err.hidden = true;
    let text = value.value;
    text = eol.value === '1' ? text.replace(/\r?\n/g, '\r\n') : text.replace(/\r\n/g, '\n');
    const p = { value: text, value_type: Number(vtSel.value), steps, single: !!opts.single, state: notSupported.checked ? 1 : 0 };
    if (needPrev && (prev.value !== '' || prevTime.value !== '')) p.history = { value: prev.value, timestamp: prevTime.value };
    testDialog.last[id] = { value: value.value, prev: prev.value, prevTime: prevTime.value };
    try {
      draw(await call('preprocessing.test', p));
    } catch (e) {
      clear(results);
      final.hidden = true;
      err.hidden = false;
      err.textContent = e instanceof APIError ? (e.data || e.message) : String(e.message || e);
    }
  };
  const dlg = h('dialog', { class: 'card pp-test-dialog', id: `${id}-test`, 'aria-label': 'Test item' },
    h('h3', {}, opts.single ? 'Test the step' : 'Test item'),
    h('div', { class: 'iform' },
      row('Value', h('div', {}, value, h('label', { class: 'pp-check' }, notSupported, 'Not supported'))),
      row('Time', h('span', { class: 'muted' }, 'now')),
      row('Previous value', prev, !needPrev), row('Prev. time', prevTime, !needPrev),
      row('End of line sequence', eol), row('Type of information', vtSel)),
    results, final, err,
    h('div', { class: 'form-buttons' },
      h('button', { type: 'button', id: 'pp-test-run', onclick: run }, 'Test'),
      h('button', { type: 'button', id: 'pp-test-close', onclick: () => { dlg.close(); dlg.remove(); } }, 'Close')));
  document.body.append(dlg);
  dlg.showModal();
  value.focus();
  return dlg;
}
// The values typed in a dialog are offered again the next time, per
// editor, as 6.0's dialog keeps them for the session.
testDialog.last = {};
