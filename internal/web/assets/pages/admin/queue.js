// Administration: the queue (queue.get, Peregrine's method: Zabbix 6.0
// has no public one): polled checks overdue by more than 5 s, by how
// late (5 s, 10 s, 30 s, 1 m, 5 m, 10 m and more), overall, per item
// type and per host (the 100 hosts with most). Read again every 10 s
// while the page is open.
import { call } from '../../api.js';
import { h, clear } from '../../dom.js';
import { subnav } from '../../crud.js';

const BUCKETS = ['5s', '10s', '30s', '1m', '5m', '10m'];
const ITEM_TYPES = { 0: 'Zabbix agent', 2: 'Zabbix trapper', 3: 'Simple check', 5: 'Zabbix internal', 7: 'Zabbix agent (active)', 10: 'External check',
  11: 'Database monitor', 12: 'IPMI agent', 13: 'SSH agent', 14: 'Telnet agent', 15: 'Calculated', 16: 'JMX agent', 17: 'SNMP trap',
  18: 'Dependent item', 19: 'HTTP agent', 20: 'SNMP agent', 21: 'Script' };

export async function render(main) {
  const box = h('section', { class: 'card', id: 'queue' });
  main.append(subnav('admin', '/admin/queue'), h('div', { class: 'toolbar' }, h('h1', {}, 'Queue'), h('span', { class: 'muted' }, 'checks overdue, by how late')), box);
  const table = (id, first, rows) => h('table', { class: 'plain', id },
    h('thead', {}, h('tr', {}, h('th', {}, first), BUCKETS.map((b) => h('th', {}, `${b}${b === '10m' ? ' and more' : ''}`)), h('th', {}, 'Total'))),
    h('tbody', {}, rows.map(([name, q]) => h('tr', {}, h('td', {}, name), BUCKETS.map((b) => h('td', {}, (q.delay || {})[b] || '0')), h('td', {}, q.total)))));
  const load = async () => {
    const q = await call('queue.get', { groupby: ['host', 'type'], limit: 100 });
    clear(box).append(
      h('h3', {}, 'Overview'), table('queue-overview', '', [['All checks', q]]),
      h('h3', {}, 'By item type'), table('queue-types', 'Item type', (q.types || []).map((t) => [ITEM_TYPES[t.type] || `Type ${t.type}`, t])),
      h('h3', {}, 'By host (most overdue first)'), table('queue-hosts', 'Host', (q.hosts || []).map((x) => [x.name, x])));
  };
  await load();
  const timer = setInterval(() => load().catch((e) => console.error(e)), 10000);
  return () => clearInterval(timer);
}
