// API tokens (token.*): a user's own tokens (a super admin's: everyone's),
// created with a name, expiry and status; "Generate" makes the secret
// (token.generate) and shows it once, as Zabbix does: it is never read
// back.
import { call, currentSession } from '../api.js';
import { h, clear, fmtTime } from '../dom.js';
import { crudPage, input, fld } from '../crud.js';

const N = 'token';

export async function render(main) {
  const secret = h('section', { class: 'card', id: 'token-secret', hidden: true });
  await crudPage(main, {
    api: 'token', id: 'tokenid', ids: 'tokenids', noun: N, label: 'API token', title: 'API tokens', section: 'user', path: '/user/tokens',
    sort: [['name', 'Name'], ['lastaccess', 'Last accessed']],
    search: { field: 'name', label: 'Search name' },
    status: { field: 'status', on: 0, off: 1 },
    rowParams: { output: ['tokenid', 'name', 'userid', 'expires_at', 'status', 'lastaccess', 'created_at'] },
    columns: [
      { label: 'Name', sort: 'name', cell: (t) => t.name },
      { label: 'User ID', cell: (t) => t.userid },
      { label: 'Expires at', cell: (t) => (t.expires_at === '0' ? 'Never' : fmtTime(t.expires_at)) },
      { label: 'Created at', cell: (t) => fmtTime(t.created_at) },
      { label: 'Last accessed', sort: 'lastaccess', cell: (t) => fmtTime(t.lastaccess) || 'Never' },
      { label: 'Status', cell: (t) => (t.status === '0' ? 'Enabled' : 'Disabled') },
    ],
    mass: [{ id: 'generate', label: 'Generate secret', run: async (sel) => {
      const r = await call('token.generate', sel);
      clear(secret).append(h('h3', {}, 'Copy the new secrets now: they are not shown again.'),
        h('table', { class: 'plain', id: 'token-secrets' }, h('tbody', {}, r.map((x) => h('tr', {}, h('td', {}, x.tokenid), h('td', {}, h('code', {}, x.token)))))));
      secret.hidden = false;
    } }],
    afterPage: async (listEl) => { listEl.before(secret); },
    newObject: { status: '0', expires_at: '0' },
    clone: (t) => ({ ...t, name: `${t.name} (copy)` }),
    form: (t, _l, isNew) => {
      const f = {
        name: input.text(N, 'name', t.name, { maxlength: 64 }),
        description: input.area(N, 'description', t.description, 2),
        expires: h('input', { type: 'datetime-local', id: 'token-expires-at', dataset: { key: 'expires_at' },
          value: t.expires_at && t.expires_at !== '0' ? new Date(Number(t.expires_at) * 1000 - new Date().getTimezoneOffset() * 60000).toISOString().slice(0, 16) : '' }),
        status: input.check(N, 'status', t.status === '0' || t.status === 0),
      };
      return {
        body: [h('div', { class: 'form-grid' }, fld('Name', f.name), fld('Expires at (empty: never)', f.expires), fld('Enabled', f.status)),
          fld('Description', f.description), isNew ? h('p', { class: 'muted' }, `For ${(currentSession() || {}).username || 'you'}; generate its secret from the list.`) : null],
        read: () => ({ name: f.name.value, description: f.description.value, status: f.status.checked ? 0 : 1,
          expires_at: f.expires.value ? Math.floor(new Date(f.expires.value).getTime() / 1000) : 0 }),
      };
    },
  });
}
