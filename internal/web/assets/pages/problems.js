// Problems, built for an incident storm (50,000 open problems): the
// server filters (problem.get severities, groupids, hostids, tags,
// acknowledged, search name) and answers first with three short fields a
// problem (eventid, severity, clock) so the list can be sorted and sized;
// the rows in view then fetch their details by eventids, a screenful at a
// time, with their hosts (trigger.get selectHosts). Event history is read
// only when asked for (event.get on one trigger), never per row: the
// lesson of a Zabbix frontend whose per-row pop-ups took minutes to load
// during an outage.
//
// Live updates (every LIVE_MS, in place, no reload) work from an event-id
// watermark so that their cost follows what changed, not the 50,000
// rows: the newest event id is read (event.get, limit 1); the problems
// opened since the watermark (problem.get eventid_from, the page's
// filters) are merged in; the triggers that recovered since it (event.get
// value 0, eventid_from) drop their rows; the rows in view are read again
// by eventids (acknowledged, severity changed, closed). Every REFRESH_MS
// the whole id list is read again, which also drops what a missed update
// would leave.
import { call } from '../api.js';
import { h, clear, debounce, fmtAge, fmtTime, SEVERITIES } from '../dom.js';
import { VList, cells } from '../vlist.js';
import { ValueMaps } from '../valuemap.js';

const REFRESH_MS = 5 * 60000;
const LIVE_MS = 5000;
const MAX_PROBLEMS = 100000;
const FIRST_ROWS = 60;
// PHASES are the performance marks of one filter, in order: the user's
// change, the requests sent, the first page answered (detail: its
// timing, server time included), its rows in the DOM and on screen (the
// next frame), the count answered, the whole id list answered. The
// storm measurement reads them; each load replaces the last set.
export const PHASES = ['pf:input', 'pf:sent', 'pf:first', 'pf:painted', 'pf:frame', 'pf:count', 'pf:all'];

// countText is the count shown above the list: "1 problem", "2 problems".
export function countText(n) {
  return n === 1 ? '1 problem' : `${n} problems`;
}

export async function render(main, q) {
  const sevBoxes = SEVERITIES.map((name, s) => h('label', { class: `sev-check sev-${s}` },
    h('input', { type: 'checkbox', value: String(s), checked: q.getAll('severity').includes(String(s)) }), name));
  const groupSel = h('select', { id: 'problem-group', 'aria-label': 'Host group' }, h('option', { value: '' }, 'All host groups'));
  const hostSearch = h('input', { type: 'search', id: 'problem-host', placeholder: 'Host name', 'aria-label': 'Host name' });
  const nameSearch = h('input', { type: 'search', id: 'problem-search', placeholder: 'Problem name', 'aria-label': 'Problem name' });
  const tagInput = h('input', { type: 'search', id: 'problem-tag', placeholder: 'tag:value', 'aria-label': 'Tag' });
  const ackSel = h('select', { id: 'problem-ack', 'aria-label': 'Acknowledged' },
    h('option', { value: '' }, 'Acknowledged or not'), h('option', { value: '1' }, 'Acknowledged'), h('option', { value: '0' }, 'Not acknowledged'));
  const sortSel = h('select', { id: 'problem-sort', 'aria-label': 'Sort' },
    h('option', { value: 'time' }, 'Newest first'), h('option', { value: 'severity' }, 'Severity, then newest'));
  const status = h('span', { class: 'muted', id: 'problem-count' });
  const history = h('section', { class: 'card', id: 'event-history', hidden: true });
  const hostidParam = q.get('hostid');

  let rows = []; // [{eventid (string), id (number), objectid, severity, clock}]
  let watermark = 0; // the newest event id the list accounts for
  const details = new Map();
  const hostsOf = new Map(); // triggerid -> [names]
  const itemsOf = new Map(); // triggerid -> [itemid]
  const lastOf = new Map(); // itemid -> item with its last value
  const vmaps = new ValueMaps();
  let inFlight = new Set();

  const list = new VList({
    header: ['Severity', 'Time', 'Host', 'Problem', 'Duration', 'Ack', 'Tags', ''],
    columns: '6.5rem 9.5rem minmax(7rem, 1fr) minmax(12rem, 3fr) 5.5rem 3rem minmax(6rem, 1fr) 8.5rem',
    rowHeight: 30,
    renderRow(i) {
      const r = rows[i];
      const p = details.get(r.eventid);
      if (p) r.severity = Number(p.severity);
      const sev = h('span', { class: `badge sev-${r.severity}` }, SEVERITIES[r.severity] || r.severity);
      if (!p) return h('div', { class: 'problem-row loading', dataset: { eventid: r.eventid } }, cells(sev, fmtTime(r.clock), '…', '', '', '', '', ''));
      const tags = (p.tags || []).map((t) => h('span', { class: 'tag' }, t.value ? `${t.tag}: ${t.value}` : t.tag));
      // Operational data, else the last values of the trigger's items
      // through their value maps ("Up (1)"), as read for the rows in view.
      const last = p.opdata ? '' : (itemsOf.get(p.objectid) || []).map((id) => lastOf.get(id)).filter((it) => it && it.lastclock !== '0')
        .map((it) => vmaps.fmt(it.lastvalue, it)).join(', ');
      const op = p.opdata || last;
      const name = h('span', { class: 'problem-name', title: p.name }, p.name, op ? h('span', { class: 'muted opdata' }, ` (${op})`) : null);
      return h('div', { class: 'problem-row', dataset: { eventid: r.eventid } }, cells(
        sev,
        fmtTime(p.clock),
        h('span', { class: 'host-name' }, (hostsOf.get(p.objectid) || []).join(', ')),
        name,
        fmtAge(p.clock),
        p.acknowledged === '1' ? h('span', { class: 'ack-yes' }, 'Yes') : h('span', { class: 'ack-no' }, 'No'),
        h('span', { class: 'tags' }, tags),
        // Two buttons a row, handled by one listener on the list (below):
        // rows are made and dropped by the dozen on every scrolled frame.
        h('span', { class: 'actions' },
          h('button', { type: 'button', class: 'ack-btn', title: 'Acknowledge', dataset: { act: 'ack' } }, 'Ack'),
          h('button', { type: 'button', class: 'more-btn', title: 'Close, change severity, event history', dataset: { act: 'more' }, 'aria-haspopup': 'true' }, 'More…')),
      ));
    },
    onRange: (s, e) => fetchDetails(s, e, false).catch((err) => console.error(err)),
  });

  // One panel of further actions, opened under a row's "More…" button.
  const panel = h('div', { class: 'card action-panel', id: 'problem-actions', hidden: true });
  function openPanel(p, anchor) {
    clear(panel);
    panel.append(
      h('div', { class: 'muted' }, p.name),
      h('button', { type: 'button', class: 'close-btn', onclick: () => { panel.hidden = true; act(p, { action: 1 }); } }, 'Close problem'),
      h('select', { class: 'sev-change', 'aria-label': 'Change severity', onchange: (e) => { if (e.target.value !== '') { panel.hidden = true; act(p, { action: 8, severity: Number(e.target.value) }); } } },
        h('option', { value: '' }, 'Change severity…'), SEVERITIES.map((s, k) => h('option', { value: String(k) }, s))),
      h('button', { type: 'button', class: 'hist-btn', onclick: () => { panel.hidden = true; showHistory(p); } }, 'Event history'),
      h('button', { type: 'button', onclick: () => { panel.hidden = true; } }, 'Cancel'));
    const r = anchor.getBoundingClientRect();
    const top = r.bottom + window.scrollY + 2;
    panel.hidden = false;
    panel.style.top = `${top}px`;
    panel.style.left = `${Math.max(8, Math.min(r.right - panel.offsetWidth, window.innerWidth - panel.offsetWidth - 8))}px`;
  }
  list.el.addEventListener('click', (ev) => {
    const b = ev.target.closest && ev.target.closest('button[data-act]');
    if (!b) return;
    const row = b.closest('.problem-row');
    const p = row && details.get(row.dataset.eventid);
    if (!p) return;
    if (b.dataset.act === 'ack') act(p, { action: 2 });
    else openPanel(p, b);
  });

  async function act(p, a) {
    try {
      await call('event.acknowledge', { eventids: [p.eventid], ...a });
      await fetchDetailsFor([p.eventid]);
      if (a.action === 1 || a.action === 8) await load(true);
    } catch (e) {
      alertBox(e);
    }
  }

  function alertBox(e) {
    status.textContent = String(e.message || e);
    status.classList.add('error');
  }

  async function showHistory(p) {
    history.hidden = false;
    clear(history);
    history.append(h('h3', {}, `Event history: ${p.name}`), h('p', { class: 'muted' }, 'Loading…'));
    const evs = await call('event.get', { output: ['eventid', 'clock', 'value', 'severity', 'acknowledged', 'name'], objectids: [p.objectid], sortfield: ['clock'], sortorder: 'DESC', limit: 50 });
    clear(history);
    history.append(h('h3', {}, `Event history: ${p.name}`),
      h('button', { type: 'button', onclick: () => { history.hidden = true; } }, 'Close history'),
      h('table', { class: 'plain' }, h('tr', {}, h('th', {}, 'Time'), h('th', {}, 'Status'), h('th', {}, 'Severity'), h('th', {}, 'Ack')),
        evs.map((e) => h('tr', {}, h('td', {}, fmtTime(e.clock)), h('td', {}, e.value === '1' ? 'PROBLEM' : 'RESOLVED'),
          h('td', {}, SEVERITIES[e.severity] || e.severity), h('td', {}, e.acknowledged === '1' ? 'Yes' : 'No')))));
  }

  async function hostsFor(ps) {
    const trig = [...new Set(ps.map((p) => p.objectid).filter((t) => !hostsOf.has(t)))];
    if (trig.length) {
      const ts = await call('trigger.get', { output: ['triggerid'], triggerids: trig, selectHosts: ['hostid', 'name'], selectItems: ['itemid'] });
      for (const t of ts) {
        hostsOf.set(t.triggerid, (t.hosts || []).map((x) => x.name));
        itemsOf.set(t.triggerid, (t.items || []).map((x) => x.itemid));
      }
    }
    // The last values are not waited for: the rows show with their
    // hosts first and get the values a round trip later.
    lastValuesFor(ps).catch((e) => console.error(e));
  }

  // lastValuesFor reads the last values of the items of the rows without
  // operational data (one item.get for the rows asked for) and redraws
  // those rows.
  async function lastValuesFor(ps) {
    const without = ps.filter((p) => !p.opdata);
    const items = [...new Set(without.flatMap((p) => itemsOf.get(p.objectid) || []))];
    if (!items.length) return;
    const its = await call('item.get', { output: ['itemid', 'lastvalue', 'lastclock', 'units', 'value_type', 'valuemapid'], itemids: items });
    await vmaps.load(its);
    for (const it of its) lastOf.set(it.itemid, it);
    const redraw = new Set(without.map((p) => p.eventid));
    list.replaceRows((i) => i < rows.length && redraw.has(rows[i].eventid));
  }

  async function fetchDetailsFor(eventids) {
    const ps = await call('problem.get', { output: 'extend', eventids, selectTags: 'extend' });
    await hostsFor(ps);
    for (const p of ps) details.set(p.eventid, p);
    const want = new Set(eventids);
    // Asked for and not answered: no longer open (resolved or closed
    // since the list was read).
    for (const p of ps) want.delete(p.eventid);
    if (want.size) {
      for (const id of want) details.delete(id);
      dropRows((r) => want.has(r.eventid));
    }
    const got = new Set(ps.map((p) => p.eventid));
    list.replaceRows((i) => i < rows.length && got.has(rows[i].eventid));
  }

  // dropRows removes the rows gone matches, keeping the place in the list.
  function dropRows(gone) {
    const before = rows.length;
    rows = rows.filter((r) => !gone(r));
    if (rows.length !== before) {
      list.setCount(rows.length, true);
      showCount();
    }
  }

  function showCount() {
    status.classList.remove('error');
    status.textContent = `${countText(rows.length)}${rows.length >= MAX_PROBLEMS ? ' (the first ' + MAX_PROBLEMS + ')' : ''}`;
  }

  const byOrder = () => (sortSel.value === 'severity'
    ? (a, b) => b.severity - a.severity || b.clock - a.clock || b.id - a.id
    : (a, b) => b.id - a.id);

  // live merges what changed since the watermark (see the top comment).
  let liveBusy = false;
  async function live() {
    if (liveBusy || !watermark) return;
    liveBusy = true;
    try {
      const my = seq;
      const head = await call('event.get', { output: ['eventid'], sortfield: ['eventid'], sortorder: 'DESC', limit: 1 });
      const top = head.length ? Number(head[0].eventid) : 0;
      if (top > watermark) {
        const p = await filterParamsWithHosts();
        const [opened, recovered] = await Promise.all([
          call('problem.get', { ...p, eventid_from: String(watermark + 1), eventid_till: String(top) }),
          call('event.get', { output: ['eventid', 'objectid'], value: [0], eventid_from: String(watermark + 1), eventid_till: String(top) }),
        ]);
        if (my !== seq) return;
        const rec = new Map();
        for (const e of recovered) rec.set(e.objectid, Math.max(rec.get(e.objectid) || 0, Number(e.eventid)));
        if (rec.size) dropRows((r) => rec.has(r.objectid) && r.id < rec.get(r.objectid));
        const have = new Set(rows.map((r) => r.eventid));
        const add = opened.map(shortRow).filter((r) => !have.has(r.eventid));
        if (add.length) {
          // Merged in order. A list scrolled down keeps its first row in
          // place; at the top, the new problems show.
          const order = byOrder();
          const [s] = list.range();
          const first = list.viewport.scrollTop > 0 ? rows[Math.min(s + list.o.overscan, rows.length - 1)] : null;
          rows = rows.concat(add).sort(order);
          list.setCount(rows.length, true);
          if (first) list.viewport.scrollTop += add.filter((r) => order(r, first) < 0).length * list.o.rowHeight;
          showCount();
        }
        watermark = top;
      }
      const [s, e] = list.range();
      await fetchDetails(s, e, true);
    } finally {
      liveBusy = false;
    }
  }

  async function fetchDetails(start, end, all) {
    const want = [];
    for (let i = start; i < end; i++) {
      const id = rows[i].eventid;
      if ((all || !details.has(id)) && !inFlight.has(id)) want.push(id);
    }
    if (!want.length) return;
    const gen = inFlight;
    for (const id of want) gen.add(id);
    try {
      await fetchDetailsFor(want);
    } finally {
      for (const id of want) gen.delete(id);
    }
  }

  const shortRow = (x) => ({ eventid: x.eventid, id: Number(x.eventid), objectid: x.objectid, severity: Number(x.severity), clock: Number(x.clock) });

  async function filterParamsWithHosts() {
    const p = filterParams();
    if (hostidParam) p.hostids = [hostidParam];
    if (hostSearch.value) {
      const hs = await call('host.get', { output: ['hostid'], search: { name: hostSearch.value } });
      p.hostids = hs.map((x) => x.hostid);
      if (!p.hostids.length) p.hostids = ['0'];
    }
    return p;
  }

  function filterParams() {
    const p = { output: ['eventid', 'objectid', 'severity', 'clock'], sortfield: ['eventid'], sortorder: 'DESC', limit: MAX_PROBLEMS };
    const sevs = sevBoxes.map((l) => l.firstChild).filter((b) => b.checked).map((b) => Number(b.value));
    if (sevs.length) p.severities = sevs;
    if (groupSel.value) p.groupids = [groupSel.value];
    if (nameSearch.value) p.search = { name: nameSearch.value };
    if (ackSel.value !== '') p.acknowledged = ackSel.value === '1';
    const tag = tagInput.value.trim();
    if (tag) {
      const [t, ...v] = tag.split(':');
      p.tags = [{ tag: t.trim(), value: v.join(':').trim(), operator: 0 }];
    }
    return p;
  }

  let seq = 0;
  async function load(keepScroll) {
    const my = ++seq;
    const t0 = performance.now();
    // A new filter shows fresh details; a refresh keeps them until the
    // rows in view are read again.
    if (!keepScroll) {
      details.clear();
      for (const n of PHASES.slice(1)) performance.clearMarks(n);
    }
    // The watermark is read first: an event after it is seen by the
    // next live update even if this list already holds it.
    const head = call('event.get', { output: ['eventid'], sortfield: ['eventid'], sortorder: 'DESC', limit: 1 }).catch(() => []);
    const p = await filterParamsWithHosts();
    if (!keepScroll) performance.mark('pf:sent');
    const tFirst = {};
    const tCount = {};
    const tAll = {};
    // The first screenful with details, beside the full list: it paints
    // while the 50,000 short rows are on their way.
    // It paints as soon as problem.get answers: the hosts (trigger.get)
    // fill in when their call returns, and the count comes from a
    // countOutput call (one number, not 50,000 rows), so neither holds
    // the paint back. Rows have one fixed height, so the late host names
    // move nothing.
    let all = false;
    let counted = -1;
    const first = keepScroll ? null : call('problem.get', { ...p, output: 'extend', selectTags: 'extend', limit: FIRST_ROWS }, { timing: tFirst }).then((ps) => {
      if (my !== seq) return;
      performance.mark('pf:first', { detail: tFirst });
      for (const x of ps) details.set(x.eventid, x);
      if (!all) {
        rows = ps.map(shortRow);
        status.textContent = ps.length < FIRST_ROWS ? countText(rows.length) : counted >= 0 ? countText(counted) : 'counting…';
        list.setCount(rows.length);
        performance.mark('pf:painted');
        requestAnimationFrame(() => performance.mark('pf:frame'));
      }
      return hostsFor(ps).then(() => { if (my === seq) list.refresh(); });
    }).catch(() => {});
    if (!keepScroll) {
      call('problem.get', { ...p, output: undefined, limit: undefined, countOutput: true }, { timing: tCount }).then((n) => {
        if (my !== seq) return;
        performance.mark('pf:count', { detail: tCount });
        if (all) return;
        counted = Math.min(Number(n), MAX_PROBLEMS);
        if (rows.length) status.textContent = countText(counted) + (counted >= MAX_PROBLEMS ? ' (the first ' + MAX_PROBLEMS + ')' : '');
      }).catch(() => {});
    }
    const [res, hd] = await Promise.all([call('problem.get', p, { timing: tAll }), head]);
    if (my !== seq) return;
    if (!keepScroll) performance.mark('pf:all', { detail: tAll });
    all = true;
    rows = res.map(shortRow);
    if (sortSel.value === 'severity') rows.sort(byOrder());
    watermark = hd.length ? Number(hd[0].eventid) : 0;
    inFlight = new Set();
    showCount();
    list.setCount(rows.length, true);
    if (keepScroll) { const [s, e] = list.range(); await fetchDetails(s, e, true); }
    status.dataset.ms = String(Math.round(performance.now() - t0));
    if (first) await first;
  }

  // Typing waits for a pause; a click or a choice applies at once.
  // pf:input marks the user's change, the start of the phases the
  // storm measurement reads (PHASES).
  const reload = () => {
    performance.clearMarks('pf:input');
    performance.mark('pf:input');
    return load(false).catch(alertBox);
  };
  const typed = debounce(reload, 250);
  for (const el of [groupSel, ackSel, sortSel, ...sevBoxes.map((l) => l.firstChild)]) el.addEventListener('change', reload);
  for (const el of [hostSearch, nameSearch, tagInput]) el.addEventListener('input', typed);

  main.append(
    h('div', { class: 'toolbar' }, h('h1', {}, 'Problems'), status),
    h('div', { class: 'filters' }, sevBoxes, groupSel, hostSearch, nameSearch, tagInput, ackSel, sortSel),
    list.el, history, panel);
  try {
    for (const g of await call('hostgroup.get', { output: ['groupid', 'name'], sortfield: 'name' })) groupSel.append(h('option', { value: g.groupid }, g.name));
    await load(false);
  } catch (e) {
    if (e.code === -32601) {
      clear(main);
      main.append(h('h1', {}, 'Problems'), h('p', { class: 'muted', id: 'no-problem-api' }, 'This server has no problem.get yet: problems come with the trigger engine.'));
      return () => list.destroy();
    }
    throw e;
  }
  const timer = setInterval(() => load(true).catch((e) => console.error(e)), REFRESH_MS);
  const liveTimer = setInterval(() => live().catch((e) => console.error(e)), LIVE_MS);
  return () => { clearInterval(timer); clearInterval(liveTimer); list.destroy(); };
}
