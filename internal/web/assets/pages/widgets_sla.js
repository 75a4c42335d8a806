// The SLA report dashboard widget (slareport), from the fields 6.0
// stores (recorded from 6.0.14's dashboard.get: slaid field type 10,
// serviceid type 9, show_periods integer, date_from and date_to strings
// "YYYY-MM-DD"). One JSON-RPC batch a refresh: the SLA, its SLI
// (sla.getsli) and its services' names. With a service: one row per
// period (SLO, SLI, uptime, downtime, error budget, excluded
// downtimes); without: one row per service, one column per period.
import { batch } from '../api.js';
import { h, fmtDuration } from '../dom.js';

const fieldOf = (w, name) => ((w.fields || []).find((f) => f.name === name) || {}).value;

// 6.0's default and largest number of periods.
const DEFAULT_PERIODS = 20;
const MAX_PERIODS = 100;

// dayBound is the Unix time of "YYYY-MM-DD[ HH:MM[:SS]]" in UTC (the
// end of that day with end), or undefined for anything else.
export function dayBound(s, end) {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?: (\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(String(s || '').trim());
  if (!m) return undefined;
  const [, y, mo, d, hh, mm, ss] = m.map(Number);
  let t = Date.UTC(y, mo - 1, d, hh || 0, mm || 0, ss || 0) / 1000;
  if (end && m[4] === undefined) t += 86399;
  return Number.isFinite(t) && t >= 0 ? t : undefined;
}

// periodLabel names a reporting period as 6.0 does for the SLA's
// period (0 daily, 1 weekly, 2 monthly, 3 quarterly, 4 annually), in
// the SLA's time zone ("system": the browser's).
function periodLabel(sla, p) {
  const tz = sla.timezone && sla.timezone !== 'system' ? sla.timezone : undefined;
  const fmt = (sec, opts) => {
    try {
      return new Intl.DateTimeFormat('en-CA', { ...opts, timeZone: tz }).format(new Date(sec * 1000));
    } catch (e) {
      return new Intl.DateTimeFormat('en-CA', opts).format(new Date(sec * 1000));
    }
  };
  const ymd = { year: 'numeric', month: '2-digit', day: '2-digit' };
  const ym = { year: 'numeric', month: '2-digit' };
  switch (String(sla.period)) {
    case '0': return fmt(p.period_from, ymd);
    case '1': return `${fmt(p.period_from, ymd)} – ${fmt(p.period_to - 1, ymd)}`;
    case '2': return fmt(p.period_from, ym);
    case '3': return `${fmt(p.period_from, ym)} – ${fmt(p.period_to - 1, ym)}`;
    default: return fmt(p.period_from, { year: 'numeric' });
  }
}

const sliText = (c) => (c.sli === -1 ? 'N/A' : `${Number(c.sli).toFixed(4)}%`);
const budgetText = (c) => (c.error_budget < 0 ? `-${fmtDuration(-c.error_budget)}` : fmtDuration(c.error_budget));
const badClass = (sla, c) => (c.sli !== -1 && c.sli < Number(sla.slo) ? 'sev sev-4' : '');

async function slaReport(w) {
  const slaid = fieldOf(w, 'slaid');
  if (!slaid) return h('p', { class: 'muted' }, 'No SLA chosen.');
  const serviceid = fieldOf(w, 'serviceid');
  const n = Number(fieldOf(w, 'show_periods'));
  const q = { slaid, periods: Number.isInteger(n) && n >= 1 ? Math.min(MAX_PERIODS, n) : DEFAULT_PERIODS };
  const from = dayBound(fieldOf(w, 'date_from'), false);
  const to = dayBound(fieldOf(w, 'date_to'), true);
  if (from !== undefined) q.period_from = from;
  if (to !== undefined) q.period_to = to;
  if (serviceid) q.serviceids = [serviceid];
  const [slas, sli, services] = await batch([
    ['sla.get', { slaids: [slaid], output: ['slaid', 'name', 'period', 'slo', 'timezone', 'status'] }],
    ['sla.getsli', q],
    ['service.get', { ...(serviceid ? { serviceids: [serviceid] } : { slaids: [slaid] }), output: ['serviceid', 'name'], limit: 1000 }],
  ]);
  const sla = (slas.result || [])[0];
  if (!sla || (serviceid && !(services.result || []).length)) return h('p', { class: 'muted' }, 'No permissions to referred object or it does not exist!');
  if (String(sla.status) !== '1') return h('p', { class: 'muted' }, 'SLA is disabled.');
  for (const r of [sli, services]) if (r.error) throw r.error;
  const r = sli.result;
  const names = new Map(services.result.map((s) => [String(s.serviceid), s.name]));
  const order = r.periods.map((p, j) => [p, j]).reverse(); // newest first
  if (serviceid) {
    const i = r.serviceids.map(String).indexOf(String(serviceid));
    if (i < 0) return h('p', { class: 'muted' }, 'No data found.');
    return h('table', { class: 'plain widget-slareport' },
      h('thead', {}, h('tr', {}, ['Reporting period', 'SLO', 'SLI', 'Uptime', 'Downtime', 'Error budget', 'Excluded downtimes'].map((x) => h('th', {}, x)))),
      h('tbody', {}, order.map(([p, j]) => {
        const c = r.sli[j][i];
        return h('tr', {}, h('td', {}, periodLabel(sla, p)), h('td', {}, `${sla.slo}%`), h('td', { class: badClass(sla, c) }, sliText(c)),
          h('td', {}, fmtDuration(c.uptime)), h('td', {}, fmtDuration(c.downtime)), h('td', {}, budgetText(c)),
          h('td', {}, (c.excluded_downtimes || []).map((d) => `${d.name}: ${fmtDuration(d.period_to - d.period_from)}`).join(', ')));
      })));
  }
  if (!r.serviceids.length) return h('p', { class: 'muted' }, 'No data found.');
  return h('table', { class: 'plain widget-slareport' },
    h('thead', {}, h('tr', {}, h('th', {}, 'Service'), h('th', {}, 'SLO'), order.map(([p]) => h('th', {}, periodLabel(sla, p))))),
    h('tbody', {}, r.serviceids.map((sid, i) => h('tr', {}, h('td', {}, names.get(String(sid)) || `#${sid}`), h('td', {}, `${sla.slo}%`),
      order.map(([, j]) => h('td', { class: badClass(sla, r.sli[j][i]) }, sliText(r.sli[j][i])))))));
}

export const DRAW_SLA = { slareport: slaReport };
