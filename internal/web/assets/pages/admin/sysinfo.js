// System information, from what the server exposes: the API's version
// (apiinfo.version), the numbers of hosts, items and triggers (enabled
// and disabled, countOutput), the queue (queue.get, super admins), and
// the values processed per second from /metrics
// (peregrine_pipeline_values_committed_total read twice, 10 s apart).
import { call, mayOpen } from '../../api.js';
import { h, clear } from '../../dom.js';
import { subnav } from '../../crud.js';

async function committed() {
  const r = await fetch('/metrics', { credentials: 'same-origin' });
  if (!r.ok) return null;
  const m = /^peregrine_pipeline_values_committed_total(?:\{[^}]*\})?\s+([0-9.e+]+)/m.exec(await r.text());
  return m ? Number(m[1]) : null;
}

export async function render(main) {
  const box = h('section', { class: 'card', id: 'sysinfo' });
  main.append(mayOpen('/admin/queue') ? subnav('admin', '/admin/sysinfo') : null, h('div', { class: 'toolbar' }, h('h1', {}, 'System information')), box);
  let last = null;
  const load = async () => {
    const count = (m, p) => call(m, { countOutput: true, ...p });
    const [version, hosts, hostsOff, items, itemsOff, triggers, triggersOff, queue, now] = await Promise.all([
      call('apiinfo.version', []), count('host.get', { filter: { status: 0 } }), count('host.get', { filter: { status: 1 } }),
      count('item.get', { filter: { status: 0 }, templated: false }), count('item.get', { filter: { status: 1 }, templated: false }),
      count('trigger.get', { filter: { status: 0 }, templated: false }), count('trigger.get', { filter: { status: 1 }, templated: false }),
      call('queue.get', {}).catch(() => null), committed().catch(() => null)]);
    const t = Date.now();
    const vps = last && now !== null && last.v !== null ? ((now - last.v) / ((t - last.t) / 1000)).toFixed(2) : 'measuring…';
    last = { v: now, t };
    clear(box).append(h('table', { class: 'plain', id: 'sysinfo-table' }, h('thead', {}, h('tr', {}, h('th', {}, 'Parameter'), h('th', {}, 'Value'), h('th', {}, 'Details'))),
      h('tbody', {}, [
        ['Server is running', 'Yes', 'this server answers the API'],
        ['API version', version, ''],
        ['Number of hosts (enabled/disabled)', String(Number(hosts) + Number(hostsOff)), `${hosts} / ${hostsOff}`],
        ['Number of items (enabled/disabled)', String(Number(items) + Number(itemsOff)), `${items} / ${itemsOff}`],
        ['Number of triggers (enabled/disabled)', String(Number(triggers) + Number(triggersOff)), `${triggers} / ${triggersOff}`],
        ['Values processed per second', now === null ? 'unknown' : vps, 'from /metrics'],
        ['Checks in the queue (over 5 s late)', queue ? String(queue.total) : '—', queue ? '' : 'super admins only'],
      ].map(([a, b, c]) => h('tr', {}, h('td', {}, a), h('td', {}, b), h('td', { class: 'muted' }, c))))));
  };
  await load();
  const timer = setInterval(() => load().catch((e) => console.error(e)), 10000);
  return () => clearInterval(timer);
}
