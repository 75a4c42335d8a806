// Form helpers for the configuration pages: labelled fields, editable
// tables of rows (interfaces, tags, value mappings), and the API's error
// shown beside the form. Every value reaches the page as a property or
// text (dom.js), never as HTML.
import { h, clear } from './dom.js';
import { APIError } from './api.js';

// field labels an input; id makes it addressable by tests and labels.
export function field(label, input) {
  return h('label', { class: 'field' }, h('span', { class: 'field-label' }, label), input);
}

export function select(id, options, value) {
  return h('select', { id, 'aria-label': id },
    options.map(([v, text]) => h('option', { value: String(v), selected: String(v) === String(value) }, text)));
}

// rowsEditor edits a list of objects as rows of inputs. cols: [{key,
// label, type: 'text'|'select'|'checkbox', options, def}]. values()
// returns the rows as objects (checkboxes as '1'/'0'); rows with every
// text field empty are left out.
export function rowsEditor(id, cols, rows) {
  const body = h('tbody', {});
  const add = (r) => {
    const inputs = cols.map((c) => {
      const v = r[c.key] ?? c.def ?? '';
      if (c.type === 'select') return select(`${id}-${c.key}`, c.options, v);
      if (c.type === 'checkbox') return h('input', { type: 'checkbox', 'aria-label': c.label, checked: String(v) === '1' });
      return h('input', { type: 'text', 'aria-label': c.label, value: String(v), placeholder: c.label, class: `${id}-${c.key}` });
    });
    const tr = h('tr', { class: `${id}-row` }, inputs.map((x) => h('td', {}, x)),
      h('td', {}, h('button', { type: 'button', class: 'remove-row', onclick: () => tr.remove() }, 'Remove')));
    tr.inputs = inputs;
    tr.orig = r;
    body.append(tr);
  };
  for (const r of rows) add(r);
  const el = h('div', { class: 'rows-editor', id },
    h('table', { class: 'plain' }, h('thead', {}, h('tr', {}, cols.map((c) => h('th', {}, c.label)), h('th', {}))), body),
    h('button', { type: 'button', class: 'add-row', onclick: () => add({}) }, 'Add'));
  return {
    el,
    values() {
      const out = [];
      for (const tr of body.children) {
        const o = { ...tr.orig };
        let any = false;
        cols.forEach((c, i) => {
          const inp = tr.inputs[i];
          if (c.type === 'checkbox') o[c.key] = inp.checked ? '1' : '0';
          else o[c.key] = inp.value;
          if (c.type !== 'checkbox' && c.type !== 'select' && inp.value.trim() !== '') any = true;
        });
        if (any) out.push(o);
      }
      return out;
    },
  };
}

// showError puts an API error (or any error) in el as text.
export function showError(el, e) {
  clear(el);
  el.hidden = false;
  el.append(h('span', {}, e instanceof APIError ? (e.data || e.message) : String(e.message || e)));
}

// configNav links the configuration pages to each other.
export function configNav(active) {
  const pages = [['hosts', 'Hosts'], ['items', 'Items'], ['triggers', 'Triggers'], ['valuemaps', 'Value maps'], ['actions', 'Actions'], ['maintenance', 'Maintenance']];
  return h('nav', { class: 'subnav', id: 'config-nav' }, pages.map(([p, text]) =>
    h('a', { href: `/config/${p}`, class: p === active ? 'active' : '', dataset: { page: p } }, text)));
}

// hostPicker is a select of hosts (host.get) and templates
// (template.get) that calls onPick(hostid).
export async function hostPicker(call, hostid, onPick) {
  const [hosts, templates] = await Promise.all([call('host.get', { output: ['hostid', 'name'], sortfield: 'name' }),
    call('template.get', { output: ['templateid', 'name'], sortfield: 'name' }).catch(() => [])]);
  const sel = h('select', { id: 'config-host', 'aria-label': 'Host', onchange: () => onPick(sel.value) },
    h('option', { value: '' }, 'Choose a host…'),
    hosts.map((x) => h('option', { value: x.hostid, selected: x.hostid === hostid }, x.name)),
    templates.length ? h('optgroup', { label: 'Templates' },
      templates.map((x) => h('option', { value: x.templateid, selected: x.templateid === hostid }, x.name))) : null);
  return sel;
}

// hostOrTemplate reads a host, or the template of that id, with its
// interfaces (none for a template).
export async function hostOrTemplate(call, hostid) {
  const [host] = await call('host.get', { output: ['hostid', 'name'], hostids: [hostid], selectInterfaces: ['interfaceid', 'type', 'main'] });
  if (host) return host;
  const [t] = await call('template.get', { output: ['templateid', 'name'], templateids: [hostid] });
  if (!t) throw new Error('No such host or template: it may have been deleted.');
  return { hostid: t.templateid, name: t.name, interfaces: [], template: true };
}

// cloneAndDelete are an edit form's Clone and Delete buttons (ids
// <noun>-clone, <noun>-delete, and <noun>-delete-yes for the question
// asked in place). clone() opens the form's current values as a new
// object; remove() deletes the object and returns when it is gone (its
// error is shown in errEl).
export function cloneAndDelete(noun, errEl, clone, remove) {
  const ask = h('span', { class: 'delete-ask' });
  return [
    h('button', { type: 'button', id: `${noun}-clone`, onclick: clone }, 'Clone'),
    h('button', { type: 'button', id: `${noun}-delete`, onclick: () => {
      ask.replaceChildren(h('span', {}, ' Delete it? '), h('button', { type: 'button', id: `${noun}-delete-yes`, onclick: async () => {
        try {
          await remove();
        } catch (e) {
          showError(errEl, e);
        }
      } }, 'Yes, delete'));
    } }, 'Delete'),
    ask,
  ];
}

// readOnly makes a form show its values only: every control disabled,
// no row editing; its buttons other than Cancel are left out by the
// page.
export function readOnly(form) {
  for (const el of form.querySelectorAll('input, select, textarea')) el.disabled = true;
  for (const el of form.querySelectorAll('.add-row, .remove-row')) el.hidden = true;
}
