// Graphs of a host or template (graph.*; /config/graphs?hostid=), as
// 6.0's Configuration → Hosts → Graphs: the list (name, size, type,
// where it comes from; search, mass delete) and the form of
// graphform.js (items with colour, function, draw style and Y axis
// side, graph type, Y axis min/max, a preview). A graph copied from a
// template or made by discovery opens read-only: its template or its
// prototype owns it (the API refuses the change anyway).
import { call } from '../../api.js';
import { h } from '../../dom.js';
import { crudPage, subnav } from '../../crud.js';
import { graphForm, graphClone, graphNew, GRAPH_TYPES } from './graphform.js';

const N = 'graph';
const label = (list, v) => (list.find(([x]) => String(x) === String(v)) || [0, v])[1];

export async function render(main, params) {
  const hostid = params.get('hostid') || '';
  const [hosts, templates] = await Promise.all([
    call('host.get', { output: ['hostid', 'name'], sortfield: 'name' }),
    call('template.get', { output: ['templateid', 'name'], sortfield: 'name' }).catch(() => []),
  ]);
  const sel = h('select', { id: 'graph-host', 'aria-label': 'Host or template', onchange: () => {
    history.replaceState(null, '', sel.value ? `/config/graphs?hostid=${encodeURIComponent(sel.value)}` : '/config/graphs');
    dispatchEvent(new PopStateEvent('popstate'));
  } }, h('option', { value: '' }, 'Choose a host or template…'),
  h('optgroup', { label: 'Hosts' }, hosts.map((x) => h('option', { value: x.hostid, selected: x.hostid === hostid }, x.name))),
  templates.length ? h('optgroup', { label: 'Templates' }, templates.map((x) => h('option', { value: x.templateid, selected: x.templateid === hostid }, x.name))) : null);
  if (!hostid) {
    main.append(subnav('config', '/config/graphs'), h('div', { class: 'toolbar' }, h('h1', {}, 'Graphs'), sel), h('p', { class: 'muted' }, 'Choose the host or template whose graphs to show.'));
    return null;
  }
  await crudPage(main, {
    api: 'graph', id: 'graphid', ids: 'graphids', noun: N, label: 'graph', title: 'Graphs', section: 'config', path: '/config/graphs',
    params: { hostids: [hostid] },
    sort: [['name', 'Name'], ['graphtype', 'Graph type'], ['width', 'Width'], ['height', 'Height']],
    search: { field: 'name', label: 'Search name' },
    rowParams: { output: ['graphid', 'name', 'width', 'height', 'graphtype', 'templateid', 'flags'] },
    columns: [
      { label: 'Name', sort: 'name', cell: (g) => g.name },
      { label: 'Width', sort: 'width', cell: (g) => g.width },
      { label: 'Height', sort: 'height', cell: (g) => g.height },
      { label: 'Graph type', sort: 'graphtype', cell: (g) => label(GRAPH_TYPES, g.graphtype) },
      { label: 'From', cell: (g) => (g.flags === '4' ? h('span', { class: 'badge' }, 'discovered') : g.templateid && g.templateid !== '0' ? h('span', { class: 'badge' }, 'template') : '') },
    ],
    editable: true,
    editParams: { selectGraphItems: 'extend' },
    prepare: async () => ({ items: await call('item.get', { hostids: [hostid], output: ['itemid', 'name', 'key_', 'units'], filter: { value_type: [0, 3] }, sortfield: 'name' }) }),
    newObject: graphNew,
    clone: graphClone,
    form: (g, lists) => {
      const f = graphForm(N, g, lists.items);
      const owned = g.flags === '4' ? 'This graph was made by discovery from a graph prototype: edit the prototype.'
        : g.templateid && g.templateid !== '0' ? 'This graph comes from a template: the template owns it.' : '';
      return { body: owned ? [h('p', { class: 'muted', id: 'graph-owned' }, owned), ...f.body] : f.body, read: f.read };
    },
  });
  main.querySelector('.toolbar h1').after(sel);
  return null;
}
