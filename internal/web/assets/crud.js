// A list-and-form page for one API object (user, usergroup, role,
// mediatype, script, maintenance, action): the administration pages and
// the newer configuration pages are each a spec for crudPage.
//
// The list is paginated on the server's terms: one get of the ids only,
// filtered and sorted by the server (output [id]; the few objects the
// API cannot sort by name are sorted here from [id, name]), then the rows
// of the page in view by their ids with the columns' fields. A 100,000
// row table costs one id list and 50 rows, never every row's details.
// Mass actions (delete, enable/disable where the object has a status)
// act on the checked rows; delete asks in place (no browser dialog).
//
// The form makes the same calls any client makes: <api>.create,
// <api>.update with the id, <api>.delete; Clone opens a new object with
// the form's current values, as Zabbix's Clone does. An API error is
// shown under the form and, when it names a member of the object
// ('Invalid parameter "/1/name": ...'), beside that member's field.
// Every value reaches the page as text or a property (dom.js).
import { call, APIError, mayOpen } from './api.js';
import { h, clear, debounce } from './dom.js';
import { NET_SUBNAV, errorField } from './netnav.js';

// subnav links the pages of one section the user may open.
export function subnav(section, active) {
  const all = {
    config: [['/config/hostgroups', 'Host groups'], ['/config/templates', 'Templates'], ['/config/hosts', 'Hosts'], ['/config/items', 'Items'], ['/config/triggers', 'Triggers'], ['/config/valuemaps', 'Value maps'],
      ['/config/graphs', 'Graphs'], ['/config/discovery', 'Discovery rules'], ['/config/actions', 'Actions'], ['/config/correlation', 'Event correlation'], ['/config/maintenance', 'Maintenance']],
    admin: [['/admin/users', 'Users'], ['/admin/usergroups', 'User groups'], ['/admin/roles', 'User roles'], ['/admin/mediatypes', 'Media types'],
      ['/admin/scripts', 'Scripts'], ['/admin/settings', 'General'], ['/admin/housekeeping', 'Housekeeping'], ['/admin/auditlog', 'Audit log'],
      ['/admin/queue', 'Queue'], ['/admin/authentication', 'Authentication'], ['/admin/sysinfo', 'System information']],
    services: [['/services', 'Services'], ['/services/sla', 'SLA']],
  }[section] || [];
  // Network pages (proxies, network discovery, web scenarios,
  // autoregistration): netnav.js.
  all.push(...(NET_SUBNAV[section] || []));
  return h('nav', { class: 'subnav', id: `${section}-nav` }, all.filter(([p]) => mayOpen(p)).map(([p, text]) =>
    h('a', { href: p, class: p === active ? 'active' : '', dataset: { page: p.split('/')[2] } }, text)));
}

// Form inputs: each carries data-key (the object's member) so that an
// API error naming the member lands beside it. ids are <noun>-<key>
// ("_" as "-", a trailing one dropped: key_ is <noun>-key).
const idOf = (noun, key) => `${noun}-${key.replace(/_$/, '').replace(/_/g, '-')}`;
export const input = {
  text: (noun, key, value, attrs = {}) => h('input', { type: 'text', id: idOf(noun, key), dataset: { key }, value: value ?? '', ...attrs }),
  // A number is typed as text (inputmode numeric), as 6.0's forms have
  // it: a text that is no number reaches the API, whose error is shown
  // beside the field with the text kept (numVal).
  num: (noun, key, value, attrs = {}) => h('input', { type: 'text', inputmode: 'numeric', id: idOf(noun, key), dataset: { key }, value: value ?? '', ...attrs }),
  area: (noun, key, value, rows = 4) => {
    const t = h('textarea', { id: idOf(noun, key), dataset: { key }, rows });
    t.value = value ?? '';
    return t;
  },
  select: (noun, key, options, value) => h('select', { id: idOf(noun, key), dataset: { key }, 'aria-label': key },
    options.map(([v, t]) => h('option', { value: String(v), selected: String(v) === String(value) }, t))),
  check: (noun, key, on) => h('input', { type: 'checkbox', id: idOf(noun, key), dataset: { key }, checked: !!on && String(on) !== '0' }),
  multi: (noun, key, options, chosen) => {
    const set = new Set((chosen || []).map(String));
    return h('select', { id: idOf(noun, key), dataset: { key }, multiple: true, 'aria-label': key, size: Math.min(8, Math.max(3, options.length)) },
      options.map(([v, t]) => h('option', { value: String(v), selected: set.has(String(v)) }, t)));
  },
};

// numVal reads a number field: its number, 0 when empty (as Number()
// reads it), or the text as typed when it is no number, for the API to
// refuse ('an integer is expected').
export function numVal(el) {
  const v = el.value.trim();
  if (v === '') return 0;
  const n = Number(v);
  return Number.isFinite(n) ? n : el.value;
}

// chosen returns a multiple select's values.
export const chosen = (sel) => [...sel.selectedOptions].map((o) => o.value);

// fld labels an input (or any element) in a form grid.
export function fld(label, el) {
  return h('label', { class: 'field' }, h('span', { class: 'field-label' }, label), el);
}

// rowTable edits a list of objects as table rows built by make(o),
// which returns {cells: [elements], read: () => object}. values() reads
// every row. key is the object's member the rows are (for errors).
export function rowTable(id, labels, rows, make, key) {
  const body = h('tbody', {});
  const add = (o) => {
    const r = make(o || {});
    const tr = h('tr', { class: `${id}-row` }, r.cells.map((c) => h('td', {}, c)),
      h('td', {}, h('button', { type: 'button', class: 'remove-row', onclick: () => tr.remove() }, 'Remove')));
    tr.read = r.read;
    body.append(tr);
  };
  for (const o of rows || []) add(o);
  return {
    el: h('div', { class: 'rows-editor', id, dataset: key ? { key } : undefined },
      h('table', { class: 'plain' }, h('thead', {}, h('tr', {}, labels.map((l) => h('th', {}, l)), h('th', {}))), body),
      h('button', { type: 'button', class: 'add-row', id: `${id}-add`, onclick: () => add({}) }, 'Add')),
    values: () => [...body.children].map((tr) => tr.read()).filter((x) => x !== null),
    add,
  };
}

// showErrorAt shows an API error under the form and beside the field it
// names, if any.
export function showErrorAt(form, errEl, e) {
  for (const old of form.querySelectorAll('.field-error')) old.remove();
  clear(errEl);
  errEl.hidden = false;
  const msg = e instanceof APIError ? (e.data || e.message) : String(e.message || e);
  errEl.append(h('span', {}, msg));
  // The member a path names ("/1/name"), or, when no field has it, the
  // first deeper one that has ("/1/filter/conditions": conditions).
  const m = /"\/((?:[A-Za-z_]+|\d+)(?:\/(?:[A-Za-z_]+|\d+))*)"/.exec(msg);
  const keys = m ? m[1].split('/').filter((x) => !/^\d+$/.test(x)) : [];
  const key = keys.length ? keys[0] : errorField(msg);
  // A field for the whole path ("/1/interface/port": data-key
  // "interface/port") first, then the member's.
  let at = keys.length > 1 ? form.querySelector(`[data-key="${keys.join('/')}"]`) : null;
  at = at || (key && form.querySelector(`[data-key="${key}"]`));
  for (const k of keys.slice(1)) at = at || form.querySelector(`[data-key="${k}"]`);
  if (!at) {
    // 'Host group "Linux" already exists.': the member it quotes, or
    // the field holding a value the message quotes.
    const quoted = new Set([...msg.matchAll(/"([^"]+)"/g)].map((q) => q[1]));
    const fields = [...form.querySelectorAll('[data-key]')];
    // A value holding quotes itself ('User group "a "b"" already
    // exists.') is found whole in the message.
    const texts = fields.filter((el) => (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA') && el.value.trim() !== '');
    at = fields.find((el) => quoted.has(el.dataset.key)) || texts.find((el) => quoted.has(el.value.trim())) ||
      texts.find((el) => msg.includes(`"${el.value.trim()}"`));
  }
  if (at) at.after(h('span', { class: 'error field-error', role: 'alert' }, msg));
}

const PAGE = 50;

// crudPage renders the list and form of spec's object in main. spec:
//   api, id (the id member), ids (the get parameter of ids), noun (for
//   element ids), title, section ('admin' or 'config'), path;
//   sort: [[field, label]] the server sorts by (first: default), or
//   clientSort: true (sorted here by name);
//   search: {field, label} (the get's "search");
//   filters: [{id, label, options, apply(params, value)}];
//   params: the get's parameters every list read carries (hostids);
//   rowParams: the get's output and selects for the rows;
//   columns: [{label, sort, cell(o)}] (cell returns text or elements);
//   status: {field, on, off} for mass enable/disable;
//   editParams: the get's selects for the form;
//   prepare(): lists the form needs, loaded once per page;
//   form(o, lists, isNew): {body: [elements], read(): object};
//   clone(o): the object a clone starts from (ids dropped);
//   newObject: the defaults of a new one;
//   afterPage(listEl): called after each page of rows is drawn;
//   toolbar: more elements for the toolbar (import, a host chooser);
//   mass: [{id, label, run(ids), confirm}] more mass actions (confirm:
//   asked in place first); massDelete: {label, run(ids)} instead of
//   <api>.delete;
//   editable: rows are read again with editable: true, and the rows the
//   user may only read get no check box and a read-only form (no save,
//   clone or delete); readOnly: the whole page is read-only;
//   formButtons(obj, f, mode, fail): more buttons for the form (fail(e)
//   shows an error under it).
export async function crudPage(main, spec) {
  const noun = spec.noun;
  const box = h('section', { class: 'card config-form', id: `${noun}-form`, hidden: true });
  const listEl = h('div', { class: 'scroll' });
  const count = h('span', { class: 'muted', id: `${noun}-count` });
  const pager = h('span', { class: 'pager' });
  const listErr = h('p', { class: 'error', id: `${noun}-list-error`, role: 'alert', hidden: true });
  const massBar = h('div', { class: 'toolbar mass', id: `${noun}-mass` });
  const search = spec.search ? h('input', { type: 'search', id: `${noun}-search`, placeholder: spec.search.label, 'aria-label': spec.search.label }) : null;
  const filters = (spec.filters || []).map((f) => ({ f, el: h('select', { id: `${noun}-filter-${f.id}`, 'aria-label': f.label },
    h('option', { value: '' }, `${f.label}: any`), f.options.map(([v, t]) => h('option', { value: String(v) }, t))) }));
  let sortField = spec.sort ? spec.sort[0][0] : 'name';
  let sortDesc = false;
  let ids = [];
  let pageNo = 0;
  let lists = null;
  const checked = new Set();
  let writable = null; // ids the user may change (spec.editable), or null: all

  main.append(subnav(spec.section, spec.path),
    h('div', { class: 'toolbar' }, h('h1', {}, spec.title), search, filters.map((x) => x.el),
      spec.toolbar || null,
      spec.readOnly ? null : h('button', { type: 'button', id: `${noun}-create`, onclick: () => open(null, 'create') }, `Create ${spec.label || noun}`), count, pager),
    box, listErr, massBar, listEl);

  const baseParams = () => {
    const p = { ...spec.params };
    if (search && search.value) p.search = { [spec.search.field]: search.value };
    for (const { f, el } of filters) if (el.value !== '') f.apply(p, el.value);
    return p;
  };

  async function loadIds() {
    const p = baseParams();
    if (spec.clientSort) {
      const all = await call(`${spec.api}.get`, { ...p, output: [spec.id, 'name'] });
      all.sort((a, b) => String(a.name).localeCompare(String(b.name)) * (sortDesc ? -1 : 1));
      ids = all.map((o) => o[spec.id]);
    } else {
      const all = await call(`${spec.api}.get`, { ...p, output: [spec.id], sortfield: sortField, sortorder: sortDesc ? 'DESC' : 'ASC' });
      ids = all.map((o) => o[spec.id]);
    }
    pageNo = Math.min(pageNo, Math.max(0, Math.ceil(ids.length / PAGE) - 1));
    for (const id of [...checked]) if (!ids.includes(id)) checked.delete(id);
  }

  async function loadPage() {
    const slice = ids.slice(pageNo * PAGE, (pageNo + 1) * PAGE);
    let rows = [];
    if (slice.length) {
      rows = await call(`${spec.api}.get`, { ...spec.rowParams, [spec.ids]: slice });
      const at = new Map(slice.map((id, i) => [id, i]));
      rows.sort((a, b) => at.get(a[spec.id]) - at.get(b[spec.id]));
      if (spec.editable) {
        const w = await call(`${spec.api}.get`, { output: [spec.id], [spec.ids]: slice, editable: true });
        writable = new Set(w.map((o) => o[spec.id]));
      }
    }
    const mayEdit = (id) => !spec.readOnly && (!writable || writable.has(id));
    const pages = Math.max(1, Math.ceil(ids.length / PAGE));
    count.textContent = `${ids.length} ${ids.length === 1 ? 'object' : 'objects'}`;
    clear(pager);
    if (pages > 1) {
      pager.append(h('button', { type: 'button', id: `${noun}-prev`, disabled: pageNo === 0, onclick: () => { pageNo--; refresh(false); } }, '‹'),
        ` page ${pageNo + 1} of ${pages} `,
        h('button', { type: 'button', id: `${noun}-next`, disabled: pageNo >= pages - 1, onclick: () => { pageNo++; refresh(false); } }, '›'));
    }
    const all = h('input', { type: 'checkbox', 'aria-label': 'Select all on this page', id: `${noun}-check-all`, onchange: () => {
      for (const r of rows) all.checked && mayEdit(r[spec.id]) ? checked.add(r[spec.id]) : checked.delete(r[spec.id]);
      for (const c of listEl.querySelectorAll('.row-check')) c.checked = all.checked;
      drawMass();
    } });
    const head = h('tr', {}, h('th', {}, rows.some((r) => mayEdit(r[spec.id])) ? all : null), spec.columns.map((c) => {
      if (!c.sort || (!spec.clientSort && !spec.sort.some(([f]) => f === c.sort))) return h('th', {}, c.label);
      const on = spec.clientSort ? c.sort === 'name' : c.sort === sortField;
      return h('th', {}, h('a', { href: '#', class: 'sort', onclick: (e) => {
        e.preventDefault();
        sortDesc = on ? !sortDesc : false;
        sortField = c.sort;
        refresh(true);
      } }, c.label, on ? (sortDesc ? ' ▼' : ' ▲') : ''));
    }));
    const table = h('table', { class: 'plain', id: `${noun}-list` }, h('thead', {}, head));
    const body = h('tbody', {});
    for (const r of rows) {
      const id = r[spec.id];
      body.append(h('tr', { class: `${noun}-row`, dataset: { id } },
        h('td', {}, mayEdit(id) ? h('input', { type: 'checkbox', class: 'row-check', 'aria-label': 'Select', checked: checked.has(id), onchange: (e) => {
          e.target.checked ? checked.add(id) : checked.delete(id);
          drawMass();
        } }) : null),
        spec.columns.map((c, i) => h('td', {}, i === 0
          ? h('a', { href: '#', class: `${noun}-name`, onclick: (e) => { e.preventDefault(); open(r, mayEdit(id) ? 'edit' : 'view'); } }, c.cell(r))
          : c.cell(r)))));
    }
    table.append(body);
    clear(listEl);
    listEl.append(table);
    if (!rows.length) listEl.append(h('p', { class: 'muted' }, 'Nothing to show.'));
    massBar.hidden = !rows.some((r) => mayEdit(r[spec.id]));
    drawMass();
    if (spec.afterPage) await spec.afterPage(listEl);
  }

  function drawMass(confirming) {
    clear(massBar);
    const n = checked.size;
    massBar.append(h('span', { class: 'muted' }, `${n} selected`));
    const act = async (what, f) => {
      try {
        await f([...checked]);
        if (what === 'delete') checked.clear();
        await refresh(true);
      } catch (e) {
        showErrorAt(listEl, listErr, e);
      }
    };
    if (spec.status) {
      for (const [label, v, idp] of [['Enable', spec.status.on, 'enable'], ['Disable', spec.status.off, 'disable']]) {
        massBar.append(h('button', { type: 'button', id: `${noun}-mass-${idp}`, disabled: !n, onclick: () => act(idp, (sel) =>
          Promise.all(sel.map((id) => call(`${spec.api}.update`, { [spec.id]: id, [spec.status.field]: v })))) }, label));
      }
    }
    for (const m of spec.mass || []) {
      if (confirming === m.id) {
        massBar.append(h('span', {}, `${m.label}: ${n}?`),
          h('button', { type: 'button', id: `${noun}-mass-${m.id}-yes`, onclick: () => act(m.delete ? 'delete' : m.id, m.run) }, 'Yes'),
          h('button', { type: 'button', onclick: () => drawMass(false) }, 'No'));
      } else {
        massBar.append(h('button', { type: 'button', id: `${noun}-mass-${m.id}`, disabled: !n, onclick: () => (m.confirm ? drawMass(m.id) : act(m.id, m.run)) }, m.label));
      }
    }
    const md = spec.massDelete || { label: 'Delete', run: (sel) => call(`${spec.api}.delete`, sel) };
    if (confirming === true) {
      massBar.append(h('span', {}, `${md.label}: ${n}?`),
        h('button', { type: 'button', id: `${noun}-mass-delete-yes`, onclick: () => act('delete', md.run) }, 'Yes, delete'),
        h('button', { type: 'button', onclick: () => drawMass(false) }, 'No'));
    } else {
      massBar.append(h('button', { type: 'button', id: `${noun}-mass-delete`, disabled: !n, onclick: () => drawMass(true) }, md.label));
    }
  }

  async function refresh(withIds) {
    listErr.hidden = true;
    try {
      if (withIds) await loadIds();
      await loadPage();
    } catch (e) {
      showErrorAt(listEl, listErr, e);
    }
  }

  // open shows the form: mode 'edit' (o is a row: the whole object is
  // read), 'view' (as edit, read-only), 'create' (o null: the defaults)
  // or 'clone' (o is the object to start from, already read).
  async function open(o, mode) {
    clear(box);
    box.hidden = false;
    try {
      if (!lists) lists = spec.prepare ? await spec.prepare() : {};
      let obj = o;
      if (mode === 'edit' || mode === 'view') {
        [obj] = await call(`${spec.api}.get`, { output: 'extend', ...spec.editParams, [spec.ids]: [o[spec.id]] });
        if (!obj) throw new Error('It is gone: someone deleted it meanwhile.');
      } else if (mode === 'create') {
        obj = structuredClone(spec.newObject || {});
      }
      drawForm(obj, mode);
    } catch (e) {
      box.append(h('p', { class: 'error', role: 'alert' }, String(e.data || e.message || e)));
    }
  }

  function drawForm(obj, mode) {
    clear(box);
    const view = mode === 'view';
    if (view) mode = 'edit';
    const isNew = mode !== 'edit';
    const f = spec.form(obj, lists, isNew);
    const err = h('p', { class: 'error', id: `${noun}-error`, role: 'alert', hidden: true });
    const close = () => { box.hidden = true; clear(box); };
    const form = h('form', { id: `${noun}-edit`, onsubmit: async (ev) => {
      ev.preventDefault();
      try {
        const o = f.read();
        if (isNew) await call(`${spec.api}.create`, o);
        else await call(`${spec.api}.update`, { [spec.id]: obj[spec.id], ...o });
        close();
        await refresh(true);
      } catch (e) {
        showErrorAt(form, err, e);
      }
    } });
    const del = h('span', {});
    const askDelete = () => {
      clear(del);
      del.append(h('span', {}, ' Delete it? '),
        h('button', { type: 'button', id: `${noun}-delete-yes`, onclick: async () => {
          try {
            await call(`${spec.api}.delete`, [obj[spec.id]]);
            close();
            await refresh(true);
          } catch (e) {
            showErrorAt(form, err, e);
          }
        } }, 'Yes, delete'));
    };
    const fail = (e) => showErrorAt(form, err, e);
    if (view) {
      form.append(h('h3', {}, `${spec.label || noun}: ${obj.name ?? obj.username ?? ''} (read-only)`), ...f.body,
        h('div', { class: 'form-buttons' }, h('button', { type: 'button', id: `${noun}-cancel`, onclick: close }, 'Close')));
      for (const el of form.querySelectorAll('input, select, textarea, button:not([id$="-cancel"])')) el.disabled = true;
      for (const el of form.querySelectorAll('.add-row, .remove-row, .unpick')) el.hidden = true;
      box.append(form);
      return;
    }
    form.append(h('h3', {}, mode === 'edit' ? `${spec.label || noun}: ${obj.name ?? obj.username ?? ''}` : mode === 'clone' ? `New ${spec.label || noun} (a clone)` : `New ${spec.label || noun}`),
      ...f.body, err,
      h('div', { class: 'form-buttons' },
        h('button', { type: 'submit', id: `${noun}-save` }, isNew ? 'Create' : 'Update'),
        mode === 'edit' ? h('button', { type: 'button', id: `${noun}-clone`, onclick: () => {
          let c;
          try {
            c = { ...obj, ...f.read() };
          } catch (e) {
            showErrorAt(form, err, e);
            return;
          }
          delete c[spec.id];
          drawForm(spec.clone ? spec.clone(c) : c, 'clone');
        } }, 'Clone') : null,
        mode === 'edit' && spec.formButtons ? spec.formButtons(obj, f, mode, fail, () => { close(); return refresh(true); }) : null,
        mode === 'edit' ? h('button', { type: 'button', id: `${noun}-delete`, onclick: askDelete }, 'Delete') : null,
        del,
        h('button', { type: 'button', id: `${noun}-cancel`, onclick: close }, 'Cancel')));
    box.append(form);
    box.scrollIntoView({ block: 'nearest' });
  }

  if (search) search.addEventListener('input', debounce(() => { pageNo = 0; refresh(true); }, 250));
  for (const { el } of filters) el.addEventListener('change', () => { pageNo = 0; refresh(true); });
  await refresh(true);
}

// picker chooses objects from a list too long to load (hosts): a search
// box asks search(text) for at most 50 matches, "Add" moves the chosen
// match into the list of chosen ones (each with a remove button).
// values() returns the chosen ids.
export function picker(id, chosenList, search) {
  const chosenEl = h('div', { class: 'picked', id: `${id}-chosen` });
  const have = new Map();
  const addOne = (oid, name) => {
    if (have.has(oid)) return;
    const chip = h('span', { class: 'tag picked-item', dataset: { id: oid } }, name, ' ',
      h('button', { type: 'button', class: 'unpick', 'aria-label': `Remove ${name}`, onclick: () => { chip.remove(); have.delete(oid); } }, '×'));
    have.set(oid, chip);
    chosenEl.append(chip);
  };
  for (const [oid, name] of chosenList) addOne(oid, name);
  const q = h('input', { type: 'search', id: `${id}-search`, placeholder: 'Type to search', 'aria-label': 'Search' });
  const results = h('select', { id: `${id}-results`, size: 4, multiple: true, 'aria-label': 'Matches' });
  const find = debounce(async () => {
    const found = await search(q.value);
    clear(results);
    for (const [oid, name] of found) results.append(h('option', { value: oid }, name));
  }, 200);
  q.addEventListener('input', find);
  const add = h('button', { type: 'button', id: `${id}-add`, onclick: () => {
    for (const o of results.selectedOptions) addOne(o.value, o.textContent);
  } }, 'Add');
  return { el: h('div', { class: 'picker', id }, chosenEl, h('div', { class: 'toolbar' }, q, results, add)), values: () => [...have.keys()] };
}
