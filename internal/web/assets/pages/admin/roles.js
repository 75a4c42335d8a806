// Administration: user roles (role.*): name, user type, and the rules
// as the API has them: the UI elements (each allowed or not, and the
// default for elements a later version adds), the API (access on or
// off, a list of methods that is a deny or an allow list) and the
// actions (acknowledge, execute scripts, manage API tokens, ...).
// Elements beyond the chosen user type are not offered: Zabbix grants
// them to no role of that type.
import { h } from '../../dom.js';
import { crudPage, input, fld } from '../../crud.js';

const N = 'role';
const TYPES = [[1, 'User'], [2, 'Admin'], [3, 'Super admin']];

// UI elements and actions of Zabbix 6.0 with the least user type each.
const UI = [
  [1, 'monitoring.dashboard'], [1, 'monitoring.problems'], [1, 'monitoring.hosts'], [1, 'monitoring.latest_data'], [1, 'monitoring.maps'],
  [1, 'services.services'], [1, 'services.sla_report'], [1, 'inventory.overview'], [1, 'inventory.hosts'],
  [1, 'reports.availability_report'], [1, 'reports.top_triggers'],
  [2, 'monitoring.discovery'], [2, 'services.actions'], [2, 'services.sla'], [2, 'reports.scheduled_reports'], [2, 'reports.notifications'],
  [2, 'configuration.host_groups'], [2, 'configuration.templates'], [2, 'configuration.hosts'], [2, 'configuration.maintenance'],
  [2, 'configuration.actions'], [2, 'configuration.discovery'],
  [3, 'reports.system_info'], [3, 'reports.audit'], [3, 'reports.action_log'], [3, 'configuration.event_correlation'],
  [3, 'administration.general'], [3, 'administration.proxies'], [3, 'administration.authentication'], [3, 'administration.user_groups'],
  [3, 'administration.user_roles'], [3, 'administration.users'], [3, 'administration.media_types'], [3, 'administration.scripts'],
  [3, 'administration.queue'],
];
const ACTIONS = [
  [1, 'edit_dashboards'], [1, 'edit_maps'], [1, 'acknowledge_problems'], [1, 'close_problems'], [1, 'change_severity'],
  [1, 'add_problem_comments'], [1, 'execute_scripts'], [1, 'manage_api_tokens'],
  [2, 'edit_maintenance'], [2, 'manage_scheduled_reports'], [2, 'manage_sla'],
];

export async function render(main) {
  await crudPage(main, {
    api: 'role', id: 'roleid', ids: 'roleids', noun: N, label: 'user role', title: 'User roles', section: 'admin', path: '/admin/roles',
    sort: [['name', 'Name']],
    search: { field: 'name', label: 'Search name' },
    filters: [{ id: 'type', label: 'User type', options: TYPES, apply: (p, v) => { p.filter = { type: v }; } }],
    rowParams: { output: ['roleid', 'name', 'type', 'readonly'], selectUsers: ['username'] },
    columns: [
      { label: 'Name', sort: 'name', cell: (r) => r.name },
      { label: 'User type', cell: (r) => (TYPES.find(([v]) => String(v) === r.type) || [0, r.type])[1] },
      { label: 'Users', cell: (r) => (r.users || []).map((u) => u.username).join(', ') },
      { label: 'Read-only', cell: (r) => (r.readonly === '1' ? 'Yes' : '') },
    ],
    editParams: { selectRules: 'extend' },
    newObject: { type: '1', rules: { 'ui.default_access': '1', 'api.access': '1', 'api.mode': '0', api: [], 'actions.default_access': '1', ui: [], actions: [] } },
    clone: (r) => ({ ...r, name: `${r.name} (copy)`, readonly: '0' }),
    form: (r) => {
      const rules = r.rules || {};
      const type = input.select(N, 'type', TYPES, r.type);
      const name = input.text(N, 'name', r.name, { maxlength: 255 });
      const state = (list, n, def) => {
        const e = (list || []).find((x) => x.name === n);
        return e ? e.status === '1' || e.status === 1 : String(def) !== '0';
      };
      const boxes = (cls, table, list, def) => table.map(([t, n]) => {
        const cb = h('input', { type: 'checkbox', class: cls, dataset: { name: n }, 'aria-label': n, checked: state(list, n, def) });
        const l = h('label', { class: 'check', dataset: { type: String(t) } }, cb, ' ', n);
        l.cb = cb;
        return l;
      });
      const uiBoxes = boxes('role-ui', UI, rules.ui, rules['ui.default_access'] ?? 1);
      const actBoxes = boxes('role-action', ACTIONS, rules.actions, rules['actions.default_access'] ?? 1);
      const uiDefault = input.check(N, 'ui_default_access', rules['ui.default_access'] ?? 1);
      const actDefault = input.check(N, 'actions_default_access', rules['actions.default_access'] ?? 1);
      const apiAccess = input.check(N, 'api_access', rules['api.access'] ?? 1);
      const apiMode = input.select(N, 'api_mode', [[0, 'Deny list'], [1, 'Allow list']], rules['api.mode'] ?? 0);
      const apiList = input.area(N, 'api', (rules.api || []).join('\n'), 3);
      apiList.placeholder = 'One method a line (host.get, user.*, *.create)';
      const shown = () => {
        for (const l of [...uiBoxes, ...actBoxes]) l.hidden = Number(l.dataset.type) > Number(type.value);
      };
      type.addEventListener('change', shown);
      shown();
      const read = (bs) => bs.filter((l) => !l.hidden).map((l) => ({ name: l.cb.dataset.name, status: l.cb.checked ? 1 : 0 }));
      return {
        body: [
          h('div', { class: 'form-grid' }, fld('Name', name), fld('User type', type)),
          h('h4', {}, 'Access to UI elements'), h('div', { class: 'checks', id: 'role-ui' }, uiBoxes),
          fld('Default access to new UI elements', uiDefault),
          h('h4', {}, 'API'), h('div', { class: 'form-grid' }, fld('Enabled', apiAccess), fld('API methods are', apiMode)), fld('API methods', apiList),
          h('h4', {}, 'Actions'), h('div', { class: 'checks', id: 'role-actions' }, actBoxes),
          fld('Default access to new actions', actDefault),
        ],
        read: () => ({
          name: name.value, type: Number(type.value),
          rules: {
            ui: read(uiBoxes), 'ui.default_access': uiDefault.checked ? 1 : 0,
            'api.access': apiAccess.checked ? 1 : 0, 'api.mode': Number(apiMode.value),
            api: apiList.value.split('\n').map((s) => s.trim()).filter(Boolean),
            actions: read(actBoxes), 'actions.default_access': actDefault.checked ? 1 : 0,
          },
        }),
      };
    },
  });
}
