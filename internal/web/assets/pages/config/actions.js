// Configuration: actions and media types (action.get, mediatype.get),
// with enable/disable in place (action.update, mediatype.update). A
// server without these methods answers "Incorrect API" (-32601): each
// section then says it is not available, so the page works before and
// after the alerting methods exist.
import { call, APIError } from '../../api.js';
import { h, clear } from '../../dom.js';
import { showError, configNav } from '../../form.js';

const EVENT_SOURCES = { 0: 'Triggers', 1: 'Discovery', 2: 'Autoregistration', 3: 'Internal', 4: 'Services' };
const MEDIA_TYPES = { 0: 'Email', 1: 'Script', 2: 'SMS', 4: 'Webhook' };

export async function render(main) {
  const actions = h('section', { class: 'card', id: 'config-actions' });
  const media = h('section', { class: 'card', id: 'config-mediatypes' });
  main.append(configNav('actions'), h('div', { class: 'toolbar' }, h('h1', {}, 'Actions and media types')), actions, h('div', { class: 'gap' }), media);
  await Promise.all([
    section(actions, 'Actions', 'action', 'actionid', ['actionid', 'name', 'eventsource', 'status'],
      (a) => [a.name, EVENT_SOURCES[a.eventsource] || a.eventsource]),
    section(media, 'Media types', 'mediatype', 'mediatypeid', ['mediatypeid', 'name', 'type', 'status'],
      (m) => [m.name, MEDIA_TYPES[m.type] || m.type]),
  ]);
}

// section lists one API's objects with a status switch, or says that the
// server has no such API.
async function section(el, title, api, idField, output, cols) {
  const err = h('p', { class: 'error', role: 'alert', hidden: true });
  async function load() {
    let objs;
    try {
      objs = await call(`${api}.get`, { output, sortfield: 'name' });
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
    el.append(h('h3', {}, title), err);
    if (!objs.length) el.append(h('p', { class: 'muted' }, 'None.'));
    const table = h('table', { class: 'plain' }, h('tr', {}, h('th', {}, 'Name'), h('th', {}, 'Type'), h('th', {}, 'Status')));
    for (const o of objs) {
      const on = o.status === '0';
      const [name, kind] = cols(o);
      table.append(h('tr', { class: `${api}-row`, dataset: { id: o[idField] } },
        h('td', { class: `${api}-name` }, name), h('td', {}, kind),
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
  }
  await load();
}
