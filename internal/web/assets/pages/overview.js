// Overview: server health from the self-monitoring host's internal items
// (host "Zabbix server": values processed, required performance,
// queue, goroutine utilisation of the poller, trapper, pipeline shards
// and housekeeper), open problems by severity and the hosts with most
// problems (when the server has problem.get), hosts with unavailable
// interfaces. Refreshed in place every 30 s; the problem counts also
// whenever the newest event id moves (checked every 5 s with one
// event.get of limit 1, so a quiet server costs one tiny call and a storm
// is seen within seconds).
import { call, batch, hasMethod } from '../api.js';
import { h, clear, fmtValue, fmtAge, SEVERITIES, zabbixSeconds } from '../dom.js';
import { problemCounts } from './hosts.js';

const SELF_HOST = 'Zabbix server';

export async function render(main) {
  const health = h('section', { class: 'cards', id: 'health' });
  const sev = h('section', { class: 'cards sev-cards', id: 'severity-counts' });
  const top = h('section', { class: 'card', id: 'top-hosts' });
  const unavail = h('section', { class: 'card', id: 'unavailable-hosts' });
  main.append(h('h1', {}, 'Overview'), h('h2', {}, 'Server health'), health,
    h('h2', {}, 'Open problems'), sev, h('div', { class: 'two' }, top, unavail));
  const withProblems = await hasMethod('problem.get', { countOutput: true, limit: 1 }).catch(() => false);

  let watermark = '';
  async function newestEvent() {
    const r = await call('event.get', { output: ['eventid'], sortfield: ['eventid'], sortorder: 'DESC', limit: 1 });
    return r.length ? r[0].eventid : '0';
  }
  async function refresh() {
    if (withProblems) watermark = await newestEvent().catch(() => watermark);
    await Promise.all([loadHealth(health), loadProblems(sev, top, withProblems), loadUnavailable(unavail)]);
  }
  let busy = false;
  async function live() {
    if (!withProblems || busy) return;
    busy = true;
    try {
      const w = await newestEvent();
      if (w !== watermark) {
        watermark = w;
        // Counts only: the top hosts read every open problem, so they
        // wait for the 30 s refresh.
        await loadCounts(sev);
      }
    } finally {
      busy = false;
    }
  }
  await refresh();
  const timer = setInterval(() => refresh().catch((e) => console.error(e)), 30000);
  const liveTimer = setInterval(() => live().catch((e) => console.error(e)), 5000);
  return () => { clearInterval(timer); clearInterval(liveTimer); };
}

function card(label, value, sub, cls) {
  return h('div', { class: `card stat ${cls || ''}` }, h('div', { class: 'stat-label' }, label), h('div', { class: 'stat-value' }, value), sub ? h('div', { class: 'muted' }, sub) : null);
}

async function loadHealth(el) {
  const items = await call('item.get', { output: ['itemid', 'name', 'key_', 'lastvalue', 'prevvalue', 'lastclock', 'units', 'value_type', 'delay'], host: SELF_HOST });
  clear(el);
  if (!items.length) {
    el.append(h('p', { class: 'muted' }, `No self-monitoring host "${SELF_HOST}": it is created on the first start of a data directory; deleted, it does not come back.`));
    return;
  }
  const by = new Map(items.map((it) => [it.key_, it]));
  const v = (k) => by.get(k);
  const link = (it, text) => (it ? h('a', { href: `/graph?itemids=${it.itemid}&range=1d` }, text) : text);
  const total = v('zabbix[wcache,values]');
  if (total && total.lastclock !== '0' && total.prevvalue !== '') {
    const per = (Number(total.lastvalue) - Number(total.prevvalue)) / (zabbixSeconds(total.delay) || 60);
    el.append(card('Values per second', link(total, fmtValue(Math.max(0, per).toFixed(1), '')), `over the last ${total.delay}, checked ${fmtAge(total.lastclock)} ago`));
  } else {
    el.append(card('Values per second', '…', 'needs two checks of zabbix[wcache,values]'));
  }
  const show = (key, label) => {
    const it = v(key);
    if (it) el.append(card(label, link(it, it.lastclock === '0' ? '…' : fmtValue(it.lastvalue, it.units, it.value_type)), it.lastclock === '0' ? 'not checked yet' : `${fmtAge(it.lastclock)} ago`));
  };
  show('zabbix[requiredperformance]', 'Required performance');
  show('zabbix[queue]', 'Queue (over 5 s)');
  show('zabbix[queue,10m]', 'Queue (over 10 min)');
  show('zabbix[items]', 'Enabled items');
  show('zabbix[items_unsupported]', 'Not supported items');
  show('zabbix[hosts]', 'Monitored hosts');
  for (const it of items) if (it.key_.startsWith('zabbix[process,')) show(it.key_, it.name.replace('Utilization of ', 'Busy: '));
  show('zabbix[uptime]', 'Uptime');
}

// loadCounts shows the open problems by severity; the cards are
// replaced only when the answer is in (no empty flash on a live update).
async function loadCounts(sevEl) {
  const res = await batch(SEVERITIES.map((_, s) => ['problem.get', { countOutput: true, severities: [s] }]));
  clear(sevEl);
  res.forEach((r, s) => {
    const n = r.error ? '?' : String(r.result);
    sevEl.append(h('a', { class: `card stat sev-${s}`, href: `/problems?severity=${s}` }, h('div', { class: 'stat-label' }, SEVERITIES[s]), h('div', { class: 'stat-value' }, n)));
  });
}

async function loadProblems(sevEl, topEl, withProblems) {
  if (!withProblems) {
    clear(sevEl);
    clear(topEl);
    topEl.append(h('h3', {}, 'Top hosts by problems'));
    sevEl.append(h('p', { class: 'muted wide', id: 'no-problem-api' }, 'This server has no problem.get yet (the trigger engine): no problems to count.'));
    topEl.append(h('p', { class: 'muted' }, 'Needs problem.get.'));
    return;
  }
  await loadCounts(sevEl);
  const hosts = await call('host.get', { output: ['hostid', 'name'] });
  const counts = await problemCounts(hosts.map((x) => x.hostid));
  const names = new Map(hosts.map((x) => [x.hostid, x.name]));
  const ranked = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 10);
  clear(topEl);
  topEl.append(h('h3', {}, 'Top hosts by problems'));
  if (!ranked.length) topEl.append(h('p', { class: 'muted' }, 'No open problems.'));
  for (const [hid, n] of ranked) {
    topEl.append(h('div', { class: 'kv' }, h('a', { href: `/problems?hostid=${hid}` }, names.get(hid) || hid), h('span', { class: 'badge sev-4' }, String(n))));
  }
}

async function loadUnavailable(el) {
  clear(el);
  el.append(h('h3', {}, 'Hosts with unavailable interfaces'));
  const hosts = await call('host.get', { output: ['hostid', 'name'], selectInterfaces: ['available', 'error'] });
  const bad = hosts.filter((x) => (x.interfaces || []).some((f) => f.available === '2'));
  if (!bad.length) el.append(h('p', { class: 'muted' }, 'None.'));
  for (const x of bad.slice(0, 20)) {
    const f = x.interfaces.find((i) => i.available === '2');
    el.append(h('div', { class: 'kv' }, h('a', { href: `/latest?hostid=${x.hostid}` }, x.name), h('span', { class: 'muted', title: f.error }, f.error)));
  }
  if (bad.length > 20) el.append(h('p', { class: 'muted' }, `and ${bad.length - 20} more`));
}
