// Administration: user groups (usergroup.*): name, frontend access,
// enabled (users_status), debug mode, members, host group permissions
// (read-write, read, deny per host group) and tag filters (a host
// group's problems limited to a tag, or a tag and value).
import { call } from '../../api.js';
import { h } from '../../dom.js';
import { crudPage, input, fld, chosen, rowTable } from '../../crud.js';

const N = 'usergroup';
const GUI = [[0, 'System default'], [1, 'Internal'], [2, 'LDAP'], [3, 'Disabled']];
const PERM = [[3, 'Read-write'], [2, 'Read'], [0, 'Deny']];

export async function render(main) {
  await crudPage(main, {
    api: 'usergroup', id: 'usrgrpid', ids: 'usrgrpids', noun: N, label: 'user group', title: 'User groups', section: 'admin', path: '/admin/usergroups',
    sort: [['name', 'Name']],
    search: { field: 'name', label: 'Search name' },
    filters: [{ id: 'status', label: 'Status', options: [[0, 'Enabled'], [1, 'Disabled']], apply: (p, v) => { p.status = Number(v); } }],
    rowParams: { output: ['usrgrpid', 'name', 'gui_access', 'users_status', 'debug_mode'], selectUsers: ['username'] },
    columns: [
      { label: 'Name', sort: 'name', cell: (g) => g.name },
      { label: 'Members', cell: (g) => (g.users || []).map((u) => u.username).join(', ') },
      { label: 'Frontend access', cell: (g) => (GUI.find(([v]) => String(v) === g.gui_access) || [0, g.gui_access])[1] },
      { label: 'Debug mode', cell: (g) => (g.debug_mode === '1' ? 'Enabled' : 'Disabled') },
      { label: 'Status', cell: (g) => (g.users_status === '1' ? h('span', { class: 'ack-no' }, 'Disabled') : h('span', { class: 'ack-yes' }, 'Enabled')) },
    ],
    status: { field: 'users_status', on: 0, off: 1 },
    editParams: { selectRights: 'extend', selectUsers: ['userid'], selectTagFilters: 'extend' },
    prepare: async () => {
      const [users, hostGroups] = await Promise.all([
        call('user.get', { output: ['userid', 'username'], sortfield: 'username' }),
        call('hostgroup.get', { output: ['groupid', 'name'], sortfield: 'name' }),
      ]);
      return { users, hostGroups };
    },
    newObject: { gui_access: '0', users_status: '0', debug_mode: '0', rights: [], users: [], tag_filters: [] },
    clone: (g) => ({ ...g, name: `${g.name} (copy)` }),
    form: (g, { users, hostGroups }) => {
      const f = {
        name: input.text(N, 'name', g.name, { maxlength: 64 }),
        gui_access: input.select(N, 'gui_access', GUI, g.gui_access),
        users_status: input.check(N, 'users_status', String(g.users_status) === '0'),
        debug_mode: input.check(N, 'debug_mode', g.debug_mode),
        users: input.multi(N, 'users', users.map((u) => [u.userid, u.username]), (g.users || []).map((u) => u.userid)),
      };
      const hg = hostGroups.map((x) => [x.groupid, x.name]);
      const rights = rowTable('usergroup-rights', ['Host group', 'Permission'], g.rights || [], (r) => {
        const grp = h('select', { class: 'right-group', 'aria-label': 'Host group' }, hg.map(([v, t]) => h('option', { value: v, selected: v === r.id }, t)));
        const perm = h('select', { class: 'right-permission', 'aria-label': 'Permission' }, PERM.map(([v, t]) => h('option', { value: String(v), selected: String(v) === String(r.permission ?? 2) }, t)));
        return { cells: [grp, perm], read: () => (grp.value ? { id: grp.value, permission: Number(perm.value) } : null) };
      }, 'rights');
      const tags = rowTable('usergroup-tags', ['Host group', 'Tag', 'Value'], g.tag_filters || [], (t) => {
        const grp = h('select', { class: 'tag-group', 'aria-label': 'Host group' }, hg.map(([v, x]) => h('option', { value: v, selected: v === t.groupid }, x)));
        const tag = h('input', { type: 'text', class: 'tag-tag', 'aria-label': 'Tag', value: t.tag ?? '' });
        const value = h('input', { type: 'text', class: 'tag-value', 'aria-label': 'Value', value: t.value ?? '' });
        return { cells: [grp, tag, value], read: () => (grp.value ? { groupid: grp.value, tag: tag.value, value: value.value } : null) };
      }, 'tag_filters');
      return {
        body: [
          h('div', { class: 'form-grid' }, fld('Group name', f.name), fld('Frontend access', f.gui_access), fld('Enabled', f.users_status),
            fld('Debug mode', f.debug_mode), fld('Users', f.users)),
          h('h4', {}, 'Host group permissions'), rights.el,
          h('h4', {}, 'Problem tag filter'), tags.el,
        ],
        read: () => ({
          name: f.name.value, gui_access: Number(f.gui_access.value), users_status: f.users_status.checked ? 0 : 1,
          debug_mode: f.debug_mode.checked ? 1 : 0, users: chosen(f.users).map((userid) => ({ userid })),
          rights: rights.values(), tag_filters: tags.values(),
        }),
      };
    },
  });
}
