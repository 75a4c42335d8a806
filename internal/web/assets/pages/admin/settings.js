// Administration: general settings (settings.get/update) and
// housekeeping (housekeeping.get/update), one form each. Every member the
// server returns is shown (the API decides what exists); switches
// ("*_mode", "*_enabled" and a few more) are check boxes, the rest text.
// Update sends only the members that changed, so a field the user did
// not touch is never rewritten; the API's error names the member and is
// shown beside it.
import { call } from '../../api.js';
import { h, clear } from '../../dom.js';
import { subnav, fld, showErrorAt } from '../../crud.js';

const LABELS = {
  default_theme: 'Default theme', search_limit: 'Limit for search and filter results', max_in_table: 'Max count of elements to show inside table cell',
  server_check_interval: 'Zabbix server is running check interval', work_period: 'Working time', show_technical_errors: 'Show technical errors',
  history_period: 'Max history display period', period_default: 'Time filter default period', max_period: 'Max period for time selector',
  default_lang: 'Default language', default_timezone: 'Default time zone', login_attempts: 'Login attempts', login_block: 'Login blocking interval',
  auditlog_enabled: 'Enable audit logging', alert_usrgrpid: 'User group for database down message (ID)', discovery_groupid: 'Group for discovered hosts (ID)',
  default_inventory_mode: 'Default host inventory mode', url: 'Frontend URL',
  hk_events_mode: 'Enable internal housekeeping of events', hk_events_trigger: 'Trigger data storage period', hk_events_service: 'Service data storage period',
  hk_events_internal: 'Internal data storage period', hk_events_discovery: 'Network discovery data storage period',
  hk_events_autoreg: 'Autoregistration data storage period', hk_services_mode: 'Enable internal housekeeping of services', hk_services: 'Services data storage period',
  hk_audit_mode: 'Enable internal housekeeping of audit', hk_audit: 'Audit data storage period', hk_sessions_mode: 'Enable internal housekeeping of sessions',
  hk_sessions: 'User sessions data storage period', hk_history_mode: 'Enable internal housekeeping of history', hk_history_global: 'Override item history period',
  hk_history: 'History data storage period', hk_trends_mode: 'Enable internal housekeeping of trends', hk_trends_global: 'Override item trend period',
  hk_trends: 'Trends data storage period', compression_status: 'Enable compression', compress_older: 'Compress records older than',
};
const SWITCH = /(_mode|_enabled|_global|^show_technical_errors|^compression_status|^snmptrap_logging|^validate_uri_schemes|^iframe_sandboxing_enabled|^custom_color)$/;
// Members with more than two values, chosen from a list (6.0's: the
// default host inventory mode is -1 disabled, 0 manual, 1 automatic).
const CHOICES = { default_inventory_mode: [['-1', 'Disabled'], ['0', 'Manual'], ['1', 'Automatic']] };
// Read-only members (the server reports them; they are not settings).
const READONLY = new Set(['db_extension', 'hk_events_mode_readonly']);

export async function render(main, _q, name) {
  const hk = name === 'admin/housekeeping';
  const api = hk ? 'housekeeping' : 'settings';
  const box = h('section', { class: 'card config-form', id: `${api}-form` });
  main.append(subnav('admin', `/${name}`), h('div', { class: 'toolbar' }, h('h1', {}, hk ? 'Housekeeping' : 'General settings')), box);
  const load = async () => {
    const cur = await call(`${api}.get`, { output: 'extend' });
    clear(box);
    const inputs = {};
    for (const [k, v] of Object.entries(cur)) {
      if (READONLY.has(k) || typeof v === 'object') continue;
      inputs[k] = CHOICES[k]
        ? h('select', { id: `${api}-${k.replace(/_/g, '-')}`, dataset: { key: k } }, CHOICES[k].map(([o, t]) => h('option', { value: o, selected: o === String(v) }, t)))
        : SWITCH.test(k)
        ? h('input', { type: 'checkbox', id: `${api}-${k.replace(/_/g, '-')}`, dataset: { key: k }, checked: String(v) === '1' })
        : h('input', { type: 'text', id: `${api}-${k.replace(/_/g, '-')}`, dataset: { key: k }, value: String(v) });
    }
    const val = (k) => (inputs[k].type === 'checkbox' ? (inputs[k].checked ? '1' : '0') : inputs[k].value);
    const err = h('p', { class: 'error', id: `${api}-error`, role: 'alert', hidden: true });
    const saved = h('span', { class: 'muted', id: `${api}-saved` });
    const form = h('form', { id: `${api}-edit`, onsubmit: async (ev) => {
      ev.preventDefault();
      const changed = {};
      for (const k of Object.keys(inputs)) if (val(k) !== String(cur[k])) changed[k] = val(k);
      saved.textContent = '';
      err.hidden = true;
      if (!Object.keys(changed).length) {
        saved.textContent = 'Nothing changed.';
        return;
      }
      try {
        await call(`${api}.update`, changed);
        await load();
        box.querySelector(`#${api}-saved`).textContent = `Saved: ${Object.keys(changed).join(', ')}.`;
      } catch (e) {
        showErrorAt(form, err, e);
      }
    } },
    h('div', { class: 'form-grid' }, Object.entries(inputs).map(([k, el]) => fld(LABELS[k] || k, el))),
    err, h('div', { class: 'form-buttons' }, h('button', { type: 'submit', id: `${api}-save` }, 'Update'), saved));
    box.append(form);
  };
  await load();
}
