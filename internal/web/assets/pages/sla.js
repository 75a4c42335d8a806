// SLA (sla.*): the list, the form (name, SLO, period, time zone,
// effective date, service tags, schedule as 24x7 or custom, excluded
// downtimes, status) and each SLA's report (sla.getsli: the last six
// periods, SLI, uptime, downtime and error budget per service).
import { call, mayDo, userType } from '../api.js';
import { h, clear, fmtDuration } from '../dom.js';
import { crudPage, input, fld, rowTable, numVal } from '../crud.js';

const N = 'sla';
const PERIODS = [[0, 'Daily'], [1, 'Weekly'], [2, 'Monthly'], [3, 'Quarterly'], [4, 'Annually']];
const label = (list, v) => (list.find(([x]) => String(x) === String(v)) || [0, v])[1];
const day = (sec) => new Date(Number(sec) * 1000).toISOString().slice(0, 10);

export async function render(main) {
  const report = h('section', { class: 'card', id: 'sla-report', hidden: true });
  await crudPage(main, {
    // SLAs are changed by an Admin whose role has manage_sla.
    readOnly: userType() < 2 || !mayDo('manage_sla'),
    api: 'sla', id: 'slaid', ids: 'slaids', noun: N, label: 'SLA', title: 'SLA', section: 'services', path: '/services/sla',
    sort: [['name', 'Name'], ['slo', 'SLO']],
    search: { field: 'name', label: 'Search name' },
    status: { field: 'status', on: 1, off: 0 },
    rowParams: { output: ['slaid', 'name', 'slo', 'period', 'timezone', 'status', 'effective_date'], selectServiceTags: 'extend' },
    columns: [
      { label: 'Name', sort: 'name', cell: (s) => s.name },
      { label: 'SLO', sort: 'slo', cell: (s) => `${s.slo}%` },
      { label: 'Period', cell: (s) => label(PERIODS, s.period) },
      { label: 'Time zone', cell: (s) => s.timezone },
      { label: 'Status', cell: (s) => (s.status === '1' ? 'Enabled' : 'Disabled') },
      { label: 'Report', cell: (s) => h('button', { type: 'button', class: 'sla-report-open', onclick: () => showReport(report, s) }, 'SLA report') },
    ],
    afterPage: async (listEl) => { listEl.after(report); },
    editParams: { selectServiceTags: 'extend', selectSchedule: 'extend', selectExcludedDowntimes: 'extend' },
    newObject: { slo: '99.9', period: '2', timezone: 'system', status: '1', effective_date: String(Math.floor(Date.now() / 86400000) * 86400), service_tags: [], schedule: [], excluded_downtimes: [] },
    clone: (s) => ({ ...s, name: `${s.name} (copy)` }),
    form: (s) => {
      const f = {
        name: input.text(N, 'name', s.name, { maxlength: 255 }), slo: input.text(N, 'slo', s.slo),
        period: input.select(N, 'period', PERIODS, s.period), timezone: input.text(N, 'timezone', s.timezone),
        effective_date: h('input', { type: 'date', id: 'sla-effective-date', dataset: { key: 'effective_date' }, value: day(s.effective_date) }),
        status: input.check(N, 'status', s.status), description: input.area(N, 'description', s.description, 2),
      };
      const tags = rowTable('sla-service-tags', ['Tag', 'Operator', 'Value'], s.service_tags, (o) => {
        const t = input.text(N, 'tag', o.tag); const op = input.select(N, 'operator', [[0, 'Equals'], [2, 'Contains']], o.operator || 0); const v = input.text(N, 'value', o.value);
        return { cells: [t, op, v], read: () => (t.value ? { tag: t.value, operator: Number(op.value), value: v.value } : null) };
      }, 'service_tags');
      const sched = rowTable('sla-schedule', ['From (seconds of the week)', 'To'], s.schedule, (o) => {
        const a = input.num(N, 'period_from', o.period_from); const b = input.num(N, 'period_to', o.period_to);
        return { cells: [a, b], read: () => ({ period_from: numVal(a), period_to: numVal(b) }) };
      }, 'schedule');
      const down = rowTable('sla-downtimes', ['Name', 'From (Unix time)', 'To'], s.excluded_downtimes, (o) => {
        const n = input.text(N, 'name', o.name); const a = input.num(N, 'period_from', o.period_from); const b = input.num(N, 'period_to', o.period_to);
        return { cells: [n, a, b], read: () => ({ name: n.value, period_from: numVal(a), period_to: numVal(b) }) };
      }, 'excluded_downtimes');
      return {
        body: [h('div', { class: 'form-grid' }, fld('Name', f.name), fld('SLO (%)', f.slo), fld('Reporting period', f.period), fld('Time zone', f.timezone),
          fld('Effective date', f.effective_date), fld('Enabled', f.status)),
        h('h4', {}, 'Service tags'), tags.el, h('h4', {}, 'Schedule (none: 24x7)'), sched.el, h('h4', {}, 'Excluded downtimes'), down.el, fld('Description', f.description)],
        read: () => ({ name: f.name.value, slo: f.slo.value, period: Number(f.period.value), timezone: f.timezone.value,
          effective_date: Math.floor(Date.parse(`${f.effective_date.value}T00:00:00Z`) / 1000) || 0, status: f.status.checked ? 1 : 0,
          description: f.description.value, service_tags: tags.values(), schedule: sched.values(), excluded_downtimes: down.values() }),
      };
    },
  });
}

async function showReport(box, sla) {
  box.hidden = false;
  clear(box).append(h('p', { class: 'muted' }, 'Loading…'));
  try {
    const r = await call('sla.getsli', { slaid: sla.slaid, periods: 6 });
    const names = r.serviceids.length ? await call('service.get', { serviceids: r.serviceids.map(String), output: ['serviceid', 'name'] }) : [];
    const nameOf = (id) => (names.find((s) => s.serviceid === String(id)) || { name: `#${id}` }).name;
    clear(box).append(h('h3', {}, `SLA report: ${sla.name} (SLO ${sla.slo}%)`),
      r.serviceids.length ? h('table', { class: 'plain', id: 'sla-report-table' },
        h('thead', {}, h('tr', {}, h('th', {}, 'Service'), r.periods.map((p) => h('th', {}, `${day(p.period_from)} – ${day(p.period_to - 1)}`)))),
        h('tbody', {}, r.serviceids.map((sid, i) => h('tr', {}, h('td', {}, nameOf(sid)), r.periods.map((_, j) => {
          const c = r.sli[j][i];
          const bad = c.sli !== -1 && c.sli < Number(sla.slo);
          return h('td', { class: bad ? 'sev sev-4' : '', title: `uptime ${fmtDuration(c.uptime)}, downtime ${fmtDuration(c.downtime)}, error budget ${fmtDuration(Math.abs(c.error_budget))}${c.error_budget < 0 ? ' over' : ''}` },
            c.sli === -1 ? 'N/A' : `${c.sli.toFixed(4)}%`);
        }))))) : h('p', { class: 'muted' }, 'No service matches its service tags.'));
  } catch (e) {
    clear(box).append(h('p', { class: 'error', role: 'alert' }, String(e.data || e.message || e)));
  }
}
