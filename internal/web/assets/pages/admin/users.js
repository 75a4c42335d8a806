// Administration: users (user.*), with their groups, role and media.
// A medium is a media type, where to send (several addresses for an
// email type, one otherwise), when it is active (a time period such as
// "1-5,09:00-18:00") and the severities it takes (a bit each,
// Not classified = 1 ... Disaster = 32). A password is never shown; an
// empty field on an edit keeps it.
import { call } from '../../api.js';
import { h, SEVERITIES } from '../../dom.js';
import { crudPage, input, fld, chosen, rowTable, numVal } from '../../crud.js';

const N = 'user';

export async function render(main) {
  await crudPage(main, {
    api: 'user', id: 'userid', ids: 'userids', noun: N, label: 'user', title: 'Users', section: 'admin', path: '/admin/users',
    sort: [['username', 'Username']],
    search: { field: 'username', label: 'Search username' },
    filters: [{ id: 'role', label: 'Role', options: [], apply: (p, v) => { p.filter = { roleid: v }; } }],
    rowParams: { output: ['userid', 'username', 'name', 'surname', 'roleid'], selectUsrgrps: ['name'], selectRole: ['name'], selectMedias: ['mediaid'] },
    columns: [
      { label: 'Username', sort: 'username', cell: (u) => u.username },
      { label: 'Name', cell: (u) => u.name },
      { label: 'Surname', cell: (u) => u.surname },
      { label: 'Role', cell: (u) => (u.role && u.role.name) || '' },
      { label: 'Groups', cell: (u) => (u.usrgrps || []).map((g) => g.name).join(', ') },
      { label: 'Media', cell: (u) => String((u.medias || []).length) },
    ],
    editParams: { selectUsrgrps: ['usrgrpid'], selectMedias: 'extend' },
    prepare: async () => {
      const [roles, groups, mediaTypes] = await Promise.all([
        call('role.get', { output: ['roleid', 'name'], sortfield: 'name' }),
        call('usergroup.get', { output: ['usrgrpid', 'name'], sortfield: 'name' }),
        call('mediatype.get', { output: ['mediatypeid', 'name', 'type'] }),
      ]);
      mediaTypes.sort((a, b) => a.name.localeCompare(b.name));
      return { roles, groups, mediaTypes };
    },
    newObject: { roleid: '1', autologout: '15m', refresh: '30s', rows_per_page: '50', lang: 'default', theme: 'default', timezone: 'default', usrgrps: [], medias: [] },
    clone: (u) => ({ ...u, username: `${u.username} (copy)` }),
    form: userForm,
  });
  // The role filter's choices come after the page (a small list).
  const sel = document.getElementById('user-filter-role');
  if (sel) {
    const roles = await call('role.get', { output: ['roleid', 'name'], sortfield: 'name' });
    for (const r of roles) sel.append(h('option', { value: r.roleid }, r.name));
  }
}

function userForm(u, { roles, groups, mediaTypes }, isNew) {
  const f = {
    username: input.text(N, 'username', u.username, { maxlength: 100 }),
    name: input.text(N, 'name', u.name),
    surname: input.text(N, 'surname', u.surname),
    passwd: h('input', { type: 'password', id: 'user-passwd', dataset: { key: 'passwd' }, autocomplete: 'new-password', placeholder: isNew ? '' : 'unchanged' }),
    roleid: input.select(N, 'roleid', roles.map((r) => [r.roleid, r.name]), u.roleid),
    usrgrps: input.multi(N, 'usrgrps', groups.map((g) => [g.usrgrpid, g.name]), (u.usrgrps || []).map((g) => g.usrgrpid)),
    autologout: input.text(N, 'autologout', u.autologout),
    refresh: input.text(N, 'refresh', u.refresh),
    rows_per_page: input.num(N, 'rows_per_page', u.rows_per_page),
    lang: input.text(N, 'lang', u.lang),
    theme: input.select(N, 'theme', [['default', 'System default'], ['blue-theme', 'Blue'], ['dark-theme', 'Dark'], ['hc-light', 'High-contrast light'], ['hc-dark', 'High-contrast dark']], u.theme),
    timezone: input.text(N, 'timezone', u.timezone),
    url: input.text(N, 'url', u.url),
  };
  const typeOf = (id) => (mediaTypes.find((m) => m.mediatypeid === String(id)) || {}).type;
  const medias = rowTable('user-medias', ['Type', 'Send to', 'When active', 'Severities', 'Enabled'], u.medias || [], (m) => {
    const mt = h('select', { class: 'media-type', 'aria-label': 'Media type' }, mediaTypes.map((x) => h('option', { value: x.mediatypeid, selected: x.mediatypeid === m.mediatypeid }, x.name)));
    const sendto = h('input', { type: 'text', class: 'media-sendto', 'aria-label': 'Send to', placeholder: 'address (email: several, comma-separated)',
      value: Array.isArray(m.sendto) ? m.sendto.join(', ') : (m.sendto ?? '') });
    const period = h('input', { type: 'text', class: 'media-period', 'aria-label': 'When active', value: m.period ?? '1-7,00:00-24:00' });
    const sev = Number(m.severity ?? 63);
    const sevs = SEVERITIES.map((s, i) => h('label', { class: `sev-check sev-${i}`, title: s },
      h('input', { type: 'checkbox', class: `media-sev media-sev-${i}`, 'aria-label': s, checked: (sev & (1 << i)) !== 0 }), s.slice(0, 1)));
    const active = h('input', { type: 'checkbox', class: 'media-active', 'aria-label': 'Enabled', checked: String(m.active ?? '0') === '0' });
    return {
      cells: [mt, sendto, period, h('span', {}, sevs), active],
      read: () => {
        const o = { mediatypeid: mt.value, period: period.value, active: active.checked ? 0 : 1,
          severity: sevs.reduce((acc, l, i) => acc | (l.firstChild.checked ? 1 << i : 0), 0) };
        // An email medium takes a list of addresses, the others one.
        o.sendto = typeOf(mt.value) === '0' ? sendto.value.split(',').map((s) => s.trim()).filter(Boolean) : sendto.value;
        return o;
      },
    };
  }, 'medias');
  return {
    body: [
      h('div', { class: 'form-grid' }, fld('Username', f.username), fld('Name', f.name), fld('Surname', f.surname),
        fld(isNew ? 'Password' : 'Password (empty: unchanged)', f.passwd), fld('Role', f.roleid), fld('Groups', f.usrgrps)),
      h('h4', {}, 'Media'), medias.el,
      h('h4', {}, 'Preferences'),
      h('div', { class: 'form-grid' }, fld('Auto-logout (0: never)', f.autologout), fld('Refresh', f.refresh), fld('Rows per page', f.rows_per_page),
        fld('Language', f.lang), fld('Theme', f.theme), fld('Time zone', f.timezone), fld('URL after login', f.url)),
    ],
    read: () => {
      const o = {
        username: f.username.value, name: f.name.value, surname: f.surname.value, roleid: f.roleid.value,
        usrgrps: chosen(f.usrgrps).map((usrgrpid) => ({ usrgrpid })),
        medias: medias.values(),
        autologout: f.autologout.value, refresh: f.refresh.value, rows_per_page: numVal(f.rows_per_page),
        lang: f.lang.value, theme: f.theme.value, timezone: f.timezone.value, url: f.url.value,
      };
      if (f.passwd.value !== '') o.passwd = f.passwd.value;
      // Sent only when changed: Peregrine refuses renaming a user.
      if (!isNew && o.username === u.username) delete o.username;
      return o;
    },
  };
}
