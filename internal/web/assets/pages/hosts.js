// Hosts: name, availability of each interface (host.get's
// selectInterfaces: available 0 unknown, 1 available, 2 unavailable,
// with the error), item count, problem count when problem.get exists.
// Filtered on the server (host.get "search") as the user types.
import { call, hasMethod } from '../api.js';
import { h, clear, debounce } from '../dom.js';
import { VList, cells } from '../vlist.js';

const AVAIL = { 0: ['unknown', 'avail-unknown'], 1: ['available', 'avail-ok'], 2: ['unavailable', 'avail-bad'] };
const IFTYPE = { 1: 'ZBX', 2: 'SNMP', 3: 'IPMI', 4: 'JMX' };

export async function render(main) {
  const search = h('input', { type: 'search', id: 'host-search', placeholder: 'Search host name', 'aria-label': 'Search host name' });
  const status = h('span', { class: 'muted', id: 'host-count' });
  let hosts = [];
  let problems = new Map();
  const list = new VList({
    header: ['Host', 'Availability', 'Problems', ''],
    columns: 'minmax(10rem, 2fr) minmax(8rem, 3fr) 6rem 14rem',
    renderRow(i) {
      const ho = hosts[i];
      const ifaces = (ho.interfaces || []).map((f) => {
        const [word, cls] = AVAIL[f.available] || AVAIL[0];
        return h('span', { class: `badge ${cls}`, title: f.error || word }, `${IFTYPE[f.type] || 'IF'} ${word}`);
      });
      const np = problems.get(ho.hostid);
      return h('div', { class: 'host-row', dataset: { hostid: ho.hostid } }, cells(
        h('span', { class: 'host-name' }, ho.name),
        h('span', {}, ifaces.length ? ifaces : h('span', { class: 'muted' }, 'no interfaces')),
        np ? h('span', { class: 'badge sev-4' }, String(np)) : '',
        h('span', {}, h('a', { href: `/latest?hostid=${encodeURIComponent(ho.hostid)}` }, 'Latest data'), ' ',
          h('a', { href: `/graphs?hostid=${encodeURIComponent(ho.hostid)}`, class: 'host-graphs' }, 'Graphs'), ' ',
          // 6.0's Monitoring → Hosts "Web" (web.js).
          h('a', { href: `/web?hostid=${encodeURIComponent(ho.hostid)}`, class: 'host-web' }, 'Web')),
      ));
    },
  });
  main.append(h('div', { class: 'toolbar' }, h('h1', {}, 'Hosts'), search, status), list.el);
  const withProblems = await hasMethod('problem.get', { countOutput: true, limit: 1 }).catch(() => false);

  let seq = 0;
  async function load() {
    const my = ++seq;
    const params = { output: ['hostid', 'host', 'name', 'status'], selectInterfaces: ['type', 'available', 'error'], sortfield: 'name' };
    if (search.value) params.search = { name: search.value };
    const res = await call('host.get', params);
    if (my !== seq) return;
    hosts = res;
    if (withProblems && hosts.length) {
      problems = await problemCounts(hosts.map((x) => x.hostid)).catch(() => new Map());
      if (my !== seq) return;
    }
    status.textContent = `${hosts.length} hosts`;
    list.setCount(hosts.length);
  }
  search.addEventListener('input', debounce(load, 200));
  await load();
  return () => list.destroy();
}

// problemCounts counts open problems per host (problem.get gives
// objectids; trigger.get maps triggers to hosts).
export async function problemCounts(hostids) {
  const m = new Map();
  const probs = await call('problem.get', { output: ['objectid'], hostids, limit: 100000 });
  const trig = [...new Set(probs.map((p) => p.objectid))];
  if (!trig.length) return m;
  const ts = await call('trigger.get', { output: ['triggerid'], triggerids: trig, selectHosts: ['hostid'] });
  const th = new Map(ts.map((t) => [t.triggerid, (t.hosts || []).map((x) => x.hostid)]));
  for (const p of probs) for (const hid of th.get(p.objectid) || []) m.set(hid, (m.get(hid) || 0) + 1);
  return m;
}
