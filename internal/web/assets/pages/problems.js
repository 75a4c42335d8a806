// Problems, built for an incident storm (50,000 open problems): the
// server filters (problem.get severities, groupids, hostids, tags,
// acknowledged, search name). A filter paints from one round trip (a
// JSON-RPC batch: the watermark, the first screenful with details, the
// count); then the whole list in four short fields a problem (eventid,
// objectid, severity, clock), read, parsed and sorted by a worker
// (assets/idlist.js) so that the page never stalls on it, sizes the list.
// The rows in view fetch their details by eventids once they have stayed
// in view for a frame, one request at a time (a window scrolled past is
// never asked for), and their hosts (trigger.get selectHosts) beside it;
// each fills its rows in place when it answers, nothing waits for the
// other. Event history is read
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
import { APIError, batch, call, currentSession } from '../api.js';
import { h, clear, debounce, fmtAge, fmtTime, SEVERITIES } from '../dom.js';
import { VList, cells } from '../vlist.js';
import { ValueMaps } from '../valuemap.js';

const REFRESH_MS = 5 * 60000;
const LIVE_MS = 5000;
const MAX_PROBLEMS = 100000;
const FIRST_ROWS = 60;
const SCROLL_QUIET_MS = 300;
// PHASES are the performance marks of one filter, in order: the user's
// change, the first request sent, the first page answered (detail: its
// timing, server time included; the count comes in the same batch, so
// pf:count is the same answer), its rows in the DOM and on screen (the
// next frame), the whole id list answered (read by the worker), and when
// the previous whole list had arrived. The storm measurement reads them;
// each load replaces the last set.
export const PHASES = ['pf:input', 'pf:sent', 'pf:first', 'pf:painted', 'pf:frame', 'pf:count', 'pf:all', 'pf:prev-all'];

// Row is one problem of the list: numbers only, so that 50,000 of them
// are 50,000 small objects and no strings; the ids as the API's strings
// are made when a row in view asks for them.
class Row {
  constructor(id, oid, severity, clock) {
    this.id = id;
    this.oid = oid;
    this.severity = severity;
    this.clock = clock;
  }

  get eventid() { return String(this.id); }

  get objectid() { return String(this.oid); }
}

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

  let rows = []; // [Row], in the list's order
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
    // Rows are filled from what is in hand, so a small margin is enough
    // and a fast scroll fills fewer rows a frame.
    overscan: 4,
    renderRow(i) {
      const el = skeleton();
      fillRow(i, el);
      return el;
    },
    // Rows are filled in place: when details, hosts or last values
    // arrive, and when a row scrolled out is reused for one scrolled in
    // (VList recycles it), so scrolling sets text instead of making
    // elements.
    updateRow: (i, el) => fillRow(i, el),
    rangeEachFrame: true,
    onRange: (s, e) => settleThen(s, e),
  });

  // settleThen asks for the details of a window once it has stayed in
  // view for a frame: a fast scroll moves the window every frame and
  // asks for nothing until it stops (its rows show their severity and
  // time meanwhile), so the server and the page, sharing a core in a
  // storm, do no work for rows that are gone a frame later; a slow
  // scroll (a row every few frames) and a stop read at once.
  let settleKey = '';
  let settleRaf = 0;
  let movedAt = 0; // when the window last moved (page clock)
  function settleThen(s, e) {
    movedAt = performance.now();
    settleKey = s + ':' + e;
    if (!settleRaf) settleRaf = requestAnimationFrame(settle);
  }
  function settle() {
    settleRaf = 0;
    const [s, e] = list.range();
    if (settleKey !== s + ':' + e) {
      settleKey = s + ':' + e;
      settleRaf = requestAnimationFrame(settle);
      return;
    }
    fetchDetails(s, e, false).catch((err) => console.error(err));
  }

  // skeleton makes a row's elements once; fillRow sets their content.
  function skeleton() {
    const c = {
      sev: h('span', { class: 'badge' }),
      time: document.createTextNode(''),
      host: h('span', { class: 'host-name' }),
      name: h('span', { class: 'problem-name' }),
      age: document.createTextNode(''),
      ack: h('span', {}),
      tags: h('span', { class: 'tags' }),
      // Two buttons a row, handled by one listener on the list (below).
      actions: h('span', { class: 'actions' },
        h('button', { type: 'button', class: 'ack-btn', title: 'Acknowledge', dataset: { act: 'ack' } }, 'Ack'),
        h('button', { type: 'button', class: 'more-btn', title: 'Close, change severity, event history', dataset: { act: 'more' }, 'aria-haspopup': 'true' }, 'More…')),
    };
    const el = h('div', { class: 'problem-row' }, cells(c.sev, c.time, c.host, c.name, c.age, c.ack, c.tags, c.actions));
    el.c = c;
    return el;
  }

  // fillRow shows row i in el: the short row (severity, time) with
  // placeholders until its details are read, then the problem; the
  // hosts and last values show when their calls answer.
  // Only what differs is written: a row recycled while scrolling fast
  // is a short row like the one it was, so mostly its time changes and
  // the other cells are not laid out again.
  const put = (o, k, v) => { if (o[k] !== v) o[k] = v; };
  function fillRow(i, el) {
    const r = rows[i];
    const p = details.get(r.eventid);
    if (p) r.severity = Number(p.severity);
    const c = el.c;
    put(el.dataset, 'eventid', r.eventid);
    if (el.classList.contains('loading') === !!p) el.classList.toggle('loading', !p);
    put(c.sev, 'className', `badge sev-${r.severity}`);
    put(c.sev, 'textContent', SEVERITIES[r.severity] || String(r.severity));
    put(c.time, 'data', fmtTime(p ? p.clock : r.clock));
    const hosts = hostsOf.get(r.objectid);
    put(c.host, 'textContent', hosts ? hosts.join(', ') : '…');
    put(c.actions, 'hidden', !p);
    if (!p) {
      if (c.name.firstChild) c.name.textContent = '';
      if (c.name.hasAttribute('title')) c.name.removeAttribute('title');
      put(c.age, 'data', '');
      put(c.ack, 'textContent', '');
      put(c.ack, 'className', '');
      if (c.tags.firstChild) c.tags.replaceChildren();
      return;
    }
    // Operational data (value maps applied by the server), else the
    // last values of the trigger's items through their value maps
    // ("Up (1)"), as read for the rows in view.
    const last = p.opdata ? '' : (itemsOf.get(p.objectid) || []).map((id) => lastOf.get(id)).filter((it) => it && it.lastclock !== '0')
      .map((it) => vmaps.fmt(it.lastvalue, it)).join(', ');
    const op = p.opdata || last;
    c.name.textContent = p.name;
    c.name.title = p.name;
    if (op) c.name.append(h('span', { class: 'muted opdata' }, ` (${op})`));
    c.age.data = fmtAge(p.clock);
    const acked = p.acknowledged === '1';
    c.ack.className = acked ? 'ack-yes' : 'ack-no';
    c.ack.textContent = acked ? 'Yes' : 'No';
    c.tags.replaceChildren(...(p.tags || []).map((t) => h('span', { class: 'tag' }, t.value ? `${t.tag}: ${t.value}` : t.tag)));
  }

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
      const r = rows.find((x) => x.eventid === p.eventid);
      if (r) await fetchDetailsFor([r]);
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

  // hostsFor reads the hosts and items of the rows' triggers not known
  // yet (one trigger.get by triggerids) and fills those rows in place;
  // nothing waits for it. The last values follow (lastValuesFor).
  const trigInFlight = new Set();
  async function hostsFor(rs) {
    const trig = [...new Set(rs.map((r) => r.objectid).filter((t) => !hostsOf.has(t) && !trigInFlight.has(t)))];
    if (trig.length) {
      for (const t of trig) trigInFlight.add(t);
      try {
        const ts = await call('trigger.get', { output: ['triggerid'], triggerids: trig, selectHosts: ['hostid', 'name'], selectItems: ['itemid'] });
        for (const t of ts) {
          hostsOf.set(t.triggerid, (t.hosts || []).map((x) => x.name));
          itemsOf.set(t.triggerid, (t.items || []).map((x) => x.itemid));
        }
      } finally {
        for (const t of trig) trigInFlight.delete(t);
      }
      const got = new Set(trig);
      list.updateRows((i) => got.has(rows[i].objectid));
    }
    const ps = rs.map((r) => details.get(r.eventid)).filter((p) => p);
    if (ps.length) await lastValuesFor(ps);
  }

  // lastValuesFor reads the last values of the items of the rows without
  // operational data (one item.get for the rows asked for) and fills
  // those rows in.
  async function lastValuesFor(ps) {
    const without = ps.filter((p) => !p.opdata && itemsOf.has(p.objectid));
    const items = [...new Set(without.flatMap((p) => itemsOf.get(p.objectid)))];
    if (!items.length) return;
    const its = await call('item.get', { output: ['itemid', 'lastvalue', 'lastclock', 'units', 'value_type', 'valuemapid'], itemids: items });
    await vmaps.load(its);
    for (const it of its) lastOf.set(it.itemid, it);
    const fill = new Set(without.map((p) => p.eventid));
    list.updateRows((i) => fill.has(rows[i].eventid));
  }

  // fetchDetailsFor reads the rows' problems by eventids and fills them
  // as soon as problem.get answers; the hosts (trigger.get, asked for at
  // the same time: the short rows know their triggers) fill in when
  // they come.
  async function fetchDetailsFor(rs) {
    const eventids = rs.map((r) => r.eventid);
    const want = new Set(eventids);
    const hosts = hostsFor(rs).catch((e) => console.error(e));
    const ps = await call('problem.get', { output: 'extend', eventids, selectTags: 'extend' });
    for (const p of ps) details.set(p.eventid, p);
    // Asked for and not answered: no longer open (resolved or closed
    // since the list was read).
    for (const p of ps) want.delete(p.eventid);
    if (want.size) {
      for (const id of want) details.delete(id);
      dropRows((r) => want.has(r.eventid));
    }
    const got = new Set(ps.map((p) => p.eventid));
    list.updateRows((i) => got.has(rows[i].eventid));
    // Rows whose hosts were known already get their last values now.
    lastValuesFor(ps.filter((p) => hostsOf.has(p.objectid))).catch((e) => console.error(e));
    return hosts;
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
    // Not while the list moves: its frames come first; the update
    // waits for a stop (the window settled for SCROLL_QUIET_MS).
    if (performance.now() - movedAt < SCROLL_QUIET_MS) {
      setTimeout(() => live().catch((e) => console.error(e)), SCROLL_QUIET_MS);
      return;
    }
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
        for (const e of recovered) rec.set(Number(e.objectid), Math.max(rec.get(Number(e.objectid)) || 0, Number(e.eventid)));
        if (rec.size) dropRows((r) => rec.has(r.oid) && r.id < rec.get(r.oid));
        const have = new Set(rows.map((r) => r.id));
        const add = opened.map(shortRow).filter((r) => !have.has(r.id));
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

  // fetchDetails reads the details of the rows start..end (all: again,
  // else those without). While scrolling it is called for a window that
  // stayed in view for a frame (settleThen), and at most one such read is
  // on its way: a window asked for meanwhile supersedes any other waiting
  // one and goes out when the read in flight answers, so a fast scroll
  // asks for the rows it stops at, not for every screen it passes, and
  // the server and the page (one shared core in the storm measurement)
  // are never handed more than one window at a time. A
  // request is not cancelled once sent: the server's work is done by
  // then and its rows are cached for a scroll back.
  let rangeBusy = false;
  let rangeNext = null;
  async function fetchDetails(start, end, all) {
    if (!all && rangeBusy) {
      rangeNext = [start, end];
      return;
    }
    const want = [];
    const wantRows = [];
    for (let i = start; i < Math.min(end, rows.length); i++) {
      const id = rows[i].eventid;
      if ((all || !details.has(id)) && !inFlight.has(id)) {
        want.push(id);
        wantRows.push(rows[i]);
      }
    }
    if (!want.length) return;
    const gen = inFlight;
    for (const id of want) gen.add(id);
    if (!all) rangeBusy = true;
    try {
      await fetchDetailsFor(wantRows);
    } finally {
      for (const id of want) gen.delete(id);
      if (!all) {
        rangeBusy = false;
        const next = rangeNext;
        rangeNext = null;
        // The window in view now (it may have moved again since).
        if (next) {
          const [s, e] = list.range();
          fetchDetails(s, e, false).catch((err) => console.error(err));
        }
      }
    }
  }

  const shortRow = (x) => new Row(Number(x.eventid), Number(x.objectid), Number(x.severity), Number(x.clock));

  async function filterParamsWithHosts(signal) {
    const p = filterParams();
    if (hostidParam) p.hostids = [hostidParam];
    if (hostSearch.value) {
      const hs = await call('host.get', { output: ['hostid'], search: { name: hostSearch.value } }, { signal });
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

  // The whole id list is read by a worker (assets/idlist.js) so that
  // parsing and sorting 50,000 rows never holds the page; without
  // workers it is read here.
  let idWorker = null;
  const idWaiting = new Map(); // seq -> {resolve, reject}
  try {
    idWorker = new Worker(new URL('../idlist.js', import.meta.url), { type: 'module' });
    // A worker that cannot start or dies fails its waiting reads; the
    // page then reads the list itself.
    idWorker.onerror = (ev) => {
      console.error('problems: the id list worker failed', ev.message || ev);
      idWorker = null;
      for (const w of idWaiting.values()) w.reject(new Error('the id list worker failed'));
      idWaiting.clear();
    };
    idWorker.onmessage = (ev) => {
      const m = ev.data;
      const w = idWaiting.get(m.seq);
      if (!w) return;
      idWaiting.delete(m.seq);
      if (m.error) {
        if (m.error.status === 401) location.assign('/login');
        w.reject(new APIError('problem.get', m.error));
      } else {
        w.resolve(m);
      }
    };
  } catch (e) {
    console.error('problems: no worker for the id list, reading it on the page', e);
  }

  // idList reads the filtered problems' short rows, sorted as the page
  // shows them, into timing (page clock). A superseded request (seq
  // moved on) is cancelled in the worker.
  async function idList(p, my, timing) {
    const order = sortSel.value;
    if (!idWorker) {
      const res = await call('problem.get', p, { timing });
      const out = res.map(shortRow);
      if (order === 'severity') out.sort(byOrder());
      return out;
    }
    for (const [s, w] of idWaiting) {
      idWorker.postMessage({ abort: s });
      w.resolve(null);
    }
    idWaiting.clear();
    let m;
    try {
      m = await new Promise((resolve, reject) => {
        idWaiting.set(my, { resolve, reject });
        idWorker.postMessage({ seq: my, params: p, csrf: currentSession().csrf, order });
      });
    } catch (e) {
      // The worker died (onerror cleared it): read the list here.
      if (!idWorker) return idList(p, my, timing);
      throw e;
    }
    if (!m) return null;
    timing.sent = m.timing.sent - performance.timeOrigin;
    timing.answered = m.timing.answered - performance.timeOrigin;
    timing.server = m.timing.server;
    const n = m.eventid.length;
    const out = new Array(n);
    for (let i = 0; i < n; i++) out[i] = new Row(m.eventid[i], m.objectid[i], m.severity[i], m.clock[i]);
    return out;
  }

  const headParams = { output: ['eventid'], sortfield: ['eventid'], sortorder: 'DESC', limit: 1 };
  let seq = 0;
  let loadAbort = null;
  async function load(keepScroll) {
    const my = ++seq;
    const t0 = performance.now();
    // A superseded load's calls are cancelled: their answers would be
    // dropped anyway, and parsing them competes with this one.
    if (loadAbort) loadAbort.abort();
    const ac = loadAbort = new AbortController();
    const signal = ac.signal;
    // A new filter shows fresh details; a refresh keeps them until the
    // rows in view are read again.
    if (!keepScroll) {
      details.clear();
      // The last whole list's arrival is kept as pf:prev-all: a filter
      // applied while it was still on its way competes with it.
      const prev = performance.getEntriesByName('pf:all', 'mark').pop();
      for (const n of PHASES.slice(1)) performance.clearMarks(n);
      if (prev) performance.mark('pf:prev-all', { startTime: prev.startTime });
    }
    const p = await filterParamsWithHosts(signal);
    if (my !== seq) return;
    let hd;
    if (keepScroll) {
      // The watermark is read first: an event after it is seen by the
      // next live update even if this list already holds it.
      hd = await call('event.get', headParams, { signal }).catch(() => []);
    } else {
      // What the first paint needs comes in one round trip, before the
      // whole id list is asked for, so that nothing competes with it
      // for the server or the page: the watermark (read first, as
      // above), the first screenful with details and the count
      // (countOutput: one number, not 50,000 rows). The hosts
      // (trigger.get) fill in when their call returns; rows have one
      // fixed height, so the late host names move nothing.
      performance.mark('pf:sent');
      const tFirst = {};
      const [h0, first, count] = await batch([
        ['event.get', headParams],
        ['problem.get', { ...p, output: 'extend', selectTags: 'extend', limit: FIRST_ROWS }],
        ['problem.get', { ...p, output: undefined, limit: undefined, countOutput: true }],
      ], { signal, timing: tFirst });
      if (my !== seq) return;
      performance.mark('pf:first', { detail: tFirst });
      performance.mark('pf:count', { detail: tFirst });
      if (first.error) throw first.error;
      hd = h0.result || [];
      const ps = first.result;
      for (const x of ps) details.set(x.eventid, x);
      rows = ps.map(shortRow);
      const counted = count.error ? -1 : Math.min(Number(count.result), MAX_PROBLEMS);
      status.classList.remove('error');
      status.textContent = counted >= 0 ? countText(counted) + (counted >= MAX_PROBLEMS ? ' (the first ' + MAX_PROBLEMS + ')' : '') : 'counting…';
      list.setCount(rows.length);
      performance.mark('pf:painted');
      // The rows reach the screen before anything else is asked for:
      // the hosts and the whole id list would compete with that frame
      // for the core (the server's and the page's) in a storm. A task
      // after the next frame starts them.
      await new Promise((resolve) => {
        requestAnimationFrame(() => {
          performance.mark('pf:frame');
          setTimeout(resolve, 0);
        });
        // A hidden page draws no frames: it does not wait for one.
        setTimeout(resolve, 100);
      });
      if (my !== seq) return;
      hostsFor(ps).catch((e) => console.error(e));
    }
    const tAll = {};
    const res = await idList(p, my, tAll);
    if (my !== seq || !res) return;
    if (!keepScroll) performance.mark('pf:all', { detail: tAll });
    rows = res;
    watermark = hd.length ? Number(hd[0].eventid) : 0;
    inFlight = new Set();
    showCount();
    list.setCount(rows.length, true);
    if (keepScroll) { const [s, e] = list.range(); await fetchDetails(s, e, true); }
    status.dataset.ms = String(Math.round(performance.now() - t0));
  }

  // Typing waits for a pause; a click or a choice applies at once.
  // pf:input marks the user's change, the start of the phases the
  // storm measurement reads (PHASES).
  const reload = () => {
    performance.clearMarks('pf:input');
    performance.mark('pf:input');
    return load(false).catch((e) => { if (e.name !== 'AbortError') alertBox(e); });
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
      return () => { cancelAnimationFrame(settleRaf); if (idWorker) idWorker.terminate(); list.destroy(); };
    }
    // A filter chosen while the first list was loading superseded it.
    if (e.name !== 'AbortError') throw e;
  }
  const timer = setInterval(() => load(true).catch((e) => { if (e.name !== 'AbortError') console.error(e); }), REFRESH_MS);
  const liveTimer = setInterval(() => live().catch((e) => console.error(e)), LIVE_MS);
  return () => {
    clearInterval(timer);
    clearInterval(liveTimer);
    if (loadAbort) loadAbort.abort();
    if (idWorker) idWorker.terminate();
    cancelAnimationFrame(settleRaf);
    list.destroy();
  };
}
