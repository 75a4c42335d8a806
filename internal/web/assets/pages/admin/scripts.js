// Administration: global scripts (script.*): name, scope (action
// operation, manual host or event action), type (script, IPMI, SSH,
// Telnet, webhook) with each type's fields, where it runs, who may run
// it (user group, host group, host permission) and the confirmation
// text. A stored password is not shown by Zabbix 6.0 either way here:
// the field is sent only when typed.
import { call } from '../../api.js';
import { h } from '../../dom.js';
import { crudPage, input, fld } from '../../crud.js';
import { rowsEditor } from '../../form.js';

const N = 'script';
const TYPES = [[0, 'Script'], [1, 'IPMI'], [2, 'SSH'], [3, 'Telnet'], [5, 'Webhook']];
const SCOPES = [[1, 'Action operation'], [2, 'Manual host action'], [4, 'Manual event action']];
const EXEC = [[0, 'Zabbix agent'], [1, 'Zabbix server'], [2, 'Zabbix server (proxy)']];
const label = (list, v) => (list.find(([x]) => String(x) === String(v)) || [0, v])[1];

export async function render(main) {
  await crudPage(main, {
    api: 'script', id: 'scriptid', ids: 'scriptids', noun: N, label: 'script', title: 'Scripts', section: 'admin', path: '/admin/scripts',
    sort: [['name', 'Name']],
    search: { field: 'name', label: 'Search name' },
    filters: [{ id: 'scope', label: 'Scope', options: SCOPES, apply: (p, v) => { p.filter = { scope: v }; } }],
    rowParams: { output: ['scriptid', 'name', 'scope', 'type', 'execute_on', 'command', 'usrgrpid', 'groupid'] },
    columns: [
      { label: 'Name', sort: 'name', cell: (s) => s.name },
      { label: 'Scope', cell: (s) => label(SCOPES, s.scope) },
      { label: 'Type', cell: (s) => label(TYPES, s.type) },
      { label: 'Execute on', cell: (s) => (s.type === '0' ? label(EXEC, s.execute_on) : '') },
      { label: 'Commands', cell: (s) => h('code', {}, String(s.command || '').slice(0, 120)) },
    ],
    prepare: async () => {
      const [userGroups, hostGroups] = await Promise.all([
        call('usergroup.get', { output: ['usrgrpid', 'name'], sortfield: 'name' }),
        call('hostgroup.get', { output: ['groupid', 'name'], sortfield: 'name' }),
      ]);
      return { userGroups, hostGroups };
    },
    newObject: { type: '0', scope: '2', execute_on: '2', usrgrpid: '0', groupid: '0', host_access: '2', timeout: '30s', authtype: '0', parameters: [] },
    clone: (s) => ({ ...s, name: `${s.name} (copy)` }),
    form: (s, { userGroups, hostGroups }) => {
      const t = (k) => input.text(N, k, s[k]);
      const f = {
        name: input.text(N, 'name', s.name, { maxlength: 255 }),
        scope: input.select(N, 'scope', SCOPES, s.scope), type: input.select(N, 'type', TYPES, s.type),
        menu_path: t('menu_path'), description: input.area(N, 'description', s.description, 2),
        command: input.area(N, 'command', s.command, 5),
        execute_on: input.select(N, 'execute_on', EXEC, s.execute_on),
        authtype: input.select(N, 'authtype', [[0, 'Password'], [1, 'Public key']], s.authtype), username: t('username'),
        password: h('input', { type: 'password', id: 'script-password', dataset: { key: 'password' }, autocomplete: 'new-password' }),
        publickey: t('publickey'), privatekey: t('privatekey'), port: t('port'), timeout: t('timeout'),
        usrgrpid: input.select(N, 'usrgrpid', [[0, 'All'], ...userGroups.map((g) => [g.usrgrpid, g.name])], s.usrgrpid),
        groupid: input.select(N, 'groupid', [[0, 'All'], ...hostGroups.map((g) => [g.groupid, g.name])], s.groupid),
        host_access: input.select(N, 'host_access', [[2, 'Read'], [3, 'Write']], s.host_access),
        confirmation: t('confirmation'),
      };
      const params = rowsEditor('script-params', [{ key: 'name', label: 'Name' }, { key: 'value', label: 'Value' }], s.parameters || []);
      const ssh = h('div', { class: 'form-grid' }, fld('Authentication', f.authtype), fld('Username', f.username), fld('Password', f.password),
        fld('Public key file', f.publickey), fld('Private key file', f.privatekey), fld('Port', f.port));
      const exec = fld('Execute on', f.execute_on);
      const webhook = h('div', {}, h('h4', {}, 'Parameters'), params.el, h('div', { class: 'form-grid' }, fld('Timeout', f.timeout)));
      const manual = h('div', { class: 'form-grid' }, fld('Menu path', f.menu_path), fld('User group', f.usrgrpid),
        fld('Required host permissions', f.host_access), fld('Confirmation text', f.confirmation));
      const show = () => {
        const ty = f.type.value;
        exec.hidden = ty !== '0';
        ssh.hidden = ty !== '2' && ty !== '3';
        webhook.hidden = ty !== '5';
        manual.hidden = f.scope.value === '1';
      };
      f.type.addEventListener('change', show);
      f.scope.addEventListener('change', show);
      show();
      return {
        body: [h('div', { class: 'form-grid' }, fld('Name', f.name), fld('Scope', f.scope), fld('Type', f.type), exec, fld('Host group', f.groupid)),
          fld('Commands', f.command), ssh, webhook, manual, fld('Description', f.description)],
        read: () => {
          const ty = Number(f.type.value);
          const o = { name: f.name.value, scope: Number(f.scope.value), type: ty, command: f.command.value, description: f.description.value,
            groupid: f.groupid.value };
          if (ty === 0) o.execute_on = Number(f.execute_on.value);
          if (ty === 2 || ty === 3) {
            Object.assign(o, { username: f.username.value, port: f.port.value });
            if (ty === 2) Object.assign(o, { authtype: Number(f.authtype.value), publickey: f.publickey.value, privatekey: f.privatekey.value });
            if (f.password.value !== '') o.password = f.password.value;
          }
          if (ty === 5) Object.assign(o, { timeout: f.timeout.value, parameters: params.values().map((p) => ({ name: p.name, value: p.value })) });
          if (o.scope !== 1) Object.assign(o, { menu_path: f.menu_path.value, usrgrpid: f.usrgrpid.value, host_access: Number(f.host_access.value), confirmation: f.confirmation.value });
          return o;
        },
      };
    },
  });
}
