// Monitoring → Web (in 6.0 a host's "Web" from Monitoring → Hosts):
// the monitored web scenarios (httptest.get monitored) with their host,
// steps, last check and status (OK, or the step that failed with the
// scenario's last error), from the items the server keeps per scenario
// (item.get webitems: web.test.fail, web.test.error, web.test.in); and,
// for the chosen scenario, each step's download speed, response time
// and response code (web.test.in, .time, .rspcode). ?hostid= narrows
// it to one host. Read every 30 s.
import { call } from '../api.js';
import { h, clear, fmtTime, fmtValue } from '../dom.js';
import { WEB_KEYS } from '../netnav.js';

const [IN, FAIL, ERROR, STEP_IN, STEP_TIME, STEP_CODE] = WEB_KEYS;

const MAX = 500;

export async function render(main, params) {
  const hostid = params.get('hostid') || '';
  const err = h('p', { class: 'error', role: 'alert', hidden: true });
  const list = h('div', { class: 'scroll', id: 'web-list' });
  const detail = h('section', { class: 'card', id: 'web-detail', hidden: true });
  const hosts = await call('host.get', { output: ['hostid', 'name'], sortfield: 'name', monitored_hosts: true });
  const sel = h('select', { id: 'web-host', 'aria-label': 'Host' }, h('option', { value: '' }, 'All hosts'),
    hosts.map((x) => h('option', { value: x.hostid, selected: x.hostid === hostid }, x.name)));
  main.append(h('div', { class: 'toolbar' }, h('h1', {}, 'Web monitoring'), sel), err, detail, list);
  let open = params.get('httptestid') || '';

  async function load() {
    try {
      const p = { output: ['httptestid', 'name', 'hostid', 'delay', 'status'], monitored: true, selectHosts: ['name'], selectSteps: ['name', 'no'],
        sortfield: 'name', limit: MAX };
      if (sel.value) p.hostids = [sel.value];
      const tests = await call('httptest.get', p);
      const hostids = [...new Set(tests.map((t) => t.hostid))];
      const items = hostids.length ? await call('item.get', { hostids, webitems: true, filter: { type: 9 },
        output: ['itemid', 'hostid', 'key_', 'lastvalue', 'lastclock', 'units', 'value_type'] }) : [];
      const byKey = new Map(items.map((i) => [`${i.hostid}/${i.key_}`, i]));
      const item = (t, k) => byKey.get(`${t.hostid}/${k}`);
      err.hidden = true;
      clear(list);
      const body = h('tbody', {});
      for (const t of tests) {
        const fail = item(t, FAIL(t.name));
        const error = item(t, ERROR(t.name));
        const steps = (t.steps || []).slice().sort((a, b) => a.no - b.no);
        let status;
        if (!fail || !fail.lastclock || fail.lastclock === '0') status = h('span', { class: 'muted' }, 'Unknown');
        else if (fail.lastvalue === '0') status = h('span', { class: 'ack-yes' }, 'OK');
        else {
          const n = Number(fail.lastvalue);
          const st = steps.find((x) => Number(x.no) === n);
          status = h('span', { class: 'ack-no' }, `Step "${st ? st.name : n}" [${n} of ${steps.length}] failed: ${error ? error.lastvalue : ''}`);
        }
        body.append(h('tr', { class: 'web-row', dataset: { id: t.httptestid } },
          h('td', {}, (t.hosts[0] || {}).name || ''),
          h('td', {}, h('a', { href: `/web?httptestid=${encodeURIComponent(t.httptestid)}`, class: 'web-name', onclick: (e) => {
            e.preventDefault();
            open = t.httptestid;
            drawDetail(t, item);
          } }, t.name)),
          h('td', {}, String(steps.length)),
          h('td', { class: 'web-last' }, fail && fail.lastclock !== '0' ? fmtTime(fail.lastclock) : 'Never'),
          h('td', { class: 'web-status' }, status)));
        if (t.httptestid === open) drawDetail(t, item);
      }
      list.append(h('table', { class: 'plain', id: 'web-table' },
        h('thead', {}, h('tr', {}, ['Host', 'Name', 'Number of steps', 'Last check', 'Status'].map((x) => h('th', {}, x)))), body));
      if (!tests.length) list.append(h('p', { class: 'muted' }, 'No monitored web scenarios.'));
      if (tests.length === MAX) list.append(h('p', { class: 'muted' }, `The first ${MAX} scenarios; choose a host to see its own.`));
    } catch (e) {
      err.hidden = false;
      err.textContent = String(e.data || e.message || e);
    }
  }

  async function drawDetail(t0, item) {
    // The steps in full, then each step's three items.
    const [t] = await call('httptest.get', { httptestids: [t0.httptestid], output: ['httptestid', 'name', 'hostid'], selectSteps: ['name', 'no', 'url'] });
    if (!t) return;
    const steps = (t.steps || []).slice().sort((a, b) => a.no - b.no);
    const val = (k) => {
      const i = item(t, k);
      return i && i.lastclock && i.lastclock !== '0' ? fmtValue(i.lastvalue, i.units, i.value_type) : '—';
    };
    clear(detail).hidden = false;
    detail.append(h('h2', {}, `Details of web scenario: ${t.name}`),
      h('table', { class: 'plain', id: 'web-steps' },
        h('thead', {}, h('tr', {}, ['Step', 'Speed', 'Response time', 'Response code'].map((x) => h('th', {}, x)))),
        h('tbody', {}, steps.map((st) => {
          return h('tr', { class: 'web-step' }, h('td', {}, st.name), h('td', { class: 'step-speed' }, val(STEP_IN(t.name, st.name))),
            h('td', { class: 'step-time' }, val(STEP_TIME(t.name, st.name))), h('td', { class: 'step-code' }, val(STEP_CODE(t.name, st.name))));
        }),
        h('tr', { class: 'web-total' }, h('td', {}, 'TOTAL'), h('td', {}, val(IN(t.name))), h('td', {}), h('td', {})))));
  }

  sel.addEventListener('change', () => {
    history.replaceState(null, '', sel.value ? `/web?hostid=${encodeURIComponent(sel.value)}` : '/web');
    open = '';
    detail.hidden = true;
    load();
  });
  await load();
  const timer = setInterval(load, 30000);
  return () => clearInterval(timer);
}
