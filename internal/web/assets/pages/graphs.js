// A host's graphs: the graphs graph.get gives for the host (its own,
// the copies of its templates' graphs, and those discovery made from
// graph prototypes), each a link to the graph page with the graph's items
// in their order. Zabbix 6.0 shows these under Monitoring → Hosts →
// Graphs.
import { call } from '../api.js';
import { h } from '../dom.js';

const FLAGS = { 0: '', 4: 'discovered' };

export async function render(main, q) {
  const hostid = q.get('hostid') || '';
  const title = h('h1', {}, 'Graphs');
  const status = h('span', { class: 'muted', id: 'graphs-count' });
  const list = h('ul', { class: 'graph-list', id: 'graph-list' });
  main.append(h('div', { class: 'toolbar' }, title, status), list);
  if (!/^\d+$/.test(hostid)) {
    list.append(h('li', {}, 'Choose a host on the ', h('a', { href: '/hosts' }, 'Hosts'), ' page.'));
    return null;
  }
  const [hosts, graphs] = await Promise.all([
    call('host.get', { hostids: [hostid], output: ['name'] }),
    call('graph.get', { hostids: [hostid], output: ['graphid', 'name', 'flags', 'templateid'], selectGraphItems: ['itemid', 'sortorder'], sortfield: 'name' }),
  ]);
  if (hosts.length) title.textContent = `Graphs: ${hosts[0].name}`;
  status.textContent = `${graphs.length} graphs`;
  if (!graphs.length) {
    list.append(h('li', { class: 'muted' }, 'This host has no graphs.'));
    return null;
  }
  for (const g of graphs) {
    const items = [...(g.gitems || [])].sort((a, b) => Number(a.sortorder) - Number(b.sortorder)).map((gi) => gi.itemid);
    const tags = [];
    if (FLAGS[g.flags]) tags.push(h('span', { class: 'badge' }, FLAGS[g.flags]));
    if (g.templateid && g.templateid !== '0') tags.push(h('span', { class: 'badge' }, 'from a template'));
    list.append(h('li', { class: 'graph-row', dataset: { graphid: g.graphid } },
      h('a', { href: `/graph?itemids=${items.join(',')}` }, g.name), ' ', tags));
  }
  return null;
}
