// Reports: the audit log (auditlog.get), newest first, 50 records a
// page, filtered by user, action, resource type, resource name and time.
// Pages go by time, never by offset: the next (older) page asks for
// records up to the last one's clock (those of that second already
// shown are skipped), so a page costs the same on a log of millions.
import { call } from '../../api.js';
import { h, clear, fmtTime } from '../../dom.js';
import { subnav, showErrorAt } from '../../crud.js';

const ACTIONS = [[0, 'Add'], [1, 'Update'], [2, 'Delete'], [4, 'Logout'], [7, 'Execute'], [8, 'Login'], [9, 'Failed login'], [10, 'History clear'], [11, 'Configuration refresh']];
const RESOURCES = [[0, 'User'], [3, 'Media type'], [4, 'Host'], [5, 'Action'], [6, 'Graph'], [11, 'User group'], [13, 'Trigger'], [14, 'Host group'],
  [15, 'Item'], [16, 'Image'], [17, 'Value map'], [18, 'Service'], [19, 'Map'], [22, 'Web scenario'], [23, 'Discovery rule'], [25, 'Script'],
  [26, 'Proxy'], [27, 'Maintenance'], [28, 'Regular expression'], [29, 'Macro'], [30, 'Template'], [31, 'Trigger prototype'], [32, 'Icon mapping'],
  [33, 'Dashboard'], [34, 'Event correlation'], [35, 'Graph prototype'], [36, 'Item prototype'], [37, 'Host prototype'], [38, 'Autoregistration'],
  [39, 'Module'], [40, 'Settings'], [41, 'Housekeeping'], [42, 'Authentication'], [43, 'Template dashboard'], [44, 'User role'], [45, 'API token'],
  [46, 'Scheduled report'], [47, 'High availability node'], [48, 'SLA']];
const PAGE = 50;
const name = (list, v) => (list.find(([x]) => String(x) === String(v)) || [0, v])[1];

export async function render(main) {
  const sel = (id, label, opts) => h('select', { id, 'aria-label': label }, h('option', { value: '' }, `${label}: any`), opts.map(([v, t]) => h('option', { value: String(v) }, t)));
  const user = sel('audit-user', 'User', []);
  const action = sel('audit-action', 'Action', ACTIONS);
  const resource = sel('audit-resource', 'Resource', RESOURCES);
  const rname = h('input', { type: 'search', id: 'audit-resourcename', placeholder: 'Resource name', 'aria-label': 'Resource name' });
  const from = h('input', { type: 'datetime-local', id: 'audit-from', 'aria-label': 'From' });
  const till = h('input', { type: 'datetime-local', id: 'audit-till', 'aria-label': 'Till' });
  const apply = h('button', { type: 'button', id: 'audit-apply' }, 'Apply');
  const newer = h('button', { type: 'button', id: 'audit-newer', disabled: true }, '‹ Newer');
  const older = h('button', { type: 'button', id: 'audit-older', disabled: true }, 'Older ›');
  const err = h('p', { class: 'error', role: 'alert', hidden: true });
  const list = h('div', { class: 'scroll', id: 'audit-list' });
  main.append(subnav('admin', '/admin/auditlog'), h('div', { class: 'toolbar' }, h('h1', {}, 'Audit log')),
    h('div', { class: 'filters' }, user, action, resource, rname, 'from', from, 'till', till, apply, newer, older), err, list);
  call('user.get', { output: ['userid', 'username'], sortfield: 'username' })
    .then((us) => user.append(...us.map((u) => h('option', { value: u.userid }, u.username)))).catch(() => {});

  // starts holds each shown page's upper bound (clock and the ids of
  // that second already shown before it), for "Newer".
  let starts = [];
  let cur = null;
  const params = (bound) => {
    const p = { output: 'extend', sortfield: 'clock', sortorder: 'DESC', limit: PAGE + 1 + (bound ? bound.seen.length : 0) };
    const filter = {};
    if (user.value) p.userids = [user.value];
    if (action.value) filter.action = [action.value];
    if (resource.value) filter.resourcetype = [resource.value];
    if (Object.keys(filter).length) p.filter = filter;
    if (rname.value) p.search = { resourcename: [rname.value] };
    if (from.value) p.time_from = Math.floor(new Date(from.value).getTime() / 1000);
    if (till.value) p.time_till = Math.floor(new Date(till.value).getTime() / 1000);
    if (bound) p.time_till = p.time_till === undefined ? bound.clock : Math.min(p.time_till, bound.clock);
    return p;
  };
  const load = async (bound) => {
    err.hidden = true;
    try {
      let rows = await call('auditlog.get', params(bound));
      if (bound) rows = rows.filter((r) => !(String(r.clock) === String(bound.clock) && bound.seen.includes(r.auditid)));
      const more = rows.length > PAGE;
      rows = rows.slice(0, PAGE);
      cur = bound;
      draw(rows);
      newer.disabled = !starts.length;
      older.disabled = !more;
      older.onclick = () => {
        const last = rows[rows.length - 1];
        const seen = rows.filter((r) => r.clock === last.clock).map((r) => r.auditid);
        starts.push(cur);
        load({ clock: Number(last.clock), seen: (cur && Number(cur.clock) === Number(last.clock) ? cur.seen : []).concat(seen) });
      };
    } catch (e) {
      showErrorAt(list, err, e);
    }
  };
  newer.onclick = () => load(starts.pop() || null);
  apply.onclick = () => { starts = []; load(null); };
  for (const el of [user, action, resource]) el.addEventListener('change', () => apply.onclick());

  function draw(rows) {
    clear(list);
    const table = h('table', { class: 'plain', id: 'audit-table' },
      h('thead', {}, h('tr', {}, ['Time', 'User', 'IP', 'Resource', 'ID', 'Name', 'Action', 'Recordset', 'Details'].map((x) => h('th', {}, x)))));
    const body = h('tbody', {});
    for (const r of rows) {
      let details = r.details || '';
      try {
        const d = JSON.parse(details);
        details = Object.entries(d || {}).map(([k, v]) => `${k}: ${Array.isArray(v) ? v.slice(1).join(' → ') || v[0] : v}`).join('\n');
      } catch { /* shown as it is */ }
      body.append(h('tr', { class: 'audit-row', dataset: { id: r.auditid } }, h('td', {}, fmtTime(r.clock)), h('td', {}, r.username), h('td', {}, r.ip),
        h('td', {}, name(RESOURCES, r.resourcetype)), h('td', {}, r.resourceid), h('td', { class: 'audit-name' }, r.resourcename),
        h('td', {}, name(ACTIONS, r.action)), h('td', { class: 'muted' }, r.recordsetid), h('td', {}, h('pre', { class: 'details' }, details))));
    }
    table.append(body);
    list.append(table);
    if (!rows.length) list.append(h('p', { class: 'muted' }, 'No records.'));
  }
  await load(null);
}
