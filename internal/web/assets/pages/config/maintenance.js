// Configuration: maintenance periods (maintenance.*): name, type (with
// or without data collection), active since/till, the time periods
// (one time, daily, weekly, monthly: every N, weekdays, months, day,
// start time and length), the hosts and host groups it covers (hosts
// are searched, never all listed) and the problem tags it is limited to.
import { call } from '../../api.js';
import { h, fmtTime, zabbixSeconds } from '../../dom.js';
import { crudPage, input, fld, chosen, rowTable, picker } from '../../crud.js';

const N = 'maintenance';
const KIND = [[0, 'One time only'], [2, 'Daily'], [3, 'Weekly'], [4, 'Monthly']];
const DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

// local formats a Unix time for a datetime-local input, and unix reads one.
const pad = (n) => String(n).padStart(2, '0');
function local(sec) {
  const d = new Date(Number(sec) * 1000);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
const unix = (v) => Math.floor(new Date(v).getTime() / 1000);

export async function render(main) {
  await crudPage(main, {
    api: 'maintenance', id: 'maintenanceid', ids: 'maintenanceids', noun: N, label: 'maintenance period', title: 'Maintenance periods',
    section: 'config', path: '/config/maintenance',
    sort: [['name', 'Name'], ['maintenance_type', 'Type'], ['active_since', 'Active since'], ['active_till', 'Active till']],
    search: { field: 'name', label: 'Search name' },
    rowParams: { output: ['maintenanceid', 'name', 'maintenance_type', 'active_since', 'active_till', 'description'] },
    columns: [
      { label: 'Name', sort: 'name', cell: (m) => m.name },
      { label: 'Type', sort: 'maintenance_type', cell: (m) => (m.maintenance_type === '1' ? 'No data collection' : 'With data collection') },
      { label: 'Active since', sort: 'active_since', cell: (m) => fmtTime(m.active_since) },
      { label: 'Active till', sort: 'active_till', cell: (m) => fmtTime(m.active_till) },
      { label: 'State', cell: (m) => { const now = Date.now() / 1000; return now < m.active_since ? 'Approaching' : now > m.active_till ? 'Expired' : 'Active'; } },
      { label: 'Description', cell: (m) => m.description },
    ],
    editParams: { selectGroups: ['groupid', 'name'], selectHosts: ['hostid', 'name'], selectTimeperiods: 'extend', selectTags: 'extend' },
    prepare: async () => ({ hostGroups: await call('hostgroup.get', { output: ['groupid', 'name'], sortfield: 'name' }) }),
    newObject: (() => {
      const now = Math.floor(Date.now() / 86400000) * 86400;
      return { maintenance_type: '0', active_since: String(now), active_till: String(now + 86400), tags_evaltype: '0', groups: [], hosts: [], tags: [],
        timeperiods: [{ timeperiod_type: '0', start_date: String(now), period: '3600' }] };
    })(),
    clone: (m) => ({ ...m, name: `${m.name} (copy)` }),
    form: (m, { hostGroups }) => {
      const f = {
        name: input.text(N, 'name', m.name, { maxlength: 128 }),
        maintenance_type: input.select(N, 'maintenance_type', [[0, 'With data collection'], [1, 'No data collection']], m.maintenance_type),
        active_since: h('input', { type: 'datetime-local', id: 'maintenance-active-since', dataset: { key: 'active_since' }, value: local(m.active_since) }),
        active_till: h('input', { type: 'datetime-local', id: 'maintenance-active-till', dataset: { key: 'active_till' }, value: local(m.active_till) }),
        description: input.area(N, 'description', m.description, 2),
        groups: input.multi(N, 'groups', hostGroups.map((g) => [g.groupid, g.name]), (m.groups || []).map((g) => g.groupid)),
        tags_evaltype: input.select(N, 'tags_evaltype', [[0, 'And/Or'], [2, 'Or']], m.tags_evaltype),
      };
      const hosts = picker('maintenance-hosts', (m.hosts || []).map((x) => [x.hostid, x.name]),
        async (q) => (await call('host.get', { output: ['hostid', 'name'], search: { name: q }, sortfield: 'name', limit: 50 })).map((x) => [x.hostid, x.name]));
      const periods = rowTable('maintenance-periods', ['Period type', 'Every', 'Days / months', 'Day of month', 'Start date', 'Start time', 'Length'], m.timeperiods || [], (p) => {
        const kind = h('select', { class: 'period-type', 'aria-label': 'Period type' }, KIND.map(([v, l]) => h('option', { value: String(v), selected: String(v) === String(p.timeperiod_type ?? 0) }, l)));
        const every = h('input', { type: 'number', class: 'period-every', 'aria-label': 'Every', min: 1, value: p.every ?? 1 });
        const bits = (names, mask, cls) => names.map((n, i) => h('label', { class: 'check' }, h('input', { type: 'checkbox', class: cls, 'aria-label': n, checked: (Number(mask || 0) & (1 << i)) !== 0 }), n));
        const days = bits(DAYS, p.dayofweek, 'period-dow');
        const months = bits(MONTHS, p.month, 'period-month');
        const day = h('input', { type: 'number', class: 'period-day', 'aria-label': 'Day of month', min: 0, max: 31, value: p.day ?? 0 });
        const startDate = h('input', { type: 'datetime-local', class: 'period-start-date', 'aria-label': 'Start date', value: local(p.start_date || Date.now() / 1000) });
        const st = Number(p.start_time || 0);
        const startTime = h('input', { type: 'time', class: 'period-start-time', 'aria-label': 'Start time', value: `${pad(Math.floor(st / 3600))}:${pad(Math.floor(st % 3600 / 60))}` });
        const length = h('input', { type: 'text', class: 'period-length', 'aria-label': 'Length (e.g. 1h, 90m, 2d)', value: p.period ? `${Math.round(p.period / 60)}m` : '1h' });
        const bitsOf = (ls) => ls.reduce((a, l, i) => a | (l.firstChild.checked ? 1 << i : 0), 0);
        const extra = h('span', {}, h('span', { class: 'dows' }, days), h('span', { class: 'months' }, months));
        const show = () => {
          const k = kind.value;
          startDate.hidden = k !== '0';
          every.hidden = k === '0' || k === '4';
          extra.firstChild.hidden = k !== '3' && k !== '4';
          extra.lastChild.hidden = k !== '4';
          day.hidden = k !== '4';
          startTime.hidden = k === '0';
        };
        kind.addEventListener('change', show);
        show();
        return {
          cells: [kind, every, extra, day, startDate, startTime, length],
          read: () => {
            const k = Number(kind.value);
            const [hh, mm] = (startTime.value || '0:0').split(':').map(Number);
            // A length that is no time value goes to the API as typed, to be
            // refused beside the periods (not sent as 0).
            const o = { timeperiod_type: k, period: /^\s*\d+[smhdw]?\s*$/.test(length.value) ? zabbixSeconds(length.value) : length.value };
            if (k === 0) o.start_date = unix(startDate.value);
            else o.start_time = hh * 3600 + mm * 60;
            if (k === 2 || k === 3) o.every = Number(every.value);
            if (k === 3) o.dayofweek = bitsOf(days);
            if (k === 4) {
              o.month = bitsOf(months);
              if (Number(day.value) > 0) o.day = Number(day.value);
              else Object.assign(o, { dayofweek: bitsOf(days), every: Number(every.value) || 1 });
            }
            return o;
          },
        };
      }, 'timeperiods');
      const tags = rowTable('maintenance-tags', ['Tag', 'Operator', 'Value'], m.tags || [], (t) => {
        const tag = h('input', { type: 'text', class: 'mtag-tag', 'aria-label': 'Tag', value: t.tag ?? '' });
        const op = h('select', { class: 'mtag-operator', 'aria-label': 'Operator' }, [[2, 'Contains'], [0, 'Equals']].map(([v, l]) => h('option', { value: String(v), selected: String(v) === String(t.operator ?? 2) }, l)));
        const value = h('input', { type: 'text', class: 'mtag-value', 'aria-label': 'Value', value: t.value ?? '' });
        return { cells: [tag, op, value], read: () => (tag.value.trim() ? { tag: tag.value, operator: Number(op.value), value: value.value } : null) };
      }, 'tags');
      return {
        body: [
          h('div', { class: 'form-grid' }, fld('Name', f.name), fld('Maintenance type', f.maintenance_type), fld('Active since', f.active_since),
            fld('Active till', f.active_till)),
          h('h4', {}, 'Periods'), periods.el,
          h('h4', {}, 'Hosts and host groups'), h('div', { class: 'form-grid' }, fld('Host groups', f.groups), fld('Hosts', hosts.el)),
          h('h4', {}, 'Problem tags'), fld('Tags apply', f.tags_evaltype), tags.el,
          fld('Description', f.description),
        ],
        read: () => {
          const o = {
            name: f.name.value, maintenance_type: Number(f.maintenance_type.value), description: f.description.value,
            active_since: unix(f.active_since.value), active_till: unix(f.active_till.value),
            groups: chosen(f.groups).map((groupid) => ({ groupid })), hosts: hosts.values().map((hostid) => ({ hostid })),
            timeperiods: periods.values(),
          };
          // Zabbix takes tags only with data collection.
          if (o.maintenance_type === 0) Object.assign(o, { tags_evaltype: Number(f.tags_evaltype.value), tags: tags.values() });
          return o;
        },
      };
    },
  });
}
